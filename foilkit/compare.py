"""``foilkit compare run_a run_b``: two models on the same items, paired tests, side by side.

Both runs must come from ``foilkit evaluate`` on the same benchmark and have scored the same
items (ids). Items are paired by id; the tests are the metrics package's paired comparisons
(exact McNemar test on per-item correctness, computed in log space so that benchmark-sized
comparisons do not overflow, and the paired bootstrap difference of accuracy
with its confidence interval, clustered by video), per config and per group (aspect/subtest),
for every per-item metric of the benchmark. Beside each McNemar test stands its minimum
detectable effect at 80% power (:func:`foilkit.power.mcnemar_mde`, exact, at the items' observed
discordance): a difference below it is one these items cannot reliably tell apart. Retrieval
pools (RTime Origin/Hard) have no per-item correctness and are shown side by side only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from foilkit.builders.spec import Benchmark, MetricSpec, group_names, subset_columns
from foilkit.markdown import markdown_text, p_value_text, table_row, table_rule
from foilkit.power import DEFAULT_ALPHA, DEFAULT_POWER, EXACT_MCNEMAR, mcnemar_mde
from foilkit.run import RunFolder, RunResults


def paired_rows(
    run_a: RunFolder, run_b: RunFolder, config: str
) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """The two runs' scored rows of ``config`` as columns, in the same item order.

    Items either run could not score are left out of both, so the pairs stay aligned: a row with
    an ``error``, and a row one run does not hold (a video it skipped) where the other failed it
    too (an import's rows without an answer). An item one run scored and the other does not
    hold is an error: the runs did not score the same items.
    """
    a, b = (_scores(run, config) for run in (run_a, run_b))
    failed = {
        i for run in (a, b) for i, error in zip(run["id"], run["error"], strict=True) if error
    }
    only_a = sorted(set(a["id"]) - set(b["id"]) - failed)
    only_b = sorted(set(b["id"]) - set(a["id"]) - failed)
    if only_a or only_b:
        raise ValueError(
            f"{config}: the runs scored different items: {len(only_a)} only in {run_a.root} "
            f"(e.g. {only_a[:3]}), {len(only_b)} only in {run_b.root} (e.g. {only_b[:3]})"
        )
    failed |= set(a["id"]) ^ set(b["id"])
    order = [i for i in a["id"] if i not in failed]
    columns = []
    for run in (a, b):
        table = run.to_dict()
        position = {item: index for index, item in enumerate(table["id"])}
        columns.append(
            {name: [values[position[i]] for i in order] for name, values in table.items()}
        )
    return columns[0], columns[1]


def _scores(run: RunFolder, config: str) -> Any:
    scores = run.load_scores(config)
    if scores is None:
        raise FileNotFoundError(
            f"{run.scores(config)} is missing: {run.root} has no per-sample scores of {config}"
        )
    return scores


def compare_runs(
    run_a: str | os.PathLike, run_b: str | os.PathLike, *, n_resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """Paired tests of every per-item metric, per config and group: ``{config: {metric: {scope:
    test}}}``."""
    a, b = RunFolder(Path(run_a)), RunFolder(Path(run_b))
    results_a, results_b = RunResults.load(a), RunResults.load(b)
    if results_a.benchmark != results_b.benchmark:
        raise ValueError(
            f"{a.root} evaluated {results_a.benchmark}, {b.root} evaluated {results_b.benchmark}"
        )
    benchmark = results_a.spec
    shared = [config for config in results_a.configs if config in results_b.configs]
    if not shared:
        raise ValueError(
            f"{a.root} ({sorted(results_a.configs)}) and {b.root} ({sorted(results_b.configs)}) "
            "have no config in common"
        )
    tests: dict[str, Any] = {}
    for config in shared:
        metrics = [m for m in benchmark.metrics(config) if not m.matrix]
        if not metrics:
            continue
        rows_a, rows_b = paired_rows(a, b, config)
        tests[config] = {
            m.metric: _scopes(benchmark, m, rows_a, rows_b, n_resamples, seed) for m in metrics
        }
    return tests


def _scopes(
    benchmark: Benchmark,
    metric: MetricSpec,
    a: dict[str, list[Any]],
    b: dict[str, list[Any]],
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    """The metrics package's paired comparison of ``metric`` over all items and, for per-group
    metrics, over each group's items (:func:`with_mde`)."""
    from foilkit.metrics import paired_comparison

    scopes = {"all": (a, b)}
    if metric.per_group and benchmark.group_column in a:
        for group in group_names(a[benchmark.group_column]):
            scopes[group] = (
                subset_columns(a, benchmark.group_column, group),
                subset_columns(b, benchmark.group_column, group),
            )
    column = benchmark.cluster_column
    tests = {}
    for scope, (x, y) in scopes.items():
        test = paired_comparison(
            metric.metric,
            metric.inputs(x),
            metric.inputs(y),
            score_kind_a=x["score_kind"][0],
            score_kind_b=y["score_kind"][0],
            options=dict(metric.options),
            cluster=x.get(column) if column else None,
            n_resamples=n_resamples,
            seed=seed,
        )
        tests[scope] = with_mde(test, len(x["id"]))
    return tests


def with_mde(test: dict[str, Any], n: int) -> dict[str, Any]:
    """``test`` with, in each McNemar entry, the items (``n``) and the test's minimum detectable
    effect at 80% power and alpha 0.05 on them at their observed discordance (``mde``, a
    fraction as ``difference`` is; ``None``: no discordant item, or no effect it can detect)
    and how it was computed (``mde_method``)."""
    for name, entry in test.items():
        if name.startswith("mcnemar") and isinstance(entry, dict):
            mde = mcnemar_mde(n, entry["a_only"] + entry["b_only"])
            entry.update(n=n, mde=None if mde is None else round(mde, 4), mde_method=EXACT_MCNEMAR)
    return test


#: The columns of the paired tests' table (report.md and report.html of ``foilkit compare``).
TEST_COLUMNS = (
    "config",
    "metric",
    "items",
    "test",
    "statistic",
    "p-value",
    "difference (B − A) [95% CI]",
    "MDE at 80% power",
)


def test_rows(tests: Mapping[str, Any]) -> list[list[str]]:
    """The paired tests of :func:`compare_runs` as text cells, one row per config, metric,
    scope (``all`` or a group) and test (:data:`TEST_COLUMNS`)."""
    rows = []
    for config, metrics in tests.items():
        for metric, scopes in metrics.items():
            for scope, test in scopes.items():
                for name, entry in test.items():
                    if isinstance(entry, Mapping):
                        statistic, p_value = entry.get("statistic"), entry.get("p_value")
                        cells = [_number(statistic), _p_value(p_value), _difference(entry)]
                        rows.append([config, metric, scope, name, *cells, _mde(entry)])
    return rows


def _difference(entry: Mapping[str, Any]) -> str:
    """A test's difference B − A in points with its 95% CI (empty when absent)."""
    diff, ci = entry.get("difference"), entry.get("difference_ci")
    if diff is None:
        return ""
    return f"{100 * diff:+.1f}" + (f" [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]" if ci else "")


def _mde(entry: Mapping[str, Any]) -> str:
    """A McNemar test's MDE in points (``—``: none; empty: not a McNemar test, or a comparison
    from before MDEs)."""
    if "mde" not in entry:
        return ""
    return "—" if entry["mde"] is None else f"{100 * entry['mde']:.1f}"


def mde_sentences(tests: Mapping[str, Any]) -> list[str]:
    """Per config, what its headline McNemar test over all items can detect, in a sentence, and
    whether the difference B − A lies below that."""
    sentences = []
    for config, metrics in tests.items():
        for metric, scopes in metrics.items():
            mcnemar = scopes.get("all", {}).get("mcnemar")
            bootstrap = scopes.get("all", {}).get("bootstrap", {})
            if not isinstance(mcnemar, Mapping) or "mde" not in mcnemar:
                continue
            where = f"On {config} ({metric}, {mcnemar['n']} items)"
            if mcnemar["mde"] is None:
                sentences.append(
                    f"{where}, the exact McNemar test cannot detect any difference at 80% power "
                    f"(alpha {DEFAULT_ALPHA:g}): the runs disagree on too few items."
                )
                continue
            mde = 100 * mcnemar["mde"]
            difference = bootstrap.get("difference")
            verdict = ""
            if difference is not None:
                below = abs(100 * difference) < mde
                verdict = f"; B − A is {100 * difference:+.1f}, " + (
                    "below what these items can detect" if below else "within reach"
                )
            sentences.append(
                f"{where}, the exact McNemar test detects a difference of {mde:.1f} points or "
                f"more with {DEFAULT_POWER:.0%} power at alpha {DEFAULT_ALPHA:g}, at the runs' "
                f"observed discordance ({mcnemar['a_only'] + mcnemar['b_only']} items differ)"
                f"{verdict}."
            )
            break  # the config's first metric: its headline
    return sentences


def _test_lines(tests: Mapping[str, Any]) -> list[str]:
    lines = [
        "## Paired tests",
        "",
        table_row(TEST_COLUMNS),
        table_rule([False] * 4 + [True, True, False, True]),
    ]
    for config, metric, scope, *rest in test_rows(tests):
        lines.append(table_row([markdown_text(config), metric, markdown_text(scope), *rest]))
    sentences = mde_sentences(tests)
    if sentences:
        lines += [
            "",
            "*MDE at 80% power*: the smallest difference (points) the exact McNemar test detects "
            "80% of the time on these items at their observed discordance; a smaller difference "
            "is below what they can tell apart (`foilkit power` says more). "
            + " ".join(markdown_text(s) for s in sentences),
        ]
    return lines


def _number(value: Any) -> str:
    """A test statistic to two decimals (empty when absent)."""
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else f"{float(value):.2f}"


def _p_value(value: Any) -> str:
    """A p-value as :func:`foilkit.markdown.p_value_text` prints it (empty when absent)."""
    return "" if value is None else p_value_text(float(value))
