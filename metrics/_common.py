"""What every foilkit metric shares: score direction, input checks, the tie policy, bootstrap CIs.

numpy only. Each ``metrics/<name>/`` folder holds a link to this file as ``_common.py`` and
imports it relatively, so the folder stays a self-contained ``evaluate`` module (``evaluate``
copies relative imports next to the module; a wheel and a Hub upload store the file itself)
while the logic lives in one place.

Scores come in one of the ``SCORE_KINDS``: similarities, probabilities and log-probabilities
are better when higher, perplexities and losses when lower. ``oriented`` turns any of them into
"higher is better" so the rest of the code compares one way.

Tie policies (``TIE_POLICIES``), for a caption whose best competitor scores exactly as it does:
``strict`` counts the item wrong (VITATECS' ``caption > counterfactual``), ``half`` gives 1/k
for k tied candidates, ``first`` counts it right (ViLMA's argmax over ``[caption, *foils]``
returns the first maximum).

Confidence intervals are percentile bootstraps: resample items (or whole clusters of items
sharing a video) with replacement, recompute the statistic, take the quantiles. Resamples are
drawn as integer weights per item, so a statistic is a weighted computation on the original
arrays and resamples run in vectorised blocks.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

#: score kind -> +1 when a higher score means a better match, -1 when lower does.
SCORE_KINDS: dict[str, int] = {
    "similarity": 1,
    "probability": 1,
    "log_probability": 1,
    "logit": 1,
    "perplexity": -1,
    "loss": -1,
}
#: a tied caption's credit given the number of candidates that share the top score (caption
#: included).
TIE_POLICIES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "strict": lambda k: np.zeros(k.shape),
    "half": lambda k: 1.0 / k,
    "first": lambda k: np.ones(k.shape),
}
#: what each tie policy does with a tied item, in words (reports state it under their tables).
TIE_POLICY_MEANINGS: dict[str, str] = {
    "strict": "counts as wrong",
    "half": "gets 1/k of the credit for k tied candidates",
    "first": "counts as right (the first maximum, the caption, wins)",
}
#: how many item weights one vectorised bootstrap block holds (memory bound, ~32 MB of float64).
_BLOCK_CELLS = 4_000_000


def direction(score_kind: str) -> int:
    """+1 if higher scores of ``score_kind`` are better, -1 if lower ones are."""
    if score_kind not in SCORE_KINDS:
        raise ValueError(f"score_kind={score_kind!r} is not one of {sorted(SCORE_KINDS)}")
    return SCORE_KINDS[score_kind]


def check_option(name: str, value: Any, allowed: Sequence[Any] | Mapping[Any, Any]) -> None:
    """A ``ValueError`` naming the option when ``value`` is not one of ``allowed``."""
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not one of {sorted(allowed)}")


def check_lengths(**columns: Sequence[Any] | None) -> int:
    """The common length of the given columns (``None`` ones skipped); a ``ValueError`` if they
    differ or are empty."""
    lengths = {name: len(values) for name, values in columns.items() if values is not None}
    if len(set(lengths.values())) > 1:
        raise ValueError(
            "inputs have different lengths: " + ", ".join(f"{k}={v}" for k, v in lengths.items())
        )
    n = next(iter(lengths.values()))
    if n == 0:
        raise ValueError(f"empty input: {', '.join(lengths)} hold no items")
    return n


def finite_vector(name: str, values: Sequence[float]) -> np.ndarray:
    """``values`` as a float vector; a ``ValueError`` naming the first non-number, NaN or inf."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        array = None
    if array is None or array.ndim != 1:
        for index, value in enumerate(values):
            if not isinstance(value, (int, float, np.number)) or isinstance(value, bool):
                raise ValueError(f"{name}[{index}] = {value!r} is not a number")  # noqa: TRY004 (bad input: ValueError)
        raise ValueError(f"{name} must be a flat list of numbers")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise ValueError(f"{name}[{bad[0]}] = {float(array[bad[0]])} is not a finite score")
    return array


def ragged_matrix(name: str, rows: Sequence[Sequence[float]]) -> np.ndarray:
    """Lists of scores (any positive length each) as a matrix padded with NaN.

    A ``ValueError`` names the item whose list is empty, not a list, or holds a NaN/inf.
    """
    lengths = []
    for index, row in enumerate(rows):
        if isinstance(row, (str, bytes)) or not hasattr(row, "__len__"):
            raise ValueError(f"{name}[{index}] = {row!r} must be a list of scores")
        if len(row) == 0:
            raise ValueError(f"{name}[{index}] is empty: every item needs at least one score")
        lengths.append(len(row))
    matrix = np.full((len(lengths), max(lengths, default=0)), np.nan, dtype=np.float64)
    for index, row in enumerate(rows):
        values = finite_vector(f"{name}[{index}]", row)
        matrix[index, : len(values)] = values
    return matrix


def oriented(values: np.ndarray, score_kind: str) -> np.ndarray:
    """Scores turned so that higher is better (perplexities and losses negated)."""
    return values * direction(score_kind)


def oriented_competitors(name: str, rows: Sequence[Sequence[float]], score_kind: str) -> np.ndarray:
    """Lists of competitor scores (foils, wrong options) as a higher-is-better matrix whose padding
    is ``-inf``, so a missing competitor never beats or ties anything."""
    return np.nan_to_num(oriented(ragged_matrix(name, rows), score_kind), nan=-np.inf)


def win_credit(
    target: np.ndarray, competitors: np.ndarray, ties: str
) -> tuple[np.ndarray, np.ndarray]:
    """Per item: the credit of the target against its competitors, and whether a tie decided it.

    ``target`` is (n,), ``competitors`` (n, m) padded with ``-inf``; both higher-is-better. An
    item earns 1 when the target beats every competitor, 0 when one beats it, and the tie
    policy's credit when it shares the top score with ``k - 1`` competitors.
    """
    check_option("ties", ties, TIE_POLICIES)
    beaten = (competitors > target[:, None]).any(axis=1)
    sharing = (competitors == target[:, None]).sum(axis=1)
    tied = ~beaten & (sharing > 0)
    credit = np.where(beaten, 0.0, 1.0)
    credit[tied] = TIE_POLICIES[ties](sharing[tied] + 1.0)
    return credit, tied


def cluster_codes(cluster: Sequence[Hashable] | None, n: int) -> np.ndarray:
    """Cluster index per item (each item its own cluster when ``cluster`` is None)."""
    if cluster is None:
        return np.arange(n)
    if len(cluster) != n:
        raise ValueError(f"cluster has {len(cluster)} values for {n} items")
    for index, value in enumerate(cluster):
        if value is None:
            raise ValueError(f"cluster[{index}] is None: every item needs a cluster (its video)")
    _, codes = np.unique(np.asarray([str(value) for value in cluster]), return_inverse=True)
    return codes.reshape(-1)


def resample_weights(
    n: int, cluster: Sequence[Hashable] | None, n_resamples: int, seed: int
) -> Iterator[np.ndarray]:
    """Blocks of bootstrap weights, (block, n) each: how often each item is drawn per resample.

    Clusters (or items) are drawn with replacement, as many as there are; an item's weight is
    its cluster's count. Seeded: the same seed gives the same resamples.
    """
    codes = cluster_codes(cluster, n)
    n_clusters = int(codes.max()) + 1
    rng = np.random.default_rng(seed)
    block = max(1, _BLOCK_CELLS // max(n, n_clusters))
    for start in range(0, n_resamples, block):
        size = min(block, n_resamples - start)
        counts = rng.multinomial(n_clusters, np.full(n_clusters, 1.0 / n_clusters), size=size)
        yield counts[:, codes].astype(np.float64)


def weighted_mean(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per resample (row of ``weights``), the weighted mean of ``values``; NaN where no weight."""
    total = weights.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, weights @ values / np.where(total > 0, total, 1.0), np.nan)


Statistic = Callable[[np.ndarray], Mapping[str, np.ndarray]]


def _quietly(statistic: Statistic, weights: np.ndarray) -> Mapping[str, np.ndarray]:
    """``statistic(weights)`` without numpy's warnings about resamples that leave a group empty
    (their value is NaN, which the percentiles skip)."""
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        return statistic(weights)


def bootstrap_intervals(
    statistic: Statistic,
    names: Sequence[str],
    n: int,
    *,
    cluster: Sequence[Hashable] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, list[float] | None]:
    """Percentile intervals of the values ``names`` that ``statistic(weights)`` returns.

    ``statistic`` maps a (block, n) weight matrix to ``{name: (block,) values}``.
    ``n_resamples=0`` gives ``None`` intervals.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence={confidence!r} must lie strictly between 0 and 1")
    if n_resamples < 0:
        raise ValueError(f"n_resamples={n_resamples!r} must be >= 0")
    cluster_codes(cluster, n)  # a bad cluster is an error even when no interval is drawn
    if n_resamples == 0:
        return {name: None for name in names}
    draws: dict[str, list[np.ndarray]] = {name: [] for name in names}
    for weights in resample_weights(n, cluster, n_resamples, seed):
        for name, values in _quietly(statistic, weights).items():
            draws[name].append(np.asarray(values, dtype=np.float64))
    tail = 100 * (1 - confidence) / 2
    intervals: dict[str, list[float] | None] = {}
    for name, blocks in draws.items():
        values = np.concatenate(blocks)
        values = values[~np.isnan(values)]
        intervals[name] = (
            [float(np.percentile(values, tail)), float(np.percentile(values, 100 - tail))]
            if values.size
            else None
        )
    return intervals


def with_intervals(
    statistic: Statistic,
    n: int,
    *,
    cluster: Sequence[Hashable] | None,
    n_resamples: int,
    seed: int,
    confidence: float,
) -> dict[str, Any]:
    """The flat result: each value of ``statistic`` at full weight as ``name`` and its bootstrap
    interval as ``name_ci``."""
    point = {
        name: float(np.asarray(value).reshape(-1)[0])
        for name, value in _quietly(statistic, np.ones((1, n))).items()
    }
    intervals = bootstrap_intervals(
        statistic,
        list(point),
        n,
        cluster=cluster,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
    )
    clashing = sorted(name for name in point if f"{name}_ci" in point)
    if clashing:
        raise ValueError(
            f"result key(s) {clashing} clash with the intervals of others: rename the group(s)"
        )
    result: dict[str, Any] = {}
    for name, value in point.items():
        result[name] = None if math.isnan(value) else value
        result[f"{name}_ci"] = intervals[name]
    return result


def group_means(
    weights: np.ndarray, credit: np.ndarray, masks: Mapping[str, np.ndarray], name: str
) -> dict[str, np.ndarray]:
    """Per resample, the mean ``credit`` of each group as ``<name>_<group>`` and, when there are
    groups, their unweighted mean as ``macro_<name>``."""
    per_group = {
        f"{name}_{group}": weighted_mean(weights[:, mask], credit[mask])
        for group, mask in masks.items()
    }
    if per_group:
        per_group[f"macro_{name}"] = np.nanmean(np.stack(list(per_group.values())), axis=0)
    return per_group


def add_counts(result: dict[str, Any], counts: Mapping[str, int]) -> dict[str, Any]:
    """``result`` with the item counts added; a ``ValueError`` when a count's key (made from a
    group's name) would overwrite a result."""
    clashing = sorted(set(counts) & set(result))
    if clashing:
        raise ValueError(f"count key(s) {clashing} clash with result keys: rename the group(s)")
    result.update(counts)
    return result


def group_codes(groups: Sequence[Hashable] | None, n: int) -> dict[str, np.ndarray]:
    """Group name -> boolean mask over items, in first-seen order; a ``ValueError`` on a length
    mismatch or a missing group."""
    if groups is None:
        return {}
    if len(groups) != n:
        raise ValueError(f"groups has {len(groups)} values for {n} items")
    labels = np.asarray([str(g) if g is not None else "" for g in groups])
    missing = np.flatnonzero(labels == "")
    if missing.size:
        raise ValueError(f"groups[{missing[0]}] = {groups[missing[0]]!r} is not a group name")
    return {name: labels == name for name in dict.fromkeys(labels.tolist())}


def mcnemar_exact(correct_a: np.ndarray, correct_b: np.ndarray) -> dict[str, Any]:
    """Exact (binomial) McNemar test of two models' right/wrong outcomes on the same items.

    ``a_only`` / ``b_only``: items only A / only B gets right. The statistic is the smaller of
    the two; the two-sided p-value is twice the binomial tail at p = 1/2, capped at 1.
    """
    correct_a, correct_b = np.asarray(correct_a, bool), np.asarray(correct_b, bool)
    a_only = int((correct_a & ~correct_b).sum())
    b_only = int((~correct_a & correct_b).sum())
    discordant = a_only + b_only
    smaller = min(a_only, b_only)
    if discordant == 0:
        p_value = 1.0
    else:
        # In log space throughout: C(n, i) / 2**n overflows a float near n = 1030 when the
        # split is balanced, and benchmark-sized comparisons (13,838 VITATECS items) get there.
        log_terms = np.asarray(
            [
                math.lgamma(discordant + 1) - math.lgamma(i + 1) - math.lgamma(discordant - i + 1)
                for i in range(smaller + 1)
            ]
        ) - discordant * math.log(2.0)
        peak = float(log_terms.max())
        log_tail = peak + math.log(float(np.exp(log_terms - peak).sum()))
        p_value = min(1.0, 2.0 * math.exp(log_tail))
    return {"statistic": smaller, "p_value": p_value, "a_only": a_only, "b_only": b_only}


def paired_bootstrap(
    credit_a: np.ndarray,
    credit_b: np.ndarray,
    *,
    cluster: Sequence[Hashable] | None,
    n_resamples: int,
    seed: int,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Mean per-item credit of B minus A, with a bootstrap interval resampling the same items
    (or clusters) for both models."""
    credit_a, credit_b = np.asarray(credit_a, np.float64), np.asarray(credit_b, np.float64)
    difference = credit_b - credit_a
    result = with_intervals(
        lambda w: {"difference": weighted_mean(w, difference)},
        len(difference),
        cluster=cluster,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
    )
    return result


def block_matrix(name: str, blocks: Sequence[Sequence[Sequence[float]]]) -> np.ndarray:
    """2x2 score blocks as an (n, 2, 2) array: ``blocks[i][v][t]`` scores video ``v`` with text
    ``t``, where video 0 matches text 0 and video 1 text 1. A ``ValueError`` names a block of the
    wrong shape or a NaN/inf."""
    for index, block in enumerate(blocks):
        if len(block) != 2 or any(
            isinstance(row, (str, bytes)) or not hasattr(row, "__len__") or len(row) != 2
            for row in block
        ):
            raise ValueError(
                f"{name}[{index}] = {block!r} is not a 2x2 block [[v0t0, v0t1], [v1t0, v1t1]]"
            )
    array = np.asarray(blocks, dtype=np.float64).reshape(-1, 2, 2)
    bad = np.argwhere(~np.isfinite(array))
    if bad.size:
        i, v, t = bad[0]
        raise ValueError(f"{name}[{i}][{v}][{t}] = {float(array[i, v, t])} is not a finite score")
    return array


def winoground_credits(
    blocks: np.ndarray, ties: str, video_blocks: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Per 2x2 block (higher is better), Winoground's scores under the tie policy.

    ``text``: each video prefers its own text (v0: t0 over t1, v1: t1 over t0); ``video``: each
    text prefers its own video, compared in ``video_blocks`` where a model answered another
    question for it (Vinoground's video-score question), else in ``blocks``; ``group``: all four
    comparisons. Credits multiply, so under ``half`` a tied comparison halves the block's credit.
    """
    if video_blocks is None:
        video_blocks = blocks

    def one(target: np.ndarray, other: np.ndarray) -> np.ndarray:
        return win_credit(target, other[:, None], ties)[0]

    v0_text = one(blocks[:, 0, 0], blocks[:, 0, 1])
    v1_text = one(blocks[:, 1, 1], blocks[:, 1, 0])
    t0_video = one(video_blocks[:, 0, 0], video_blocks[:, 1, 0])
    t1_video = one(video_blocks[:, 1, 1], video_blocks[:, 0, 1])
    text, video = v0_text * v1_text, t0_video * t1_video
    return {"text": text, "video": video, "group": text * video}


def check_integers(name: str, values: Any) -> None:
    """A ``ValueError`` naming the first value in ``values`` (nested lists, numpy arrays and
    tensors included) that is not an integer: a float, a bool, a string or ``None``.

    Indices (a true option, a view's texts) must be whole numbers as given, not after a cast: a
    label of 1.9 is a bug upstream, not option 1.
    """
    if hasattr(values, "tolist"):  # numpy arrays and tensors: their elements as Python numbers
        values = values.tolist()
    if isinstance(values, (list, tuple)):
        for index, value in enumerate(values):
            check_integers(f"{name}[{index}]", value)
    elif isinstance(values, bool) or not isinstance(values, (int, np.integer)):
        raise ValueError(
            f"{name} = {values!r} is not an integer index: pass ints, not floats, bools or "
            "strings (an int64 feature of evaluate would cast it silently, 1.9 to 1)"
        )


def _holds_integers(feature: Any) -> bool:
    """Whether an ``evaluate`` feature holds integers, bare or in (nested) lists. Duck-typed on
    ``datasets``' ``Value`` / ``List`` (``.dtype`` / ``.feature``) so this file needs numpy only."""
    while hasattr(feature, "feature"):
        feature = feature.feature
    return str(getattr(feature, "dtype", "")).startswith(("int", "uint"))


class ExactInputs:
    """Mixin for foilkit's ``evaluate.Metric`` classes (listed before ``evaluate.Metric``).

    ``evaluate`` encodes every input with its feature before ``_compute`` sees it, and an int64
    feature encodes with ``int(value)``: labels ``[1.9, 0.7]`` would reach the pure function as
    ``[1, 0]`` and score as right. ``add`` and ``add_batch`` (``compute`` goes through
    ``add_batch``) check the integer features' raw values with :func:`check_integers` first, so
    ``evaluate.load`` refuses what the pure function refuses.
    """

    #: ``add``'s singular keyword for each of evaluate's two standard feature names.
    _SINGULAR = {"predictions": "prediction", "references": "reference"}

    def _check_integer_inputs(self, inputs: Mapping[str, Any], *, batch: bool) -> None:
        """:func:`check_integers` on the inputs of this metric's integer features (``batch``:
        columns as ``add_batch`` takes them, else one example as ``add`` does)."""
        features = getattr(self, "features", None)
        if not isinstance(features, Mapping):
            return
        for feature_name, feature in features.items():
            name = feature_name if batch else self._SINGULAR.get(feature_name, feature_name)
            if _holds_integers(feature) and inputs.get(name) is not None:
                check_integers(name, inputs[name])

    def add_batch(self, **inputs: Any) -> Any:
        """``evaluate.Metric.add_batch`` after refusing non-integers in integer features."""
        self._check_integer_inputs(inputs, batch=True)
        return super().add_batch(**inputs)  # type: ignore[misc]

    def add(self, **inputs: Any) -> Any:
        """``evaluate.Metric.add`` after refusing non-integers in integer features."""
        self._check_integer_inputs(inputs, batch=False)
        return super().add(**inputs)  # type: ignore[misc]
