"""The one registry type: eager and lazy targets, order, errors that list the names."""

from __future__ import annotations

import doctest
import sys

import pytest

import foilkit.registry
from foilkit.registry import Lazy, Registry, UnknownNameError


def test_doctests():
    assert doctest.testmod(foilkit.registry).failed == 0


def test_lazy_targets_import_only_when_asked():
    registry: Registry[object] = Registry("thing")
    registry.add_lazy("module", "json", "a module")
    registry.add_lazy("attribute", "fractions:Fraction", "an attribute")
    sys.modules.pop("fractions", None)
    assert "fractions" not in sys.modules
    assert registry.get("attribute").__name__ == "Fraction"
    assert registry.get("module").dumps([1]) == "[1]"
    assert registry.entry("attribute").target == Lazy("fractions:Fraction")
    assert registry.names() == ("module", "attribute") and list(registry) == list(registry.names())


def test_unknown_name_lists_choices_and_is_a_value_error():
    registry: Registry[int] = Registry("benchmark")
    registry.add("a", 1)
    registry.add("b", 2)
    with pytest.raises(UnknownNameError) as caught:
        registry.get("c")
    assert str(caught.value) == "unknown benchmark 'c'; choose from: a, b"
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, KeyError)


def test_a_name_registers_once():
    registry: Registry[int] = Registry("metric")
    registry.add("a", 1)
    with pytest.raises(ValueError, match="registered twice"):
        registry.add("a", 2)


def test_listing_aligns_summaries():
    registry: Registry[int] = Registry("command")
    registry.add("x", 1, "first")
    registry.add("long", 2, "second")
    assert registry.listing().splitlines() == ["  x     first", "  long  second"]
