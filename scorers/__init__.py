"""The scoring engine (``foilkit.scorers``): decoding, frame sampling, model adapters, caching."""
