"""Power and minimum detectable effects (MDE) of foilkit's tests, from a benchmark's own structure.

Two questions, each answered by an exact test where one exists and by simulation from the
item/cluster structure where items share videos:

``paired``: model B against model A on the same items, as ``foilkit compare`` tests them. The
    exact figure (``exact-mcnemar``) is the power of foilkit's exact McNemar test (two-sided
    p-value: twice the smaller binomial tail at 1/2, rejected at ``p <= alpha``) when each item
    is discordant (one model right, the other wrong) with probability ``discordance`` and the
    accuracy difference is ``effect``: a sum over the number of discordant items D ~ Bin(n, q)
    of the conditional binomial power, given D, of B's share of them, (q + d) / 2q.
``versus``: one model against chance or a fixed accuracy ``null``. The exact figure
    (``exact-binomial``) is the power of the two-sided exact binomial test with equal tails
    (each at most alpha / 2) when the accuracy is ``null + effect``.

Both exact figures treat items as independent. Items that share a video are not: the
``cluster-simulation`` figure draws data sets with the benchmark's real cluster sizes, the
items of a video correlated ``icc`` (each item takes its video's shared outcome with
probability sqrt(icc), else an outcome of its own: the marginal rates stay those assumed and
two items of one video correlate ``icc``), and tests each with the cluster-robust Wald test of
the mean difference, referred to Student's t with (videos - 1) degrees of freedom (the test the
bootstrap CIs clustered by video approximate, kept honest when videos are few); it also
reports how often foilkit's McNemar test rejects there (under ``effect = 0``, its real size,
which can exceed alpha once icc > 0). From a run's per-item outcomes the
``cluster-resampling`` figure resamples its videos with replacement, as the CIs do, and shifts
the resampled mean by the effect: the power of the cluster-robust test with the observed
structure and variance.

Effects, MDEs and accuracies are fractions in the functions and points (percent) in
:class:`Figure`. Every simulation is seeded (``seed``): the same call gives the same figure.
numpy only (the binomial tails are summed from exact log-probabilities).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from functools import lru_cache, partial
from statistics import NormalDist
from typing import Any

import numpy as np

EXACT_MCNEMAR = "exact-mcnemar"
EXACT_BINOMIAL = "exact-binomial"
CLUSTER_SIMULATION = "cluster-simulation"
CLUSTER_RESAMPLING = "cluster-resampling"
#: What each method is, in one line (reports and ``foilkit power`` state it).
METHODS = {
    EXACT_MCNEMAR: "exact: McNemar's conditional binomial test summed over the number of "
    "discordant items; items independent",
    EXACT_BINOMIAL: "exact: two-sided binomial test (equal tails) against the null accuracy; "
    "items independent",
    CLUSTER_SIMULATION: "simulated data sets with the benchmark's cluster sizes (items of a video "
    "correlated icc), cluster-robust Wald test (t, videos - 1 df)",
    CLUSTER_RESAMPLING: "the run's videos resampled with replacement (as the CIs are), shifted "
    "by the effect, cluster-robust Wald test (t, videos - 1 df)",
}
DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.8
#: Within-video correlation of item outcomes assumed before a run (a run measures its own).
DEFAULT_ICC = 0.1
#: Correlation of two models' per-item outcomes assumed before a run, as lmms-eval's ``power``
#: assumes: the discordance rate is then ``2 p (1 - p) (1 - 0.5)`` at accuracy ``p``.
DEFAULT_CORRELATION = 0.5
DEFAULT_SIMULATIONS = 1000
DEFAULT_SEED = 0
#: The largest item count :func:`n_required` searches; more is reported as ``None``.
MAX_ITEMS = 2_000_000
#: Resampling a run searches ``n_required`` up to this many times its videos.
MAX_GROWTH = 64
#: Cells of one block of an exact sum or a resampling: memory stays near 10 MB per array.
_CELLS = 1 << 20


#: ``log(k!)`` for small ``k`` (above it, Stirling's series is exact to double precision).
_SMALL = 256
_SMALL_LOG_FACTORIALS = np.array([math.lgamma(k + 1) for k in range(_SMALL)])


@lru_cache(maxsize=4)
def _log_factorial_table(size: int) -> np.ndarray:
    """``log(k!)`` for ``k = 0 .. size - 1``: ``math.lgamma`` below :data:`_SMALL`, Stirling's
    series (exact to double precision there) above."""
    big = np.arange(_SMALL, max(size, _SMALL), dtype=np.float64)
    stirling = (
        big * np.log(big)
        - big
        + 0.5 * np.log(2 * math.pi * big)
        + 1 / (12 * big)
        - 1 / (360 * big**3)
        + 1 / (1260 * big**5)
    )
    return np.concatenate([_SMALL_LOG_FACTORIALS, stirling])


def _log_factorial(k: np.ndarray) -> np.ndarray:
    """``log(k!)`` of each whole number in ``k``."""
    k = np.asarray(k, dtype=np.int64)
    size = 1 << 12
    while size <= int(k.max(initial=0)):
        size <<= 2
    return _log_factorial_table(size)[k]


def binomial_pmf(n: int | np.ndarray, p: float, k: np.ndarray | None = None) -> np.ndarray:
    """``P(X = k)`` of X ~ Bin(n, p) at each of ``k`` (default ``0 .. n``; ``n`` may be an array
    broadcast against ``k``; ``k`` outside ``0 .. n`` has probability 0), from exact
    log-probabilities (no overflow at benchmark sizes)."""
    n = np.asarray(n, dtype=np.int64)
    k = np.arange(int(n) + 1) if k is None else np.asarray(k, dtype=np.int64)
    n, k = np.broadcast_arrays(n, k)
    inside = (k >= 0) & (k <= n)
    k_in, rest = np.where(inside, k, 0), np.where(inside, n - k, 0)
    log_choose = _log_factorial(n) - _log_factorial(k_in) - _log_factorial(rest)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = np.where(k_in > 0, k_in * (math.log(p) if p > 0 else -np.inf), 0.0)
        log_q = np.where(rest > 0, rest * (math.log1p(-p) if p < 1 else -np.inf), 0.0)
        return np.exp(np.where(inside, log_choose + log_p + log_q, -np.inf))


def _window(n: int, p: float) -> np.ndarray:
    """The values of Bin(n, p) outside which lies less than 1e-12 of its mass (Bernstein's
    bound): 8 standard deviations and 20 around the mean."""
    width = 8 * math.sqrt(n * p * (1 - p)) + 20
    return np.arange(max(0, math.floor(n * p - width)), min(n, math.ceil(n * p + width)) + 1)


def _tail_counts(cdf_window: np.ndarray, start: int, bound: float) -> int:
    """The largest ``k`` with ``P(X <= k) <= bound``, from the cdf over a window starting at
    ``start`` (the mass below it negligible); ``start - 1`` when no value in it qualifies."""
    return start - 1 + int(np.searchsorted(cdf_window, bound * (1 + 1e-12), side="right"))


@lru_cache(maxsize=1 << 17)
def mcnemar_critical(discordant: int, alpha: float) -> int:
    """The largest smaller-count ``k`` foilkit's McNemar test rejects among ``discordant`` items
    (``2 * P(Bin(discordant, 1/2) <= k) <= alpha``), ``-1`` when none."""
    if discordant == 0:
        return -1
    k = _window(discordant, 0.5)
    critical = _tail_counts(np.cumsum(binomial_pmf(discordant, 0.5, k)), int(k[0]), alpha / 2)
    return min(critical, (discordant - 1) // 2) if alpha < 1 else critical


def _check(alpha: float, power: float | None = None) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha={alpha!r} must lie strictly between 0 and 1")
    if power is not None and not 0 < power < 1:
        raise ValueError(f"power={power!r} must lie strictly between 0 and 1")


def _paired_rates(discordance: float, effect: float) -> tuple[float, float]:
    """(P(only B right), P(only A right)) of an item; a ``ValueError`` when impossible."""
    if not 0 < discordance <= 1:
        raise ValueError(f"discordance={discordance!r} must lie in (0, 1]")
    if abs(effect) > discordance + 1e-12:
        raise ValueError(
            f"an effect of {100 * effect:g} points needs at least that share of discordant "
            f"items; the discordance is {100 * discordance:g}%"
        )
    return min(1.0, (discordance + effect) / 2), max(0.0, (discordance - effect) / 2)


def mcnemar_power(n: int, discordance: float, effect: float, alpha: float = DEFAULT_ALPHA) -> float:
    """Exact power of foilkit's McNemar test on ``n`` independent items, each discordant with
    probability ``discordance``, B's accuracy ``effect`` above A's."""
    _check(alpha)
    b_only, _ = _paired_rates(discordance, effect)
    share = b_only / discordance  # B's share of the discordant items
    counts = _window(n, discordance)  # the numbers of discordant items D worth summing over
    weights = binomial_pmf(n, discordance, counts)
    critical = np.array([mcnemar_critical(m, alpha) for m in counts.tolist()])
    # given D = m, B's count X ~ Bin(m, share): its window, one row per m, in blocks of rows
    # that keep the matrix near a million cells
    width = _window(int(counts[-1]), share).size // 2 + 1
    offsets = np.arange(-width, width + 1)
    given = np.empty(counts.size)
    block = max(1, _CELLS // offsets.size)
    for start in range(0, counts.size, block):
        m = counts[start : start + block, None]
        c = critical[start : start + block, None]
        x = np.floor(m * share).astype(np.int64) + offsets
        rejected = (c >= 0) & ((x <= c) | (x >= m - c))
        given[start : start + block] = (binomial_pmf(m, share, x) * rejected).sum(axis=1)
    return float(min(1.0, (weights * given).sum()))


def binomial_critical(n: int, null: float, alpha: float) -> tuple[int, int]:
    """``(low, high)``: the two-sided exact binomial test with equal tails rejects
    ``X <= low`` or ``X >= high`` (each tail at most ``alpha / 2`` under ``null``)."""
    k = _window(n, null)
    pmf = binomial_pmf(n, null, k)
    low = _tail_counts(np.cumsum(pmf), int(k[0]), alpha / 2)
    # the upper tail, counted from the top: the same search on n - X
    high = n - _tail_counts(np.cumsum(pmf[::-1]), n - int(k[-1]), alpha / 2)
    return low, high


def binomial_power(n: int, null: float, effect: float, alpha: float = DEFAULT_ALPHA) -> float:
    """Exact power of the two-sided binomial test of accuracy ``null`` on ``n`` independent
    items when the accuracy is ``null + effect``."""
    _check(alpha)
    if not 0 <= null + effect <= 1 or not 0 < null < 1:
        raise ValueError(f"null={null!r} + effect={effect!r} must be an accuracy in [0, 1]")
    low, high = binomial_critical(n, null, alpha)
    x = _window(n, null + effect)
    pmf = binomial_pmf(n, null + effect, x)
    return float(min(1.0, pmf[(x <= low) | (x >= high)].sum()))


def t_critical(alpha: float, clusters: int) -> float:
    """The two-sided critical value of Student's t with ``clusters - 1`` degrees of freedom: the
    small-sample reference of a cluster-robust Wald test (with few videos, the normal one
    rejects too often). Exact for 1 and 2 degrees of freedom, Abramowitz & Stegun 26.7.5 (the
    Cornish-Fisher expansion, good to 1e-3 from 3) above."""
    p = 1 - alpha / 2
    df = clusters - 1
    if df < 1:
        return math.inf
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    x = NormalDist().inv_cdf(p)
    terms = (
        (x**3 + x) / 4,
        (5 * x**5 + 16 * x**3 + 3 * x) / 96,
        (3 * x**7 + 19 * x**5 + 17 * x**3 - 15 * x) / 384,
        (79 * x**9 + 776 * x**7 + 1482 * x**5 - 1920 * x**3 - 945 * x) / 92160,
    )
    return x + sum(term / df ** (power + 1) for power, term in enumerate(terms))


def _wald_rejects(
    sums: Mapping[str, np.ndarray], sizes: np.ndarray, null: float, alpha: float
) -> np.ndarray:
    """Whether the two-sided cluster-robust Wald test rejects ``mean == null``, per simulated data
    set, from its sums over clusters (:func:`_simulated_sums`) of the cluster totals ``T``
    (``total``), of ``T**2`` (``square``) and of ``size * T`` (``weighted``)."""
    n, clusters = sizes.sum(), sizes.size
    total, square, weighted = sums["total"], sums["square"], sums["weighted"]
    mean = total / n
    spread = square - 2 * mean * weighted + mean**2 * (sizes.astype(np.float64) ** 2).sum()
    variance = clusters / max(clusters - 1, 1) * np.maximum(spread, 0.0) / n**2
    gap = np.abs(mean - null)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(variance > 0, gap / np.sqrt(variance), np.where(gap > 1e-12, np.inf, 0.0))
    return z > t_critical(alpha, clusters)


def _root_icc(icc: float) -> float:
    """The probability an item takes its video's shared outcome, for outcomes correlated
    ``icc`` within a video."""
    if not 0 <= icc < 1:
        raise ValueError(f"icc={icc!r} must lie in [0, 1)")
    return math.sqrt(icc)


def _trinomial(k: int, size: int, b: float, a: float) -> np.ndarray:
    """``P(x items only B right, y only A right)`` among ``k`` independent items, on a
    ``(size + 1) x (size + 1)`` grid."""
    x, y = np.meshgrid(np.arange(size + 1), np.arange(size + 1), indexing="ij")
    rest = k - x - y
    inside = rest >= 0
    x, y, rest = (np.where(inside, v, 0) for v in (x, y, rest))
    log = _log_factorial(np.int64(k)) - _log_factorial(x) - _log_factorial(y) - _log_factorial(rest)
    with np.errstate(divide="ignore", invalid="ignore"):
        for count, rate in ((x, b), (y, a), (rest, 1 - a - b)):
            log = log + np.where(count > 0, count * (math.log(rate) if rate > 0 else -np.inf), 0.0)
        return np.exp(np.where(inside, log, -np.inf))


def _paired_states(
    size: int, b: float, a: float, copy: float
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The outcomes of a video of ``size`` items (items only B gets right, ``b_only``, only A,
    ``a_only``, and the difference, ``total``) and their probabilities: each item takes the
    video's shared outcome with probability ``copy``, else one of its own."""
    grid = np.zeros((size + 1, size + 1))
    for copied, weight in enumerate(binomial_pmf(size, copy).tolist()):
        if weight == 0:
            continue
        own = _trinomial(size - copied, size, b, a)
        grid += weight * (1 - a - b) * own
        grid[copied:, :] += weight * b * own[: size + 1 - copied, :]
        grid[:, copied:] += weight * a * own[:, : size + 1 - copied]
    plus, minus = np.nonzero(grid > 0)
    outcomes = {"total": plus - minus, "b_only": plus, "a_only": minus}
    return outcomes, grid[plus, minus] / grid[plus, minus].sum()


def _versus_states(
    size: int, accuracy: float, copy: float
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The items right in a video of ``size`` items (``total``) and their probabilities (shared
    outcome with probability ``copy`` per item, as :func:`_paired_states`)."""
    pmf = np.zeros(size + 1)
    for copied, weight in enumerate(binomial_pmf(size, copy).tolist()):
        own = binomial_pmf(size - copied, accuracy)
        pmf[: size + 1 - copied] += weight * (1 - accuracy) * own
        pmf[copied:] += weight * accuracy * own
    right = np.nonzero(pmf > 0)[0]
    return {"total": right}, pmf[right] / pmf[right].sum()


def _simulated_sums(
    sizes: np.ndarray,
    states: Callable[[int], tuple[dict[str, np.ndarray], np.ndarray]],
    simulations: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """Per simulated data set, sums over its videos of each value ``states(size)`` gives a video
    of that size (and of ``total``'s square and ``size * total``). The videos of one size are
    drawn as counts of their possible outcomes (a multinomial: the same distribution as drawing
    each item, at a cost independent of the item count)."""
    rng = np.random.default_rng(seed)
    sums: dict[str, np.ndarray] = {}
    for size, count in zip(*np.unique(sizes, return_counts=True), strict=True):
        values, probabilities = states(int(size))
        drawn = rng.multinomial(int(count), probabilities, size=simulations).astype(np.float64)
        total = values["total"].astype(np.float64)
        values = {**values, "square": total**2, "weighted": size * total}
        for name, value in values.items():
            sums[name] = sums.get(name, 0.0) + drawn @ value.astype(np.float64)
    return sums


def simulated_paired_power(
    sizes: Sequence[int],
    discordance: float,
    effect: float,
    *,
    icc: float = DEFAULT_ICC,
    alpha: float = DEFAULT_ALPHA,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = DEFAULT_SEED,
) -> dict[str, float]:
    """Simulated power with videos of ``sizes`` items correlated ``icc``: ``cluster`` (the
    cluster-robust Wald test of the mean difference) and ``mcnemar`` (foilkit's McNemar test,
    which ignores the videos)."""
    _check(alpha)
    b_rate, a_rate = _paired_rates(discordance, effect)
    copy = _root_icc(icc)
    sizes = np.asarray(sizes, dtype=np.int64)
    states = partial(_paired_states, b=b_rate, a=a_rate, copy=copy)
    sums = _simulated_sums(sizes, states, simulations, seed)
    cluster = _wald_rejects(sums, sizes, 0.0, alpha)
    b_total, a_total = sums["b_only"].astype(np.int64), sums["a_only"].astype(np.int64)
    critical = np.array([mcnemar_critical(int(m), alpha) for m in (b_total + a_total).tolist()])
    mcnemar = np.minimum(b_total, a_total) <= critical
    return {"cluster": float(cluster.mean()), "mcnemar": float(mcnemar.mean())}


def simulated_versus_power(
    sizes: Sequence[int],
    null: float,
    effect: float,
    *,
    icc: float = DEFAULT_ICC,
    alpha: float = DEFAULT_ALPHA,
    simulations: int = DEFAULT_SIMULATIONS,
    seed: int = DEFAULT_SEED,
) -> dict[str, float]:
    """Simulated power against accuracy ``null`` when it is ``null + effect``, videos of
    ``sizes`` items correlated ``icc``: ``cluster`` (cluster-robust Wald test) and ``binomial``
    (the exact binomial test, which ignores the videos)."""
    _check(alpha)
    accuracy = null + effect
    if not 0 <= accuracy <= 1:
        raise ValueError(f"null={null!r} + effect={effect!r} must be an accuracy in [0, 1]")
    copy = _root_icc(icc)
    sizes = np.asarray(sizes, dtype=np.int64)
    states = partial(_versus_states, accuracy=accuracy, copy=copy)
    sums = _simulated_sums(sizes, states, simulations, seed)
    cluster = _wald_rejects(sums, sizes, null, alpha)
    low, high = binomial_critical(int(sizes.sum()), null, alpha)
    total = np.rint(sums["total"])
    return {
        "cluster": float(cluster.mean()),
        "binomial": float(((total <= low) | (total >= high)).mean()),
    }


@dataclass(frozen=True)
class Resampled:
    """A run's per-item outcome (a paired difference, or a credit) summed per video: resampled
    by video, the power of the cluster-robust test at an effect, with the observed variance."""

    totals: np.ndarray
    sizes: np.ndarray
    #: the mean of the squared per-item values (the independent-items variance's first term)
    second_moment: float

    @classmethod
    def of(cls, values: Sequence[float], cluster: Sequence[Hashable] | None) -> Resampled:
        """Per-item ``values`` clustered by ``cluster`` (``None``: each item its own cluster)."""
        values = np.asarray(values, dtype=np.float64)
        if values.size == 0:
            raise ValueError("no scored item to resample")
        moment = float((values**2).mean())
        if cluster is None:
            return cls(values, np.ones_like(values), moment)
        if len(cluster) != len(values):
            raise ValueError(f"cluster has {len(cluster)} values for {len(values)} items")
        _, codes = np.unique(np.asarray([str(c) for c in cluster]), return_inverse=True)
        return cls(
            np.bincount(codes, weights=values), np.bincount(codes).astype(np.float64), moment
        )

    @property
    def mean(self) -> float:
        return float(self.totals.sum() / self.sizes.sum())

    @property
    def design_effect(self) -> float:
        """The cluster-robust variance of the mean over the independent-items one (1: the
        clusters cost nothing; 2: the items count as half as many)."""
        n, clusters = self.sizes.sum(), self.totals.size
        residual = self.totals - self.sizes * self.mean
        robust = clusters / max(clusters - 1, 1) * (residual**2).sum() / n**2
        independent = (self.second_moment - self.mean**2) / n
        return float(robust / independent) if independent > 0 else 1.0

    def power(
        self,
        effect: float,
        *,
        alpha: float = DEFAULT_ALPHA,
        clusters: int | None = None,
        simulations: int = DEFAULT_SIMULATIONS,
        seed: int = DEFAULT_SEED,
    ) -> float:
        """Power of the two-sided cluster-robust Wald test when the true mean is ``effect`` away
        from the null: ``clusters`` videos (default: as many as observed) drawn with
        replacement, each resample's mean shifted by ``effect`` minus the observed mean."""
        _check(alpha)
        count = clusters or self.totals.size
        rng = np.random.default_rng(seed)
        critical = t_critical(alpha, count)
        rejected = 0
        block = max(1, _CELLS // count)  # simulations per block: about a million cells
        for start in range(0, simulations, block):
            rows = min(block, simulations - start)
            picked = rng.integers(0, self.totals.size, size=(rows, count))
            totals, sizes = self.totals[picked], self.sizes[picked]
            n = sizes.sum(axis=1)
            mean = totals.sum(axis=1) / n
            residual = totals - sizes * mean[:, None]
            variance = count / max(count - 1, 1) * (residual**2).sum(axis=1) / n**2
            shifted = np.abs(mean - self.mean + effect)
            with np.errstate(divide="ignore", invalid="ignore"):
                z = np.where(
                    variance > 0, shifted / np.sqrt(variance), np.where(shifted > 0, np.inf, 0)
                )
            rejected += int((z > critical).sum())
        return rejected / simulations


def minimum_detectable(
    power_at: Callable[[float], float],
    target: float,
    upper: float,
    *,
    tolerance: float = 1e-4,
    guess: float | None = None,
) -> float | None:
    """The smallest effect in ``(0, upper]`` whose power reaches ``target`` (bisection; power
    rises with the effect), to ``tolerance``; ``None`` when even ``upper`` falls short. A
    ``guess`` (another method's MDE) narrows the first bracket to a factor of two around it."""
    if upper <= 0 or power_at(upper) < target:
        return None
    low, high = 0.0, upper
    if guess is not None and 0 < guess < upper:
        high = min(upper, 2 * guess) if power_at(min(upper, 2 * guess)) >= target else upper
        low = guess / 2 if power_at(guess / 2) < target else 0.0
    while high - low > tolerance:
        middle = (low + high) / 2
        if power_at(middle) >= target:
            high = middle
        else:
            low = middle
    return high


def n_required(
    power_at: Callable[[int], float],
    target: float,
    *,
    start: int = 8,
    limit: int = MAX_ITEMS,
    tolerance: float = 0.0,
) -> int | None:
    """The smallest item count whose power reaches ``target`` (doubling from ``start``, then
    bisection to ``tolerance`` of it, a share; an exact test's power saws in n by a fraction of
    a point, so a count a few items lower may reach it too); ``None`` when even ``limit`` items
    fall short."""
    start = max(1, start)
    high = start
    while power_at(high) < target:
        if high >= limit:
            return None
        high = min(limit, high * 2)
    low = high // 2 if high > start else 0
    while high - low > max(1, tolerance * high):
        middle = (low + high) // 2
        if power_at(middle) >= target:
            high = middle
        else:
            low = middle
    return high


@lru_cache(maxsize=4096)
def mcnemar_mde(
    n: int, discordant: int, alpha: float = DEFAULT_ALPHA, target: float = DEFAULT_POWER
) -> float | None:
    """The minimum detectable effect (a fraction) of foilkit's McNemar test on ``n`` items that
    two models disagree on ``discordant`` of (the observed discordance): the smallest accuracy
    difference it detects with power ``target`` (``None``: no discordant item, or none it can
    detect)."""
    if n <= 0 or discordant <= 0:
        return None
    discordance = discordant / n
    return minimum_detectable(
        lambda effect: mcnemar_power(n, discordance, effect, alpha), target, discordance
    )


def discordance_from_accuracy(accuracy: float, correlation: float = DEFAULT_CORRELATION) -> float:
    """The share of items on which two models of accuracy ``accuracy`` disagree when their
    per-item outcomes correlate ``correlation``: ``2 p (1 - p) (1 - correlation)``."""
    if not 0 < accuracy < 1:
        raise ValueError(f"accuracy={accuracy!r} must lie strictly between 0 and 1")
    return 2 * accuracy * (1 - accuracy) * (1 - correlation)


def scaled_sizes(sizes: Sequence[int], n: int, seed: int = DEFAULT_SEED) -> np.ndarray:
    """Cluster sizes of a benchmark grown or shrunk to about ``n`` items: clusters drawn from
    ``sizes`` (with replacement, seeded) until they hold ``n`` items, the last one cut."""
    sizes = np.asarray(sizes, dtype=np.int64)
    rng = np.random.default_rng(seed)
    count = max(1, math.ceil(n / sizes.mean()) + 8)
    drawn = sizes[rng.integers(0, sizes.size, size=count)]
    while drawn.sum() < n:
        drawn = np.concatenate([drawn, sizes[rng.integers(0, sizes.size, size=count)]])
    cumulative = np.cumsum(drawn)
    last = int(np.searchsorted(cumulative, n))
    out = drawn[: last + 1].copy()
    out[-1] -= cumulative[last] - n
    return out[out > 0]


@dataclass(frozen=True)
class Figure:
    """One power figure: what it answers (``question``: ``paired`` or ``versus``), how
    (``method``, one of :data:`METHODS`), at which ``alpha`` and target ``power``; ``mde`` the
    minimum detectable effect in points (``None``: not reachable); with an ``effect`` (points),
    the ``power_at_effect`` and the items it needs (``n_required``); ``achieved_power``: the power
    at the effect two runs showed; ``assumptions``: every other number it rests on."""

    question: str
    method: str
    alpha: float
    power: float
    mde: float | None
    n_items: int
    n_clusters: int
    effect: float | None = None
    power_at_effect: float | None = None
    n_required: int | None = None
    achieved_power: float | None = None
    assumptions: dict[str, Any] = field(default_factory=dict)
    #: power at an effect (a fraction) by this figure's method and assumptions: the plot's curve
    curve: Callable[[float], float] | None = field(default=None, compare=False, repr=False)

    def to_record(self) -> dict[str, Any]:
        """The figure as JSON writes it (its curve left out)."""
        return {k: v for k, v in asdict(self).items() if k != "curve"}


def _points(value: float | None) -> float | None:
    return None if value is None else round(100 * value, 2)


@dataclass(frozen=True)
class Question:
    """What to compute for one set of items: the target, the effect asked about, and how hard
    the simulations work."""

    alpha: float = DEFAULT_ALPHA
    power: float = DEFAULT_POWER
    effect: float | None = None  # a fraction
    icc: float = DEFAULT_ICC
    simulations: int = DEFAULT_SIMULATIONS
    seed: int = DEFAULT_SEED

    def __post_init__(self) -> None:
        _check(self.alpha, self.power)
        if self.simulations < 1:
            raise ValueError(f"simulations={self.simulations!r} must be at least 1")

    def reaches(self, upper: float) -> bool:
        """Whether an effect is asked about that the design can have (at most ``upper``: the
        discordance of a paired comparison, 1 - null against a fixed accuracy); one it cannot
        have gets no power and no ``n_required`` (``None``)."""
        return self.effect is not None and self.effect <= upper + 1e-12

    @property
    def simulating(self) -> dict[str, Any]:
        """The settings :func:`simulated_paired_power` and :func:`simulated_versus_power` take."""
        return {
            "icc": self.icc,
            "alpha": self.alpha,
            "simulations": self.simulations,
            "seed": self.seed,
        }


def _figure(
    q: Question,
    question: str,
    method: str,
    sizes: np.ndarray,
    power_at: Callable[[float], float] | None,
    upper: float,
    needed: Callable[[], int | None],
    *,
    tolerance: float = 1e-4,
    guess: float | None = None,
    achieved: float | None = None,
    **assumptions: Any,
) -> Figure:
    """The figure of ``method`` from its power at an effect (``power_at``, also its curve;
    ``None``: no figure can be had): the MDE among effects up to ``upper`` (to ``tolerance``,
    the search started from ``guess``) and, for an effect the design can have, its power and
    the items it needs (``needed()``)."""
    mde = at_effect = found = None
    if power_at is not None:
        mde = minimum_detectable(power_at, q.power, upper, tolerance=tolerance, guess=guess)
        if q.reaches(upper):
            at_effect, found = power_at(q.effect), needed()
    return Figure(
        question,
        method,
        q.alpha,
        q.power,
        _points(mde),
        int(sizes.sum()),
        int(sizes.size),
        _points(q.effect),
        None if at_effect is None else round(at_effect, 4),
        found,
        None if achieved is None else round(achieved, 4),
        assumptions,
        power_at,
    )


def paired_figures(sizes: Sequence[int], discordance: float, q: Question) -> list[Figure]:
    """Before a run: two models on items in clusters of ``sizes``, discordant on a share
    ``discordance`` of them: the exact McNemar figure and the cluster simulation (with the real
    size of foilkit's McNemar test under the clusters, ``mcnemar_size``)."""
    sizes = np.asarray(sizes, dtype=np.int64)
    assumed = {"discordance": round(discordance, 4)}
    exact = _exact(q, "paired", sizes, discordance, **assumed)

    def simulated(effect: float, these: np.ndarray = sizes) -> float:
        return simulated_paired_power(these, discordance, effect, **q.simulating)["cluster"]

    size = simulated_paired_power(sizes, discordance, 0.0, **q.simulating)["mcnemar"]
    cluster = _simulated_figure(
        q, "paired", sizes, simulated, discordance, exact, **assumed, mcnemar_size=round(size, 4)
    )
    return [exact, cluster]


def _simulated_figure(
    q: Question,
    question: str,
    sizes: np.ndarray,
    simulated: Callable[..., float],
    upper: float,
    exact: Figure,
    **assumed: Any,
) -> Figure:
    """The ``cluster-simulation`` figure from ``simulated(effect, sizes)``, its searches started
    from the exact figure's answers."""
    return _figure(
        q,
        question,
        CLUSTER_SIMULATION,
        sizes,
        simulated,
        upper,
        lambda: n_required(
            lambda k: simulated(q.effect, scaled_sizes(sizes, k, q.seed)),
            q.power,
            start=(exact.n_required or int(sizes.sum())) // 2,
            tolerance=0.005,
        ),
        tolerance=5e-4,
        guess=None if exact.mde is None else exact.mde / 100,
        **assumed,
        icc=q.icc,
        simulations=q.simulations,
        seed=q.seed,
    )


#: Each question's exact test: its method and its power (of items, rate, effect, alpha).
_EXACT = {"paired": (EXACT_MCNEMAR, mcnemar_power), "versus": (EXACT_BINOMIAL, binomial_power)}


def _exact(
    q: Question,
    question: str,
    sizes: np.ndarray,
    rate: float,
    achieved: float | None = None,
    **assumed: Any,
) -> Figure:
    """The exact figure of ``question`` on items in clusters of ``sizes``: McNemar's test at
    discordance ``rate`` (the largest effect it can have; 0: none, two runs without a discordant
    item), or the binomial test against accuracy ``rate``."""
    method, power_of = _EXACT[question]
    n, upper = int(sizes.sum()), rate if question == "paired" else 1 - rate
    return _figure(
        q,
        question,
        method,
        sizes,
        (lambda effect: power_of(n, rate, effect, q.alpha)) if upper > 0 else None,
        upper,
        lambda: n_required(lambda k: power_of(k, rate, q.effect, q.alpha), q.power),
        achieved=achieved,
        **assumed,
    )


def versus_figures(sizes: Sequence[int], null: float, q: Question) -> list[Figure]:
    """Before a run: one model against accuracy ``null`` (chance, or a fixed value) on items in
    clusters of ``sizes``: the exact binomial figure and the cluster simulation."""
    sizes = np.asarray(sizes, dtype=np.int64)
    exact = _exact(q, "versus", sizes, null, null=round(null, 4))

    def simulated(effect: float, these: np.ndarray = sizes) -> float:
        return simulated_versus_power(these, null, effect, **q.simulating)["cluster"]

    return [
        exact,
        _simulated_figure(q, "versus", sizes, simulated, 1 - null, exact, null=round(null, 4)),
    ]


def cluster_sizes(cluster: Sequence[Hashable] | None, n: int) -> np.ndarray:
    """The items per cluster of ``n`` items with cluster values ``cluster`` (``None``: each item
    its own cluster)."""
    if cluster is None:
        return np.ones(n, dtype=np.int64)
    _, counts = np.unique(np.asarray([str(c) for c in cluster]), return_counts=True)
    return counts


def _resampled_figure(
    q: Question, question: str, sample: Resampled, upper: float, **extra: Any
) -> Figure:
    """The ``cluster-resampling`` figure of a run's outcomes; outcomes that never vary (two runs
    that agree on every item, a run right on every item) carry no variance to resample from:
    no MDE, power or ``n_required`` then (``None``)."""

    def power_at(effect: float, clusters: int | None = None) -> float:
        return sample.power(
            effect, alpha=q.alpha, clusters=clusters, simulations=q.simulations, seed=q.seed
        )

    def needed() -> int | None:
        clusters = n_required(
            lambda g: power_at(q.effect, max(2, g)),
            q.power,
            start=max(2, sample.totals.size // 64),
            limit=MAX_GROWTH * sample.totals.size,
        )
        return None if clusters is None else math.ceil(clusters * float(sample.sizes.mean()))

    varies = sample.second_moment - sample.mean**2 > 1e-12
    return _figure(
        q,
        question,
        CLUSTER_RESAMPLING,
        sample.sizes.astype(np.int64),
        power_at if varies else None,
        upper,
        needed,
        tolerance=5e-4,
        design_effect=round(sample.design_effect, 3),
        simulations=q.simulations,
        seed=q.seed,
        **extra,
    )


def observed_paired_figures(
    correct_a: Sequence[bool],
    correct_b: Sequence[bool],
    cluster: Sequence[Hashable] | None,
    q: Question,
) -> list[Figure]:
    """Two runs' per-item outcomes (right or not) on the same items: the exact McNemar figure at
    the observed discordance, with the power at the observed difference (``achieved_power``),
    and the figure from resampling the runs' videos."""
    a = np.asarray(correct_a, dtype=bool)
    b = np.asarray(correct_b, dtype=bool)
    if a.size != b.size or a.size == 0:
        raise ValueError(f"run A has {a.size} items and run B {b.size}: pair the same items")
    b_only, a_only = int((b & ~a).sum()), int((a & ~b).sum())
    discordance = (a_only + b_only) / a.size
    observed = (b_only - a_only) / a.size
    assumed = {
        "discordance": round(discordance, 4),
        "observed_difference": _points(observed),
        "a_only": a_only,
        "b_only": b_only,
    }
    achieved = mcnemar_power(a.size, discordance, abs(observed), q.alpha) if discordance else None
    exact = _exact(q, "paired", cluster_sizes(cluster, a.size), discordance, achieved, **assumed)
    sample = Resampled.of(b.astype(float) - a.astype(float), cluster)
    # an effect beyond the observed discordance would need more items to differ: out of reach
    return [exact, _resampled_figure(q, "paired", sample, discordance, **assumed)]


def observed_versus_figures(
    credit: Sequence[float], cluster: Sequence[Hashable] | None, null: float, q: Question
) -> list[Figure]:
    """One run's per-item credit against accuracy ``null``: the exact binomial figure for its
    item count and the figure from resampling its videos (its observed variance and clusters)."""
    values = np.asarray(credit, dtype=np.float64)
    if values.size == 0:
        raise ValueError("the run has no scored item")
    accuracy = {"observed_accuracy": _points(float(values.mean()))}
    sizes = cluster_sizes(cluster, values.size)
    exact = _exact(q, "versus", sizes, null, null=round(null, 4), **accuracy)
    sample = Resampled.of(values, cluster)
    return [
        exact,
        _resampled_figure(q, "versus", sample, 1 - null, null=round(null, 4), **accuracy),
    ]
