"""The canonical foilkit row as ``datasets.Features``: one schema for all four benchmarks.

Every row carries ``id``, ``video`` (a ``datasets.Video``; ``None`` for a text-only row),
``video_path`` (where the video lives *relative to the user's video root*, by the benchmark's
documented layout, so a dataset can be re-attached to another copy of the videos),
``caption`` (the true text), ``foils`` (the false texts), the window ``start``/``end`` in
seconds (``None`` = from the beginning / to the end) and ``reversed`` (play the window
backwards). Benchmarks add their own metadata columns through :func:`canonical_features`.
"""

from __future__ import annotations

import datasets

#: Columns shared by every benchmark, in the order they appear in every dataset.
CANONICAL_COLUMNS = ("id", "video", "video_path", "caption", "foils", "start", "end", "reversed")

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
