"""``foilkit leaderboard``: models ranked per benchmark task, with CIs and the paired test between
neighbours, from local run folders and (online) the Hub's leaderboard of a benchmark dataset.

A task is one of the benchmark's leaderboard tasks (:data:`foilkit.builders.hub.HUB_TASKS`, the
ids of its ``eval.yaml`` and of ``.eval_results`` files), valued as ``foilkit push-results``
values it (:func:`foilkit.hub_results.task_values`). Local runs are ranked by value; between each
run and the next one down, the exact McNemar test and the paired bootstrap difference on the
task's items (:func:`foilkit.compare.compare_runs`: the same items, paired by id) say whether
the gap is real. Retrieval recall and averaged tasks have no per-item pairing: no test. Hub
entries (``HfApi.get_dataset_leaderboard``) carry a value only: they are ranked alongside.

Writes ``leaderboard.md`` (one ranked table per benchmark task), ``leaderboard.csv`` (one row
per model and task) and ``leaderboard.png`` (per task, each model's value with its 95% CI).
"""

from __future__ import annotations

import csv
import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foilkit.folders import LEADERBOARD, claim_folder
from foilkit.html_report import write_leaderboard_html
from foilkit.markdown import markdown_text
from foilkit.run import DEFAULT_MIN_COVERAGE, RunResults

CSV_COLUMNS = (
    "benchmark",
    "task",
    "rank",
    "model",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "coverage_scored",
    "coverage_rows",
    "complete",
    "p_value_vs_next",
    "difference_vs_next",
    "source",
)


@dataclass
class Entry:
    """One model's value on one task: from a local run folder or the Hub's leaderboard."""

    benchmark: str
    task: str
    model: str
    value: float
    ci: tuple[float, float] | None = None
    n: int | None = None
    source: str = ""
    run_dir: Path | None = None
    config: str | None = None
    group: str | None = None
    key: str | None = None
    rank: int = 0
    p_value_vs_next: float | None = None
    difference_vs_next: float | None = None
    #: rows scored and rows in the task's configs (``None``: not known, e.g. a Hub entry)
    scored: int | None = None
    rows: int | None = None
    #: whether the rows scored reach the leaderboard's minimum coverage (set by :func:`rank`)
    complete: bool = True

    @property
    def coverage(self) -> str:
        """``scored / rows``, marked when below the minimum (empty when not known)."""
        if self.rows is None:
            return ""
        return f"{self.scored} / {self.rows}" + ("" if self.complete else " (incomplete)")


def local_entries(run_dirs: Sequence[str | os.PathLike]) -> list[Entry]:
    """Every leaderboard task value of every run folder."""
    from foilkit.hub_results import task_values

    entries = []
    for run_dir in run_dirs:
        results = RunResults.load(run_dir)
        for value in task_values(results):
            key = None
            if not value.task.mean_of:
                key = next(
                    k for c, g, k in value.task.sources if (c, g) == (value.config, value.group)
                )
            scored, rows = _task_coverage(results, value.task.sources)
            entries.append(
                Entry(
                    results.benchmark,
                    value.task.id,
                    str(results.label),
                    value.value,
                    value.ci,
                    value.n,
                    str(run_dir),
                    Path(run_dir),
                    value.config,
                    value.group,
                    key,
                    scored=scored,
                    rows=rows,
                )
            )
    return entries


def _task_coverage(
    results: RunResults, sources: Sequence[tuple[str, Any, Any]]
) -> tuple[int | None, int | None]:
    """Rows scored and rows in the configs a task's value comes from (``None``: the run did not
    record coverage). A config ``--limit`` cut counts all its rows: a partial run never ranks as
    a complete one."""
    coverages = [
        results.configs[config].full_coverage()
        for config in dict.fromkeys(config for config, _, _ in sources)
        if config in results.configs
    ]
    if not coverages or any(c is None for c in coverages):
        return None, None
    return sum(c.scored for c in coverages), sum(c.total for c in coverages)


def hub_entries(dataset_id: str, benchmark: str, *, token: str | None = None) -> list[Entry]:
    """The Hub's leaderboard of benchmark dataset ``dataset_id`` (``get_dataset_leaderboard``).

    An entry's task is its ``task_id`` when the Hub gives one, else ``default``.
    """
    from huggingface_hub import HfApi

    rows = HfApi(token=token).get_dataset_leaderboard(dataset_id, base_model_only=False)
    return [
        Entry(
            benchmark,
            str(getattr(row, "task_id", None) or getattr(row, "taskId", None) or "default"),
            row.model_id,
            float(row.value),
            source=f"hub:{dataset_id}",
        )
        for row in rows
    ]


def rank(
    entries: Sequence[Entry],
    *,
    n_resamples: int = 1000,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
) -> dict[tuple[str, str], list[Entry]]:
    """Entries per (benchmark, task), best first, each local run tested against the next one.

    A run that scored fewer of the task's rows than ``min_coverage`` (or none) is marked
    incomplete and ranked below every complete one, whatever its value: a value over two rows
    is no result.
    """
    tables: dict[tuple[str, str], list[Entry]] = {}
    for entry in entries:
        if entry.rows is not None:
            entry.complete = entry.scored > 0 and entry.scored >= min_coverage * entry.rows
        tables.setdefault((entry.benchmark, entry.task), []).append(entry)
    comparisons: dict[tuple[Path, Path], Mapping[str, Any] | None] = {}
    for rows in tables.values():
        rows.sort(key=lambda e: (not e.complete, -e.value))
        for position, entry in enumerate(rows, start=1):
            entry.rank = position
        for upper, lower in itertools.pairwise(rows):
            test = _paired(upper, lower, comparisons, n_resamples)
            if test is not None:
                upper.p_value_vs_next = test["p_value"]
                upper.difference_vs_next = test["difference"]
    return tables


def _paired(
    a: Entry, b: Entry, cache: dict[tuple[Path, Path], Mapping[str, Any] | None], n_resamples: int
) -> dict[str, float] | None:
    """McNemar p-value and bootstrap difference (A - B, percent) on the task's items, or
    ``None``."""
    from foilkit.compare import compare_runs
    from foilkit.metrics import PAIRED_OUTCOMES

    if (
        a.run_dir is None
        or b.run_dir is None
        or a.key is None
        or (a.config, a.group) != (b.config, b.group)
    ):
        return None
    pair = (a.run_dir, b.run_dir)
    if pair not in cache:
        try:
            cache[pair] = compare_runs(a.run_dir, b.run_dir, n_resamples=n_resamples)
        except (ValueError, FileNotFoundError):  # different items or configs: nothing to pair
            cache[pair] = None
    tests = cache[pair]
    if not tests or a.config not in tests:
        return None
    key = a.key.removeprefix("macro_")
    for metric, scopes in tests[a.config].items():
        outcomes = list(PAIRED_OUTCOMES.get(metric, {}))
        scope = scopes.get(a.group or "all")
        if key not in outcomes or scope is None:
            continue
        suffix = "" if outcomes.index(key) == 0 else f" ({key})"
        mcnemar, bootstrap = scope[f"mcnemar{suffix}"], scope[f"bootstrap{suffix}"]
        # compare_runs reports B - A; the table reads "this model minus the next one down".
        return {"p_value": mcnemar["p_value"], "difference": 0.0 - 100 * bootstrap["difference"]}
    return None


def markdown(tables: Mapping[tuple[str, str], Sequence[Entry]]) -> str:
    """One ranked table per benchmark task."""
    lines = [
        "# foilkit leaderboard",
        "",
        (
            "Values in percent with 95% bootstrap CIs. *vs next*: this model minus the next one "
            "down on the same items (paired bootstrap) and the exact McNemar p-value. *coverage*: "
            "rows scored / rows in the task; a run below the minimum is marked incomplete and "
            "ranked below every complete run."
        ),
        "",
    ]
    for (benchmark, task), rows in tables.items():
        lines += [
            f"## {markdown_text(benchmark)} / {markdown_text(task)}",
            "",
            "| rank | model | value [95% CI] | n | coverage | vs next (difference, p) | source |",
            "|---:|---|---|---:|---|---|---|",
        ]
        for e in rows:
            ci = f" [{e.ci[0]:.1f}, {e.ci[1]:.1f}]" if e.ci else ""
            test = (
                ""
                if e.p_value_vs_next is None
                else f"{e.difference_vs_next:+.1f}, p={e.p_value_vs_next:.3g}"
            )
            lines.append(
                f"| {e.rank} | {markdown_text(e.model)} | {e.value:.2f}{ci} | {e.n or ''} "
                f"| {e.coverage} | {test} | {markdown_text(e.source)} |"
            )
        lines.append("")
    return "\n".join(lines)


def write_csv(tables: Mapping[tuple[str, str], Sequence[Entry]], path: Path) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_COLUMNS)
        for rows in tables.values():
            for e in rows:
                writer.writerow(
                    [
                        e.benchmark,
                        e.task,
                        e.rank,
                        e.model,
                        e.value,
                        *(e.ci or ("", "")),
                        e.n or "",
                        _blank(e.scored),
                        _blank(e.rows),
                        e.complete,
                        _blank(e.p_value_vs_next),
                        _blank(e.difference_vs_next),
                        e.source,
                    ]
                )
    return path


def _blank(value: float | int | None) -> Any:
    return "" if value is None else value


def plot(tables: Mapping[tuple[str, str], Sequence[Entry]], path: Path) -> Path:
    """Per task, each model's value with its 95% CI, best at the top."""
    from foilkit.report import _pyplot

    plt = _pyplot()
    count = max(1, len(tables))
    fig, axes = plt.subplots(
        count,
        1,
        figsize=(7, max(3.0, sum(1.5 + 0.35 * len(r) for r in tables.values()))),
        squeeze=False,
    )
    for ax, ((benchmark, task), rows) in zip(axes[:, 0], tables.items()):
        ordered = list(reversed(rows))
        values = [e.value for e in ordered]
        errors = [
            [e.value - e.ci[0] if e.ci else 0.0 for e in ordered],
            [e.ci[1] - e.value if e.ci else 0.0 for e in ordered],
        ]
        ax.barh(range(len(ordered)), values, xerr=errors, capsize=3, color="tab:blue")
        ax.set_yticks(range(len(ordered)), [e.model for e in ordered], fontsize=8)
        ax.set_xlim(0, 100)
        ax.set_title(f"{benchmark} / {task}", fontsize=9)
    axes[-1, 0].set_xlabel("value (%) with 95% CI")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_leaderboard(
    run_dirs: Sequence[str | os.PathLike],
    out_dir: str | os.PathLike,
    *,
    hub: Sequence[tuple[str, str]] = (),
    n_resamples: int = 1000,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
) -> Path:
    """Rank ``run_dirs`` (and the Hub leaderboards of ``hub``: (dataset id, benchmark) pairs);
    write ``leaderboard.md``, ``.csv`` and ``.png`` into ``out_dir``; returns the markdown's
    path."""
    entries = local_entries(run_dirs)
    for dataset_id, benchmark in hub:
        entries += hub_entries(dataset_id, benchmark)
    if not entries:
        raise ValueError(f"no leaderboard task value in {list(map(str, run_dirs))} or {list(hub)}")
    tables = rank(entries, n_resamples=n_resamples, min_coverage=min_coverage)
    out = claim_folder(out_dir, LEADERBOARD)  # new, empty or foilkit's (foilkit.folders)
    write_csv(tables, out / "leaderboard.csv")
    plot(tables, out / "leaderboard.png")
    report = out / "leaderboard.md"
    report.write_text(markdown(tables), encoding="utf-8")
    write_leaderboard_html(out)
    return report
