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
    ragged_matrix,
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
them apart. With `entailment_threshold` (VELOCITI's StrictVLE, 0.5) it adds
`strict_entailment_accuracy`: the caption must score above the threshold and every foil below it,
which only calibrated probabilities (a cross-encoder's ITM probability, a video LLM's P(yes))
can be held to; the plain accuracy is VELOCITI's ClassicVLE. With `question_sets` (the video of
each binary question, TemporalBench) it adds `multiple_binary_accuracy`: the share of question
sets whose every item is right (TemporalBench's multiple binary accuracy).
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
    entailment_threshold (`float`, optional): VELOCITI's StrictVLE threshold (0.5): adds
        `strict_entailment_accuracy`, an item counting when its caption scores above it and
        every foil below it. Needs `score_kind="probability"` (refused otherwise).
    question_sets (`list[str]`, optional): each item's question set (TemporalBench: its video);
        adds `multiple_binary_accuracy`, the share of sets whose items are all right.
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
    strict_entailment_accuracy (`float`): with `entailment_threshold`, with its `_ci` (and
        `strict_entailment_accuracy_<group>` per group).
    multiple_binary_accuracy (`float`): with `question_sets`, with its `_ci` (and
        `multiple_binary_accuracy_<group>` per group); n_question_sets (`int`): the sets.
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
    >>> # VELOCITI: ClassicVLE (accuracy) and StrictVLE on entailment probabilities
    >>> result = pairwise_foil_accuracy([0.9, 0.6, 0.4], [[0.2], [0.55], [0.1]],
    ...     score_kind="probability", entailment_threshold=0.5, n_resamples=0)
    >>> result["accuracy"], result["strict_entailment_accuracy"]
    (1.0, 0.3333333333333333)
    >>> # TemporalBench: binary accuracy and multiple binary accuracy over each video's questions
    >>> result = pairwise_foil_accuracy([0.9, 0.6, 0.4], [[0.2], [0.7], [0.1]],
    ...     question_sets=["v1", "v1", "v2"], n_resamples=0)
    >>> result["accuracy"], result["multiple_binary_accuracy"], result["n_question_sets"]
    (0.6666666666666666, 0.5, 2)
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


def strict_entailment_credits(
    caption_scores: Sequence[float],
    foil_scores: Sequence[Sequence[float]],
    threshold: float,
    score_kind: str,
) -> np.ndarray:
    """Per item, 1 when its caption scores above ``threshold`` and every foil below it (VELOCITI
    ``metrics.py`` ``strict_vle``: ``pos > 0.5 and neg < 0.5``), else 0.

    Only a probability of entailment can be held to a fixed threshold; any other score kind
    (a similarity, a log-probability) is refused, as are probabilities outside [0, 1].
    """
    if score_kind != "probability":
        raise ValueError(
            f"strict entailment (VELOCITI's StrictVLE, entailment_threshold={threshold}) needs "
            f"calibrated probabilities, and score_kind={score_kind!r} is not one: score with a "
            "cross-encoder's ITM probability or a video LLM's P(yes) (score_kind 'probability'),"
            " or report ClassicVLE (accuracy), which takes any score kind"
        )
    if not 0.0 < threshold < 1.0:
        raise ValueError(f"entailment_threshold={threshold!r} must lie strictly between 0 and 1")
    captions = finite_vector("caption_scores", caption_scores)
    foils = ragged_matrix("foil_scores", foil_scores)
    for name, values in (("caption_scores", captions[:, None]), ("foil_scores", foils)):
        outside = np.argwhere((values < 0.0) | (values > 1.0))
        if outside.size:
            item = int(outside[0][0])
            raise ValueError(
                f"{name}[{item}] = {float(values[tuple(outside[0])])} is not a probability in "
                "[0, 1], which strict entailment needs"
            )
    below = np.where(np.isnan(foils), True, foils < threshold).all(axis=1)
    return ((captions > threshold) & below).astype(np.float64)


def set_codes(name: str, question_sets: Sequence[Hashable], n: int) -> np.ndarray:
    """Each item's question set as an index (sets in first-seen order); a ``ValueError`` on a
    length mismatch or a missing set."""
    if len(question_sets) != n:
        raise ValueError(f"{name} has {len(question_sets)} values for {n} items")
    for index, value in enumerate(question_sets):
        if value is None or value == "":
            raise ValueError(f"{name}[{index}] = {value!r}: every item needs its question set")
    labels = [str(value) for value in question_sets]
    order = {label: code for code, label in enumerate(dict.fromkeys(labels))}
    return np.asarray([order[label] for label in labels], dtype=np.int64)


def set_means(
    weights: np.ndarray, credit: np.ndarray, codes: np.ndarray, mask: np.ndarray | None = None
) -> np.ndarray:
    """Per resample, the mean over question sets of each set's credit (the product of its items'
    credits: 1 when all are right), restricted to the items of ``mask``. A set weighs the mean
    weight of its items, which is its cluster's count when the bootstrap resamples sets."""
    if mask is not None:
        weights, credit, codes = weights[:, mask], credit[mask], codes[mask]
        _, codes = np.unique(codes, return_inverse=True)
    sets = int(codes.max()) + 1
    set_credit = np.ones(sets)
    np.multiply.at(set_credit, codes, credit)
    members = np.zeros((codes.size, sets))
    members[np.arange(codes.size), codes] = 1.0
    set_weights = weights @ members / members.sum(axis=0)
    return weighted_mean(set_weights, set_credit)


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
    entailment_threshold: float | None = None,
    question_sets: Sequence[Hashable] | None = None,
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
    grouped = {}  # result name -> per-item credit also broken down by group
    if entailment_threshold is not None:
        columns["strict_entailment_accuracy"] = grouped["strict_entailment_accuracy"] = (
            strict_entailment_credits(
                caption_scores, foil_scores, float(entailment_threshold), score_kind
            )
        )
    codes = None if question_sets is None else set_codes("question_sets", question_sets, n)
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
        out.update(group_means(weights, credit, masks, "accuracy"))
        for name, values in grouped.items():
            for group, mask in masks.items():
                out[f"{name}_{group}"] = weighted_mean(weights[:, mask], values[mask])
        if codes is not None:
            out["multiple_binary_accuracy"] = set_means(weights, credit, codes)
            for group, mask in masks.items():
                out[f"multiple_binary_accuracy_{group}"] = set_means(weights, credit, codes, mask)
        return out

    result = with_intervals(
        statistic, n, cluster=cluster, n_resamples=n_resamples, seed=seed, confidence=confidence
    )
    add_counts(result, {"n": n, "n_tied": int(tied.sum())})
    if codes is not None:
        add_counts(result, {"n_question_sets": int(codes.max()) + 1})
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
