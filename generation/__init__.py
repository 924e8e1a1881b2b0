"""Foil and counterfactual generation pipelines of the papers (``foilkit.generation``)."""
