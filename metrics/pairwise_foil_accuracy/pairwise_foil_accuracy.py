"""Pairwise foil accuracy: how often a model scores a video's caption above its temporal foils."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from ._citations import VITATECS
from ._common import (
    ExactInputs,
    add_counts,
    block_matrix,
    check_lengths,
    finite_vector,
    group_codes,
    group_means,
    oriented,
    oriented_competitors,
    weighted_mean,
    win_credit,
    winoground_credits,
    with_intervals,
)
from ._ranking import check_ks, rank_targets

try:  # the pure functions below need neither; the evaluate module does
    import datasets
    import evaluate
except ImportError:  # pragma: no cover - exercised only where evaluate is absent
    evaluate = None

_CITATION = VITATECS

_DESCRIPTION = """\
An item (a video with its caption and one or more foils) is correct when the model scores the
caption above every foil: VITATECS' accuracy (Tab. 3-6, one counterfactual per caption) and the
per-pair accuracy of foil benchmarks in general. Ties are explicit: `ties="strict"` counts a tie
wrong (VITATECS' evaluation scripts test `caption > counterfactual`), `"half"` gives 1/k when k
candidates share the top score, `"first"` counts it right (an argmax over [caption, *foils]).
Scores may be similarities/probabilities (higher is better) or perplexities/losses (lower is
better), as `score_kind` says. With `groups` (aspect, subtest) the result adds each group's
accuracy and the macro average; with `cluster` (the video of each item) the bootstrap confidence
intervals resample whole videos. Given 2x2 `pair_scores` it adds Winoground's text, video and
group scores. Given the `retrieval_scores` of each item's video against every caption and
counterfactual of the benchmark, it adds VITATECS' recall@k check (Tab. 7): how often the caption,
the counterfactual, and all of them (their mean: Tab. 7's "All" row) rank in the top k, which
shows whether a model finds the video's texts by their shared static content while not telling
them apart.
"""

_KWARGS_DESCRIPTION = """
Args:
    caption_scores (`list[float]`): the model's score of each item's caption.
    foil_scores (`list[list[float]]`): the scores of each item's foils (one or more per item).
    groups (`list[str]`, optional): each item's group (aspect, subtest) for a per-group breakdown.
    cluster (`list[str]`, optional): each item's video; the bootstrap resamples videos, not items.
    pair_scores (`list[[[float, float], [float, float]]]`, optional): per item a 2x2 block
        `[[s(v0, t0), s(v0, t1)], [s(v1, t0), s(v1, t1)]]` (two videos x two texts, video i
        matching text i); adds Winoground's `text_score`, `video_score` and `group_score`.
    retrieval_scores (`list[list[float]]`, optional): per item, its video's scores against all
        texts of the benchmark (every caption and counterfactual), for the recall@k check.
    retrieval_targets (`list[[int, int]]`, optional): per item, the columns of its caption and
        its counterfactual in `retrieval_scores`.
    recall_ks (`list[int]`): the k of the recall@k check. Default [10] (VITATECS Tab. 7).
    score_kind (`str`): `similarity`, `probability`, `log_probability`, `logit` (higher is better),
        `perplexity` or `loss` (lower is better). Default `similarity`.
    ties (`str`): `strict` (default), `half` or `first`. In the recall@k check, `strict` ranks a
        text after every text tied with it, `first` before them, `half` at their average.
    n_resamples (`int`): bootstrap resamples for the confidence intervals (0: none). Default 1000.
    seed (`int`): the bootstrap's seed. Default 0.
    confidence (`float`): the interval's coverage. Default 0.95.
Returns:
    accuracy (`float`): the mean credit over items (micro average), with `accuracy_ci`.
    n (`int`): the number of items. n_tied (`int`): items whose outcome a tie decided.
    accuracy_<group>, accuracy_<group>_ci, n_<group>: per group, when `groups` is given.
    macro_accuracy (`float`): the mean of the group accuracies, with `macro_accuracy_ci`.
    text_score, video_score, group_score (`float`): with `pair_scores`, each with `_ci`.
    caption_recall_at_<k>, foil_recall_at_<k>, all_recall_at_<k> (`float`): with
        `retrieval_scores`, each with `_ci`; `all` is the mean of the other two (Tab. 7 "All").
Examples:
    >>> from foilkit.metrics.pairwise_foil_accuracy.pairwise_foil_accuracy import (
    ...     pairwise_foil_accuracy)
    >>> result = pairwise_foil_accuracy([0.9, 0.4, 0.5], [[0.1], [0.6], [0.5]], n_resamples=0)
    >>> result["accuracy"], result["n_tied"]
    (0.3333333333333333, 1)
    >>> pairwise_foil_accuracy([0.9, 0.4, 0.5], [[0.1], [0.6], [0.5]], ties="half",
    ...                        n_resamples=0)["accuracy"]
    0.5
    >>> # perplexities: lower is better; several foils per item
    >>> pairwise_foil_accuracy([12.0, 30.0], [[40.0, 15.0], [25.0, 90.0]], score_kind="perplexity",
    ...                        n_resamples=0)["accuracy"]
    0.5
    >>> result = pairwise_foil_accuracy([0.9, 0.2, 0.7], [[0.1], [0.3], [0.6]],
    ...                                 groups=["direction", "direction", "sequence"],
    ...                                 n_resamples=0)
    >>> result["accuracy_direction"], result["accuracy_sequence"], result["macro_accuracy"]
    (0.5, 1.0, 0.75)
    >>> # recall@1 over all texts [caption 0, foil 0, caption 1, foil 1]: item 0's video ranks its
    >>> # caption first, item 1's video its counterfactual
    >>> result = pairwise_foil_accuracy([0.9, 0.6], [[0.8], [0.7]], n_resamples=0,
    ...     retrieval_scores=[[0.9, 0.8, 0.1, 0.2], [0.3, 0.2, 0.6, 0.7]],
    ...     retrieval_targets=[[0, 1], [2, 3]], recall_ks=[1, 2])
    >>> result["caption_recall_at_1"], result["foil_recall_at_1"], result["all_recall_at_1"]
    (0.5, 0.5, 0.5)
"""

#: the pairwise tie policy -> the rank a text tied with others gets in the recall@k check.
_RANK_TIES = {"strict": "pessimistic", "half": "average", "first": "optimistic"}


def item_credits(
    caption_scores: Sequence[float],
    foil_scores: Sequence[Sequence[float]],
    *,
    score_kind: str = "similarity",
    ties: str = "strict",
) -> dict[str, np.ndarray]:
    """Per item: its ``credit`` (1 caption wins, 0 a foil wins, the tie policy's share on a tie)
    and whether a tie decided it (``tied``). Validates the inputs."""
    check_lengths(caption_scores=caption_scores, foil_scores=foil_scores)
    captions = oriented(finite_vector("caption_scores", caption_scores), score_kind)
    foils = oriented_competitors("foil_scores", foil_scores, score_kind)
    credit, tied = win_credit(captions, foils, ties)
    return {"credit": credit, "tied": tied}


def recall_columns(
    retrieval_scores: Any,
    retrieval_targets: Sequence[Sequence[int]],
    recall_ks: Sequence[int],
    score_kind: str,
    ties: str,
) -> dict[str, np.ndarray]:
    """Per item, whether its caption and its counterfactual rank in the top k of its video's row
    of ``retrieval_scores``, and the mean of the two (VITATECS Tab. 7's "All")."""
    ks = check_ks(recall_ks)
    for index, pair in enumerate(retrieval_targets):
        if isinstance(pair, (str, bytes)) or len(pair) != 2:
            raise ValueError(
                f"retrieval_targets[{index}] = {pair!r} must be [caption column, foil column]"
            )
    ranks = {
        role: rank_targets(
            retrieval_scores,
            [[int(pair[position])] for pair in retrieval_targets],
            score_kind=score_kind,
            ties=_RANK_TIES[ties],
            name="retrieval_scores",
        ).ranks
        for position, role in enumerate(("caption", "foil"))
    }
    columns = {}
    for k in ks:
        hits = {role: (rank <= k).astype(np.float64) for role, rank in ranks.items()}
        columns[f"caption_recall_at_{k}"] = hits["caption"]
        columns[f"foil_recall_at_{k}"] = hits["foil"]
        columns[f"all_recall_at_{k}"] = (hits["caption"] + hits["foil"]) / 2
    return columns


def pairwise_foil_accuracy(
    caption_scores: Sequence[float] | None,
    foil_scores: Sequence[Sequence[float]] | None,
    *,
    groups: Sequence[Hashable] | None = None,
    cluster: Sequence[Hashable] | None = None,
    pair_scores: Sequence[Sequence[Sequence[float]]] | None = None,
    retrieval_scores: Any = None,
    retrieval_targets: Sequence[Sequence[int]] | None = None,
    recall_ks: Sequence[int] = (10,),
    score_kind: str = "similarity",
    ties: str = "strict",
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Accuracy of captions against their foils, per group and overall, with bootstrap CIs.

    With ``pair_scores`` only, ``caption_scores``/``foil_scores`` may be ``None``: each block's
    video 0 gives the item (caption ``t0``, foil ``t1``).
    """
    if pair_scores is not None:
        raw_blocks = block_matrix("pair_scores", pair_scores)
        blocks = oriented(raw_blocks, score_kind)
        if caption_scores is None and foil_scores is None:
            caption_scores, foil_scores = raw_blocks[:, 0, 0], raw_blocks[:, 0, 1:]
    credits = item_credits(caption_scores, foil_scores, score_kind=score_kind, ties=ties)
    credit, tied = credits["credit"], credits["tied"]
    n = check_lengths(
        caption_scores=credit, pair_scores=pair_scores, retrieval_targets=retrieval_targets
    )
    masks = group_codes(groups, n)
    columns = {"accuracy": credit}
    if pair_scores is not None:
        columns.update(
            {f"{name}_score": value for name, value in winoground_credits(blocks, ties).items()}
        )
    if (retrieval_scores is None) != (retrieval_targets is None):
        raise ValueError("retrieval_scores and retrieval_targets come together")
    if retrieval_scores is not None:
        columns.update(
            recall_columns(retrieval_scores, retrieval_targets, recall_ks, score_kind, ties)
        )

    def statistic(weights: np.ndarray) -> dict[str, np.ndarray]:
        out = {name: weighted_mean(weights, values) for name, values in columns.items()}
        return {**out, **group_means(weights, credit, masks, "accuracy")}

    result = with_intervals(
        statistic, n, cluster=cluster, n_resamples=n_resamples, seed=seed, confidence=confidence
    )
    add_counts(result, {"n": n, "n_tied": int(tied.sum())})
    return add_counts(result, {f"n_{group}": int(mask.sum()) for group, mask in masks.items()})


#: doctest runs the examples above (``doctest.testmod`` reads ``__test__``).
__test__ = {"examples": _KWARGS_DESCRIPTION}

if evaluate is not None:

    @evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
    class PairwiseFoilAccuracy(ExactInputs, evaluate.Metric):
        """``evaluate.load("pairwise_foil_accuracy")``: :func:`pairwise_foil_accuracy` as a
        metric."""

        def _info(self) -> evaluate.MetricInfo:
            return evaluate.MetricInfo(
                description=_DESCRIPTION,
                citation=_CITATION,
                inputs_description=_KWARGS_DESCRIPTION,
                features=datasets.Features(
                    {
                        "caption_scores": datasets.Value("float64"),
                        "foil_scores": datasets.Sequence(datasets.Value("float64")),
                    }
                ),
                reference_urls=["https://github.com/lscpku/VITATECS"],
            )

        def _compute(
            self,
            caption_scores: list[float],
            foil_scores: list[list[float]],
            **options: Any,
        ) -> dict[str, Any]:
            # the keyword options (tie policy, bootstrap, ...) as the function takes them
            return pairwise_foil_accuracy(caption_scores, foil_scores, **options)
