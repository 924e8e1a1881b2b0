"""``foilkit leaderboard``: models ranked per benchmark task, with CIs and the paired test between
neighbours, from local run folders and (online) the Hub's leaderboard of a benchmark dataset.

A task is one of the benchmark's leaderboard tasks (:func:`foilkit.builders.hub.hub_tasks`),
valued as ``foilkit push-results`` values it (:func:`foilkit.hub_results.task_values`). Between
each local run and the next one down, the exact McNemar test and the paired bootstrap difference
on the task's items (:func:`foilkit.compare.compare_runs`) say whether the gap is real, and the
test's minimum detectable effect at 80% power (*MDE*) how large a gap the items could show at
all. Retrieval recall and averaged tasks have no per-item pairing, Hub entries
(``HfApi.get_dataset_leaderboard``) only a value: no test.

A run under a temporal control reports the control's own tasks (``direction_reversed``), never
ranked against the paper's. A run with a protocol override (``--frames 16`` where the protocol
says 8) ranks below every run following the protocol, as an incomplete or partial run below the
complete ones. The same model (its label, under the same control) in several runs is ranked
once, from the run that follows the protocol and is complete, then has more of the benchmark's
tasks, then more rows scored, then finished last, then was named first; its other runs stay in
the tables, unranked, their notes naming the run ranked instead (never a model tested against
itself). Every row names its run (its folder, or ``hub:<dataset>``); a folder holding no
readable run with a task value is skipped with why (:func:`gather_runs`).

Writes ``leaderboard.md``, ``.csv`` (a row per model and task), ``_wide.csv`` and ``.tex`` (per
benchmark, models × tasks: :func:`wide_tables`), ``.html`` and ``.png`` (per task, each model's
value with its 95% CI).
"""

from __future__ import annotations

import csv
import html
import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foilkit.folders import LEADERBOARD, claim_folder
from foilkit.html_report import html_table, render_page
from foilkit.imports import is_imported
from foilkit.markdown import markdown_text, p_statement, table_row, table_rule
from foilkit.run import DEFAULT_MIN_COVERAGE, RESULTS_FILE, RunResults, find_runs

CSV_COLUMNS = (
    *("benchmark", "task", "rank", "model", "value", "ci_low", "ci_high", "n"),
    *("coverage_scored", "coverage_rows", "not_selected", "complete", "control", "overrides"),
    *("same_model_ranked_from", "p_value_vs_next", "difference_vs_next", "mde_vs_next", "source"),
)
#: The columns of a task's ranked table (``leaderboard.md``, ``leaderboard.html``).
RANKED_COLUMNS = (
    *("rank", "model", "value [95% CI]", "n", "coverage", "vs next (difference, p)"),
    *("MDE (80% power)", "notes", "source"),
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
    #: the McNemar test's minimum detectable effect at 80% power against the next one down
    #: (points; ``None``: no test, or no effect it can detect)
    mde_vs_next: float | None = None
    #: rows scored and rows selected in the task's configs (``None``: not known, e.g. a Hub
    #: entry): the run's coverage, as its results.json and report give it
    scored: int | None = None
    rows: int | None = None
    #: rows of the task's configs ``--limit`` did not select (0: it cut none): a partial run,
    #: ranked below every run of the whole benchmark
    not_selected: int = 0
    #: whether the rows scored reach the leaderboard's minimum coverage (set by :func:`rank`)
    complete: bool = True
    #: the temporal control the run scored under (``None``: none, or not known)
    control: str | None = None
    #: the protocol settings the user overrode, in words (``frames 8 -> 16``; empty: none)
    overrides: str = ""
    #: when the run finished (ISO time; empty: not recorded, or a Hub entry)
    finished: str = ""
    #: the run the same model is ranked from instead of this one (``None``: this one; set by
    #: :func:`rank`)
    repeat_of: str | None = None
    #: whether the run's answers were imported (``foilkit import``: a model run outside foilkit)
    imported: bool = False

    @property
    def rankable(self) -> bool:
        """Whether the entry takes a rank in its task's table: complete, of the whole benchmark
        (not partial: ``--limit``), no override, not a repeat of a model ranked from another
        run."""
        return (
            self.complete
            and not self.not_selected
            and not self.overrides
            and self.repeat_of is None
        )

    @property
    def ranked(self) -> bool:
        """Whether the entry ranks among the paper's results: rankable, no control."""
        return self.rankable and self.control is None

    @property
    def notes(self) -> str:
        """Why the entry is not ranked among the paper's results (empty: it is), and whether
        its answers were imported."""
        return _joined(
            "imported: model run outside foilkit" if self.imported else "",
            f"control: {self.control}" if self.control else "",
            f"override: {self.overrides}" if self.overrides else "",
            "" if self.complete else "incomplete",
            f"same model ranked from {self.repeat_of}" if self.repeat_of else "",
            f"partial: {self.not_selected} rows not selected (--limit)"
            if self.not_selected
            else "",
        )

    @property
    def coverage(self) -> str:
        """``scored / rows`` (rows scored / rows selected), marked when below the minimum (empty
        when not known); a partial run's unselected rows are in :attr:`notes`, not here."""
        return _coverage_text(self.scored, self.rows, self.complete)


@dataclass(frozen=True)
class Skipped:
    """A folder the leaderboard left out, and why (one line)."""

    folder: Path
    why: str

    def __str__(self) -> str:
        return f"{self.folder}: {self.why}"


def gather_runs(paths: Sequence[str | os.PathLike]) -> tuple[list[Path], list[Skipped]]:
    """The run folders named or below a folder named, at any depth (:func:`find_runs`), and the
    folders named that are missing or hold no run folder (a ``results.json``), each with why."""
    runs: list[Path] = []
    skipped: list[Skipped] = []
    for path in paths:
        found = find_runs([path])
        if not Path(path).exists():
            skipped.append(Skipped(Path(path), "no such folder"))
        elif not found:
            skipped.append(
                Skipped(Path(path), f"holds no run folder (a folder with {RESULTS_FILE})")
            )
        runs += [run.root for run in found if run.root not in runs]
    return runs, skipped


def local_entries(
    run_dirs: Sequence[str | os.PathLike], skipped: list[Skipped] | None = None
) -> list[Entry]:
    """Every leaderboard task value of every run folder. With ``skipped``, a run folder whose
    ``results.json`` this version cannot read, or that holds no leaderboard task value, is
    added to it with why instead of failing (without, the unreadable one raises)."""
    from foilkit.hub_results import task_values

    entries = []
    for run_dir in run_dirs:
        try:
            results = RunResults.load(run_dir)
        except ValueError as error:
            if skipped is None:
                raise
            skipped.append(Skipped(Path(run_dir), str(error)))
            continue
        values = task_values(results)
        if not values and skipped is not None:
            skipped.append(Skipped(Path(run_dir), _no_task_value(results)))
        for value in values:
            key = None
            if not value.task.mean_of:
                key = next(
                    k for c, g, k in value.task.sources if (c, g) == (value.config, value.group)
                )
            scored, rows, not_selected = _task_coverage(results, value.task.sources)
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
                    not_selected=not_selected,
                    control=results.control,
                    overrides=_overrides(results),
                    finished=results.invocation.finished_at if results.invocation else "",
                    imported=is_imported(results),
                )
            )
    return entries


def _no_task_value(results: RunResults) -> str:
    """Why a run gives no leaderboard task value, in words."""
    from foilkit.builders.hub import hub_tasks

    tasks = hub_tasks(results.benchmark, results.control)
    if not tasks:
        return f"benchmark {results.benchmark!r} defines no leaderboard task"
    return (
        f"its configs ({', '.join(results.configs)}) give none of {results.benchmark}'s "
        f"leaderboard tasks ({', '.join(task.id for task in tasks)})"
    )


def _overrides(results: RunResults) -> str:
    """The protocol settings the user overrode in ``results``, in words (empty: none)."""
    from foilkit.report import overrides_text

    protocol = results.protocol
    return "" if protocol is None else overrides_text(protocol)


def _task_coverage(
    results: RunResults, sources: Sequence[tuple[str, Any, Any]]
) -> tuple[int | None, int | None, int]:
    """Rows scored, rows selected (the run's coverage) and rows ``--limit`` did not select in the
    configs a task's value comes from (``None``, ``None``: the run did not record coverage)."""
    entries = [
        results.configs[config]
        for config in dict.fromkeys(config for config, _, _ in sources)
        if config in results.configs
    ]
    coverages = [entry.coverage for entry in entries]
    not_selected = sum(
        entry.limited_from - entry.num_rows
        if coverage is None or coverage.not_selected is None
        else coverage.not_selected
        for entry, coverage in zip(entries, coverages)
        if entry.limited_from is not None
    )
    if not coverages or any(c is None for c in coverages):
        return None, None, not_selected
    return sum(c.scored for c in coverages), sum(c.total for c in coverages), not_selected


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
    """Entries per (benchmark, task), best first, each local run tested against the next one
    (a run repeating a model ranked from another run is neither tested nor a next one).

    A run that scored fewer of the task's rows than ``min_coverage`` (or none) is marked
    incomplete and ranked below every complete one, whatever its value: a value over two rows
    is no result; so is a partial run (``--limit``: rows it did not select), whose coverage is
    of the rows it selected. A run with a protocol override ranks below every run that follows
    the protocol.
    """
    tables: dict[tuple[str, str], list[Entry]] = {}
    for entry in entries:
        if entry.rows is not None:
            entry.complete = entry.scored > 0 and entry.scored >= min_coverage * entry.rows
        tables.setdefault((entry.benchmark, entry.task), []).append(entry)
    mark_repeats(entries)
    comparisons: dict[tuple[Path, Path], Mapping[str, Any] | None] = {}
    for rows in tables.values():
        rows.sort(
            key=lambda e: (
                not e.complete or e.not_selected > 0,
                bool(e.overrides),
                e.repeat_of is not None,
                -e.value,
            )
        )
        position = 0
        for entry in rows:
            position += entry.rankable
            entry.rank = position if entry.rankable else 0
        # a repeat is no next model: its model is tested where it is ranked
        for upper, lower in itertools.pairwise([e for e in rows if e.repeat_of is None]):
            test = _paired(upper, lower, comparisons, n_resamples)
            if test is not None:
                upper.p_value_vs_next = test["p_value"]
                upper.difference_vs_next = test["difference"]
                upper.mde_vs_next = test["mde"]
    return tables


def mark_repeats(entries: Sequence[Entry]) -> None:
    """Rank each model once per benchmark and control: where several runs (sources) hold the
    same model label, every entry of all but one gets :attr:`Entry.repeat_of`, the run kept
    (:func:`_preference`; the module docstring says the order)."""
    runs: dict[tuple[str, str, str | None], dict[str, list[Entry]]] = {}
    for entry in entries:
        same = runs.setdefault((entry.benchmark, entry.model, entry.control), {})
        same.setdefault(entry.source, []).append(entry)
    for same in runs.values():
        if len(same) < 2:
            continue
        kept = max(same, key=lambda source: _preference(same[source]))  # the first of equals
        for source, run in same.items():
            for entry in run:
                entry.repeat_of = None if source == kept else kept


def _preference(run: Sequence[Entry]) -> tuple[bool, int, int, str]:
    """How a run of a model is preferred to another run of it: protocol followed, complete and
    of the whole benchmark (not partial: ``--limit``), more tasks, more rows scored, finished
    later."""
    return (
        all(e.complete and not e.overrides and not e.not_selected for e in run),
        len(run),
        sum(e.scored or 0 for e in run),
        max(e.finished for e in run),
    )


def _paired(
    a: Entry, b: Entry, cache: dict[tuple[Path, Path], Mapping[str, Any] | None], n_resamples: int
) -> dict[str, float] | None:
    """McNemar p-value, bootstrap difference (A - B, percent) and the McNemar test's MDE at 80%
    power (percent; ``None``: none) on the task's items, or ``None``."""
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
        mde = mcnemar.get("mde")
        return {
            "p_value": mcnemar["p_value"],
            "difference": 0.0 - 100 * bootstrap["difference"],
            "mde": None if mde is None else 100 * mde,
        }
    return None


def markdown(
    tables: Mapping[tuple[str, str], Sequence[Entry]], skipped: Sequence[Skipped] = ()
) -> str:
    """The models × tasks table per benchmark, then one ranked table per benchmark task;
    ``skipped``: the folders left out, named with why."""
    lines = [
        "# foilkit leaderboard",
        "",
        (
            "Values in percent with 95% bootstrap CIs. *vs next*: this model minus the next one "
            "down on the same items (paired bootstrap) and the exact McNemar p-value. *MDE*: the "
            "smallest difference that test detects with 80% power on those items (exact, at "
            "their observed discordance; a gap below it is below what they can show). *coverage*: "
            "rows scored / rows selected in the task, as the run's report gives it; a run below "
            "the minimum is marked incomplete and listed below every complete run, unranked (—), "
            "as is a partial run (--limit: its notes count the rows it did not select). "
            "*run*/*source*: the run folder (or Hub dataset) a row comes from. *notes*: a run "
            "under a temporal control (its own tasks, never the paper's), with a protocol "
            "override (listed below the runs that follow the protocol), or of a model ranked "
            "from another run (a model is ranked once: from its complete run following the "
            "protocol with the most tasks, then rows scored, then the latest)."
        ),
        "",
    ]
    if skipped:
        lines += [
            "Skipped: " + "; ".join(markdown_text(str(entry)) for entry in skipped) + ".",
            "",
        ]
    for wide in wide_tables(tables):
        what = (
            f"*{markdown_text(wide.aggregate)}*, the benchmark's own summary task"
            if wide.aggregate != MEAN
            else "*mean*, the mean of the tasks (a per-aspect breakdown of another task left out)"
        )
        lines += [
            f"## {markdown_text(wide.benchmark)}: models × tasks",
            "",
            (
                f"Ranked by {what}; runs under a temporal control, with a protocol override, "
                "incomplete or repeating a model ranked from another run are listed after, "
                "unranked, their notes saying why. Values in percent."
            ),
            "",
            table_row(map(markdown_text, wide.header)),
            table_rule([c in wide.numeric for c in wide.header]),
            *(table_row(map(markdown_text, row)) for row in wide.rows),
            "",
        ]
    for (benchmark, task), rows in tables.items():
        lines += [
            f"## {markdown_text(benchmark)} / {markdown_text(task)}",
            "",
            table_row(RANKED_COLUMNS),
            table_rule([True, False, False, True, False, False, True, False, False]),
        ]
        for e in rows:
            tested = e.p_value_vs_next is not None
            cells = [
                str(e.rank or "—"),
                markdown_text(e.model),
                _value_text(e.value, e.ci),
                str(e.n or ""),
                e.coverage,
                _test_text(e.difference_vs_next, e.p_value_vs_next),
                _points(e.mde_vs_next) if tested else "",
                markdown_text(e.notes),
                markdown_text(e.source),
            ]
            lines.append(table_row(cells))
        lines.append("")
    return "\n".join(lines)


@dataclass
class WideTable:
    """One benchmark's models × tasks table, as text cells (every export renders it):
    ``rank``, ``model``, ``run``, the ``tasks``, the ``aggregate`` column, ``notes``."""

    benchmark: str
    header: list[str]
    rows: list[list[str]]
    numeric: frozenset[str]
    tasks: list[str]
    aggregate: str


#: Task ids that summarise a benchmark's other tasks (the paper's ``Avg.``/overall number): the
#: wide table's aggregate column where the benchmark has one, as a task that is a mean of others.
SUMMARY_TASKS = ("average", "overall")
#: The wide table's aggregate column for a benchmark without a summary task.
MEAN = "mean"


def aggregate_task(benchmark: str) -> str | None:
    """The benchmark's own summary task (``average``, ``overall``, a mean of other tasks), or
    ``None`` (the wide table then computes :data:`MEAN`)."""
    from foilkit.builders.hub import hub_tasks

    return next(
        (task.id for task in hub_tasks(benchmark) if task.mean_of or task.id in SUMMARY_TASKS),
        None,
    )


def breakdowns(benchmark: str) -> set[str]:
    """The benchmark's tasks that only break another task down (every source a group of a
    config: TempCompass' ``multi_choice_action``); :data:`MEAN` leaves them out."""
    from foilkit.builders.hub import hub_tasks

    return {
        task.id
        for task in hub_tasks(benchmark)
        if task.sources and all(group is not None for _, group, _ in task.sources)
    }


def wide_tables(tables: Mapping[tuple[str, str], Sequence[Entry]]) -> list[WideTable]:
    """Per benchmark: a row per run (a local run folder, or a Hub model) with its ``run``, a
    column per task of the paper in the benchmark's order (a control run's
    ``direction_reversed`` under ``direction``), then one aggregate column, then ``notes``. The
    aggregate is the benchmark's summary task (:func:`aggregate_task`), else ``mean``: the mean
    of the tasks that break no other down, when the run has them all. Rows of
    :attr:`Entry.ranked` runs come first, ranked by the aggregate; the others follow, unranked,
    with their notes."""
    from foilkit.builders.hub import hub_tasks

    by_benchmark: dict[str, dict[tuple[str, str], dict[str, Entry]]] = {}
    for (benchmark, _task), entries in tables.items():
        for e in entries:
            task = e.task.removesuffix(f"_{e.control}") if e.control else e.task
            run = by_benchmark.setdefault(benchmark, {}).setdefault((e.source, e.model), {})
            run[task] = e
    result = []
    for benchmark, runs in by_benchmark.items():
        known = [t.id for t in hub_tasks(benchmark)]
        summary = aggregate_task(benchmark)
        present = {task for run in runs.values() for task in run}
        tasks = [t for t in known if t in present and t != summary]
        tasks += sorted(present - set(known))
        parts = [task for task in tasks if task not in breakdowns(benchmark)]
        rows = []
        for run in runs.values():
            if summary is not None:
                value = run[summary].value if summary in run else None
            else:
                values = [run[task].value for task in parts if task in run]
                value = sum(values) / len(values) if values and len(values) == len(parts) else None
            first = next(iter(run.values()))
            ranked = all(e.ranked for e in run.values())
            notes = "; ".join(dict.fromkeys(e.notes for e in run.values() if e.notes))
            rows.append((ranked, value, first, notes, run))
        rows.sort(key=lambda r: (not r[0], r[1] is None, -(r[1] or 0.0)))
        aggregate = summary or MEAN
        header = ["rank", "model", "run", *tasks, aggregate, "notes"]
        cells = []
        position = 0
        for ranked, value, first, notes, run in rows:
            position += ranked
            cells.append(
                [
                    str(position) if ranked else "—",
                    first.model,
                    first.source,
                    *(f"{run[task].value:.1f}" if task in run else "—" for task in tasks),
                    "—" if value is None else f"{value:.1f}",
                    notes,
                ]
            )
        numeric = frozenset([*tasks, aggregate, "rank"])
        result.append(WideTable(benchmark, header, cells, numeric, tasks, aggregate))
    return result


def write_wide_csv(wide: Sequence[WideTable], path: Path) -> Path:
    """``leaderboard_wide.csv``: the wide tables in one file: ``benchmark``, ``rank``, ``model``,
    ``run``, every benchmark's task columns (in its order, benchmark after benchmark), their
    aggregate columns, ``notes`` last (a column a benchmark lacks is empty)."""
    tasks = list(dict.fromkeys(task for table in wide for task in table.tasks))
    aggregates = list(dict.fromkeys(table.aggregate for table in wide))
    tasks = [task for task in tasks if task not in aggregates]
    columns = ["rank", "model", "run", *tasks, *aggregates, "notes"]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["benchmark", *columns])
        for table in wide:
            for row in table.rows:
                cells = dict(zip(table.header, row, strict=True))
                writer.writerow([table.benchmark, *(cells.get(c, "") for c in columns)])
    return path


#: LaTeX's special characters and how text writes them.
_LATEX = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "—": "--",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def latex_text(value: object) -> str:
    """``value`` as literal LaTeX text (model ids and task names hold ``_``, ``#``, ``&``)."""
    return "".join(_LATEX.get(char, char) for char in str(value))


def write_latex(wide: Sequence[WideTable], path: Path) -> Path:
    """``leaderboard.tex``: each wide table as a ``booktabs`` tabular, ready for a paper."""
    parts = [
        "% foilkit leaderboard: models x tasks (values in percent); needs \\usepackage{booktabs}",
    ]
    for table in wide:
        spec = "".join("r" if c in table.numeric else "l" for c in table.header)
        parts += [
            f"% {latex_text(table.benchmark)}",
            f"\\begin{{tabular}}{{{spec}}}",
            "\\toprule",
            " & ".join(latex_text(c) for c in table.header) + " \\\\",
            "\\midrule",
            *(" & ".join(latex_text(c) for c in row) + " \\\\" for row in table.rows),
            "\\bottomrule",
            "\\end{tabular}",
            "",
        ]
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


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
                        e.rank or "",
                        e.model,
                        e.value,
                        *(e.ci or ("", "")),
                        e.n or "",
                        _blank(e.scored),
                        _blank(e.rows),
                        e.not_selected,
                        e.complete,
                        e.control or "",
                        e.overrides,
                        e.repeat_of or "",
                        _blank(e.p_value_vs_next),
                        _blank(e.difference_vs_next),
                        _blank(e.mde_vs_next),
                        e.source,
                    ]
                )
    return path


def _blank(value: float | int | None) -> Any:
    return "" if value is None else value


def _points(value: float | None) -> str:
    """An MDE in points to one decimal (``—``: no effect the test can detect)."""
    return "—" if value is None else f"{value:.1f}"


def _joined(*notes: str) -> str:
    """The notes given, those not empty, in one cell."""
    return "; ".join(note for note in notes if note)


def _coverage_text(scored: object, rows: object, complete: bool) -> str:
    """``scored / rows``, marked when below the minimum (empty when not known)."""
    if rows is None:
        return ""
    return f"{scored} / {rows}" + ("" if complete else " (incomplete)")


def _value_text(value: float, ci: Sequence[float] | None) -> str:
    """A task value with its 95% CI, in percent."""
    return f"{value:.2f}" + (f" [{ci[0]:.1f}, {ci[1]:.1f}]" if ci else "")


def _test_text(difference: float | None, p_value: float | None) -> str:
    """The difference to the next model down and its p-value (empty: no test)."""
    return "" if p_value is None else f"{difference:+.1f}, {p_statement(p_value)}"


def _csv_cells(row: Mapping[str, str]) -> list[str]:
    """A ``leaderboard.csv`` row as its task table's cells in ``leaderboard.html`` (a CSV from
    before coverage, notes or MDEs has no such column: those cells stay empty)."""
    ci = (float(row["ci_low"]), float(row["ci_high"])) if row["ci_low"] and row["ci_high"] else None
    test, mde = "", ""
    if row["p_value_vs_next"]:
        test = _test_text(float(row["difference_vs_next"]), float(row["p_value_vs_next"]))
        if "mde_vs_next" in row:
            mde = _points(float(row["mde_vs_next"]) if row["mde_vs_next"] else None)
    rows = row.get("coverage_rows") or None
    return [
        row["rank"] or "—",
        row["model"],
        _value_text(float(row["value"]), ci),
        row["n"],
        _coverage_text(row.get("coverage_scored"), rows, row.get("complete") != "False"),
        test,
        mde,
        _joined(
            f"control: {row['control']}" if row.get("control") else "",
            f"override: {row['overrides']}" if row.get("overrides") else "",
            (
                f"same model ranked from {row['same_model_ranked_from']}"
                if row.get("same_model_ranked_from")
                else ""
            ),
        ),
        row["source"],
    ]


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def write_leaderboard_html(folder: str | os.PathLike) -> Path:
    """``leaderboard.html`` beside a ``foilkit leaderboard`` folder's ``leaderboard.csv`` and
    ``leaderboard.png``, from those files alone (``foilkit report`` rebuilds it): the models ×
    tasks tables of ``leaderboard_wide.csv`` (where present, a benchmark's empty task columns
    left out), one ranked table per benchmark task, the plot inline."""
    out = Path(folder)
    tasks: dict[tuple[str, str], list[dict[str, str]]] = {}
    for row in _read_csv(out / "leaderboard.csv"):
        tasks.setdefault((row["benchmark"], row["task"]), []).append(row)
    wide = (
        _read_csv(out / "leaderboard_wide.csv") if (out / "leaderboard_wide.csv").is_file() else []
    )
    tables = []
    for benchmark in dict.fromkeys(row["benchmark"] for row in wide):
        mine = [row for row in wide if row["benchmark"] == benchmark]
        columns = [c for c in mine[0] if c != "benchmark" and any(row[c] for row in mine)]
        cells = [[row[c] for c in columns] for row in mine]
        tables.append(
            f"<h3>{html.escape(benchmark)}: models × tasks</h3>"
            + html_table(columns, cells, "paper ranked")
        )
    for (benchmark, task), rows in tasks.items():
        tables.append(
            f"<h3>{html.escape(benchmark)} / {html.escape(task)}</h3>"
            + html_table(RANKED_COLUMNS, map(_csv_cells, rows), "paper ranked")
        )
    header = (
        "Values in percent with 95% bootstrap CIs. vs next: this model minus the next one down on "
        "the same items (paired bootstrap) and the exact McNemar p-value. MDE: the smallest "
        "difference that test detects with 80% power on those items (exact, at their observed "
        "discordance): a gap below it is below what the items can show. coverage: rows scored / "
        "rows in the task; a run below the minimum is marked incomplete and listed below every "
        "complete run, unranked (—). A model is ranked once: its other runs are listed unranked, "
        "their notes naming the run it is ranked from."
    )
    page = render_page(
        title="foilkit leaderboard",
        header=[header],
        tables=tables,
        notes=[],
        plots=[out / "leaderboard.png"],
        data=None,
    )
    path = out / "leaderboard.html"
    path.write_text(page, encoding="utf-8")
    return path


def plot(tables: Mapping[tuple[str, str], Sequence[Entry]], path: Path) -> Path:
    """Per task, each model's value with its 95% CI, best at the top, the task's chance level
    dashed; an entry out of the paper's ranking (control, override, incomplete) grey and
    hatched, its notes by its name."""
    from foilkit.report import _pyplot, error_bars, save_figure
    from foilkit.report_tables import Cell

    plt = _pyplot()
    count = max(1, len(tables))
    fig, axes = plt.subplots(
        count,
        1,
        figsize=(7, max(3.0, sum(1.0 + 0.25 * len(r) for r in tables.values()))),
        squeeze=False,
    )
    for ax, ((benchmark, task), rows) in zip(axes[:, 0], tables.items()):
        ordered = list(reversed(rows))
        values = [e.value for e in ordered]
        errors = error_bars([Cell(e.value, *(e.ci or (None, None))) for e in ordered], scale=1)
        ax.barh(
            range(len(ordered)),
            values,
            xerr=errors,
            capsize=3,
            color=["tab:blue" if e.ranked else "0.8" for e in ordered],
            hatch=["" if e.ranked else "//" for e in ordered],
            edgecolor="0.15",
            linewidth=0.6,
        )
        ax.set_yticks(
            range(len(ordered)),
            [e.model + (f" ({note})" if (note := _plot_note(e)) else "") for e in ordered],
            fontsize=8,
        )
        # Room left of 0 (a 0% bar's outline stands clear of the axis) and right of 100 (a
        # 100% bar's interval caps stay inside).
        ax.set_xlim(-2, 104)
        ax.set_xticks(range(0, 101, 20))
        level = task_chance(benchmark, task)
        chance = ""
        if level is not None:  # over the bars: a bar reaching past it must not hide it
            ax.axvline(100 * level, color="0.1", linestyle="--", linewidth=1, zorder=3)
            chance = f" (dashed: chance, {100 * level:g}%)"
        ax.set_title(f"{benchmark} / {task}{chance}", fontsize=9)
    axes[-1, 0].set_xlabel("value (%) with 95% CI")
    return save_figure(fig, path, dpi=90)


def task_chance(benchmark: str, task_id: str) -> float | None:
    """The chance level of a leaderboard task (a fraction; ``None``: none known, e.g. recall, a
    Hub task foilkit does not define): the chance of the report column its value comes from
    (:attr:`foilkit.builders.spec.MetricSpec.chance`); a mean task's is its first part's."""
    from foilkit.builders import BENCHMARKS
    from foilkit.builders.hub import CONTROLS, hub_tasks

    if benchmark not in BENCHMARKS.names():
        return None
    tasks = {t.id: t for control in (None, *CONTROLS) for t in hub_tasks(benchmark, control)}
    task = tasks.get(task_id)
    while task is not None and task.mean_of:
        task = tasks.get(task.mean_of[0])
    if task is None:
        return None
    spec = BENCHMARKS.get(benchmark)
    for config, _group, key in task.sources:
        for metric in spec.metrics(config):
            for label, column_key in metric.columns.items():
                if column_key == key and label in metric.chance:
                    return metric.chance[label]
    return None


def _plot_note(entry: Entry) -> str:
    """What the plot adds to an entry's name: its override and incompleteness (a control is
    in the task's name already)."""
    return _joined(
        f"override: {entry.overrides}" if entry.overrides else "",
        "" if entry.complete else "incomplete",
        "partial (--limit)" if entry.not_selected else "",
    )


def write_leaderboard(
    run_dirs: Sequence[str | os.PathLike],
    out_dir: str | os.PathLike,
    *,
    hub: Sequence[tuple[str, str]] = (),
    n_resamples: int = 1000,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
    skipped: list[Skipped] | None = None,
) -> Path:
    """Rank ``run_dirs`` (and the Hub leaderboards of ``hub``: (dataset id, benchmark) pairs);
    write ``leaderboard.md``, ``.csv``, ``_wide.csv``, ``.tex``, ``.html`` and ``.png`` into
    ``out_dir``; returns the markdown's path. ``run_dirs`` are run folders or folders holding
    them at any depth (:func:`gather_runs`); ``skipped`` gets every folder left out, with why
    (the markdown names them too)."""
    found, left_out = gather_runs(run_dirs)
    entries = local_entries(found, left_out)
    if skipped is not None:
        skipped += left_out
    for dataset_id, benchmark in hub:
        entries += hub_entries(dataset_id, benchmark)
    if not entries:
        why = "".join(f"; skipped {entry}" for entry in left_out)
        raise ValueError(
            f"no leaderboard task value in {list(map(str, run_dirs))} or {list(hub)}{why}"
        )
    tables = rank(entries, n_resamples=n_resamples, min_coverage=min_coverage)
    out = claim_folder(out_dir, LEADERBOARD)  # new, empty or foilkit's (foilkit.folders)
    write_csv(tables, out / "leaderboard.csv")
    wide = wide_tables(tables)
    write_wide_csv(wide, out / "leaderboard_wide.csv")
    write_latex(wide, out / "leaderboard.tex")
    plot(tables, out / "leaderboard.png")
    report = out / "leaderboard.md"
    report.write_text(markdown(tables, left_out), encoding="utf-8")
    write_leaderboard_html(out)
    return report
