"""VELOCITI's ClassicVLE/StrictVLE and TemporalBench's binary and multiple binary accuracy
(``pairwise_foil_accuracy`` options) against ports of their official scorers, ties included."""

from __future__ import annotations

import numpy as np
import pytest
from references import (
    temporalbench_qa_accuracy,
    temporalbench_response,
    velociti_classic_vle,
    velociti_strict_vle,
)

from foilkit.metrics import metric_function

pairwise = metric_function("pairwise_foil_accuracy")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(27)


def test_classic_and_strict_vle_equal_velociti_metrics_py(rng):
    """Scores rounded to one decimal: ties between pos and neg, and scores of exactly 0.5 (which
    StrictVLE's strict inequalities count as failing) both occur."""
    pos = np.round(rng.random(400), 1).tolist()
    neg = np.round(rng.random(400), 1).tolist()
    assert sum(p == n for p, n in zip(pos, neg)) > 0 and 0.5 in pos and 0.5 in neg
    result = pairwise(
        pos,
        [[n] for n in neg],
        score_kind="probability",
        entailment_threshold=0.5,
        ties="strict",
        n_resamples=0,
    )
    _, classic, total = velociti_classic_vle(pos, neg)
    _, strict, _ = velociti_strict_vle(pos, neg)
    assert result["accuracy"] == classic / total
    assert result["strict_entailment_accuracy"] == strict / total
    assert result["n"] == total


def test_classic_vle_takes_any_score_kind(rng):
    pos, neg = rng.normal(size=50).round(1), rng.normal(size=50).round(1)
    result = pairwise(pos.tolist(), [[n] for n in neg], score_kind="similarity", n_resamples=0)
    assert result["accuracy"] == velociti_classic_vle(pos, neg)[1] / 50
    assert "strict_entailment_accuracy" not in result


@pytest.mark.parametrize("score_kind", ["similarity", "log_probability", "logit", "perplexity"])
def test_strict_vle_refuses_scores_that_are_not_probabilities(score_kind):
    with pytest.raises(ValueError, match=f"score_kind='{score_kind}' is not one") as caught:
        pairwise([0.9], [[0.1]], score_kind=score_kind, entailment_threshold=0.5, n_resamples=0)
    assert "\n" not in str(caught.value) and "ClassicVLE" in str(caught.value)


def test_strict_vle_refuses_probabilities_outside_zero_one():
    with pytest.raises(ValueError, match=r"foil_scores\[1\] = 1.5 is not a probability"):
        pairwise(
            [0.9, 0.8],
            [[0.1], [1.5]],
            score_kind="probability",
            entailment_threshold=0.5,
            n_resamples=0,
        )


def test_strict_vle_per_group_and_intervals():
    result = pairwise(
        [0.9, 0.6, 0.7, 0.4],
        [[0.2], [0.55], [0.1], [0.3]],
        groups=["chrono", "chrono", "coref", "coref"],
        score_kind="probability",
        entailment_threshold=0.5,
        n_resamples=50,
    )
    assert result["strict_entailment_accuracy_chrono"] == 0.5
    assert result["strict_entailment_accuracy_coref"] == 0.5
    low, high = result["strict_entailment_accuracy_ci"]
    assert 0.0 <= low <= result["strict_entailment_accuracy"] <= high <= 1.0


def _temporalbench_case(rng: np.random.Generator, videos: int = 60):
    """Questions in the published shape, 1-6 per video, scores rounded so ties occur."""
    categories = ["Action Order", "Action Type", "Event Order", "Others"]
    questions, captions, foils = [], [], []
    for video in range(videos):
        name = f"short_video/{'COIN' if video % 3 else 'Oops'}/clip{video}.mp4"
        for index in range(int(rng.integers(1, 7))):
            questions.append(
                {
                    "idx": f"{name}_{index}",
                    "video_name": name,
                    "dataset": name.split("/")[1],
                    "category": categories[int(rng.integers(len(categories)))],
                    "GT": "AB"[int(rng.integers(2))],
                }
            )
            captions.append(float(np.round(rng.random(), 1)))
            foils.append(float(np.round(rng.random(), 1)))
    return questions, captions, foils


def test_binary_and_multiple_binary_accuracy_equal_get_qa_acc(rng):
    questions, captions, foils = _temporalbench_case(rng)
    assert any(c == f for c, f in zip(captions, foils))  # ties: wrong in both
    preds = [
        {"idx": q["idx"], "response": temporalbench_response(c, f, q["GT"])}
        for q, c, f in zip(questions, captions, foils)
    ]
    official = temporalbench_qa_accuracy(questions, preds, "temporalbench_short_qa.json")
    result = pairwise(
        captions,
        [[f] for f in foils],
        question_sets=[q["video_name"] for q in questions],
        groups=[q["category"] for q in questions],
        ties="strict",
        n_resamples=0,
    )
    correct, total = official["binary"]
    assert result["accuracy"] == pytest.approx(correct / total) and result["n"] == total
    correct, total = official["multiple_binary"]
    assert result["multiple_binary_accuracy"] == pytest.approx(correct / total)
    assert result["n_question_sets"] == total
    for category, ((b_right, b_total), (m_right, m_total)) in official["category"].items():
        assert result[f"accuracy_{category}"] == pytest.approx(b_right / b_total), category
        assert result[f"multiple_binary_accuracy_{category}"] == pytest.approx(m_right / m_total), (
            category
        )
    # per source dataset, as the script's first table: the same function on that group
    datasets_result = pairwise(
        captions,
        [[f] for f in foils],
        question_sets=[q["video_name"] for q in questions],
        groups=[q["dataset"] for q in questions],
        n_resamples=0,
    )
    for name, ((_, _), (m_right, m_total)) in official["dataset"].items():
        assert datasets_result[f"multiple_binary_accuracy_{name}"] == pytest.approx(
            m_right / m_total
        )


def test_multiple_binary_interval_resamples_whole_videos(rng):
    questions, captions, foils = _temporalbench_case(rng, videos=30)
    videos = [q["video_name"] for q in questions]
    result = pairwise(
        captions,
        [[f] for f in foils],
        question_sets=videos,
        cluster=videos,
        n_resamples=200,
    )
    low, high = result["multiple_binary_accuracy_ci"]
    assert low <= result["multiple_binary_accuracy"] <= high and low < high


def test_question_sets_must_name_every_item():
    with pytest.raises(ValueError, match=r"question_sets\[1\] = None"):
        pairwise([0.9, 0.1], [[0.1], [0.2]], question_sets=["v1", None], n_resamples=0)
    with pytest.raises(ValueError, match="question_sets has 1 values for 2 items"):
        pairwise([0.9, 0.1], [[0.1], [0.2]], question_sets=["v1"], n_resamples=0)
