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

Rows that ask a **question** with options (TempCompass, TOMATO) take their canonical columns from
:func:`question_columns`: the true option is the caption, the others its foils, and each
option's answer label names it in the model's answer.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import datasets

from foilkit.builders.annotations import AnnotationError

#: Columns shared by every benchmark, in the order they appear in every dataset.
CANONICAL_COLUMNS = ("id", "video", "video_path", "caption", "foils", "start", "end", "reversed")
#: The pair shape's columns (:func:`video_foil_features`), after the canonical ones.
FOIL_VIDEO_COLUMNS = ("foil_video", "foil_video_path", "foil_start", "foil_end")

TEXT = datasets.Value("string")
TEXTS = datasets.List(datasets.Value("string"))
SECONDS = datasets.Value("float64")
FLAG = datasets.Value("bool")
COUNT = datasets.Value("int32")
#: The columns of a row that asks a question with options (:func:`question_columns`), after the
#: canonical ones: the question, as the official inference asks it (``prompt``), the options
#: in published order and their answer labels, the true and false options' labels, whether a
#: model must be asked the question (the options mean nothing alone), the true option's index.
QUESTION_FEATURES = {
    "question": TEXT,
    "prompt": TEXT,
    "options": TEXTS,
    "option_labels": TEXTS,
    "caption_answer": TEXT,
    "foil_answers": TEXTS,
    "needs_question": FLAG,
    "label": COUNT,
}


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


def question_columns(
    question: str,
    prompt: str,
    options: Sequence[str],
    labels: Sequence[str],
    label: Any,
    *,
    needs_question: bool,
    file: str | os.PathLike,
    row: int | str,
    options_field: str = "options",
) -> dict[str, Any]:
    """The columns of a row asking ``question`` (``prompt``: as the official inference words
    it) with ``options`` in published order, answered by their ``labels`` (a letter, ``yes``,
    ``Caption A``), the true one at index ``label``: the caption is the true option and the
    foils the others, ``caption_answer`` and ``foil_answers`` their labels; no window.

    Raises :class:`AnnotationError` naming ``file``, ``row`` and the field for fewer than two
    options (listed in ``options_field``) and for a ``label`` that is no option's index.
    """
    if len(options) < 2:
        raise AnnotationError(file, row, f"field {options_field!r} lists {len(options)} option(s)")
    if isinstance(label, bool) or not isinstance(label, int) or not 0 <= label < len(options):
        raise AnnotationError(
            file, row, f"field 'answer' is {label!r}, not an index of the {len(options)} options"
        )
    return {
        "caption": options[label],
        "foils": [option for index, option in enumerate(options) if index != label],
        "start": None,
        "end": None,
        "reversed": False,
        "question": question,
        "prompt": prompt,
        "options": list(options),
        "option_labels": list(labels),
        "caption_answer": labels[label],
        "foil_answers": [name for index, name in enumerate(labels) if index != label],
        "needs_question": needs_question,
        "label": label,
    }
