"""Vinoground's video-score question: asked as its scripts ask it, about both joined views, and
turned into the pair's 2x2 block for the video score."""

from __future__ import annotations

import pytest
from upstream_formats import VINOGROUND_SCRIPT_SUFFIX, vinoground_text_item, vinoground_video_item

from foilkit.scorers import video_question
from foilkit.scorers.plan import PlannedRow
from foilkit.scorers.prompts import question_text
from foilkit.scorers.requests import Answer, TextScores

CAPTION, FOIL = "a toddler plays, then picks up a toy", "a toddler picks up a toy, then plays"


def test_the_questions_are_the_official_ones_with_the_scripts_suffix():
    official = vinoground_video_item("0_pos", CAPTION, "vinoground_videos_concated/0.mp4", "A")
    asked = video_question.request(None, None, CAPTION)
    assert asked.question == official["question"] + VINOGROUND_SCRIPT_SUFFIX
    assert asked.answers == ("A", "B")
    text = vinoground_text_item("0_pos", CAPTION, FOIL, "A")
    assert (
        question_text("vinoground", [CAPTION, FOIL]) == text["question"] + VINOGROUND_SCRIPT_SUFFIX
    )


def test_each_videos_score_is_its_segments_mean_over_both_views():
    groups = dict.fromkeys(("main", "video_question", "foil_video_question"), (CAPTION, FOIL))
    row = PlannedRow(0, "0", "v", groups, foil_view="f", joined_views=("vf", "fv"))
    assert video_question.asks(row) == [
        ("vf", CAPTION),
        ("fv", CAPTION),
        ("vf", FOIL),
        ("fv", FOIL),
    ]
    answer = Answer("B", "parsed", 1, 0, 0)  # the second segment: in "fv", the video
    results = {
        ("vf", CAPTION): TextScores((0.9, 0.1)),  # the video, shown first, named
        ("fv", CAPTION): TextScores((0.4, 0.6), answers=(answer,)),
        ("vf", FOIL): TextScores((0.3, 0.7)),
        ("fv", FOIL): TextScores((0.8, 0.2)),
    }
    combined = video_question.combine(row, results)
    video, foil_video = combined["video_question"], combined["foil_video_question"]
    # s(video | caption) = (0.9 shown first + 0.6 shown second) / 2, and so on
    assert video.scores == pytest.approx((0.75, 0.25))
    assert foil_video.scores == pytest.approx((0.25, 0.75))
    assert video.details == {"shown_first": (0.9, 0.3), "shown_second": (0.6, 0.2)}
    assert foil_video.details == {"shown_first": (0.4, 0.8), "shown_second": (0.1, 0.7)}
    # the answer named the second segment of the foil-video-first view: the video (0)
    assert video.answers == (Answer("B", "parsed", 0, 1, 0),) and not foil_video.answers


def test_sampled_answers_keep_each_samples_score():
    """With several samples, each sample's share is averaged over the two views like the score,
    so a sample's accuracy (the per-sample spread) reads the video question too."""
    groups = dict.fromkeys(("main", "video_question", "foil_video_question"), (CAPTION, FOIL))
    row = PlannedRow(0, "0", "v", groups, foil_view="f", joined_views=("vf", "fv"))
    shares = {"vf": ((1.0, 0.0), (0.5, 0.5)), "fv": ((0.0, 1.0), (1.0, 0.0))}
    results = {
        (view, text): TextScores(
            tuple((a + b) / 2 for a, b in zip(*shares[view])),
            {"sample_0": shares[view][0], "sample_1": shares[view][1]},
        )
        for view in ("vf", "fv")
        for text in (CAPTION, FOIL)
    }
    video = video_question.combine(row, results)["video_question"]
    # sample 0: the video named in both views (1.0 first, 1.0 second); sample 1: 0.5 and 0.0
    assert video.details["sample_0"] == (1.0, 1.0)
    assert video.details["sample_1"] == (0.25, 0.25)
    assert video.scores == pytest.approx((0.625, 0.625))
