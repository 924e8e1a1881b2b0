"""The demo's ``report.html`` in headless Chromium: the item browser renders, no JavaScript
error; clicks, the search box, deep links, the subset accuracy and the CSV export work; a
choice-mode video LLM's near ties, per-order letter probabilities and prompts are shown."""

from __future__ import annotations

import csv
import html
import io
import json
import math
import re
from pathlib import Path

import av
import pyarrow.parquet as pq
import pytest
from PIL import Image

from foilkit.builders.vitatecs.answers import choice_question
from foilkit.html_report import run_items
from foilkit.run import RunResults


def console_errors(stderr: str) -> list[str]:
    """Chromium's ``--enable-logging=stderr`` lines of the page's console (``Uncaught ...``,
    console.error)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


def test_demo_report_renders_its_item_browser(demo_dir: Path, chromium, tmp_path: Path):
    page = demo_dir / "report.html"
    assert page.is_file(), "the demo's side-by-side report writes report.html"
    dom = chromium(page.as_uri(), "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert console_errors(dom.stderr) == []
    html = dom.stdout
    assert 'data-ready="1"' in html  # the script ran to its end
    assert "data-js-errors" not in re.search(r"<html[^>]*>", html)[0]  # the page's error listener
    count = re.search(r'<p id="item-count"([^>]*)>', html)[1]
    attributes = dict(re.findall(r'data-([a-z]+)="(\d+)"', count))
    # one card per test item (36), a row per run of the demo (tiny models x frame orders,
    # fine-tuned models); every card fits the first page; the first 300 rows are thumbnailed,
    # an item's rows together
    runs = sum(1 for run in (demo_dir / "runs").iterdir() if (run / "results.json").is_file())
    assert runs >= 6
    rows = str(runs * 36)
    assert attributes == {
        "total": "36",
        "matching": "36",
        "rendered": "36",
        "rows": rows,
        "thumbnailed": str(math.ceil(min(300, runs * 36) / runs)),
    }
    assert html.count('class="item ') == 36
    cards = html.split('id="items"')[1].split('<div class="item ')[1:]
    assert all(card.count('<tr class="run ') == runs for card in cards)  # one row per run
    assert html.count('<img src="data:image/jpeg') == min(300, runs * 36) * 8  # 8 frames a row
    assert "runs disagree" in cards[0][:400]  # disagreements first

    shot = tmp_path / "report.png"
    run = chromium(
        page.as_uri(), f"--screenshot={shot}", "--window-size=1280,1600", "--hide-scrollbars"
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert console_errors(run.stderr) == []
    with Image.open(shot) as image:
        assert image.size == (1280, 1600)
        assert len(image.convert("L").getcolors(1 << 16)) > 50  # not a blank page


def test_run_report_renders_in_chromium(demo_dir: Path, chromium):
    page = demo_dir / "runs" / "xclip" / "report.html"
    dom = chromium(page.as_uri(), "--dump-dom")
    assert dom.returncode == 0 and console_errors(dom.stderr) == []
    count = re.search(r'<p id="item-count"([^>]*)>', dom.stdout)[1]
    assert 'data-total="36"' in count and 'data-rendered="36"' in count


def with_script(page: Path, script: str, folder: Path) -> Path:
    """A copy of ``page`` that runs ``script`` after the browser's own (as a user would click)."""
    copy = folder / page.name
    text = page.read_text(encoding="utf-8")
    copy.write_text(text.replace("</body>", f"<script>{script}</script></body>"), encoding="utf-8")
    return copy


#: Types into the search box, picks an outcome, pages on, exports the CSV: records what the
#: page shows after each step in ``data-test`` (the export's Blob is read back asynchronously).
INTERACTIONS = """(function () {
  var out = {};
  function count() { var c = document.getElementById("item-count");
    return {matching: +c.dataset.matching, rendered: +c.dataset.rendered, rows: +c.dataset.rows}; }
  function ids() { return [].map.call(document.querySelectorAll("#items .item > div > b"),
    function (b) { return b.textContent.trim(); }); }
  var search = document.getElementById("search");
  search.value = "LEFT square"; search.dispatchEvent(new Event("input"));
  out.search = count(); out.searchIds = ids(); out.searchHash = location.hash;
  out.accuracy = [].map.call(document.querySelectorAll("#subset-accuracy .acc"), function (a) {
    return [+a.dataset.run, +a.dataset.correct, +a.dataset.scored]; });
  URL.createObjectURL = function (blob) { window.testBlob = blob; return "blob:test"; };
  HTMLAnchorElement.prototype.click = function () { out.download = this.getAttribute("download"); };
  document.getElementById("export").click();
  search.value = out.searchIds[0]; search.dispatchEvent(new Event("input"));
  out.byId = ids();
  search.value = ""; search.dispatchEvent(new Event("input"));
  var outcome = document.getElementById("filter-outcome");
  outcome.value = "wrong"; outcome.dispatchEvent(new Event("change"));
  out.wrong = count(); out.wrongHash = location.hash;
  outcome.value = ""; outcome.dispatchEvent(new Event("change"));
  document.getElementById("next").click();
  out.page = document.getElementById("page").textContent; out.pageHash = location.hash;
  window.testBlob.text().then(function (text) {
    out.csv = text; document.body.setAttribute("data-test", JSON.stringify(out)); });
})();"""


def recorded(dom: str) -> dict:
    return json.loads(html.unescape(re.search(r'data-test="([^"]*)"', dom)[1]))


def demo_rows(demo_dir: Path) -> list[dict]:
    """Every run's items of the demo, as the page gets them (run index in ``r``)."""
    folders = sorted(
        run for run in (demo_dir / "runs").iterdir() if (run / "results.json").is_file()
    )
    return [
        item
        for number, folder in enumerate(folders)
        for item in run_items(folder, RunResults.load(folder), run=number)
    ]


def test_single_run_browser_searches_filters_pages_and_exports(
    demo_dir: Path, chromium, tmp_path: Path
):
    run = demo_dir / "runs" / "xclip"
    items = run_items(run, RunResults.load(run))
    page = with_script(run / "report.html", INTERACTIONS, tmp_path)
    dom = chromium(page.as_uri(), "--dump-dom", "--virtual-time-budget=5000")
    assert dom.returncode == 0 and console_errors(dom.stderr) == [], dom.stderr[-2000:]
    out = recorded(dom.stdout)

    def text(item: dict) -> str:
        return "\n".join([item["id"], item["c"], *item["f"]]).lower()

    found = [i for i in items if "left" in text(i) and "square" in text(i)]
    assert 0 < len(found) < len(items)
    assert out["search"]["matching"] == len(found)
    assert sorted(out["searchIds"]) == sorted(i["id"] for i in found)
    assert out["searchHash"] == "#q=LEFT%20square"  # the URL holds the state
    correct = sum(i["o"] == "correct" for i in found)
    scored = sum(i["o"] != "error" for i in found)
    assert out["accuracy"] == [[0, correct, scored]]  # the filtered subset's accuracy
    assert out["byId"] == [out["searchIds"][0]]  # an id finds its item
    assert out["wrong"]["matching"] == sum(i["o"] == "wrong" for i in items)
    assert out["wrongHash"] == "#outcome=wrong"
    assert out["page"] == "page 1 of 1" and out["pageHash"] == "#browser"  # one page only

    assert out["download"] == "foilkit-items.csv"
    rows = list(csv.DictReader(io.StringIO(out["csv"])))
    assert sorted(r["id"] for r in rows) == sorted(i["id"] for i in found)
    by_id = {i["id"]: i for i in found}
    for row in rows:
        item = by_id[row["id"]]
        assert row["outcome"] == item["o"] and row["caption"] == item["c"]
        assert float(row["caption_score"]) == item["cs"]  # full precision, not the shown digits
        assert json.loads(row["foil_scores"]) == item["fs"]
        assert json.loads(row["frame_indices"]) == item["fi"]
        assert len(json.loads(row["frame_seconds"])) == len(item["fi"])  # thumbnailed: timed


def test_side_by_side_opens_deep_links_one_card_per_item(demo_dir: Path, chromium, tmp_path: Path):
    items = demo_rows(demo_dir)
    cards = {(i["t"], i["id"]) for i in items}
    runs = len({i["r"] for i in items})
    page = demo_dir / "report.html"
    # a deep link: the search and the filter come from the URL's fragment
    dom = chromium(page.as_uri() + "#q=left&outcome=wrong", "--dump-dom")
    assert dom.returncode == 0 and console_errors(dom.stderr) == [], dom.stderr[-2000:]
    wrong = [i for i in items if i["o"] == "wrong" and "left" in (i["c"] + " ".join(i["f"]))]
    count = dict(
        re.findall(
            r'data-([a-z]+)="(\d+)"', re.search(r'<p id="item-count"([^>]*)>', dom.stdout)[1]
        )
    )
    assert count["matching"] == str(len({(i["t"], i["id"]) for i in wrong}))
    assert count["rows"] == str(len(wrong))  # only the wrong runs' rows count
    shown = re.findall(r'<tr class="run (\w+)( out)?"', dom.stdout.split('id="items"')[1])
    assert {o for o, out in shown if not out} == {"wrong"}  # the other runs' rows are dimmed
    assert len(shown) == int(count["matching"]) * runs
    per_run: dict[int, int] = {}
    for i in wrong:
        per_run[i["r"]] = per_run.get(i["r"], 0) + 1
    accuracy = re.findall(
        r'class="acc" data-run="\d+" data-correct="(\d+)" data-scored="(\d+)"', dom.stdout
    )  # each run's accuracy on the matching rows: none correct among the wrong ones
    assert sorted((int(c), int(s)) for c, s in accuracy) == sorted((0, n) for n in per_run.values())
    # the pager moves by cards: the 36 items fit one page of 50
    assert len(cards) == 36 and "page 1 of 1" in dom.stdout


def test_choice_mode_shows_near_ties_order_probabilities_prompts_and_times(
    choice_run: Path, chromium, tmp_path: Path
):
    table = pq.read_table(choice_run / "scores" / "all.parquet").to_pylist()
    record = json.loads((choice_run / "scoring" / "all" / "run.json").read_text())
    template = record["prompt_templates"]["2"]  # logged once per run
    assert "{question}" in template and "<video>" in template
    # the scores file logs each order's letter probabilities; their mean is the score
    for row in table:
        assert row["caption_score"] == pytest.approx(
            (row["caption_order_0"] + row["caption_order_1"]) / 2
        )
    # a near tie: caption and foil agree to 4 significant digits
    tie = next(r for r in table if f"{r['caption_score']:.4g}" == f"{r['foil_scores'][0]:.4g}")
    dom = chromium((choice_run / "report.html").as_uri() + f"#q={tie['id']}", "--dump-dom")
    assert dom.returncode == 0 and console_errors(dom.stderr) == [], dom.stderr[-2000:]
    card = dom.stdout.split('id="items"')[1]
    assert card.count('class="item ') == 1
    caption, foil = re.findall(r'<td class="score">([^<]*)</td>', card)[:2]
    assert caption != foil  # shown to the first differing digit, not "0.5000 vs 0.5000"
    digits = len(caption.replace("0.", "", 1).lstrip("0"))
    assert float(caption) == pytest.approx(tie["caption_score"], rel=10 ** (1 - digits))
    assert "as (A) " in card and "as (B) " in card
    shown = re.search(
        r"letter probability by option order — caption: as \(A\) ([\d.]+), "
        r"as \(B\) ([\d.]+); foil: as \(B\) ([\d.]+), as \(A\) ([\d.]+)",
        card,
    )
    expected = [
        tie["caption_order_0"],
        tie["caption_order_1"],
        *tie["foil_order_0"],
        *tie["foil_order_1"],
    ]
    assert [float(v) for v in shown.groups()] == pytest.approx(expected, abs=1e-3)
    prompts = [html.unescape(p) for p in re.findall(r"<pre>([^<]*)</pre>", card)]
    texts = [tie["caption"], *tie["foils"]]
    assert prompts == [
        template.replace("{question}", choice_question(texts)),
        template.replace("{question}", choice_question(texts[::-1])),
    ]
    # the CSV export carries the per-order probabilities at full precision
    export = """URL.createObjectURL = function (blob) { blob.text().then(function (text) {
      document.body.setAttribute("data-test", JSON.stringify({csv: text})); }); return "blob:t"; };
    HTMLAnchorElement.prototype.click = function () {};
    document.getElementById("export").click();"""
    page = with_script(choice_run / "report.html", export, tmp_path)
    dom = chromium(page.as_uri() + f"#q={tie['id']}", "--dump-dom", "--virtual-time-budget=5000")
    (exported,) = csv.DictReader(io.StringIO(recorded(dom.stdout)["csv"]))
    assert json.loads(exported["order_probabilities"]) == [
        [tie["caption_order_0"], tie["caption_order_1"]],
        [tie["foil_order_0"][0], tie["foil_order_1"][0]],
    ]
    # each thumbnail is labelled with its frame's time in the video
    times = re.findall(r'<span class="time">([\d.]+) s</span>', card)
    with av.open(str(choice_run.parent / "benchmark" / "videos" / tie["video_path"])) as video:
        rate = float(video.streams.video[0].average_rate)
    assert [float(t) for t in times] == pytest.approx(
        [i / rate for i in tie["frame_indices"]], abs=0.006
    )
