"""The flat public API: ``foilkit.<name>`` for the functions a user reaches for first."""

from __future__ import annotations

import pytest

import foilkit


@pytest.mark.parametrize("name", [name for name in foilkit.__all__ if name != "__version__"])
def test_every_public_name_resolves_to_a_function(name):
    assert callable(getattr(foilkit, name))
    assert name in dir(foilkit)


def test_the_listings_name_what_exists():
    assert {"vitatecs", "vilma", "rtime", "contrast_sets"} <= set(foilkit.list_benchmarks())
    assert "pairwise_foil_accuracy" in foilkit.list_metrics()
    assert {"dual-encoder", "video-llm", "text-lm"} <= set(foilkit.list_adapters())
    rows = foilkit.list_protocols()
    assert {(row["benchmark"], row["family"]) for row in rows} >= {("vilma", "text-lm")}


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'evaluat'"):
        foilkit.evaluat  # noqa: B018
