"""A row whose window cannot be played fails alone, naming its row, id and field; the other
rows plan and score (issue 15, item 9)."""

from __future__ import annotations

import math

import pytest

import foilkit
from foilkit.scorers.plan import make_plan

# (start, end) -> the row's error after "row <i> (id=<id>): "
BAD_WINDOWS = {
    "negative-start": ((-1.0, 2.0), "field 'start' is -1.0; a window bound must be a number >= 0"),
    "negative-end": ((None, -0.5), "field 'end' is -0.5; a window bound must be a number >= 0"),
    "nan-start": ((math.nan, 2.0), "field 'start' is nan; a window bound must be a number >= 0"),
    "inverted": ((2.0, 1.0), "field 'end' is 1.0, not after field 'start' (2.0)"),
    "empty": ((1.0, 1.0), "field 'end' is 1.0, not after field 'start' (1.0)"),
    "text": (("1s", None), "field 'start' is not a number of seconds: '1s'"),
}
GOOD_WINDOWS = [(None, None), (0.5, 2.0), (1.0, None)]


def _rows(windows, video="v.mp4"):
    return [
        {
            "id": f"w{index}",
            "video": {"path": video, "bytes": None},
            "start": start,
            "end": end,
            "caption": "c",
            "foils": ["f"],
        }
        for index, (start, end) in enumerate(windows)
    ]


@pytest.mark.parametrize(("window", "message"), BAD_WINDOWS.values(), ids=BAD_WINDOWS)
def test_a_bad_window_is_a_row_error_and_the_other_rows_plan(window, message):
    plan = make_plan(_rows([GOOD_WINDOWS[0], window, *GOOD_WINDOWS[1:]]))
    assert [row.error for row in plan.rows] == [None, f"row 1 (id='w1'): {message}", None, None]
    assert [row.view is not None for row in plan.rows] == [True, False, True, True]
    assert [(unit.source, unit.rows) for unit in plan.units] == [("v.mp4", [0, 2, 3]), (None, [1])]


def test_a_run_scores_every_row_but_the_bad_windows(
    tiny_clip, motion_videos, scoring_dataset, tmp_path
):
    bad = [
        case for name, case in BAD_WINDOWS.items() if name != "text"
    ]  # a float column holds no text
    windows = [*GOOD_WINDOWS, *(window for window, _ in bad)]
    rows = [
        {
            "id": f"w{index}",
            "video": str(motion_videos["left"]),
            "start": start,
            "end": end,
            "caption": "a square moves left",
        }
        for index, (start, end) in enumerate(windows)
    ]
    scores = foilkit.score(
        tiny_clip,
        scoring_dataset(rows),
        num_workers=0,
        progress=False,
        cache_dir=str(tmp_path / "c"),
    )
    first_bad = len(GOOD_WINDOWS)
    assert scores["error"] == [None] * first_bad + [
        f"row {index} (id='w{index}'): {message}"
        for index, (_, message) in enumerate(bad, first_bad)
    ]
    assert [score is not None for score in scores["caption_score"]] == [
        index < first_bad for index in range(len(windows))
    ]
