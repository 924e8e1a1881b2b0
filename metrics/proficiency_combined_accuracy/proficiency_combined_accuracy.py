"""ViLMA's proficiency (P), main test (T) and combined (P+T) accuracy, and probability extras."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from ._citations import VILMA
from ._common import (
    ExactInputs,
    add_counts,
    check_lengths,
    finite_vector,
    group_codes,
    group_means,
    oriented,
    oriented_competitors,
    ragged_matrix,
    weighted_mean,
    win_credit,
    with_intervals,
)

try:  # the pure functions below need neither; the evaluate module does
    import datasets
    import evaluate
except ImportError:  # pragma: no cover - exercised only where evaluate is absent
    evaluate = None

_CITATION = VILMA

_DESCRIPTION = """\
ViLMA scores every item twice: on its proficiency pair (a simpler caption/foil test of a
prerequisite skill) and on its main pair (the temporal test). P and T are the pairwise accuracies of
the two; P+T counts an item only when both are right (Sec. 4.2), so a model that solves the main
test by accident, without the prerequisite, gets no credit. Per subtest (`groups`) and per test
(`tests`, the mean of its subtests: Table 2's value for Change of State; Table 2 pools the items of
the other tests, which is the overall value of a call on one test's items), with the paper's
summary: the average of the tests' P+T. The tie policy defaults to `first` because ViLMA's
evaluation takes an argmax over [caption, *foils], which returns the caption on a tie. In
probability mode (model probabilities that a text matches the video, e.g. ITM heads) it adds the
extras of the ViLMA/VALSE evaluation over all main captions and foils: `p_c`, the share of captions
accepted (probability > threshold), `p_f`, the share of foils rejected (probability <= threshold),
as VALSE defines them, `min(p_c, p_f)`, binary accuracy and AUROC; and combined variants of the
first four, where an item whose proficiency pair failed counts as wrong.
"""

_KWARGS_DESCRIPTION = """
Args:
    caption_scores (`list[float]`): the main caption's score per item.
    foil_scores (`list[list[float]]`): the main foils' scores per item (one or more).
    proficiency_caption_scores (`list[float]`): the proficiency caption's score per item.
    proficiency_foil_scores (`list[list[float]]`): the proficiency foils' scores per item.
    groups (`list[str]`, optional): each item's subtest.
    tests (`list[str]`, optional): each item's test; per-test values average the test's subtests
        (needs `groups`), and the `macro_*` summaries average the tests.
    cluster (`list[str]`, optional): each item's video, resampled as a unit by the bootstrap.
    score_kind (`str`): `similarity`, `probability`, `log_probability`, `logit` (higher is better),
        `perplexity` or `loss` (lower is better). Default `similarity`.
    ties (`str`): `first` (default, ViLMA's argmax), `strict` or `half`.
    threshold (`float`): probability mode: a caption is accepted, a foil rejected, at this
        probability. Default 0.5.
    n_resamples (`int`): bootstrap resamples (0: no intervals). Default 1000.
    seed (`int`): the bootstrap's seed. Default 0.
    confidence (`float`): the intervals' coverage. Default 0.95.
Returns:
    proficiency_accuracy, main_accuracy, combined_accuracy (`float`): P, T and P+T over all items,
        each with `_ci`; `n`; `n_tied_proficiency`, `n_tied_main`.
    <name>_<subtest> / <name>_<test>: the three accuracies per subtest and per test.
    macro_proficiency_accuracy, macro_main_accuracy, macro_combined_accuracy: the average over
        tests (or over subtests without `tests`), with `_ci`.
    p_c, p_f, min_p_c_p_f, binary_accuracy, auroc and combined_p_c, combined_p_f,
        combined_min_p_c_p_f, combined_binary_accuracy: with `score_kind="probability"`.
Examples:
    >>> from foilkit.metrics.proficiency_combined_accuracy.proficiency_combined_accuracy import (
    ...     proficiency_combined_accuracy)
    >>> result = proficiency_combined_accuracy(
    ...     caption_scores=[0.9, 0.8, 0.3], foil_scores=[[0.1], [0.2], [0.6]],
    ...     proficiency_caption_scores=[0.7, 0.1, 0.9],
    ...     proficiency_foil_scores=[[0.2], [0.5], [0.1]],
    ...     n_resamples=0)
    >>> result["proficiency_accuracy"], result["main_accuracy"], result["combined_accuracy"]
    (0.6666666666666666, 0.6666666666666666, 0.3333333333333333)
    >>> result = proficiency_combined_accuracy(
    ...     caption_scores=[0.9, 0.4], foil_scores=[[0.2, 0.3], [0.6]],
    ...     proficiency_caption_scores=[0.8, 0.7], proficiency_foil_scores=[[0.1], [0.2]],
    ...     score_kind="probability", n_resamples=0)
    >>> result["p_c"], result["p_f"], result["auroc"]
    (0.5, 0.6666666666666666, 0.8333333333333334)
"""


def item_credits(
    caption_scores: Sequence[float],
    foil_scores: Sequence[Sequence[float]],
    proficiency_caption_scores: Sequence[float],
    proficiency_foil_scores: Sequence[Sequence[float]],
    *,
    score_kind: str = "similarity",
    ties: str = "first",
) -> dict[str, np.ndarray]:
    """Per item: the credit of its proficiency pair (P), main pair (T) and both (P+T), and
    whether a tie decided P or T. Validates the inputs."""
    check_lengths(
        caption_scores=caption_scores,
        foil_scores=foil_scores,
        proficiency_caption_scores=proficiency_caption_scores,
        proficiency_foil_scores=proficiency_foil_scores,
    )
    credits = {}
    for name, captions, foils in (
        ("proficiency", proficiency_caption_scores, proficiency_foil_scores),
        ("main", caption_scores, foil_scores),
    ):
        prefix = "proficiency_" if name == "proficiency" else ""
        credits[name], credits[f"{name}_tied"] = win_credit(
            oriented(finite_vector(f"{prefix}caption_scores", captions), score_kind),
            oriented_competitors(f"{prefix}foil_scores", foils, score_kind),
            ties,
        )
    credits["combined"] = credits["proficiency"] * credits["main"]
    return credits


def _weighted_auroc(
    weights: np.ndarray, item_of_score: np.ndarray, scores: np.ndarray, positive: np.ndarray
) -> np.ndarray:
    """AUROC (Mann-Whitney, ties counted half) of ``scores`` with labels ``positive``, per row of
    item ``weights`` (each score weighs as its item)."""
    order = np.argsort(scores, kind="stable")
    sorted_scores = scores[order]
    starts = np.flatnonzero(np.r_[True, sorted_scores[1:] != sorted_scores[:-1]])
    score_weights = weights[:, item_of_score[order]]
    pos = np.add.reduceat(score_weights * positive[order], starts, axis=1)
    neg = np.add.reduceat(score_weights * ~positive[order], starts, axis=1)
    below = np.cumsum(neg, axis=1) - neg
    return (pos * (below + 0.5 * neg)).sum(axis=1) / (pos.sum(axis=1) * neg.sum(axis=1))


def _probability_columns(
    caption_scores: Sequence[float],
    foil_scores: Sequence[Sequence[float]],
    proficiency_passed: np.ndarray,
    threshold: float,
):
    """The probability-mode statistics of the ViLMA/VALSE evaluation script, as a function of
    bootstrap weights."""
    captions = finite_vector("caption_scores", caption_scores)
    foils = ragged_matrix("foil_scores", foil_scores)
    for name, values in (("caption_scores", captions), ("foil_scores", foils)):
        outside = np.argwhere((values < 0) | (values > 1))
        if outside.size:
            where = "".join(f"[{i}]" for i in outside[0])
            raise ValueError(
                f"{name}{where} = {float(values[tuple(outside[0])])} is not a probability in "
                "[0, 1] (score_kind='probability')"
            )
    has_foil = ~np.isnan(foils)
    n_foils = has_foil.sum(axis=1)
    caption_right = captions > threshold
    foils_right = (has_foil & (np.nan_to_num(foils, nan=1.0) <= threshold)).sum(axis=1)
    items, slots = np.nonzero(has_foil)
    scores = np.concatenate([captions, foils[items, slots]])
    item_of_score = np.concatenate([np.arange(len(captions)), items])
    positive = np.concatenate([np.ones(len(captions), bool), np.zeros(len(items), bool)])

    def statistic(weights: np.ndarray) -> dict[str, np.ndarray]:
        out = {}
        for prefix, keep in (("", 1.0), ("combined_", proficiency_passed)):
            p_c = weighted_mean(weights, caption_right * keep)
            p_f = (weights @ (foils_right * keep)) / (weights @ n_foils)
            out[f"{prefix}p_c"], out[f"{prefix}p_f"] = p_c, p_f
            out[f"{prefix}min_p_c_p_f"] = np.minimum(p_c, p_f)
            out[f"{prefix}binary_accuracy"] = (weights @ ((caption_right + foils_right) * keep)) / (
                weights @ (1 + n_foils)
            )
        out["auroc"] = _weighted_auroc(weights, item_of_score, scores, positive)
        return out

    return statistic


def proficiency_combined_accuracy(
    caption_scores: Sequence[float],
    foil_scores: Sequence[Sequence[float]],
    proficiency_caption_scores: Sequence[float],
    proficiency_foil_scores: Sequence[Sequence[float]],
    *,
    groups: Sequence[Hashable] | None = None,
    tests: Sequence[Hashable] | None = None,
    cluster: Sequence[Hashable] | None = None,
    score_kind: str = "similarity",
    ties: str = "first",
    threshold: float = 0.5,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """P, T and P+T over all items, per subtest, per test and as the paper's summary, with CIs."""
    credits = item_credits(
        caption_scores,
        foil_scores,
        proficiency_caption_scores,
        proficiency_foil_scores,
        score_kind=score_kind,
        ties=ties,
    )
    n = len(credits["main"])
    subtests = group_codes(groups, n)
    if tests is not None and groups is None:
        raise ValueError("tests needs groups: a test's value averages its subtests")
    test_of = {}
    for subtest, mask in subtests.items():
        names = {str(tests[i]) for i in np.flatnonzero(mask)} if tests is not None else set()
        if len(names) > 1:
            raise ValueError(f"subtest {subtest!r} belongs to several tests: {sorted(names)}")
        test_of[subtest] = names.pop() if names else None
    clashing = sorted(
        test
        for test in set(test_of.values()) & set(subtests)
        if [s for s, t in test_of.items() if t == test] != [test]
    )
    if clashing:  # a test named as one of several subtests: their results would overwrite
        raise ValueError(f"{clashing} name(s) both a subtest and a test with other subtests")
    names = ("proficiency", "main", "combined")
    extras = None
    if score_kind == "probability":
        if not 0 < threshold < 1:
            raise ValueError(f"threshold={threshold!r} must lie strictly between 0 and 1")
        extras = _probability_columns(
            caption_scores, foil_scores, credits["proficiency"], threshold
        )

    members_of: dict[Hashable, list[str]] = {}  # test -> its subtests, in first-seen order
    for subtest, test in test_of.items():
        members_of.setdefault(test, []).append(subtest)

    def statistic(weights: np.ndarray) -> dict[str, np.ndarray]:
        out = {f"{name}_accuracy": weighted_mean(weights, credits[name]) for name in names}
        for name in names:  # per subtest, and (without tests) the mean over subtests
            out.update(group_means(weights, credits[name], subtests, f"{name}_accuracy"))
        if tests is not None:  # per test: the mean of its subtests; the summary: over tests
            for name in names:
                per_test = {
                    f"{name}_accuracy_{test}": np.nanmean(
                        np.stack([out[f"{name}_accuracy_{s}"] for s in members]), axis=0
                    )
                    for test, members in members_of.items()
                }
                out.update(per_test)
                out[f"macro_{name}_accuracy"] = np.nanmean(
                    np.stack(list(per_test.values())), axis=0
                )
        if extras is not None:
            out.update(extras(weights))
        return out

    result = with_intervals(
        statistic, n, cluster=cluster, n_resamples=n_resamples, seed=seed, confidence=confidence
    )
    add_counts(
        result,
        {
            "n": n,
            "n_tied_proficiency": int(credits["proficiency_tied"].sum()),
            "n_tied_main": int(credits["main_tied"].sum()),
        },
    )
    return add_counts(
        result, {f"n_{subtest}": int(mask.sum()) for subtest, mask in subtests.items()}
    )


#: doctest runs the examples above (``doctest.testmod`` reads ``__test__``).
__test__ = {"examples": _KWARGS_DESCRIPTION}

if evaluate is not None:

    @evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
    class ProficiencyCombinedAccuracy(ExactInputs, evaluate.Metric):
        """``evaluate.load("proficiency_combined_accuracy")``:
        :func:`proficiency_combined_accuracy`."""

        def _info(self) -> evaluate.MetricInfo:
            return evaluate.MetricInfo(
                description=_DESCRIPTION,
                citation=_CITATION,
                inputs_description=_KWARGS_DESCRIPTION,
                features=datasets.Features(
                    {
                        "caption_scores": datasets.Value("float64"),
                        "foil_scores": datasets.Sequence(datasets.Value("float64")),
                        "proficiency_caption_scores": datasets.Value("float64"),
                        "proficiency_foil_scores": datasets.Sequence(datasets.Value("float64")),
                    }
                ),
                reference_urls=["https://github.com/ilkerkesen/ViLMA"],
            )

        def _compute(
            self,
            caption_scores: list[float],
            foil_scores: list[list[float]],
            proficiency_caption_scores: list[float],
            proficiency_foil_scores: list[list[float]],
            **options: Any,
        ) -> dict[str, Any]:
            # the keyword options (tie policy, bootstrap, ...) as the function takes them
            return proficiency_combined_accuracy(
                caption_scores,
                foil_scores,
                proficiency_caption_scores,
                proficiency_foil_scores,
                **options,
            )
