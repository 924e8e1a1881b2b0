"""Generate mode: an item whose every answer chose no option (unparseable, refused, judged to
match none) is counted as ``unanswered``, apart from ``tied``, which keeps the items whose
texts a model's answers scored alike (one order chose the caption, the other the foil). In
``results.json``, ``report.md`` and ``report.html`` (tables and item browser)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from foilkit.evaluation import separate_unanswered


@pytest.mark.parametrize(
    ("choices", "tied", "expected"),
    [
        # nothing chosen in either order: unanswered, no longer a tie
        ([[None, None], [None, None], [0, 1]], 3, {"n_tied": 1, "n_unanswered": 2}),
        # caption once, foil once: a tie the answers made; a refusal beside a choice: answered
        ([[0, 1], [None, 0], [0, 0]], 1, {"n_tied": 1, "n_unanswered": 0}),
    ],
)
def test_items_that_chose_nothing_leave_the_tie_count(choices, tied, expected):
    result = {"accuracy": 0.0, "n": len(choices), "n_tied": tied}
    data = {"answer_choices": choices, "caption_score": [0.0] * len(choices)}
    assert separate_unanswered(result, data) == {"accuracy": 0.0, "n": len(choices), **expected}


def test_a_regrouping_metric_or_another_mode_is_left_as_it_is():
    # the metric's items are not the rows (TemporalBench's videos): nothing to attribute
    result = {"n": 1, "n_tied": 1}
    assert separate_unanswered(dict(result), {"answer_choices": [[None], [None]]}) == result
    assert separate_unanswered(dict(result), {"caption_score": [0.5]}) == result  # choice mode


@pytest.fixture(scope="module")
def unanswered_run(tmp_path_factory: pytest.TempPathFactory, llava_demo_run) -> Path:
    """The tiny random LLaVA-NeXT-Video in generate mode on 6 of the demo's items: its random
    tokens are no letter, so no answer chooses an option."""
    from foilkit.scorers.api import ScoreOptions

    options = ScoreOptions(
        num_frames=4, mode="generate", max_new_tokens=3, progress=False, num_workers=0
    )
    out = tmp_path_factory.mktemp("generate")
    return llava_demo_run(out, options, n_resamples=20, limit=6)


def test_a_run_that_chose_nothing_reports_unanswered_not_tied(unanswered_run: Path):
    rows = pq.read_table(unanswered_run / "scores" / "all.parquet").to_pylist()
    assert rows and all(c is None for row in rows for c in row["answer_choices"])
    results = json.loads((unanswered_run / "results.json").read_text())
    overall = results["configs"]["all"]["metrics"]["pairwise_foil_accuracy"]["overall"]
    assert (overall["n_tied"], overall["n_unanswered"]) == (0, len(rows))
    report = (unanswered_run / "report.md").read_text()
    lines = report.splitlines()
    at = next(n for n, line in enumerate(lines) if line.startswith("| aspect"))
    assert lines[at].endswith("| n | tied | unanswered |")
    assert lines[at + 2].endswith(f"| {len(rows)} | 0 | {len(rows)} |")  # the 6 items' row
    assert "unanswered: items whose every answer chose no option" in report
    page = (unanswered_run / "report.html").read_text()
    assert "<th>unanswered</th>" in page
    data = json.loads(
        re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page)[1]
    )
    assert {item["o"] for item in data["items"]} == {"unanswered"}  # not "tied"
