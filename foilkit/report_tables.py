"""The table model of the run reports: a run's results as the paper's table, runs side by side.

A run's results (:class:`foilkit.run.RunResults`) become a :class:`Table` (:func:`run_table`):
one row per group of the paper's table (aspect, subtest, foil type, RTime task) and per config
overall, one column per reported number (accuracy; P, T, P+T; R@K; T2V/V2T), each cell a value
with its bootstrap confidence interval. Several runs side by side become one table per reported
number with the runs as rows (:func:`runs_tables`). The markdown report
(:mod:`foilkit.report`) and the HTML page (:mod:`foilkit.html_report`) both render these tables,
their cells as :func:`table_cells` spells them, and their notes (:func:`tie_note`,
:func:`interval_text`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from foilkit.run import RunResults

#: Plots of a side-by-side report: ``<prefix><column>.png``.
SIDE_BY_SIDE_PLOT = "side_by_side_"


# Result keys counting the items (RTime: queries) whose outcome a tie decided, and their labels
# in the report's ``tied`` column. A model scoring caption and foil alike (frame-order-free
# pooling on a reversed video) shows here, not as a wrong answer.
TIE_COUNTS = {
    "n_tied": "",
    "n_tied_main": "T",
    "n_tied_proficiency": "P",
    "t2v_tied": "T2V",
    "v2t_tied": "V2T",
}


# Result keys counting the items of a generate-mode run whose every answer chose no text
# (unparseable, refused, judged to match none), kept out of the ties (``foilkit.evaluation.
# separate_unanswered``), and their labels in the report's ``unanswered`` column.
UNANSWERED_COUNTS = {
    "n_unanswered": "",
    "n_unanswered_main": "T",
    "n_unanswered_proficiency": "P",
}


@dataclass(frozen=True)
class Cell:
    """A reported number and its confidence interval (fractions in [0, 1]; ``None`` when absent)."""

    value: float
    low: float | None = None
    high: float | None = None

    def text(self) -> str:
        ci = (
            ""
            if self.low is None or self.high is None
            else f" [{100 * self.low:.1f}, {100 * self.high:.1f}]"
        )
        return f"{100 * self.value:.1f}{ci}"


@dataclass
class Row:
    label: str
    config: str
    cells: dict[str, Cell] = field(default_factory=dict)
    n: int | None = None
    tied: dict[str, int] = field(default_factory=dict)  # TIE_COUNTS label -> count
    #: a config's overall row (or its lone group's): the run's headline numbers
    overall: bool = False
    unanswered: dict[str, int] = field(default_factory=dict)  # UNANSWERED_COUNTS label -> count

    def tied_text(self) -> str:
        return counts_text(self.tied)

    def add_counts(self, other: Row) -> None:
        """Add ``other``'s tie and unanswered counts to this row's (a summary, a run's total)."""
        for mine, theirs in ((self.tied, other.tied), (self.unanswered, other.unanswered)):
            for label, count in theirs.items():
                mine[label] = mine.get(label, 0) + count


def counts_text(counts: Mapping[str, int]) -> str:
    """A row's ``tied`` or ``unanswered`` cell: each label's count (``T 3, P 1``; ``4``)."""
    return ", ".join(f"{label} {count}".strip() for label, count in counts.items())


@dataclass
class Table:
    """One run's numbers in the paper's layout (see the module docstring)."""

    title: str
    row_label: str
    columns: list[str]
    rows: list[Row]
    #: column -> chance level (a fraction; :attr:`builders.spec.MetricSpec.chance`)
    chance: dict[str, float] = field(default_factory=dict)
    #: what the table shows, above it (side-by-side tables: the reported number)
    caption: str = ""


def cell(result: Mapping[str, Any], key: str) -> Cell | None:
    """The value ``result[key]`` with its interval ``result[key + "_ci"]`` = ``[low, high]``."""
    if result.get(key) is None:
        return None
    ci = result.get(f"{key}_ci") or (None, None)
    return Cell(float(result[key]), *(None if bound is None else float(bound) for bound in ci))


def run_table(results: RunResults) -> Table:
    """The table of one run's results.

    A config whose metric has groups gives one row per group, then its overall row when it has
    several groups (``all``, or ``<config> (all)`` when the run has several configs); a config
    without groups (RTime tasks) gives one row. Each metric fills its own columns. A benchmark
    with a ``summary`` ends with that row when the run has all its default configs (ViLMA's
    "Avg." over its five tests).
    """
    benchmark = results.spec
    columns: list[str] = []
    chance: dict[str, float] = {}
    rows: dict[tuple[str, str], Row] = {}
    overall_rows: dict[str, Row] = {}  # config -> its overall row (a lone group's row is one)
    several = len(results.configs) > 1
    for config, entry in results.configs.items():
        for metric in benchmark.metrics(config):
            computed = entry.metrics[metric.metric]
            columns += [label for label in metric.columns if label not in columns]
            chance.update(metric.chance)
            groups = computed.groups or {}
            scopes = list(groups.items())
            if len(groups) != 1:
                overall = config if not groups else f"{config} (all)" if several else "all"
                scopes.append((overall, computed.overall))
            for label, result in scopes:
                row = rows.setdefault((config, label), Row(label, config, n=result.get("n")))
                row.cells.update(_cells(metric.columns, result))
                for counts, keys in ((row.tied, TIE_COUNTS), (row.unanswered, UNANSWERED_COUNTS)):
                    counts.update(
                        {name: int(result[key]) for key, name in keys.items() if key in result}
                    )
            overall_rows[config] = rows[(config, scopes[-1][0])]
            overall_rows[config].overall = True
    row_label = benchmark.group_label if benchmark.group_column else "task"
    table_rows = list(rows.values())
    summarised = [overall_rows.get(config) for config in benchmark.all_configs]
    if benchmark.summary and len(summarised) > 1 and all(summarised):
        table_rows.append(summary_row(benchmark.summary, summarised))
    return Table(f"{results.title}: {results.label}", row_label, columns, table_rows, chance)


def summary_row(label: str, rows: Sequence[Row]) -> Row:
    """The mean of ``rows``, column by column (columns every row has), each row weighing the
    same; without an interval: the rows' own intervals come from separate resamplings."""
    columns = [column for column in rows[0].cells if all(column in row.cells for row in rows)]
    cells = {
        column: Cell(sum(row.cells[column].value for row in rows) / len(rows)) for column in columns
    }
    summary = Row(label, "", cells, n=sum(row.n or 0 for row in rows))
    for row in rows:
        summary.add_counts(row)
    return summary


def _cells(columns: Mapping[str, str], result: Mapping[str, Any]) -> dict[str, Cell]:
    """Report column -> cell, for the columns whose result key is present."""
    cells = {column: cell(result, key) for column, key in columns.items()}
    return {column: value for column, value in cells.items() if value is not None}


#: What :func:`tied_kinds` adds where rows count unanswered items.
UNANSWERED = "unanswered"


def tied_kinds(tables: Sequence[Table]) -> set[str]:
    """The ``TIE_COUNTS`` labels the rows of ``tables`` carry (empty: no metric counted ties),
    and :data:`UNANSWERED` where rows count unanswered items."""
    kinds = {label for table in tables for row in table.rows for label in row.tied}
    if any(row.unanswered for table in tables for row in table.rows):
        kinds.add(UNANSWERED)
    return kinds


def tie_note(results: RunResults, kinds: set[str]) -> str:
    """The line under a table with a ``tied`` column (``kinds``: the ``TIE_COUNTS`` labels it
    shows): what was counted, and how each metric of the run credited a tie (its policy)."""
    from foilkit.metrics import tie_meanings

    meanings = tie_meanings()
    how = "; ".join(
        f"`{name}` ties=`{policy}`: a tie {meanings[policy]}"
        for name, policy in results.tie_policies().items()
    )
    parts = ["tied: items whose true text and a foil scored the same"]
    if UNANSWERED in kinds:
        parts.append(
            "unanswered: items whose every answer chose no option (unparseable, refused, or "
            "judged to match none), counted apart from the ties; their texts all score 0, which "
            "the tie policy credits as a tie"
        )
    if kinds & {"T", "P"}:
        parts.append("T/P: in ViLMA's main and proficiency tests")
    if kinds & {"T2V", "V2T"}:
        parts.append("T2V/V2T: queries whose target tied with another candidate")
    return "; ".join(parts) + f". {how}."


def run_header(
    results: RunResults, strong: Callable[[str], str] = str, code: Callable[[str], str] = str
) -> list[str]:
    """The lines above a run's table: benchmark, model, control, the intervals, and whether the
    run is partial (``--limit``); ``strong`` and ``code`` mark emphasis and the model id (the
    markdown report's; the HTML page shows them plain)."""
    control = f", temporal control {strong(results.control)}" if results.control else ""
    lines = [
        f"Benchmark: {strong(results.title)} ({results.paper_table}); model "
        f"{code(results.model)}{control}.",
        f"Values in %; brackets: {interval_text(results)}.",
    ]
    if partial := results.partial():
        lines.append(strong(f"{partial[0].upper()}{partial[1:]}."))
    return lines


def interval_text(results: RunResults) -> str:
    """How a run's confidence intervals were computed, in words."""
    return (
        f"95% bootstrap confidence interval ({results.bootstrap.n_resamples} resamples, seed "
        f"{results.bootstrap.seed}, clustered by video)"
    )


def aligned_rows(tables: Sequence[Table]) -> list[tuple[str, str]]:
    """(config, row label) keys present in every table, in the first table's order."""
    keys = [(row.config, row.label) for row in tables[0].rows]
    common = set.intersection(
        *({(row.config, row.label) for row in table.rows} for table in tables)
    )
    return [key for key in keys if key in common]


def _group_names(keys: Sequence[tuple[str, str]]) -> list[str]:
    """A column name per aligned row: its label, ``config: label`` where labels repeat."""
    counts: dict[str, int] = {}
    for _, label in keys:
        counts[label] = counts.get(label, 0) + 1
    return [label if counts[label] == 1 else f"{config}: {label}" for config, label in keys]


def column_by_group(tables: Sequence[Table], labels: Sequence[str], column: str) -> list[Row]:
    """One reported number of several runs: a row per aligned row of the paper's table (its
    ``n``), a cell per run label."""
    keys = aligned_rows(tables)
    rows = []
    for (config, label), name in zip(keys, _group_names(keys), strict=True):
        merged = Row(name, config)
        for table, run_label in zip(tables, labels, strict=True):
            source = next(row for row in table.rows if (row.config, row.label) == (config, label))
            merged.n = source.n
            if column in source.cells:
                merged.cells[run_label] = source.cells[column]
        rows.append(merged)
    return rows


def runs_tables(tables: Sequence[Table], labels: Sequence[str]) -> list[Table]:
    """Side by side, as a paper's table: per reported number (``accuracy``; ``P+T``) a table with
    a row per run (in the given order), a column per row of the paper's table (``n`` in its
    header), ``tied`` the run's ties over its configs, and a last row ``chance`` where the
    number has a chance level."""
    result = []
    for column in tables[0].columns:
        groups = column_by_group(tables, labels, column)
        if not any(group.cells for group in groups):
            continue
        names = [
            group.label if group.n is None else f"{group.label} (n={group.n})" for group in groups
        ]
        rows = []
        for table, run_label in zip(tables, labels, strict=True):
            row = Row(run_label, "")
            for group, name in zip(groups, names, strict=True):
                if run_label in group.cells:
                    row.cells[name] = group.cells[run_label]
            for source in table.rows:
                if source.overall:
                    row.add_counts(source)
            rows.append(row)
        level = tables[0].chance.get(column)
        if level is not None:
            rows.append(Row("chance", "", {name: Cell(level) for name in names}))
        result.append(Table(column, "run", names, rows, caption=column))
    return result


def unique_labels(labels: Sequence[str]) -> list[str]:
    seen: dict[str, int] = {}
    unique = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        unique.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return unique


def table_cells(table: Table) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """The header and each row's label and cell texts, as both reports show a table: the row
    label's column, the table's columns (a missing cell is an em dash), then ``n`` (where rows
    count their items), ``tied`` (where the metrics count items a tie decided) and
    ``unanswered`` (generate mode: items whose answers chose no text)."""
    tied = any(row.tied_text() for row in table.rows)
    unanswered = any(row.unanswered for row in table.rows)
    counted = any(row.n is not None for row in table.rows)
    header = [table.row_label, *table.columns]
    header += ["n"] * counted + ["tied"] * tied + ["unanswered"] * unanswered
    rows = []
    for row in table.rows:
        cells = [row.cells[c].text() if c in row.cells else "—" for c in table.columns]
        if counted:
            cells.append("" if row.n is None else str(row.n))
        if tied:
            cells.append(row.tied_text())
        if unanswered:
            cells.append(counts_text(row.unanswered))
        rows.append((row.label, cells))
    return header, rows
