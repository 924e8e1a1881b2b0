"""Benchmarks -> ``datasets.DatasetDict`` with a ``Video`` feature (``foilkit.builders``).

``datasets`` 5 runs no loading scripts, so the builders are classes this package imports:

>>> from foilkit.builders import load_builder
>>> builder = load_builder(  # doctest: +SKIP
...     "vitatecs", "direction", video_root="~/videos/vitatecs")
>>> builder.download_and_prepare(); ds = builder.as_dataset()  # doctest: +SKIP

or in one call :func:`build`; :func:`export` writes the Hub layout (parquet per config and split
plus a dataset card) that ``datasets.load_dataset(folder, config)`` reads back.

Two registries (:class:`foilkit.registry.Registry`, targets imported on first use; declared one
line per benchmark in :mod:`foilkit.benchmark_registry`) name what there is: :data:`BUILDERS`,
the builder class of each benchmark, and :data:`BENCHMARKS`, what ``foilkit evaluate`` computes
for each (:func:`get_benchmark`), declared as ``BENCHMARK`` in
the benchmark's folder ``builders/<name>/`` with the builder's configs, paper protocols, answer
parsers, judges and Hub metadata (see :mod:`foilkit.builders.spec`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from foilkit.benchmark_registry import BENCHMARKS, BUILDERS
from foilkit.builders.loading import build, load_builder, prepare
from foilkit.builders.spec import Benchmark

if TYPE_CHECKING:
    from foilkit.builders.base import FoilkitBuilder


__all__ = [
    "BENCHMARKS",
    "BUILDERS",
    "Benchmark",
    "build",
    "builder_class",
    "export",
    "get_benchmark",
    "list_benchmarks",
    "load_builder",
    "prepare",
    "push_to_hub",
]


def builder_class(name: str) -> type[FoilkitBuilder]:
    """The builder class registered as ``name``."""
    return BUILDERS.get(name)


def get_benchmark(name: str) -> Benchmark:
    """The :class:`~foilkit.builders.spec.Benchmark` registered as ``name``: what ``foilkit
    evaluate`` computes for it."""
    return BENCHMARKS.get(name)


def list_benchmarks() -> list[str]:
    """Names of the benchmarks ``foilkit evaluate`` knows."""
    return list(BENCHMARKS.names())


def export(*args: Any, **kwargs: Any):
    """See :func:`foilkit.builders.hub.export`."""
    from foilkit.builders.hub import export as _export

    return _export(*args, **kwargs)


def push_to_hub(*args: Any, **kwargs: Any):
    """See :func:`foilkit.builders.hub.push_to_hub`."""
    from foilkit.builders.hub import push_to_hub as _push

    return _push(*args, **kwargs)
