"""Issue 30, reports: side-by-side runs as rows grouped with their controls (not 12 run columns
and a ``tied`` cell stacking ``0 / 0 / 0``), chance levels as data and as a line and a row,
every bar visible (a 0% bar outlined, a 100% bar's caps inside the axes), colours by model and
hatches by control, legend entries without ``: accuracy``, rounded p-values."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from foilkit.builders import get_benchmark  # noqa: E402
from foilkit.compare import _test_lines  # noqa: E402
from foilkit.report import (  # noqa: E402
    draw_bars,
    grouped_order,
    markdown_table,
    run_styles,
)
from foilkit.report_tables import Cell, Row, Table, column_by_group, runs_tables  # noqa: E402


def _table(values: dict[str, float], tied: int = 0) -> Table:
    """A run's table like the demo's: aspect rows, then ``all`` (the overall row)."""
    rows = [
        Row(label, "all", {"accuracy": Cell(v, v - 0.1, min(1.0, v + 0.1))}, n=4)
        for label, v in values.items()
    ]
    rows[-1].overall = True
    rows[-1].tied = {"": tied}
    return Table("synthetic", "aspect", ["accuracy"], rows, {"accuracy": 0.5})


def _run(model: str, control: str | None) -> SimpleNamespace:
    return SimpleNamespace(model=model, control=control)


def test_runs_are_rows_each_model_followed_by_its_controls():
    runs = [
        _run("clip", None),
        _run("xclip", None),
        _run("clip", "reversed"),
        _run("xclip", "shuffled"),
    ]
    assert grouped_order(runs) == [0, 2, 1, 3]
    tables = [
        _table({"direction": 0.5, "all": 0.5}, tied=2),
        _table({"direction": 1.0, "all": 0.75}),
    ]
    (side,) = runs_tables(tables, ["clip", "clip (reversed)"])
    text = markdown_table(side)
    lines = text.splitlines()
    assert lines[0] == "| run | direction (n=4) | all (n=4) | tied |"
    assert lines[2] == "| clip | 50.0 [40.0, 60.0] | 50.0 [40.0, 60.0] | 2 |"
    assert lines[3].startswith("| clip (reversed) | 100.0 [90.0, 100.0] |")
    assert lines[4] == "| chance | 50.0 | 50.0 |  |"
    assert " / " not in text


@pytest.mark.parametrize(
    ("benchmark", "config", "chance"),
    [
        ("vitatecs", "direction", {"accuracy": 0.5}),
        ("vilma", "action_counting", {"P": 0.5, "T": 0.5, "P+T": 0.25}),
        ("contrast_sets", "verb", {"accuracy": 0.2}),
        ("rtime", "binary", {"T2V": 0.5, "V2T": 0.5}),
        ("rtime", "original", {}),
    ],
)
def test_chance_levels_are_data_of_each_metric(benchmark: str, config: str, chance: dict):
    spec = get_benchmark(benchmark)
    config = config if config in spec.all_configs else spec.all_configs[0]
    found = {k: v for metric in spec.metrics(config) for k, v in metric.chance.items()}
    assert found == chance


def test_bars_are_all_visible_with_a_chance_line_and_model_colours():
    tables = [_table({"direction": 0.0, "all": 1.0}), _table({"direction": 0.5, "all": 0.5})]
    labels = ["clip", "clip (reversed)"]
    runs = [_run("clip", None), _run("clip", "reversed")]
    styles = run_styles(runs, labels)
    assert styles["clip"].hatch == "" and styles["clip (reversed)"].hatch
    assert styles["clip"].color != styles["clip (reversed)"].color
    fig, ax = plt.subplots()
    rows = column_by_group(tables, labels, "accuracy")
    draw_bars(ax, rows, labels, chance=dict.fromkeys(labels, 0.5), styles=styles)
    assert ax.get_ylim()[1] > 100  # a 100% bar's interval cap (at 100) is inside the axes
    chance_lines = [line for line in ax.lines if line.get_label() == "chance (50%)"]
    assert len(chance_lines) == 1 and list(chance_lines[0].get_ydata()) == [50, 50]
    zero_marks = [line for line in ax.lines if list(line.get_ydata()) == [0.6, 0.6]]
    assert len(zero_marks) == 1  # the 0% bar of clip on direction
    legend = [text.get_text() for text in ax.get_legend().get_texts()]
    assert legend == ["chance (50%)", "clip", "clip (reversed)"]  # no ": accuracy"
    plt.close(fig)


def test_p_values_are_rounded():
    tests = {
        "all": {
            "pairwise_foil_accuracy": {
                "all": {
                    "mcnemar": {"statistic": 3, "p_value": 0.13151225170378977},
                    "bootstrap": {"difference": 0.05, "difference_ci": [-0.1, 0.2]},
                }
            }
        }
    }
    text = "\n".join(_test_lines(tests))
    assert "0.13151225170378977" not in text and "| 3 | 0.132 |" in text


@pytest.mark.parametrize(
    ("counts", "header", "rows"),
    [
        (
            {"n": 4, "tied": {"": 0}, "unanswered": {}},
            ["aspect", "accuracy", "n", "tied"],
            [
                ("direction", ["50.0 [40.0, 60.0]", "4", ""]),
                ("all", ["75.0 [65.0, 85.0]", "4", "0"]),
            ],
        ),
        (
            {"n": None, "tied": {}, "unanswered": {"T": 2}},
            ["aspect", "accuracy", "unanswered"],
            [("direction", ["50.0 [40.0, 60.0]", ""]), ("all", ["75.0 [65.0, 85.0]", "T 2"])],
        ),
    ],
)
def test_the_markdown_and_html_tables_show_the_same_cells(counts, header, rows):
    """One spelling of a table's cells (``table_cells``) for both reports (duplicate D66)."""
    from foilkit.html_report import table_html
    from foilkit.report_tables import table_cells

    table = _table({"direction": 0.5, "all": 0.75})
    for row in table.rows:
        row.n = counts["n"]
    table.rows[-1].tied, table.rows[-1].unanswered = counts["tied"], counts["unanswered"]
    assert table_cells(table) == (header, rows)
    lines = markdown_table(table).splitlines()
    assert lines[:2] == ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    assert lines[2:] == [f"| {label} | " + " | ".join(cells) + " |" for label, cells in rows]
    page = table_html(table)
    assert "".join(f"<th>{name}</th>" for name in header) in page
    for label, cells in rows:
        assert f"<tr><th>{label}</th>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>" in page
