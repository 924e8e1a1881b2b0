"""Defect 1: the exact McNemar test of ``foilkit compare`` at benchmark scale (no overflow)."""

from __future__ import annotations

import numpy as np
import pytest

from foilkit.metrics import paired_comparison
from foilkit.metrics._common import mcnemar_exact


def _outcomes(n: int, a_only: int, b_only: int) -> tuple[np.ndarray, np.ndarray]:
    correct_a, correct_b = np.zeros(n, bool), np.zeros(n, bool)
    correct_a[:a_only] = True
    correct_b[a_only : a_only + b_only] = True
    correct_a[-10:] = correct_b[-10:] = True  # a few concordant right answers
    return correct_a, correct_b


@pytest.mark.parametrize(
    ("a_only", "b_only"),
    [(515, 515), (600, 700), (6900, 6938), (49_000, 50_000), (0, 90_000), (3, 4)],
)
def test_matches_scipy_binomtest_at_100000_items(a_only: int, b_only: int):
    stats = pytest.importorskip("scipy.stats")
    result = mcnemar_exact(*_outcomes(100_000, a_only, b_only))
    expected = stats.binomtest(min(a_only, b_only), a_only + b_only, 0.5).pvalue
    assert (result["a_only"], result["b_only"]) == (a_only, b_only)
    assert result["p_value"] == pytest.approx(expected, rel=1e-9, abs=1e-300)
    assert 0.0 <= result["p_value"] <= 1.0


def test_paired_comparison_of_100000_items_near_balanced():
    """The path ``foilkit compare`` takes: a caption-vs-foil metric on 100,000 paired items."""
    rng = np.random.default_rng(0)
    n = 100_000
    caption_a, caption_b = rng.random(n), rng.random(n)
    foils = [[0.5]] * n
    result = paired_comparison(
        "pairwise_foil_accuracy",
        {"caption_scores": caption_a.tolist(), "foil_scores": foils},
        {"caption_scores": caption_b.tolist(), "foil_scores": foils},
        n_resamples=20,
    )
    test = result["mcnemar"]
    assert test["a_only"] + test["b_only"] > 40_000
    assert 0.0 < test["p_value"] <= 1.0
