"""Several benchmarks in one ``foilkit evaluate`` (``--tasks vitatecs/direction,vilma``).

A run folder holds one benchmark (:class:`foilkit.run.RunResults` has one ``benchmark``, and
``report``, ``compare``, ``leaderboard`` and ``push-results`` read one run folder per benchmark),
so several benchmarks make one *invocation*, not one run: under the parent folder ``out_dir``
each benchmark gets its own normal run folder, ``<out_dir>/<benchmark>/``, written by
:func:`foilkit.evaluation.evaluate`, and the invocation's summary (``summary.md``,
``summary.json``: each run's headline numbers, coverage and exit status) sits beside them. The
parent folder is a :data:`foilkit.folders.TASKS` folder.

The model and its processor are loaded once for the whole invocation, as in a one-benchmark
run (:func:`foilkit.scorers.once.one_run`): every config of every benchmark scored with the
same model, dtype and device takes the weights the first one loaded; so are the served backend
and the judge made once.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from foilkit.builders import BENCHMARKS, get_benchmark
from foilkit.errors import LOW_COVERAGE_EXIT, UserError
from foilkit.evaluation import EvaluateOptions, Evaluation, evaluate
from foilkit.files import atomic_write
from foilkit.folders import RUN, TASKS, check_folder, claim_folder, replace_folder
from foilkit.markdown import markdown_text
from foilkit.run import DEFAULT_MIN_COVERAGE, UNITS, Coverage, RunFolder, RunResults
from foilkit.scorers.once import in_one_run

SUMMARY_MD, SUMMARY_JSON = "summary.md", "summary.json"


def parse_tasks(items: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """``benchmark/config`` and ``benchmark`` items -> each benchmark's configs.

    Benchmarks come in the order first named, each one's configs in the order named, each once;
    ``benchmark`` alone (or ``benchmark/all``) stands for its default set, as ``--config all``
    does. Every unknown benchmark or config is named in one :class:`UserError`, with the choices.
    """
    wanted: dict[str, list[str]] = {}
    bad: list[str] = []
    for item in items:
        name, _, config = item.partition("/")
        if name not in BENCHMARKS.names() or "/" in config:
            bad.append(f"{item!r} (benchmarks: {', '.join(BENCHMARKS.names())})")
            continue
        config = config or "all"
        spec = get_benchmark(name)
        if config != "all" and config not in spec.configs:
            bad.append(f"{item!r} ({name} configs: {', '.join(('all', *spec.configs))})")
            continue
        wanted.setdefault(name, []).append(config)
    if bad:
        raise UserError(
            f"--tasks: no such benchmark/config: {'; '.join(bad)}; write "
            "--tasks benchmark/config,benchmark (`foilkit benchmarks` lists them)"
        )
    if not wanted:
        raise UserError("--tasks names no benchmark: write --tasks benchmark/config,benchmark")
    return {name: get_benchmark(name).configs_for(configs) for name, configs in wanted.items()}


@in_one_run  # one model load for every benchmark's configs
def evaluate_tasks(
    tasks: Mapping[str, Sequence[str]],
    model: str,
    *,
    out_dir: str | os.PathLike,
    videos: Mapping[str, str | os.PathLike | None] | None = None,
    annotations: Mapping[str, str | os.PathLike | None] | None = None,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
    options: EvaluateOptions | None = None,
) -> list[Evaluation]:
    """Evaluate ``model`` on each benchmark of ``tasks`` (:func:`parse_tasks`' benchmark ->
    configs) into ``<out_dir>/<benchmark>/``, then write the summary (on the main process).

    ``videos``, ``annotations``: each benchmark's (none for one left out). ``min_coverage``: a
    run below it has status :data:`foilkit.errors.LOW_COVERAGE_EXIT` in the summary.
    ``options``: :func:`foilkit.evaluation.evaluate`'s, the same for every benchmark but its
    configs, videos and annotations (no ``dataset``: one dataset is one benchmark). Every run
    folder is checked before the first benchmark is scored, so a refused folder costs no scoring.
    """
    from foilkit.scorers.distributed import process_state

    options = options or EvaluateOptions()
    overwrite, resume = options.overwrite, options.resume
    if options.dataset is not None:
        raise UserError(
            "--dataset names one benchmark's dataset, not several: evaluate an exported dataset "
            "with --benchmark NAME --dataset FOLDER, or build each of --tasks from its annotations"
        )
    parent = Path(out_dir)
    check_folder(parent, TASKS)
    for name in tasks:
        folder = RunFolder(parent / name)
        check_folder(folder.root, RUN)
        if folder.is_run() and not (overwrite or resume):
            raise FileExistsError(
                f"{folder.root} already holds an evaluation of {name}; pass --overwrite or "
                "--resume, or choose another --out"
            )
    state = process_state()
    if state.is_main_process:
        (replace_folder if overwrite else claim_folder)(parent, TASKS)
    state.wait_for_everyone()
    runs = [
        evaluate(
            name,
            model,
            out_dir=parent / name,
            options=replace(
                options,
                config=list(configs),
                videos=(videos or {}).get(name),
                annotations=(annotations or {}).get(name),
            ),
        )
        for name, configs in tasks.items()
    ]
    if state.is_main_process:
        write_summary(parent, runs, min_coverage)
    return runs


def coverage_exit(results: RunResults, minimum: float) -> int:
    """A run's exit status: :data:`LOW_COVERAGE_EXIT` when a config scored fewer rows than
    ``minimum`` (or none), else 0."""
    low = any(coverage.below(minimum) for coverage in results.coverages().values())
    return LOW_COVERAGE_EXIT if low else 0


def summary(parent: Path, runs: Sequence[Evaluation], minimum: float) -> dict[str, Any]:
    """``summary.json``: per benchmark, its run folder (relative to ``parent``), exit status,
    headline numbers (fractions, with CI bounds) and each config's coverage; the invocation's
    status is the worst of them."""
    from foilkit.report import run_table

    entries = []
    for run in runs:
        results = run.results
        assert results is not None  # the main process's runs
        headline = [
            {
                "row": row.label,
                "config": row.config or None,
                "n": row.n,
                "numbers": {
                    column: {"value": cell.value, "low": cell.low, "high": cell.high}
                    for column, cell in row.cells.items()
                },
            }
            for row in run_table(results).rows
            if row.overall or not row.config  # a config's overall row, or the benchmark's summary
        ]
        entries.append(
            {
                "benchmark": results.benchmark,
                "run_dir": run.run_dir.relative_to(parent).as_posix(),
                "status": coverage_exit(results, minimum),
                "partial": results.partial(),
                "headline": headline,
                "configs": {
                    name: {
                        "num_rows": entry.num_rows,
                        "coverage": None if entry.coverage is None else entry.coverage.to_record(),
                    }
                    for name, entry in results.configs.items()
                },
            }
        )
    return {
        "command": "evaluate",
        "status": max((entry["status"] for entry in entries), default=0),
        "model": runs[0].results.model if runs else None,
        "label": runs[0].results.label if runs else None,
        "min_coverage": minimum,
        "units": UNITS,
        "runs": entries,
    }


def summary_markdown(data: Mapping[str, Any]) -> str:
    """``summary.md``: one row per headline number row of each benchmark's run, its coverage
    and status, and a link to the run's report."""
    lines = [
        f"# foilkit evaluate: {markdown_text(str(data['label']))} on {len(data['runs'])} "
        "benchmarks",
        "",
        f"Exit status: {data['status']}, the worst of the runs' (3: a config scored fewer than "
        f"--min-coverage {data['min_coverage']:g} of its rows). Numbers in %, 95% CI in "
        "brackets; each benchmark's full results are in its run folder.",
        "",
        "| benchmark | row | numbers | n | coverage | status | report |",
        "|---|---|---|---|---|---|---|",
    ]
    for run in data["runs"]:
        coverage = "; ".join(
            f"{name}: {_coverage_text(entry['coverage'])}" for name, entry in run["configs"].items()
        )
        report = f"[{run['run_dir']}/report.md]({run['run_dir']}/report.md)"
        for row in run["headline"] or [{"row": "—", "n": None, "numbers": {}}]:
            numbers = ", ".join(
                f"{markdown_text(column)} {_percent(cell)}"
                for column, cell in row["numbers"].items()
            )
            n = "—" if row["n"] is None else str(row["n"])
            lines.append(
                f"| {run['benchmark']} | {markdown_text(row['row'])} | {numbers or '—'} | {n} | "
                f"{coverage} | {run['status']} | {report} |"
            )
    return "\n".join(lines) + "\n"


def _percent(cell: Mapping[str, float | None]) -> str:
    text = f"{100 * cell['value']:.1f}"
    if cell["low"] is not None and cell["high"] is not None:
        text += f" [{100 * cell['low']:.1f}, {100 * cell['high']:.1f}]"
    return text


def _coverage_text(coverage: Mapping[str, Any] | None) -> str:
    if coverage is None:
        return "—"
    loaded = Coverage.from_record(coverage)
    left_out = f", {loaded.left_out()}" if loaded.left_out() else ""
    return f"{loaded.label} rows scored ({loaded.fraction:.0%}){left_out}"


def write_summary(parent: Path, runs: Sequence[Evaluation], minimum: float) -> dict[str, Any]:
    """Write ``summary.json`` and ``summary.md`` into ``parent``; returns the summary."""
    data = summary(parent, runs, minimum)
    atomic_write(parent / SUMMARY_JSON, json.dumps(data, indent=2, default=str) + "\n")
    atomic_write(parent / SUMMARY_MD, summary_markdown(data))
    return data
