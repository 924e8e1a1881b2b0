"""Reports of evaluation runs: markdown tables laid out like the papers', plots with CIs.

A run's results become the paper's table (:mod:`foilkit.report_tables`), which feeds ``report.md``
of one run with its plots (``<metric>.png``: bars per group with CI error bars; ``recall.png``:
RTime's R@K curves), and the side-by-side report of several runs (``foilkit compare``, the demo):
per reported number a table with the runs as rows, each model followed by its runs under
temporal controls, as a paper's table reads, and bars grouped by the paper's rows, one colour
per model, its controls lighter and hatched. Plots draw each column's chance level, keep a 0%
bar visible and a 100% bar's interval caps inside the axes. Numbers are in percent; user strings
(labels, model ids, group names, folders) go through :mod:`foilkit.markdown`, shown as typed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foilkit.files import atomic_write
from foilkit.html_report import write_run_html, write_side_by_side_html
from foilkit.markdown import markdown_code, markdown_text, table_row, table_rule
from foilkit.report_tables import (
    SIDE_BY_SIDE_PLOT,
    Cell,
    Row,
    Table,
    column_by_group,
    run_header,
    run_table,
    runs_tables,
    table_cells,
    tie_note,
    tied_kinds,
    unique_labels,
)
from foilkit.run import Coverage, RunFolder, RunResults, ScoringRun
from foilkit.scorers.protocols import setting_label

if TYPE_CHECKING:
    from foilkit.scorers.protocols import ResolvedProtocol

RECALL_COLUMN = re.compile(r"^(?P<direction>T2V|V2T) R@(?P<k>\d+)$")


def markdown_table(table: Table) -> str:
    """The table in GitHub markdown (:func:`foilkit.report_tables.table_cells`)."""
    header, rows = table_cells(table)
    rule = table_rule([False] + [True] * (len(header) - 1))
    lines = [table_row(map(markdown_text, header)), rule]
    lines += [table_row([markdown_text(label), *cells]) for label, cells in rows]
    return "\n".join(lines)


def write_run_report(results: RunResults, out_dir: str | os.PathLike) -> Path:
    """``report.md``, the plots and ``report.html`` of one run in its folder ``out_dir``;
    returns the markdown report's path."""
    folder = RunFolder(Path(out_dir))
    table = run_table(results)
    tie_kinds = tied_kinds([table])
    plots = []
    bar_columns = [c for c in table.columns if not RECALL_COLUMN.match(c)]
    if bar_columns and any(c in row.cells for row in table.rows for c in bar_columns):
        plots.append(
            bar_plot(
                table.rows,
                bar_columns,
                folder.plot("accuracy"),
                title=table.title,
                xlabel=table.row_label,
                chance=table.chance,
            )
        )
    if any(RECALL_COLUMN.match(c) for c in table.columns):
        plots.append(recall_plot(table.rows, folder.plot("recall"), title=table.title))
    lines = [
        f"# {markdown_text(table.title)}",
        "",
        *run_header(results, lambda text: f"**{text}**", markdown_code),
        "",
        *protocol_lines(results.protocol),
        markdown_table(table),
        "",
        *([tie_note(results, tie_kinds), ""] if tie_kinds else []),
        *_run_notes(results),
        "",
        *(f"![{plot.stem}]({plot.name})" for plot in plots),
        "",
    ]
    atomic_write(folder.report, "\n".join(lines))
    write_run_html(folder.root, results=results)
    return folder.report


def protocol_lines(protocol: ResolvedProtocol | None) -> list[str]:
    """The report header's account of the scoring protocol: settings (those a run's configs
    resolved differently, per config), overrides, reference, notes. A setting reads as its flag
    does (``num_frames``: "frames", as ``--frames``)."""
    if protocol is None:
        return []
    settings = ", ".join(
        f"{setting_label(name)} {markdown_code(value)}" for name, value in protocol.settings.items()
    )
    lines = [f"Scoring protocol **{protocol.name}** for `{protocol.family}` models: {settings}."]
    if protocol.per_config:
        each = "; ".join(
            f"{setting_label(name)} "
            + ", ".join(f"{markdown_code(value)} ({config})" for config, value in values.items())
            for name, values in protocol.per_config.items()
        )
        lines.append(f"Per config: {each}.")
    if protocol.reference:
        lines.append(f"Reproduces: {protocol.reference}.")
    if protocol.notes:
        lines.append(f"Notes: {protocol.notes}.")
    if protocol.from_model:
        native = ", ".join(
            f"{setting_label(name)} `{value}`" for name, value in protocol.from_model.items()
        )
        lines.append(f"Left to the model, from its config: {native}.")
    if protocol.overrides:
        changed = overrides_text(protocol, markdown_code)
        lines.append(f"Overridden by the user (these numbers depart from the protocol): {changed}.")
    if protocol.departures:
        departed = ", ".join(
            f"{setting_label(name)} `{value['protocol']}` -> `{value['used']}` ({value['why']})"
            for name, value in protocol.departures.items()
        )
        lines.append(
            f"Not followed on this device (these numbers depart from the protocol): {departed}."
        )
    return [" ".join(lines), ""]


def overrides_text(protocol: ResolvedProtocol, code: Callable[[str], str] = str) -> str:
    """The protocol settings the user overrode, in words (``frames 8 -> 16``); ``code`` marks
    each value (the report's code spans; plain in the leaderboard's notes)."""
    return ", ".join(
        f"{setting_label(name)} {code(value['protocol'])} -> {code(value['given'])}"
        for name, value in protocol.overrides.items()
    )


def coverage_text(coverage: Coverage, limited_from: int | None = None) -> str:
    """A config's :class:`foilkit.run.Coverage` in words: rows scored / rows selected, and the
    rows ``--limit`` left out apart; ``limited_from``: the config's rows before ``--limit``
    selected some (``None``: not cut; a run written before ``not_selected`` was recorded)."""
    dropped = coverage.dropped_missing_video
    if coverage.not_selected is not None or limited_from is not None:
        of = coverage.total + coverage.not_selected if coverage.not_selected is not None else None
        head = f"{coverage.total} of {of or limited_from} rows selected (--limit)"
    elif coverage.benchmark_rows is not None:
        head = f"{coverage.total} rows in the benchmark"
    else:
        head = "rows from an exported dataset (rows dropped when it was built are not known here)"
    if dropped is not None:
        head += f", {dropped} dropped at build (video missing)"
    why = coverage.why()
    return (
        f"coverage {coverage.label} ({coverage.fraction:.0%}): {head}, {coverage.failed} failed "
        f"to score, {coverage.scored} scored" + (f" (not scored: {why})" if why else "")
    )


def _run_notes(results: RunResults) -> list[str]:
    notes = []
    for config, entry in results.configs.items():
        record = entry.record or ScoringRun()
        rows = (
            coverage_text(entry.coverage, entry.limited_from)
            if entry.coverage is not None  # runs written before coverage was recorded
            else f"{entry.num_rows} rows"
        )
        how = (
            f"adapter `{record.adapter_name or '?'}`, mode `{record.mode}`, score kind "
            f"`{record.score_kind}`, {record.num_frames} frames ({record.sampling_name or '?'} "
            f"sampling), decoder {record.decoder}, dtype {record.dtype}"
        )
        if record.adapter.get("sources") is not None:  # foilkit import: no model run here
            how = f"answers imported, model run {record.adapter.get('model_run_by')}, from " + (
                ", ".join(_source_text(source) for source in record.adapter["sources"])
            )
        notes.append(f"- {markdown_code(config)}: {rows}; {how}.")
        if record.answers is not None:
            notes.append(f"  {answers_text(record)}")
        for name, metric in entry.metrics.items():
            for key, spread in (metric.samples or {}).items():
                notes.append(
                    f"  {markdown_code(name)} {key} per sample ({len(spread.values)} samples): "
                    f"mean {100 * spread.mean:.1f}, std {100 * spread.std:.1f} "
                    f"({', '.join(f'{100 * v:.1f}' for v in spread.values)})."
                )
    return notes


def _source_text(source: Mapping[str, Any]) -> str:
    """An imported answer file in words: its name, the tool that wrote it, its hash."""
    tool = " ".join(str(part) for part in (source.get("tool"), source.get("version")) if part)
    return (
        f"{markdown_code(Path(source['file']).name)} ({tool or source.get('format')}, "
        f"sha256 {str(source.get('sha256'))[:12]})"
    )


def answers_text(record: ScoringRun) -> str:
    """Generate mode's answers in words: the parser's outcome counts and the decoding."""
    counts = record.answers or {}
    decoding = record.decoding or {}
    if decoding.get("strategy") == "greedy":
        how = "greedy"
    else:
        how = (
            f"sampled at temperature {decoding.get('temperature')}, top-p "
            f"{decoding.get('top_p')}, seed {decoding.get('seed')}"
        )
    outcomes = ", ".join(f"{count} {outcome}" for outcome, count in counts.items())
    judge = record.judge
    judged = ""
    if judge is not None:
        judged = (
            f"; LLM judge `{judge.get('model')}` at {judge.get('base_url') or 'OpenAI'} "
            f"(the official {judge.get('official_model')}, {judge.get('prompt_version')}), "
            f"asked about {judge.get('asked_about')}; judged answers rated incorrect count wrong"
        )
        cost = (judge.get("usage") or {}).get("cost")
        if cost is not None:  # priced (--judge-price-per-1k-*-tokens)
            judged += f"; the judge's cost: {cost:.4f} at the given prices"
    read = (
        f"answers read by parser `{record.parser}`: {outcomes} (unparseable and refused answers "
        f"count wrong){judged}"
    )
    if not decoding:  # imported answers: decoded elsewhere, as their source says
        return read + "."
    return (
        f"{read}; {decoding.get('num_samples')} answer(s) per question and option order, {how}, "
        f"at most {decoding.get('max_new_tokens')} new tokens."
    )


# --- plots ----------------------------------------------------------------------------------------


def interval_extent(value: float, low: float, high: float) -> tuple[float, float]:
    """How far an interval reaches below and above ``value``, as error bars draw it; a bootstrap
    percentile interval can miss its point estimate (few resamples, a skewed statistic), and the
    side it misses is then drawn as nothing, not as a negative bar matplotlib refuses."""
    return max(0.0, value - low), max(0.0, high - value)


def error_bars(cells: Sequence[Cell | None], scale: float = 100) -> list[list[float]]:
    """How far each cell's interval reaches below and above its value, times ``scale``
    (:func:`interval_extent`; no interval: 0), as matplotlib's ``yerr`` takes them."""
    extents = [
        interval_extent(scale * c.value, scale * c.low, scale * c.high)
        if c and c.low is not None and c.high is not None
        else (0.0, 0.0)
        for c in cells
    ]
    return [[low for low, _ in extents], [high for _, high in extents]]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: Path, *, dpi: int) -> Path:
    """Lay ``fig`` out, write it to ``path`` and close it (pyplot holds every open figure)."""
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    _pyplot().close(fig)
    return path


#: Hatches of the runs under temporal controls, in the order the controls first appear.
CONTROL_HATCHES = ("//", "..", "xx", "\\\\", "++", "oo")
#: Room above 100% so a full bar's interval caps stay inside the axes.
Y_TOP = 108


@dataclass(frozen=True)
class BarStyle:
    """How one series of bars is drawn: its colour and hatch (``""``: none)."""

    color: Any
    hatch: str = ""


def bar_plot(
    rows: Sequence[Row],
    series: Sequence[str],
    path: Path,
    *,
    title: str,
    xlabel: str,
    chance: Mapping[str, float] | None = None,
    styles: Mapping[str, BarStyle] | None = None,
) -> Path:
    """Grouped bars: one group per row label, one bar per column in ``series`` (its legend
    entry), 95% CI error bars. ``chance``: series -> chance level, drawn as a dashed line per
    level; ``styles``: series -> colour and hatch (default: matplotlib's colours). Every bar is
    outlined, so a 0% bar still shows as a line on the baseline."""
    plt = _pyplot()
    count = len(rows) * max(1, len(series)) ** 0.5
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * count + 2), 4))
    draw_bars(ax, rows, series, chance=chance, styles=styles)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    return save_figure(fig, path, dpi=100)


def draw_bars(
    ax: Any,
    rows: Sequence[Row],
    series: Sequence[str],
    *,
    chance: Mapping[str, float] | None = None,
    styles: Mapping[str, BarStyle] | None = None,
) -> None:
    """:func:`bar_plot`'s bars, chance lines, axes and legend on the matplotlib axes ``ax``."""
    import numpy as np

    labels = [row.label for row in rows]
    width = 0.8 / max(1, len(series))
    x = np.arange(len(labels))
    for index, name in enumerate(series):
        cells = [row.cells.get(name) for row in rows]
        values = [100 * c.value if c else np.nan for c in cells]
        errors = error_bars(cells)
        style = (styles or {}).get(name)
        color = style.color if style else f"C{index % 10}"
        bars = ax.bar(
            x + (index - (len(series) - 1) / 2) * width,
            values,
            width,
            yerr=errors,
            capsize=3,
            label=name,
            color=color,
            hatch=style.hatch if style else "",
            edgecolor="0.15",
            linewidth=0.6,
            error_kw={"elinewidth": 0.8, "ecolor": "0.2"},
        )
        for bar, value in zip(bars, values, strict=True):
            if value == 0:  # no area: a thick outline on the baseline marks it
                ax.plot(
                    [bar.get_x(), bar.get_x() + bar.get_width()],
                    [0.6, 0.6],
                    color="0.15",
                    linewidth=2.5,
                    solid_capstyle="butt",
                )
    _chance_lines(ax, {name: level for name, level in (chance or {}).items() if name in series})
    ax.set_xticks(
        x,
        labels,
        rotation=30 if len(labels) > 4 else 0,
        ha="right" if len(labels) > 4 else "center",
    )
    ax.set_ylim(0, Y_TOP)
    ax.set_yticks(range(0, 101, 20))
    ax.set_ylabel("accuracy (%) with 95% CI")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _chance_lines(ax: Any, chance: Mapping[str, float]) -> None:
    """One dashed line per chance level of ``chance`` (series -> level), in the legend as
    ``chance (50%)``, or ``chance P, T (50%)`` when the series' levels differ."""
    levels: dict[float, list[str]] = {}
    for name, level in chance.items():
        levels.setdefault(level, []).append(name)
    for level, names in levels.items():
        which = "" if len(levels) == 1 else " " + ", ".join(names)
        ax.axhline(
            100 * level,
            color="0.3",
            linestyle="--",
            linewidth=1,
            zorder=0.5,
            label=f"chance{which} ({100 * level:g}%)",
        )


def recall_plot(rows: Sequence[Row], path: Path, *, title: str) -> Path:
    """R@K against K for each retrieval row and direction (T2V solid, V2T dashed), 95% CI bars."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for row in rows:
        for direction, style in (("T2V", "-o"), ("V2T", "--s")):
            points = sorted(
                (int(m["k"]), c)
                for column, c in row.cells.items()
                if (m := RECALL_COLUMN.match(column)) and m["direction"] == direction
            )
            if not points:
                continue
            ks = [k for k, _ in points]
            values = [100 * c.value for _, c in points]
            errors = error_bars([c for _, c in points])
            ax.errorbar(
                ks, values, yerr=errors, fmt=style, capsize=3, label=f"{row.label} {direction}"
            )
    ax.set_xticks(
        sorted({int(m["k"]) for row in rows for c in row.cells if (m := RECALL_COLUMN.match(c))})
    )
    ax.set_xlabel("K")
    ax.set_ylabel("recall@K (%) with 95% CI")
    ax.set_ylim(0, 100)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return save_figure(fig, path, dpi=120)


# --- several runs side by side --------------------------------------------------------------------

#: Marks around the side-by-side report's headline tables, which ``foilkit demo`` prints in the
#: terminal (:func:`headline`): link reference definitions, which Markdown does not show (and no
#: ``<`` that could read as HTML).
HEADLINE_START, HEADLINE_END = '[//]: # "foilkit headline"', '[//]: # "foilkit headline end"'


def grouped_order(results: Sequence[RunResults]) -> list[int]:
    """Positions of ``results``, each model's runs together, where the model first appears: its
    run without a temporal control first, then its controlled runs in the given order."""
    first: dict[str, int] = {}
    for position, result in enumerate(results):
        first.setdefault(result.model, position)
    return sorted(
        range(len(results)),
        key=lambda i: (first[results[i].model], results[i].control is not None, i),
    )


def run_styles(results: Sequence[RunResults], labels: Sequence[str]) -> dict[str, BarStyle]:
    """Run label -> bar style: one colour per model; a run under a temporal control in a lighter
    shade of its model's colour, hatched per control."""
    from matplotlib import colors

    models = list(dict.fromkeys(r.model for r in results))
    controls = list(dict.fromkeys(r.control for r in results if r.control))
    styles = {}
    for label, result in zip(labels, results, strict=True):
        base = colors.to_rgb(f"C{models.index(result.model) % 10}")
        if result.control is None:
            styles[label] = BarStyle(base)
        else:
            light = tuple(0.55 * channel + 0.45 for channel in base)
            hatch = CONTROL_HATCHES[controls.index(result.control) % len(CONTROL_HATCHES)]
            styles[label] = BarStyle(light, hatch)
    return styles


def headline(report: str | os.PathLike) -> str:
    """The headline tables of a side-by-side ``report.md`` (between its headline marks)."""
    text = Path(report).read_text(encoding="utf-8")
    start, end = text.find(HEADLINE_START), text.find(HEADLINE_END)
    if start < 0 or end < 0:
        return ""
    return text[start + len(HEADLINE_START) : end].strip()


def write_side_by_side(
    run_dirs: Sequence[str | os.PathLike],
    out_dir: str | os.PathLike,
    *,
    title: str,
    extra: Sequence[str] = (),
    paired: Mapping[str, Any] | None = None,
) -> Path:
    """``report.md`` and ``side_by_side_<column>.png`` comparing several runs of one benchmark,
    each model's runs together (:func:`grouped_order`); ``extra``: markdown lines after the
    tables, ``paired``: ``foilkit compare``'s ``comparison.json`` (``run_a``, ``run_b`` and the
    ``tests`` of :func:`foilkit.compare.compare_runs`), which report.html shows as a table
    (``extra`` holds their markdown)."""
    loaded = [RunResults.load(run_dir) for run_dir in run_dirs]
    benchmarks = {r.benchmark for r in loaded}
    if len(benchmarks) != 1:
        raise ValueError(f"runs of different benchmarks cannot be compared: {sorted(benchmarks)}")
    order = grouped_order(loaded)
    results = [loaded[i] for i in order]
    run_dirs = [run_dirs[i] for i in order]
    tables = [run_table(r) for r in results]
    labels = unique_labels([r.label for r in results])
    side = runs_tables(tables, labels)
    styles = run_styles(results, labels)
    tie_kinds = tied_kinds(tables)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plots = []
    for column in tables[0].columns:
        if RECALL_COLUMN.match(column) and not column.endswith("R@1"):
            continue
        safe = re.sub(r"[^A-Za-z0-9]+", "_", column).strip("_").lower()
        level = tables[0].chance.get(column)
        plots.append(
            bar_plot(
                column_by_group(tables, labels, column),
                labels,
                out / f"{SIDE_BY_SIDE_PLOT}{safe}.png",
                title=f"{title}: {column}",
                xlabel=tables[0].row_label,
                chance=None if level is None else dict.fromkeys(labels, level),
                styles=styles,
            )
        )
    several = len(side) > 1
    lines = [
        f"# {markdown_text(title)}",
        "",
        (
            f"Benchmark **{results[0].title}** ({results[0].paper_table}). Values in %; brackets: "
            "95% bootstrap confidence interval; *chance*: a random guess."
        ),
        "",
        "| run | model | control | folder |",
        "|---|---|---|---|",
        *(
            f"| {markdown_text(label)} | {markdown_code(r.model)} | {r.control or 'none'} "
            f"| {markdown_text(Path(d))} |"
            for label, r, d in zip(labels, results, run_dirs, strict=True)
        ),
        "",
        HEADLINE_START,
        *(
            line
            for table in side
            for line in (
                *([f"### {markdown_text(table.caption)}", ""] if several else []),
                markdown_table(table),
                "",
            )
        ),
        HEADLINE_END,
        "",
        *([tie_note(results[0], tie_kinds), ""] if tie_kinds else []),
        *extra,
        "",
        *(f"![{plot.stem}]({plot.name})" for plot in plots),
        "",
    ]
    path = atomic_write(out / "report.md", "\n".join(lines))
    write_side_by_side_html(run_dirs, out, title=title, results=results, paired=paired)
    return path
