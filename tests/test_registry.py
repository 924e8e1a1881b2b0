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


def test_indexing_gets_and_remove_unregisters():
    registry: Registry[int] = Registry("adapter")
    registry.add("a", 1)
    registry.add_lazy("b", "math:pi")
    assert registry["a"] == 1 and registry["b"] > 3
    registry.remove("a")
    assert "a" not in registry and registry.names() == ("b",)
    del registry["b"]
    assert len(registry) == 0
    registry.add("a", 2)  # a removed name is free again
    assert registry["a"] == 2
    with pytest.raises(UnknownNameError, match="unknown adapter 'b'; choose from: a"):
        registry.remove("b")


def _registries() -> dict[str, Registry]:
    import foilkit
    from foilkit.builders import BENCHMARKS, BUILDERS
    from foilkit.cli import COMMANDS
    from foilkit.cli.generate import PIPELINES
    from foilkit.scorers.adapters import ADAPTERS

    return {
        "COMMANDS": COMMANDS,
        "PIPELINES": PIPELINES,
        "BUILDERS": BUILDERS,
        "BENCHMARKS": BENCHMARKS,
        "ADAPTERS": ADAPTERS,
        "_LAZY": foilkit._LAZY,
    }


@pytest.mark.parametrize("name", list(_registries()))
def test_every_registered_reference_resolves(name):
    """A lazy reference with a typo would fail only when used: resolve them all here."""
    registry = _registries()[name]
    assert isinstance(registry, Registry) and len(registry)
    for entry_name in registry:
        assert registry.get(entry_name) is not None, entry_name


def test_adapters_registered_outside_foilkit_are_asked_first_and_names_stay_unique():
    from foilkit.scorers.adapters import ADAPTERS, BUILT_IN, matching_order, register_adapter

    class Plugin(ADAPTERS["dual-encoder"]):
        pass

    register_adapter("test-plugin")(Plugin)
    try:
        assert Plugin.name == "test-plugin" and ADAPTERS["test-plugin"] is Plugin
        assert matching_order() == ["test-plugin", *BUILT_IN]
        register_adapter("test-plugin")(Plugin)  # the same class again: nothing changes
        with pytest.raises(ValueError, match="'dual-encoder' is already taken by foilkit"):
            register_adapter("dual-encoder")(Plugin)
    finally:
        del ADAPTERS["test-plugin"]
    assert ADAPTERS["dual-encoder"].name == "dual-encoder"
