"""``winoground_score`` against the port of Vinoground's scorers (``tests/references.py``): the
dual-encoder comparisons of ``eval/videoclip.py`` and ``get_score_all.py``'s A/B answers, per
category, ties included."""

from __future__ import annotations

import numpy as np
import pytest
from references import vinoground_get_score_all, vinoground_videoclip_scores

from foilkit.metrics.winoground_score.winoground_score import winoground_score

MAJORS = ("action", "object", "viewpoint")
MINORS = ("interaction", "cyclical", "spatial", "contextual")


def _csv_rows(rng: np.random.Generator, n: int) -> list[list[str]]:
    """vinoground.csv rows as ``csv.reader`` reads them (index, major, minor, ...): a minor
    field is empty, one name or several joined by ';'."""
    rows = []
    for i in range(n):
        minors = rng.choice(MINORS, size=rng.integers(0, 3), replace=False)
        rows.append([str(i), str(rng.choice(MAJORS)), ";".join(minors), "pos", "neg"])
    return rows


def _metric_table(blocks, rows, **options) -> dict[str, tuple[float, float, float]]:
    """winoground_score per category, keyed and scaled as the scorer prints it."""
    categories = [[row[1], *[m for m in row[2].split(";") if m]] for row in rows]
    result = winoground_score(blocks, categories=categories, n_resamples=0, **options)
    table = {"all": tuple(result[f"{s}_score"] * 100 for s in ("text", "video", "group"))}
    for name in {name for names in categories for name in names}:
        table[name] = tuple(result[f"{s}_score_{name}"] * 100 for s in ("text", "video", "group"))
    return table


def _assert_tables_equal(ours, theirs) -> None:
    assert set(ours) == set(theirs)
    for category, values in theirs.items():
        assert ours[category] == pytest.approx(values, abs=1e-9), category


@pytest.mark.parametrize("seed", range(5))
def test_equals_the_dual_encoder_scorer_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = 60
    # scores from three values: many tied comparisons, which the scorer's `>` counts as wrong
    blocks = rng.integers(0, 3, size=(n, 2, 2)).astype(float).tolist()
    rows = _csv_rows(rng, n)
    assert winoground_score(blocks, n_resamples=0)["n_tied"] > 0
    _assert_tables_equal(_metric_table(blocks, rows), vinoground_videoclip_scores(blocks, rows))


def _answers(blocks, rng):
    """The two question files of vinoground (GT letters at random) and the answers a model
    gives when it picks the higher-scored option (a tie: the wrong one), saved as Qwen's scripts
    save them (a list) or as text ("B. ...")."""
    text_gt, video_gt, text_responses, video_responses = [], [], [], []

    def answer(gt: str, right: bool, i: int):
        letter = gt if right else ("B" if gt == "A" else "A")
        return [letter] if i % 3 == 0 else f"{letter}. an option"

    for i, ((s00, s01), (s10, s11)) in enumerate(blocks):
        for role, text_right, video_right in (
            ("pos", s00 > s01, s00 > s10),  # video 0's captions; caption 0's videos
            ("neg", s11 > s10, s11 > s01),
        ):
            idx = f"{i}_{role}"
            gt_text, gt_video = str(rng.choice(["A", "B"])), str(rng.choice(["A", "B"]))
            text_gt.append({"idx": idx, "GT": gt_text, "video_name": f"v/{idx}.mp4"})
            video_gt.append({"idx": idx, "GT": gt_video, "video_name": f"c/{idx}.mp4"})
            text_responses.append({"idx": idx, "response": answer(gt_text, text_right, i)})
            video_responses.append({"idx": idx, "response": answer(gt_video, video_right, i)})
    return text_gt, video_gt, text_responses, video_responses


def test_equals_get_score_all_on_the_answers_of_the_same_scores():
    rng = np.random.default_rng(7)
    n = 50
    blocks = rng.integers(0, 4, size=(n, 2, 2)).astype(float).tolist()
    rows = _csv_rows(rng, n)
    text_gt, video_gt, text_answers, video_answers = _answers(blocks, rng)
    theirs = vinoground_get_score_all(text_gt, video_gt, rows, text_answers, video_answers)
    _assert_tables_equal(_metric_table(blocks, rows), theirs)
    # an answer missing from the response file counts as wrong, as the scorer's KeyError does
    del text_answers[0]
    theirs = vinoground_get_score_all(text_gt, video_gt, rows, text_answers, video_answers)
    assert theirs["all"][0] <= _metric_table(blocks, rows)["all"][0]


def test_a_separate_video_question_equals_get_score_all_on_its_answers():
    """Vinoground's video LLMs answer two questions: the text score reads the first's answers,
    the video score the second's (video_pair_scores), as get_score_all.py reads its two files."""
    rng = np.random.default_rng(11)
    n = 60
    text_blocks = rng.integers(0, 3, size=(n, 2, 2)).astype(float).tolist()
    video_blocks = rng.integers(0, 3, size=(n, 2, 2)).astype(float).tolist()
    rows = _csv_rows(rng, n)
    text_gt, _, text_answers, _ = _answers(text_blocks, rng)
    _, video_gt, _, video_answers = _answers(video_blocks, rng)
    theirs = vinoground_get_score_all(text_gt, video_gt, rows, text_answers, video_answers)
    ours = _metric_table(text_blocks, rows, video_pair_scores=video_blocks)
    _assert_tables_equal(ours, theirs)
    assert ours != _metric_table(text_blocks, rows)  # the video score read the other blocks


def test_scores_of_lower_is_better_kinds_are_turned_around():
    blocks = [[[3.0, 9.0], [8.0, 2.0]], [[5.0, 4.0], [1.0, 6.0]]]
    result = winoground_score(blocks, score_kind="perplexity", n_resamples=0)
    flipped = winoground_score((-np.asarray(blocks)).tolist(), n_resamples=0)
    assert {k: result[k] for k in flipped} == flipped
    assert (result["text_score"], result["video_score"], result["group_score"]) == (0.5, 0.5, 0.5)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ({"pair_scores": [[[0.3, 0.2]]]}, r"pair_scores\[0\] = .* is not a 2x2 block"),
        ({"pair_scores": [[[0.3, float("nan")], [0.1, 0.2]]]}, r"pair_scores\[0\]\[0\]\[1\]"),
        ({"pair_scores": []}, "empty"),
        (
            {"pair_scores": [[[0.3, 0.2], [0.1, 0.4]]], "categories": ["action"]},
            r"categories\[0\] = 'action' is not a list",
        ),
        (
            {"pair_scores": [[[0.3, 0.2], [0.1, 0.4]]], "categories": [["action", ""]]},
            r"categories\[0\] holds ''",
        ),
        (
            {"pair_scores": [[[0.3, 0.2], [0.1, 0.4]]], "categories": [["a"], ["b"]]},
            "categories has 2 entries for 1 items",
        ),
        ({"pair_scores": [[[0.3, 0.2], [0.1, 0.4]]], "ties": "random"}, "ties='random'"),
        (
            {"pair_scores": [[[0.3, 0.2], [0.1, 0.4]]], "video_pair_scores": []},
            "video_pair_scores has 0 blocks for 1",
        ),
        (
            {"pair_scores": [[[0.3, 0.2], [0.1, 0.4]]], "video_pair_scores": [[[0.3, 0.2]]]},
            r"video_pair_scores\[0\] = .* is not a 2x2 block",
        ),
    ],
)
def test_bad_input_names_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        winoground_score(**call, n_resamples=0)
