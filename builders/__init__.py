"""Benchmarks -> ``datasets.DatasetDict`` with a ``Video`` feature (``foilkit.builders``)."""
