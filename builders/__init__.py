"""Benchmarks -> ``datasets.DatasetDict`` with a ``Video`` feature (``foilkit.builders``).

``datasets`` 5 runs no loading scripts, so the builders are classes this package imports:

>>> from foilkit.builders import load_builder
>>> builder = load_builder(  # doctest: +SKIP
...     "vitatecs", "direction", video_root="~/videos/vitatecs")
>>> builder.download_and_prepare(); ds = builder.as_dataset()  # doctest: +SKIP

or in one call :func:`build`; :func:`export` writes the Hub layout (parquet per config and split
plus a dataset card) that ``datasets.load_dataset(folder, config)`` reads back.

Two registries (:class:`foilkit.registry.Registry`, targets imported on first use) name what
there is: :data:`BUILDERS`, the builder class of each benchmark, and :data:`BENCHMARKS`, what
``foilkit evaluate`` computes for each (:func:`get_benchmark`), declared as ``BENCHMARK`` beside
its builder with the builder's configs (see :mod:`foilkit.builders.spec`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from foilkit.benchmark_registry import BENCHMARKS, BUILDERS
from foilkit.builders.spec import Benchmark

if TYPE_CHECKING:
    import datasets

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


def load_builder(name: str, config: str | None = None, **options: Any) -> FoilkitBuilder:
    """A builder of benchmark ``name`` with config ``config`` (its default when ``None``).

    ``options`` set the config's fields (``video_root``, ``on_missing``, ``annotations``, and the
    benchmark's own, e.g. ``annotation_version`` or ``validity_filter``) or the builder's
    (``cache_dir``).
    """
    cls = builder_class(name)
    cache_dir = options.pop("cache_dir", None)
    for key in ("video_root", "annotations", "multiple_choice_file"):
        if options.get(key) is not None:  # absolute, so the cache key names the folder itself
            options[key] = os.path.abspath(os.path.expanduser(os.fspath(options[key])))
    return cls(config_name=config, cache_dir=cache_dir, **options)


def build(name: str, config: str | None = None, **options: Any) -> datasets.DatasetDict:
    """Build benchmark ``name``'s ``config`` into a ``DatasetDict`` (options: see
    :func:`load_builder`)."""
    return prepare(load_builder(name, config, **options))


def prepare(builder: FoilkitBuilder) -> datasets.DatasetDict:
    """Prepare ``builder`` and return its splits.

    The prepared dataset is rebuilt on every call (annotation downloads are reused), so videos
    added to the video root since the last call are found. An annotation error, an id repeated
    in a split, missing videos or a video path outside the root are raised as themselves, not
    wrapped in ``datasets``' generic ``DatasetGenerationError``; so is a video root that does
    not exist or is one level off (:class:`foilkit.video_paths.VideoRootError`).
    """
    import datasets

    from foilkit.builders.annotations import AnnotationError
    from foilkit.builders.base import DuplicateIdError
    from foilkit.builders.videos import MissingVideosError, VideoPathError
    from foilkit.video_paths import VideoRootError

    ours = (AnnotationError, DuplicateIdError, MissingVideosError, VideoPathError, VideoRootError)
    try:
        builder.download_and_prepare(download_mode=datasets.DownloadMode.REUSE_CACHE_IF_EXISTS)
    except datasets.exceptions.DatasetGenerationError as error:
        cause = error.__cause__
        if isinstance(cause, ours):
            raise cause.with_traceback(cause.__traceback__) from None
        raise
    return builder.as_dataset()


def export(*args: Any, **kwargs: Any):
    """See :func:`foilkit.builders.hub.export`."""
    from foilkit.builders.hub import export as _export

    return _export(*args, **kwargs)


def push_to_hub(*args: Any, **kwargs: Any):
    """See :func:`foilkit.builders.hub.push_to_hub`."""
    from foilkit.builders.hub import push_to_hub as _push

    return _push(*args, **kwargs)
