"""The scoring engine: video decoding and frame sampling, model adapters, caching (``foilkit.scorers``)."""
