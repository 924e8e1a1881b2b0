"""The canonical foilkit row as ``datasets.Features``: one schema for all four benchmarks.

Every row carries ``id``, ``video`` (a ``datasets.Video``; ``None`` for a text-only row),
``video_path`` (where the video lives *relative to the user's video root*, by the benchmark's
documented layout, so a dataset can be re-attached to another copy of the videos),
``caption`` (the true text), ``foils`` (the false texts), the window ``start``/``end`` in
seconds (``None`` = from the beginning / to the end) and ``reversed`` (play the window
backwards). Benchmarks add their own metadata columns through :func:`canonical_features`.

Items with a **video foil** (Vinoground: two videos, two captions, a 2x2 score matrix) take the
pair shape, :func:`video_foil_features`: the canonical columns plus ``foil_video`` /
``foil_video_path`` (the second video, resolved like ``video``) and its own window
``foil_start`` / ``foil_end``. The row's ``caption`` belongs to ``video`` and its first foil to
``foil_video``; ``reversed`` plays both backwards. The scorer scores both videos against the
row's texts (each video decoded once) and the metric reads the four cells.
"""

from __future__ import annotations

import datasets

#: Columns shared by every benchmark, in the order they appear in every dataset.
CANONICAL_COLUMNS = ("id", "video", "video_path", "caption", "foils", "start", "end", "reversed")
#: The pair shape's columns (:func:`video_foil_features`), after the canonical ones.
FOIL_VIDEO_COLUMNS = ("foil_video", "foil_video_path", "foil_start", "foil_end")

TEXT = datasets.Value("string")
TEXTS = datasets.List(datasets.Value("string"))
SECONDS = datasets.Value("float64")
FLAG = datasets.Value("bool")
COUNT = datasets.Value("int32")


def canonical_features(**metadata: datasets.features.features.FeatureType) -> datasets.Features:
    """The canonical columns followed by a benchmark's ``metadata`` columns (name -> feature)."""
    clash = sorted(set(metadata) & set(CANONICAL_COLUMNS))
    if clash:
        raise ValueError(f"metadata columns {clash} would replace canonical columns")
    return datasets.Features(
        {
            "id": TEXT,
            "video": datasets.Video(),
            "video_path": TEXT,
            "caption": TEXT,
            "foils": TEXTS,
            "start": SECONDS,
            "end": SECONDS,
            "reversed": FLAG,
            **metadata,
        }
    )


def video_foil_features(**metadata: datasets.features.features.FeatureType) -> datasets.Features:
    """The pair shape: the canonical columns, the foil video's (:data:`FOIL_VIDEO_COLUMNS`), then
    a benchmark's ``metadata`` columns."""
    clash = sorted(set(metadata) & set(FOIL_VIDEO_COLUMNS))
    if clash:
        raise ValueError(f"metadata columns {clash} would replace the foil video's columns")
    return canonical_features(
        foil_video=datasets.Video(),
        foil_video_path=TEXT,
        foil_start=SECONDS,
        foil_end=SECONDS,
        **metadata,
    )
