"""Planning: unique views grouped by file, text groups, and row errors that name the row."""

from __future__ import annotations

import pytest

from foilkit.scorers.plan import make_plan


def _row(**changes):
    row = {
        "id": "a",
        "video": {"path": "v.mp4", "bytes": None},
        "start": None,
        "end": None,
        "reversed": False,
        "caption": "c",
        "foils": ["f"],
    }
    return {**row, **changes}


def test_views_of_one_file_form_one_unit():
    plan = make_plan(
        [
            _row(id="fwd"),
            _row(id="rev", reversed=True),
            _row(id="win", start=1.0, end=2.0),
            _row(id="same-view", caption="other"),
            _row(id="other-file", video={"path": "w.mp4", "bytes": None}),
        ]
    )
    assert [(unit.source, len(unit.views), unit.rows) for unit in plan.units] == [
        ("v.mp4", 3, [0, 1, 2, 3]),
        ("w.mp4", 1, [4]),
    ]
    assert plan.rows[0].view == plan.rows[3].view != plan.rows[1].view


def test_text_groups_and_video_root(tmp_path):
    plan = make_plan(
        [_row(proficiency_caption="p", proficiency_foils=["q", "r"])], video_root=tmp_path
    )
    assert dict(plan.rows[0].groups) == {"main": ("c", "f"), "proficiency": ("p", "q", "r")}
    assert plan.units[0].source == str(tmp_path / "v.mp4")
    assert plan.texts() == ["c", "f", "p", "q", "r"]


def test_a_row_without_video_is_an_error_row_unless_the_model_reads_no_video():
    assert make_plan([_row(video=None)]).rows[0].error == "row 0 (id='a') has no video"
    assert make_plan([_row(video=None)], needs_video=False).rows[0].error is None


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([_row(), _row()], "row 1: id 'a' repeats row 0"),
        ([_row(caption="")], "row 0 \\(id='a'\\) has no 'caption'"),
        ([_row(foils=["f", ""])], "row 0 \\(id='a'\\) has an empty or non-text entry in 'foils'"),
    ],
)
def test_bad_rows_are_named(rows, message):
    with pytest.raises(ValueError, match=message):
        make_plan(rows)


def test_batches_are_fixed_by_the_plan():
    plan = make_plan(
        [_row(id=str(i), video={"path": f"{i // 2}.mp4", "bytes": None}) for i in range(7)]
    )
    assert [[unit.rows for unit in batch] for batch in plan.batches(3)] == [
        [[0, 1], [2, 3]],
        [[4, 5], [6]],
    ]
