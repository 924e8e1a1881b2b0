"""foilkit.power: the exact figures against Monte Carlo draws of the same design and against
closed forms, the cluster simulation against item-by-item draws, and the searches (MDE,
n_required) against the power they promise."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from foilkit import power
from foilkit.metrics import paired_comparison
from foilkit.metrics._common import mcnemar_exact

Z = NormalDist()
#: Monte Carlo draws of a check: its standard error at power 0.5 is 0.35 points.
DRAWS = 20_000


def monte_carlo_mcnemar(
    n: int, discordance: float, effect: float, alpha: float, seed: int
) -> float:
    """How often foilkit's own McNemar test (metrics) rejects on items drawn one by one."""
    rng = np.random.default_rng(seed)
    b_rate, a_rate = (discordance + effect) / 2, (discordance - effect) / 2
    u = rng.random((DRAWS // 10, n))
    b_only, a_only = (u < b_rate).sum(axis=1), ((u >= b_rate) & (u < b_rate + a_rate)).sum(axis=1)
    rejected = 0
    for b, a in zip(b_only.tolist(), a_only.tolist(), strict=True):
        correct_a = np.array([False] * b + [True] * a)
        rejected += mcnemar_exact(correct_a, ~correct_a)["p_value"] <= alpha
    return rejected / b_only.size


@pytest.mark.parametrize(
    ("n", "discordance", "effect", "alpha"),
    [(200, 0.3, 0.06, 0.05), (500, 0.2, 0.03, 0.05), (150, 0.1, 0.05, 0.01), (400, 0.5, 0.0, 0.05)],
)
def test_exact_mcnemar_agrees_with_monte_carlo_of_foilkits_test(n, discordance, effect, alpha):
    exact = power.mcnemar_power(n, discordance, effect, alpha)
    drawn = monte_carlo_mcnemar(n, discordance, effect, alpha, seed=n)
    assert abs(exact - drawn) < 0.02
    if effect == 0:  # its size: at most alpha (exact test, discrete)
        assert exact <= alpha


@pytest.mark.parametrize("discordant", [1, 5, 10, 17, 40, 101])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_mcnemar_critical_is_where_foilkits_p_value_crosses_alpha(discordant, alpha):
    critical = power.mcnemar_critical(discordant, alpha)
    for smaller in range(discordant // 2 + 1):
        a = np.array([True] * smaller + [False] * (discordant - smaller))
        p = mcnemar_exact(a, ~a)["p_value"]
        assert (p <= alpha) == (smaller <= critical), (smaller, p)


def test_mcnemar_critical_textbook_values():
    # 10 discordant pairs: 2 P(X <= 1) = 22/1024 = 0.021, 2 P(X <= 2) = 112/1024 = 0.109
    assert power.mcnemar_critical(10, 0.05) == 1
    assert power.mcnemar_critical(5, 0.05) == -1  # 2/32 = 0.0625: five pairs never reject


@pytest.mark.parametrize(
    ("n", "null", "effect"), [(100, 0.5, 0.14), (300, 0.2, 0.06), (60, 0.25, -0.1)]
)
def test_exact_binomial_agrees_with_monte_carlo(n, null, effect):
    low, high = power.binomial_critical(n, null, 0.05)
    drawn = np.random.default_rng(n).binomial(n, null + effect, size=DRAWS)
    assert (
        abs(power.binomial_power(n, null, effect) - ((drawn <= low) | (drawn >= high)).mean())
        < 0.02
    )


def test_exact_binomial_textbook_critical_values():
    # n = 100, p0 = 1/2, two-sided 5%: P(X <= 39) = 0.0176 <= 0.025 < P(X <= 40) = 0.0284
    assert power.binomial_critical(100, 0.5, 0.05) == (39, 61)


@pytest.mark.parametrize(("discordance", "effect"), [(0.25, 0.01), (0.1, 0.008)])
def test_exact_mcnemar_meets_the_normal_approximation_at_large_n(discordance, effect):
    # Connor (1987): power = Phi((d sqrt(n) - z sqrt(q)) / sqrt(q - d^2))
    n = 20_000
    z = Z.inv_cdf(0.975)
    normal = Z.cdf(
        (effect * math.sqrt(n) - z * math.sqrt(discordance)) / math.sqrt(discordance - effect**2)
    )
    assert abs(power.mcnemar_power(n, discordance, effect) - normal) < 0.01


def test_exact_binomial_meets_the_normal_approximation_at_large_n():
    n, null, effect = 10_000, 0.5, 0.012
    z = Z.inv_cdf(0.975)
    p1 = null + effect
    normal = Z.cdf(
        (effect * math.sqrt(n) - z * math.sqrt(null * (1 - null))) / math.sqrt(p1 * (1 - p1))
    )
    assert abs(power.binomial_power(n, null, effect) - normal) < 0.01


def test_independent_items_simulate_as_the_exact_figures_and_the_wald_closed_form():
    sizes = np.ones(400, dtype=int)
    simulated = power.simulated_paired_power(sizes, 0.3, 0.06, icc=0.0, simulations=4000)
    assert abs(simulated["mcnemar"] - power.mcnemar_power(400, 0.3, 0.06)) < 0.02
    # the Wald test of the mean difference, whose variance under the effect is q - d^2
    shift = 0.06 * math.sqrt(400) / math.sqrt(0.3 - 0.06**2)
    z = Z.inv_cdf(0.975)
    assert abs(simulated["cluster"] - (Z.cdf(shift - z) + Z.cdf(-shift - z))) < 0.02
    size = power.simulated_paired_power(sizes, 0.3, 0.0, icc=0.0, simulations=4000)["cluster"]
    assert abs(size - 0.05) < 0.015
    versus = power.simulated_versus_power(sizes, 0.5, 0.07, icc=0.0, simulations=4000)
    assert abs(versus["binomial"] - power.binomial_power(400, 0.5, 0.07)) < 0.02


def item_by_item(sizes, icc, b_rate, a_rate, draws, seed):
    """Draw every item of every video (the copy model written out): per draw, the paired
    difference's cluster-robust Wald rejection and the McNemar counts."""
    rng = np.random.default_rng(seed)
    video = np.repeat(np.arange(len(sizes)), sizes)
    rejected = 0
    mcnemar = 0
    for _ in range(draws):
        shared = rng.choice(3, size=len(sizes), p=[b_rate, a_rate, 1 - b_rate - a_rate])[video]
        own = rng.choice(3, size=video.size, p=[b_rate, a_rate, 1 - b_rate - a_rate])
        outcome = np.where(rng.random(video.size) < math.sqrt(icc), shared, own)
        diff = (outcome == 0).astype(float) - (outcome == 1)
        totals = np.bincount(video, weights=diff)
        mean = diff.mean()
        variance = (
            len(sizes) / (len(sizes) - 1) * ((totals - sizes * mean) ** 2).sum() / diff.size**2
        )
        rejected += (
            abs(mean) / math.sqrt(variance) > Z.inv_cdf(0.975) if variance > 0 else mean != 0
        )
        b, a = int((outcome == 0).sum()), int((outcome == 1).sum())
        mcnemar += min(a, b) <= power.mcnemar_critical(a + b, 0.05)
    return rejected / draws, mcnemar / draws


@pytest.mark.parametrize(("icc", "effect"), [(0.3, 0.0), (0.3, 0.08), (0.1, 0.05)])
def test_cluster_simulation_agrees_with_items_drawn_one_by_one(icc, effect):
    sizes = np.array([1, 2, 3, 5, 8] * 24)
    discordance = 0.3
    counted = power.simulated_paired_power(sizes, discordance, effect, icc=icc, simulations=4000)
    cluster, mcnemar = item_by_item(
        sizes, icc, (discordance + effect) / 2, (discordance - effect) / 2, 3000, seed=7
    )
    assert abs(counted["cluster"] - cluster) < 0.03
    assert abs(counted["mcnemar"] - mcnemar) < 0.03


def test_mcnemar_ignoring_videos_rejects_too_often_and_the_cluster_test_does_not():
    sizes = np.full(150, 6)
    null = power.simulated_paired_power(sizes, 0.3, 0.0, icc=0.3, simulations=4000)
    assert null["mcnemar"] > 0.1  # nominal 0.05
    assert null["cluster"] < 0.08


def test_versus_simulation_agrees_with_items_drawn_one_by_one():
    sizes = np.array([1, 4, 4, 10] * 20)
    icc, null, effect = 0.2, 0.5, 0.06
    counted = power.simulated_versus_power(sizes, null, effect, icc=icc, simulations=4000)
    rng = np.random.default_rng(3)
    video = np.repeat(np.arange(sizes.size), sizes)
    rejected = 0
    draws = 3000
    for _ in range(draws):
        shared = rng.random(sizes.size)[video] < null + effect
        own = rng.random(video.size) < null + effect
        right = np.where(rng.random(video.size) < math.sqrt(icc), shared, own).astype(float)
        totals = np.bincount(video, weights=right)
        mean = right.mean()
        variance = (
            sizes.size / (sizes.size - 1) * ((totals - sizes * mean) ** 2).sum() / right.size**2
        )
        rejected += abs(mean - null) / math.sqrt(variance) > Z.inv_cdf(0.975)
    assert abs(counted["cluster"] - rejected / draws) < 0.03


@pytest.mark.parametrize("question", ["paired", "versus"])
def test_mde_and_n_required_reach_the_power_they_promise(question):
    sizes = np.array([1, 1, 2, 3] * 100)
    q = power.Question(effect=0.05, simulations=2000)
    figures = (
        power.paired_figures(sizes, 0.3, q)
        if question == "paired"
        else power.versus_figures(sizes, 0.25, q)
    )
    assert [f.method for f in figures][1] == power.CLUSTER_SIMULATION
    for figure in figures:
        mde = figure.mde / 100
        assert figure.curve(mde) >= q.power
        assert figure.curve(mde - 0.002) < q.power
        assert figure.n_items == sizes.sum() and figure.n_clusters == sizes.size
    exact = figures[0]
    n = exact.n_required
    if question == "paired":
        assert power.mcnemar_power(n, 0.3, 0.05) >= 0.8 > power.mcnemar_power(n - 40, 0.3, 0.05)
    else:
        assert power.binomial_power(n, 0.25, 0.05) >= 0.8 > power.binomial_power(n - 40, 0.25, 0.05)
    # clusters cost items: the simulated design needs more than independent items
    assert figures[1].n_required > exact.n_required
    assert figures[1].mde > exact.mde


def test_figures_are_reproducible_and_say_their_method():
    sizes = [1, 2, 2, 5] * 30
    q = power.Question(effect=0.04, simulations=500, seed=3)
    first = [f.to_record() for f in power.paired_figures(sizes, 0.2, q)]
    assert first == [f.to_record() for f in power.paired_figures(sizes, 0.2, q)]
    assert {f["method"] for f in first} == {"exact-mcnemar", "cluster-simulation"}
    assert all(f["method"] in power.METHODS for f in first)


def test_resampling_independent_items_matches_the_exact_binomial():
    rng = np.random.default_rng(5)
    credit = (rng.random(1000) < 0.6).astype(float)
    sample = power.Resampled.of(credit, None)
    assert abs(sample.design_effect - 1) < 0.01
    # the resampled test's power at an effect of 4 points over n = 1000 (variance at 0.6)
    resampled = sample.power(0.04, simulations=4000)
    assert abs(resampled - power.binomial_power(1000, 0.56, 0.04)) < 0.03


def test_resampling_sees_the_design_effect_of_shared_videos():
    rng = np.random.default_rng(6)
    video = np.repeat(np.arange(300), 5)
    right = np.where(
        rng.random(1500) < math.sqrt(0.4), rng.random(300)[video] < 0.6, rng.random(1500) < 0.6
    )
    sample = power.Resampled.of(right.astype(float), video)
    assert 1.0 + 4 * 0.4 - 0.5 < sample.design_effect < 1.0 + 4 * 0.4 + 0.5  # 1 + (m - 1) icc


def test_observed_pairs_give_the_achieved_power_of_the_reported_test():
    rng = np.random.default_rng(8)
    a = rng.random(600) < 0.6
    b = np.where(rng.random(600) < 0.75, a, rng.random(600) < 0.68)
    exact, resampled = power.observed_paired_figures(a, b, np.arange(600) // 3, power.Question())
    b_only, a_only = int((b & ~a).sum()), int((a & ~b).sum())
    assert exact.assumptions["discordance"] == round((a_only + b_only) / 600, 4)
    assert exact.achieved_power == round(
        power.mcnemar_power(600, (a_only + b_only) / 600, abs(b_only - a_only) / 600), 4
    )
    assert resampled.method == power.CLUSTER_RESAMPLING and resampled.n_clusters == 200
    # the same items compared by foilkit: the test the achieved power is of
    test = paired_comparison(
        "multiple_choice_accuracy",
        {"scores": [[1.0, 0.0] if x else [0.0, 1.0] for x in a], "labels": [0] * 600},
        {"scores": [[1.0, 0.0] if x else [0.0, 1.0] for x in b], "labels": [0] * 600},
        n_resamples=0,
    )["mcnemar"]
    assert (test["a_only"], test["b_only"]) == (a_only, b_only)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: power.mcnemar_power(100, 0.1, 0.2), "discordant"),
        (lambda: power.mcnemar_power(100, 0.1, 0.01, alpha=1.5), "alpha"),
        (lambda: power.binomial_power(100, 0.9, 0.2), "accuracy"),
        (lambda: power.Question(power=1.2), "power"),
        (lambda: power.simulated_versus_power([2, 2], 0.5, 0.1, icc=1.0), "icc"),
    ],
)
def test_impossible_designs_are_refused_with_why(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("df", "alpha", "table"),
    [
        (1, 0.05, 12.7062),
        (2, 0.05, 4.3027),
        (3, 0.05, 3.1824),
        (10, 0.05, 2.2281),
        (5, 0.01, 4.0321),
    ],
)
def test_t_critical_matches_the_t_table(df, alpha, table):
    assert power.t_critical(alpha, df + 1) == pytest.approx(table, abs=5e-3)


@pytest.mark.parametrize(("n", "p"), [(10, 0.3), (1_000, 0.5), (100_000, 0.23), (50, 0.999)])
def test_binomial_probabilities_match_scipy(n, p):
    stats = pytest.importorskip("scipy.stats")
    k = np.arange(n + 1)
    assert np.allclose(power.binomial_pmf(n, p), stats.binom.pmf(k, n, p), rtol=1e-9, atol=1e-300)


def test_exact_mcnemar_power_matches_a_direct_sum_with_scipy():
    stats = pytest.importorskip("scipy.stats")
    n, q, d = 3_000, 0.2, 0.025
    share = (q + d) / (2 * q)
    total = 0.0
    for m in range(n + 1):
        c = power.mcnemar_critical(m, 0.05)
        if c >= 0:
            rejected = stats.binom.cdf(c, m, share) + stats.binom.sf(m - c - 1, m, share)
            total += stats.binom.pmf(m, n, q) * rejected
    assert power.mcnemar_power(n, q, d) == pytest.approx(total, abs=1e-9)


def test_an_effect_the_design_cannot_have_gets_no_power_and_no_n_required():
    # 30 points between two models that disagree on 19% of the items: impossible
    q = power.Question(effect=0.3, simulations=200)
    for figure in power.paired_figures([1] * 100, 0.19, q):
        assert figure.power_at_effect is None and figure.n_required is None
        assert figure.mde is not None  # the MDE is still the design's
    exact, _ = power.versus_figures([1] * 100, 0.5, q)  # 50% + 30 points is an accuracy
    assert exact.power_at_effect is not None and exact.n_required is not None


def test_runs_that_agree_on_every_item_have_no_resampled_figure():
    same = np.array([True, False, True, True] * 10)
    exact, resampled = power.observed_paired_figures(same, same, None, power.Question(effect=0.05))
    assert exact.mde is None and exact.achieved_power is None
    assert resampled.mde is None and resampled.power_at_effect is None
    assert resampled.n_required is None and resampled.curve is None


@pytest.mark.parametrize(
    "cluster, n, sizes",
    [
        (None, 3, [1, 1, 1]),
        (["v2", "v1", "v2", "v2"], 4, [1, 3]),
        ([7, "7", 8], 3, [2, 1]),  # cluster values compared as text, as the resampling does
    ],
)
def test_cluster_sizes_count_the_items_of_each_cluster(cluster, n, sizes):
    """The figures and ``foilkit power``'s items size clusters in one place, as
    :class:`power.Resampled` groups them."""
    assert power.cluster_sizes(cluster, n).tolist() == sizes
    if cluster is not None:
        assert power.Resampled.of(np.ones(n), cluster).sizes.tolist() == sizes
