"""User strings in Markdown (issue 35): a run label, a model id and aspect names holding HTML, a
``|`` and a newline reach ``report.md``, the results card, the side-by-side report and the
leaderboard as text, and every table keeps its columns."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from foilkit.markdown import markdown_code, markdown_text
from foilkit.run import RunResults

FORMAT_1 = Path(__file__).parents[1] / "e2e" / "fixtures" / "run-format-1"
ATTACK = "<img src=x onerror=alert(1)>"
LABEL = f"clip {ATTACK} | a\nb"
MODEL = "/models/evil`|<b>m</b>"
#: the fixture's aspects renamed: one with HTML and a pipe, one with a newline, one plain.
ASPECTS = {"direction": f"dir|ection {ATTACK}", "order": "or\nder", "speed": "speed"}


@pytest.fixture
def hostile_run(tmp_path: Path) -> Path:
    """The demo's format-1 CLIP run with a hostile label, model id and aspect names."""
    run = tmp_path / "run"
    shutil.copytree(FORMAT_1 / "clip", run)
    raw = json.loads((run / "results.json").read_text())
    raw["label"], raw["model"] = LABEL, MODEL
    metric = raw["configs"]["all"]["metrics"]["pairwise_foil_accuracy"]
    metric["groups"] = {ASPECTS[name]: value for name, value in metric["groups"].items()}
    (run / "results.json").write_text(json.dumps(raw))
    return run


def _render(markdown: str) -> str:
    """``markdown`` as HTML, the way GitHub and the Hub read it (CommonMark + tables)."""
    markdown_it = pytest.importorskip("markdown_it")
    return markdown_it.MarkdownIt("commonmark").enable("table").render(markdown)


def _cells(line: str) -> list[str]:
    """A Markdown table row's cells, split at the pipes that are not escaped."""
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def _no_markup(markdown: str) -> None:
    """No user string became HTML: every ``<`` of the Markdown outside code spans is escaped,
    and the rendered page holds no element of theirs (the report's own plots are images)."""
    outside_code = re.sub(r"`[^`\n]*`", "", markdown)
    assert not re.search(r"(?<!\\)<", outside_code), markdown
    page = _render(markdown)
    assert not re.search(r"<[^<>]*onerror", page) and "<b>" not in page, page


def test_markdown_text_and_code_keep_any_string_literal():
    for value in (LABEL, MODEL, ASPECTS["direction"], "a_b _c_ *d* [e](f) &amp; ~~g~~ \\h"):
        page = _render(f"| x |\n|---|\n| {markdown_text(value)} |\n")
        assert page.count("<td>") == 1
        shown = page.split("<td>")[1].split("</td>")[0]
        expected = " ".join(value.replace("\n", " ").split(" "))
        escaped = expected.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert shown == escaped.replace('"', "&quot;"), (value, shown)
    assert markdown_code("openai/clip-vit-base-patch32") == "`openai/clip-vit-base-patch32`"
    assert "<b>" not in _render(markdown_code("<b>x</b>")) and "<b>" not in _render(
        markdown_code(MODEL)
    )


def test_the_run_report_shows_user_strings_as_text_and_keeps_its_table(hostile_run: Path):
    from foilkit.report import write_run_report

    report = write_run_report(RunResults.load(hostile_run), hostile_run).read_text()
    _no_markup(report)
    title = report.splitlines()[0]
    assert "\n" not in title and title.startswith("# ") and "clip" in title
    rows = [line for line in report.splitlines() if line.startswith("| ")]
    header, *body = rows
    assert _cells(header) == ["aspect", "accuracy", "n", "tied"]
    assert all(len(_cells(row)) == 4 for row in body), body
    labels = [_cells(row)[0] for row in body]
    assert labels == [markdown_text(name) for name in ASPECTS.values()] + ["all"]
    page = _render(report)
    assert "<td>dir|ection &lt;img src=x onerror=alert(1)&gt;</td>" in page
    assert "<td>or der</td>" in page
    assert "clip &lt;img src=x onerror=alert(1)&gt; | a b" in page  # the title
    assert "/models/evil`|&lt;b&gt;m&lt;/b&gt;" in page  # the model id


def test_the_results_card_shows_user_strings_as_text(hostile_run: Path):
    from foilkit.hub_results import prepare_upload
    from foilkit.report import write_run_report

    write_run_report(RunResults.load(hostile_run), hostile_run)
    card = prepare_upload(hostile_run, "me/results").card
    body = card.split("---\n", 2)[2]  # after the YAML header
    _no_markup(body)
    heading = next(line for line in body.splitlines() if line.startswith("# foilkit results:"))
    assert (
        heading == f"# foilkit results: {markdown_text(LABEL)} on foilkit synthetic temporal "
        "benchmark"
    )
    rows = [line for line in body.splitlines() if line.startswith("| ")]
    assert rows and all(len(_cells(row)) == 4 for row in rows), rows


def test_side_by_side_and_leaderboard_tables_keep_their_columns(hostile_run: Path, tmp_path):
    from foilkit.leaderboard import local_entries, markdown, rank
    from foilkit.report import write_side_by_side

    other = tmp_path / "other"
    shutil.copytree(hostile_run, other)
    report = write_side_by_side([hostile_run, other], tmp_path / "both", title=f"t {ATTACK}")
    text = report.read_text()
    _no_markup(text)
    runs = [line for line in text.splitlines() if line.startswith("| ") and MODEL[:7] in line]
    assert len(runs) == 2 and all(len(_cells(line)) == 4 for line in runs), runs
    board = markdown(rank(local_entries([hostile_run, other]), n_resamples=0))
    _no_markup(board)
    # every row of every table (models x tasks, then per task) has its header's columns
    lines = board.splitlines()
    widths, checked = 0, 0
    for line, following in zip(lines, [*lines[1:], ""], strict=True):
        if following.startswith("|---"):
            widths = len(_cells(line))
        elif line.startswith("| ") and "clip" in line:
            assert len(_cells(line)) == widths, line
            checked += 1
    assert checked >= 4, board


def test_push_results_redacts_a_local_path_the_report_escaped(hostile_run: Path):
    """A label that is a local path is escaped in report.md (``\\_private\\_``); the upload still
    cuts it to its last component, in the report and in the card."""
    from foilkit.hub_results import prepare_upload
    from foilkit.report import write_run_report

    raw = json.loads((hostile_run / "results.json").read_text())
    raw["label"] = "/home/me/_private_/clip"
    (hostile_run / "results.json").write_text(json.dumps(raw))
    report = write_run_report(RunResults.load(hostile_run), hostile_run).read_text()
    assert "/home/me/\\_private\\_/clip" in report
    upload = prepare_upload(hostile_run, "me/results")
    sent = upload.files["report.md"].decode() + upload.card
    assert "private" not in sent and "/home/me" not in sent
