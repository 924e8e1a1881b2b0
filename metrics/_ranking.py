"""Ranks of each query's ground-truth targets in a score matrix, without a dense rank matrix.

Retrieval metrics (R@K, median and mean rank) need, per query, the 1-based rank of its best
ground-truth target among all candidates. Sorting every row (the CLIP4Clip way) materialises an
n x n argsort: 80 GB of int64 for a 100k x 100k pool. The rank of the best target is instead
``1 + (number of candidates scoring strictly higher than it)``, plus a share of the candidates
that tie with it, so this module gathers each target's score, then reads the matrix once in
blocks of rows and only counts comparisons: memory is O(block rows x candidates), the result
exact. numpy arrays (and CPU tensors, through a numpy view) are ranked with numpy; CUDA tensors
with torch on their device.

Tie policies (``TIE_RANKS``) for a query whose best target shares its score with ``m`` other
candidates (and ``t - 1`` other targets, which do not cost rank): ``optimistic`` ranks it before
all of them, ``pessimistic`` after the ``m`` non-targets, ``average`` at the expected rank of the
first target under a uniformly random order of the tied block, ``1 + m / (t + 1)`` past the
strictly better candidates (for one tied target: the midpoint of the other two policies).

Metric folders link this file as ``_ranking.py`` next to ``_common.py`` and import both with
line-start relative imports (``evaluate`` copies only the files its module imports directly).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._common import check_option, direction, weighted_mean

#: tie policy -> rank from (strictly higher, tied non-targets m, tied targets t), each (n,) arrays.
TIE_RANKS: dict[str, Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]] = {
    "optimistic": lambda higher, others, targets: higher + 1.0,
    "pessimistic": lambda higher, others, targets: higher + others + 1.0,
    "average": lambda higher, others, targets: higher + 1.0 + others / (targets + 1.0),
}
#: what each ranking tie policy does with a tied target, in words.
TIE_RANK_MEANINGS: dict[str, str] = {
    "optimistic": "ranks the target above the texts it ties with",
    "pessimistic": "ranks the target below the texts it ties with",
    "average": "ranks the target in the middle of the texts it ties with",
}
#: devices whose tensors are ranked by numpy on the same memory (no copy): on CPU numpy's
#: comparisons and reductions run several times faster than torch's. Others stay in torch.
NUMPY_DEVICES = {"cpu"}
#: score cells compared per chunk when ``chunk_size`` is not given, by the scores' device type.
CHUNK_CELLS: dict[str, int] = {"cpu": 1 << 22, "cuda": 1 << 26}
_DEFAULT_CHUNK_CELLS = 1 << 24
#: resample rows x items a weighted median holds at once (as ``_common``'s bootstrap blocks).
_MEDIAN_CELLS = 4_000_000


@dataclass(frozen=True)
class Targets:
    """Each query's ground-truth candidates as compressed rows: query ``q`` holds
    ``indices[indptr[q]:indptr[q + 1]]`` (sorted, unique)."""

    indptr: np.ndarray
    indices: np.ndarray
    n_candidates: int

    @classmethod
    def from_lists(
        cls,
        lists: Sequence[Sequence[int]],
        n_candidates: int,
        *,
        name: str = "targets",
        candidates: str = "candidates",
    ) -> Targets:
        """Validated targets; a ``ValueError`` names the query whose list is empty, not a list,
        holds a non-integer, or an index outside ``0..n_candidates - 1``."""
        lengths = np.zeros(len(lists), dtype=np.int64)
        for query, row in enumerate(lists):
            if isinstance(row, (str, bytes)) or not hasattr(row, "__len__"):
                raise ValueError(
                    f"{name}[{query}] = {row!r} must be a list of {candidates} indices"
                )
            if len(row) == 0:
                raise ValueError(f"{name}[{query}] is empty: every query needs a target")
            lengths[query] = len(row)
        try:
            flat = np.asarray(list(itertools.chain.from_iterable(lists)))
        except (TypeError, ValueError):  # nested rows: found below
            flat = np.zeros(0, dtype=object)
        if flat.ndim != 1 or flat.dtype.kind not in "iu":
            for query, row in enumerate(lists):
                if not all(isinstance(i, (int, np.integer)) for i in row) or any(
                    isinstance(i, bool) for i in row
                ):
                    raise ValueError(f"{name}[{query}] = {list(row)!r} must hold integer indices")
            flat = flat.astype(np.int64)  # no rows at all
        owners = np.repeat(np.arange(len(lists), dtype=np.int64), lengths)
        outside = np.flatnonzero((flat < 0) | (flat >= n_candidates))
        if outside.size:
            raise ValueError(
                f"{name}[{owners[outside[0]]}] holds {int(flat[outside[0]])}, outside the "
                f"{n_candidates} {candidates} (0..{n_candidates - 1})"
            )
        # sorted within each query, duplicates dropped
        order = np.lexsort((flat, owners))
        owners, flat = owners[order], flat[order].astype(np.int64)
        kept = np.ones(len(flat), dtype=bool)
        kept[1:] = (owners[1:] != owners[:-1]) | (flat[1:] != flat[:-1])
        counts = np.bincount(owners[kept], minlength=len(lists))
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return cls(indptr, flat[kept], int(n_candidates))

    @property
    def n_queries(self) -> int:
        return len(self.indptr) - 1

    def lengths(self) -> np.ndarray:
        """The number of targets of each query."""
        return np.diff(self.indptr)

    def transpose(self) -> Targets:
        """The same ground truth seen from the other side: for each candidate, the queries it is
        a target of (possibly none)."""
        queries = np.repeat(np.arange(self.n_queries, dtype=np.int64), self.lengths())
        order = np.lexsort((queries, self.indices))
        counts = np.bincount(self.indices, minlength=self.n_candidates)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return Targets(indptr, queries[order], self.n_queries)


@dataclass(frozen=True)
class Ranking:
    """Per query: the 1-based rank of its best target under the tie policy (float: ``average``
    can give fractions), and whether a non-target candidate tied with that target."""

    ranks: np.ndarray
    tied: np.ndarray


@dataclass(frozen=True)
class _Backend:
    """The few operations that differ between numpy arrays and torch tensors."""

    xp: Any  # the array module: numpy or torch (isfinite, argwhere, bincount)
    index: Callable[[np.ndarray, Any], Any]  # numpy int64 -> index array beside ``like``
    segment_max: Callable[[Any, Any, int], Any]  # (values, segment ids, n segments) -> maxima
    to_numpy: Callable[[Any], np.ndarray]
    device_type: Callable[[Any], str]


def _numpy_segment_max(values: np.ndarray, segments: np.ndarray, n: int) -> np.ndarray:
    best = np.full(n, -np.inf, dtype=values.dtype)
    with np.errstate(invalid="ignore"):  # a NaN target is reported by the scan of its block
        np.maximum.at(best, segments, values)
    return best


def _torch_backend() -> _Backend:
    import torch

    def segment_max(values: Any, segments: Any, n: int) -> Any:
        best = torch.full((n,), -math.inf, dtype=values.dtype, device=values.device)
        return best.scatter_reduce_(0, segments, values, reduce="amax")

    return _Backend(
        xp=torch,
        index=lambda array, like: torch.as_tensor(array, device=like.device),
        segment_max=segment_max,
        to_numpy=lambda tensor: tensor.cpu().numpy(),
        device_type=lambda tensor: tensor.device.type,
    )


_NUMPY = _Backend(
    xp=np,
    index=lambda array, like: array,
    segment_max=_numpy_segment_max,
    to_numpy=np.asarray,
    device_type=lambda array: "cpu",
)


def is_tensor(scores: Any) -> bool:
    """Whether ``scores`` is a torch tensor (checked without importing torch)."""
    return type(scores).__module__.split(".")[0] == "torch" and hasattr(scores, "device")


def as_score_array(scores: Any, *, name: str = "scores") -> Any:
    """``scores`` as a 2-D array: torch tensors on their device (a CPU tensor viewed as numpy,
    see ``NUMPY_DEVICES``), anything else as numpy (float64 unless already a float array). A
    ``ValueError`` names a ragged row or a wrong shape. Finiteness is checked while ranking."""
    if is_tensor(scores):
        scores = scores.detach()
        if not scores.is_floating_point():
            scores = scores.double()  # integers: negating unsigned ones would wrap
        if scores.device.type in NUMPY_DEVICES:
            scores = (scores.float() if str(scores.dtype) == "torch.bfloat16" else scores).numpy()
    elif not isinstance(scores, np.ndarray):
        lengths = [len(row) if hasattr(row, "__len__") else None for row in scores]
        for index, length in enumerate(lengths):
            if length is None:
                raise ValueError(f"{name}[{index}] = {scores[index]!r} is not a row of scores")
            if length != lengths[0]:
                raise ValueError(
                    f"{name}[{index}] has {length} scores, {name}[0] has {lengths[0]}: "
                    "every row needs one score per candidate"
                )
        try:
            scores = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{name} must be a matrix of numbers: {error}") from None
    elif scores.dtype.kind in "iu":
        scores = scores.astype(np.float64)  # integers: negating unsigned ones would wrap
    elif scores.dtype.kind != "f":
        raise ValueError(f"{name} has dtype {scores.dtype}; a matrix of numbers is needed")
    if scores.ndim != 2:
        raise ValueError(f"{name} must be 2-D (queries x candidates), not {tuple(scores.shape)}")
    if 0 in scores.shape:
        raise ValueError(f"{name} is empty (shape {tuple(scores.shape)})")
    return scores


def rank_targets(
    scores: Any,
    targets: Targets | Sequence[Sequence[int]],
    *,
    query_axis: int = 0,
    score_kind: str = "similarity",
    ties: str = "optimistic",
    chunk_size: int | None = None,
    name: str = "scores",
) -> Ranking:
    """Rank each query's best ground-truth target among all candidates.

    Args:
        scores: the score matrix (numpy array, anything numpy converts, or a torch tensor on any
            device); queries along ``query_axis`` (0: rows, 1: columns), candidates along the other.
        targets: per query, the candidate indices that are correct for it (one or more).
        score_kind: which way is better (see ``_common.SCORE_KINDS``).
        ties: ``optimistic``, ``pessimistic`` or ``average`` (see ``TIE_RANKS``).
        chunk_size: matrix rows compared at once; by default as many as fit ``CHUNK_CELLS``.

    The targets' scores are gathered first (one per target); the matrix is then read once, in
    blocks of its rows (contiguous in memory whichever side the queries are), counting per
    query the candidates above and level with its best target. A ``ValueError`` names the cell
    ``scores[row, column]`` holding a NaN or inf.
    """
    check_option("ties", ties, TIE_RANKS)
    check_option("query_axis", query_axis, (0, 1))
    sign = direction(score_kind)
    scores = as_score_array(scores, name=name)
    n_queries, n_candidates = scores.shape[query_axis], scores.shape[1 - query_axis]
    if not isinstance(targets, Targets):
        targets = Targets.from_lists(targets, n_candidates)
    if targets.n_queries != n_queries or targets.n_candidates != n_candidates:
        raise ValueError(
            f"targets cover {targets.n_queries} queries x {targets.n_candidates} candidates, "
            f"{name} has {n_queries} x {n_candidates} (query_axis={query_axis})"
        )
    empty = np.flatnonzero(targets.lengths() == 0)
    if empty.size:
        raise ValueError(f"query {empty[0]} has no target: every query needs one")
    backend = _torch_backend() if is_tensor(scores) else _NUMPY
    if chunk_size is None:
        cells = CHUNK_CELLS.get(backend.device_type(scores), _DEFAULT_CHUNK_CELLS)
        chunk_size = max(1, cells // scores.shape[1])
    if not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise ValueError(f"chunk_size={chunk_size!r} must be a positive integer")

    queries = np.repeat(np.arange(n_queries, dtype=np.int64), targets.lengths())
    cell = (queries, targets.indices) if query_axis == 0 else (targets.indices, queries)
    values = sign * scores[backend.index(cell[0], scores), backend.index(cell[1], scores)]
    owner = backend.index(queries, scores)
    best = backend.segment_max(values, owner, n_queries)
    tied_targets = backend.xp.bincount(owner[values == best[owner]], minlength=n_queries)
    above, level = (backend.xp.zeros_like(tied_targets) for _ in range(2))
    for start in range(0, scores.shape[0], chunk_size):
        stop = min(start + chunk_size, scores.shape[0])
        block = scores[start:stop]
        _check_finite(block, backend, start, name)
        block = block if sign > 0 else -block
        if query_axis == 0:  # rows are queries: each against its own best target
            kept, pivot = slice(start, stop), best[start:stop, None]
        else:  # rows are candidates: against every query's best target
            kept, pivot = slice(None), best[None, :]
        above[kept] += (block > pivot).sum(1 - query_axis, dtype=backend.xp.int32)
        level[kept] += (block == pivot).sum(1 - query_axis, dtype=backend.xp.int32)
    higher, tied, tied_targets = (backend.to_numpy(x) for x in (above, level, tied_targets))
    others = tied - tied_targets
    ranks = TIE_RANKS[ties](*(x.astype(np.float64) for x in (higher, others, tied_targets)))
    return Ranking(ranks, others > 0)


def _check_finite(block: Any, backend: _Backend, start: int, name: str) -> None:
    """A ``ValueError`` naming the first NaN or inf of a block of rows by its cell in ``scores``."""
    if math.isfinite(float(block.min())) and math.isfinite(float(block.max())):
        return
    row, column = (int(i) for i in backend.xp.argwhere(~backend.xp.isfinite(block))[0])
    value = float(block[row, column])
    raise ValueError(f"{name}[{start + row}, {column}] = {value!r} is not a finite score")


def check_ks(ks: Sequence[int]) -> tuple[int, ...]:
    """``ks`` as a tuple of positive integers; a ``ValueError`` naming a bad one."""
    if isinstance(ks, (int, np.integer)):
        ks = (ks,)
    if len(ks) == 0:
        raise ValueError("ks is empty: give at least one cut-off K for recall@K")
    for k in ks:
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
            raise ValueError(f"ks holds {k!r}; recall@K needs positive integers")
    return tuple(int(k) for k in ks)


def weighted_median(
    weights: np.ndarray, values: np.ndarray, owners: np.ndarray | None = None
) -> np.ndarray:
    """Per resample (row of integer ``weights``), ``np.median`` of the sample in which value
    ``i`` occurs ``weights[:, owners[i]]`` times (``owners=None``: ``weights[:, i]`` times);
    NaN where the sample is empty. ``owners`` lets queries follow the resampled items they
    belong to without a resamples x queries weight matrix."""
    values = np.asarray(values, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    columns = order if owners is None else np.asarray(owners)[order]
    medians = np.full(len(weights), np.nan)
    step = max(1, _MEDIAN_CELLS // max(1, len(values)))
    for start in range(0, len(weights), step):
        cumulative = np.cumsum(weights[start : start + step][:, columns], axis=1)
        total = cumulative[:, -1]
        # the ceil(W/2)-th and (floor(W/2)+1)-th values of the W drawn: equal when W is odd
        lower = (cumulative < np.ceil(total / 2)[:, None]).sum(1)
        upper = (cumulative < np.floor(total / 2)[:, None] + 1).sum(1)
        upper = np.minimum(upper, len(values) - 1)  # only an empty sample reaches the end
        middle = (ordered[lower] + ordered[upper]) / 2
        medians[start : start + step] = np.where(total > 0, middle, np.nan)
    return medians


def owned_mean(weights: np.ndarray, values: np.ndarray, owners: np.ndarray) -> np.ndarray:
    """Per resample, the mean of ``values`` where value ``i`` counts ``weights[:, owners[i]]``
    times; NaN where no value is drawn. Averages per owner first, so memory stays resamples x
    owners."""
    counts = np.bincount(owners, minlength=weights.shape[1]).astype(np.float64)
    sums = np.bincount(owners, weights=np.asarray(values, np.float64), minlength=weights.shape[1])
    per_owner = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    return weighted_mean(weights * counts, per_owner)
