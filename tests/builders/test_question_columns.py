"""The one place question rows (TempCompass, TOMATO) get their canonical columns and checks."""

from __future__ import annotations

import pytest

from foilkit.builders.annotations import AnnotationError
from foilkit.builders.schema import CANONICAL_COLUMNS, QUESTION_FEATURES, question_columns


def _columns(options, label, **more):
    labels = [chr(65 + index) for index in range(len(options))]
    return question_columns(
        "Which?",
        "Which? Answer.",
        options,
        labels,
        label,
        needs_question=True,
        file="q.json",
        row=7,
        **more,
    )


def test_the_true_option_is_the_caption_and_its_label_the_answer():
    columns = _columns(["left", "right", "still"], 1)
    assert (columns["caption"], columns["foils"]) == ("right", ["left", "still"])
    assert (columns["caption_answer"], columns["foil_answers"]) == ("B", ["A", "C"])
    assert (columns["start"], columns["end"], columns["reversed"]) == (None, None, False)
    assert columns["prompt"] == "Which? Answer." and columns["label"] == 1
    # every question column the schema declares, and the canonical ones a builder does not add
    assert set(columns) == set(QUESTION_FEATURES) | set(CANONICAL_COLUMNS) - {
        "id",
        "video",
        "video_path",
    }


@pytest.mark.parametrize(
    ("options", "label", "more", "message"),
    [
        (["left"], 0, {}, r"q.json, row 7: field 'options' lists 1 option\(s\)"),
        (["left"], 0, {"options_field": "question"}, r"field 'question' lists 1 option\(s\)"),
        (["left", "right"], 2, {}, r"field 'answer' is 2, not an index of the 2 options"),
        (["left", "right"], True, {}, r"field 'answer' is True, not an index"),
    ],
)
def test_bad_options_and_answers_name_file_row_and_field(options, label, more, message):
    with pytest.raises(AnnotationError, match=message):
        _columns(options, label, **more)
