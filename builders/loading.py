"""A benchmark's builder, made and prepared: :func:`load_builder`, :func:`prepare`, :func:`build`
(re-exported by :mod:`foilkit.builders`; here so that the Hub export reaches them without
importing the package that re-exports it).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from foilkit.benchmark_registry import BUILDERS

if TYPE_CHECKING:
    import datasets

    from foilkit.builders.base import FoilkitBuilder


def load_builder(name: str, config: str | None = None, **options: Any) -> FoilkitBuilder:
    """A builder of benchmark ``name`` with config ``config`` (its default when ``None``).

    ``options`` set the config's fields (``video_root``, ``on_missing``, ``annotations``, and the
    benchmark's own, e.g. ``annotation_version`` or ``validity_filter``) or the builder's
    (``cache_dir``).
    """
    cls = BUILDERS.get(name)
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
