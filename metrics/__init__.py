"""Evaluate modules, one folder per metric (``foilkit.metrics``)."""
