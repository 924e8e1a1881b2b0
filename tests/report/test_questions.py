"""report.html of benchmarks whose rows ask their own question (TOMATO, TempCompass): each card
shows the question and its options lettered as the model saw them (not "caption 6 / foil 1 5"
or "caption yes / foil no"), the prompt as asked, and in generate mode the answer the model gave
with the option it chose; permalinks open one item exactly (``#q=direction-1`` matched
``direction-10`` ... too); ``foilkit compare``'s page shows its paired tests.

The questions come from the real annotation files (``../shared/data``; skipped without them),
the videos are synthetic and named after real rows, the model is a scripted OpenAI-compatible
test server (its replies are known, an unreadable one among them)."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from foilkit.cli import main
from foilkit.synthetic.videos import SyntheticScene, write_video
from tests.openai_server import OpenAICompatibleServer

FORMAT_1 = Path(__file__).parents[1] / "e2e" / "fixtures" / "run-format-1"
VIDEOS = {
    "tomato": {"human/0621-00": "left", "object/0878-00": "right"},
    "tempcompass": {"1034419625": "left", "1034419625_reverse": "right"},
}
#: The scripted model's replies, in turn: letters TOMATO's parser reads, and one it cannot.
REPLIES = ["Answer is: (B)", "I cannot tell", "A", "yes", "no", "C"]


def _page_data(page: Path) -> dict[str, Any]:
    found = re.search(
        r'<script type="application/json" id="report-data">(.*?)</script>', page.read_text()
    )
    return json.loads(found[1])


@pytest.fixture(scope="module")
def question_runs(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """TOMATO (all) and TempCompass (yes_no) in generate mode through the served backend."""
    root = tmp_path_factory.mktemp("questions")
    runs = {}
    for benchmark, names in VIDEOS.items():
        videos = root / f"{benchmark}-videos"
        for name, direction in names.items():
            (videos / name).parent.mkdir(parents=True, exist_ok=True)
            scene = SyntheticScene(direction=direction)
            write_video(videos / f"{name}.mp4", scene, num_frames=8, fps=4)
        replies = iter(REPLIES * 50)
        with OpenAICompatibleServer(lambda body: next(replies)) as server:
            argv = ["evaluate", "--benchmark", benchmark, "--mode", "generate", "--model", "m"]
            argv += ["--backend", "openai", "--base-url", server.base_url]
            argv += ["--cache-dir", str(root / "cache"), "--videos", str(videos)]
            argv += ["--annotations", str(shared_data / benchmark), "--on-missing", "skip"]
            argv += ["--min-coverage", "0", "--num-frames", "4", "--n-resamples", "20"]
            argv += ["--num-workers", "0", "--no-progress", "--out", str(root / benchmark)]
            if benchmark == "tempcompass":
                argv += ["--config", "yes_no"]
            assert main(argv) == 0
        runs[benchmark] = root / benchmark
    return runs


@pytest.mark.parametrize("benchmark", ["tomato", "tempcompass"])
def test_question_items_carry_the_question_options_and_answers(question_runs, benchmark):
    run = question_runs[benchmark]
    (scores,) = (run / "scores").glob("*.parquet")
    rows = {row["id"]: row for row in pq.read_table(scores).to_pylist()}
    items = _page_data(run / "report.html")["items"]
    assert items and len(items) == len(rows)
    for item in items:
        row = rows[item["id"]]
        qa = item["qa"]
        assert qa["q"] == row["question"] and qa["o"] == row["options"]
        assert qa["l"] == row["option_labels"] and qa["o"][qa["k"]] == row["caption"]
        assert qa["ta"] == [row["caption_answer"], *row["foil_answers"]]
        assert item["q"] == [row["prompt"]]  # asked as it is
        assert (item["a"], item["ao"], item["ac"]) == (
            row["answers"],
            row["answer_outcomes"],
            row["answer_choices"],
        )
    assert {outcome for item in items for outcome in item["ao"]} >= {"parsed"}


@pytest.mark.parametrize("benchmark", ["tomato", "tempcompass"])
def test_a_question_card_shows_the_question_lettered_options_and_the_answer(
    question_runs, benchmark, chromium
):
    run = question_runs[benchmark]
    items = _page_data(run / "report.html")["items"]
    unread = [i for i in items if all(c is None for c in i["ac"])]
    chosen = [i for i in items if i["ac"][0] is not None]
    for item in [*unread[:1], *chosen[:1]]:
        dom = chromium((run / "report.html").as_uri() + f"#id={item['id']}", "--dump-dom")
        assert dom.returncode == 0, dom.stderr[-2000:]
        card = dom.stdout.split('id="items"')[1]
        assert card.count('class="item ') == 1
        text = html.unescape(re.sub(r"<[^>]+>", "\n", card))
        qa = item["qa"]
        assert qa["q"] in text
        shown = re.findall(r'<td class="label">([^<]*)</td><td>([^<]*)</td>', card)
        assert [(html.unescape(label), html.unescape(option)) for label, option in shown] == [
            (label, "" if label == option else option)  # "yes" is its own option
            for label, option in zip(qa["l"], qa["o"], strict=True)
        ]
        assert "true answer" in text and "caption\nfoil" not in text
        assert "as (A)" not in text  # no cyclic letters of foilkit's: the question's labels
        answer = json.dumps(item["a"][0])  # one answer, to the one question asked
        if item["ac"][0] is None:
            assert f"answer — {answer} ({item['ao'][0]}, chose no option)" in text
        else:
            assert f"answer — {answer} ({item['ao'][0]}: {qa['ta'][item['ac'][0]]})" in text
        assert item["q"][0].strip().splitlines()[0] in text  # the prompt as asked


def _with_ids(run: Path, ids: list[str]) -> Path:
    """``run``'s scores under other item ids (VITATECS-like: ``direction-1`` ... ``-36``)."""
    path = run / "scores" / "all.parquet"
    table = pq.read_table(path)
    column = table.schema.get_field_index("id")
    pq.write_table(table.set_column(column, "id", pa.array(ids)), path)
    return run


def test_a_permalink_opens_exactly_its_item(tmp_path: Path, chromium):
    from foilkit.html_report import write_run_html

    run = shutil.copytree(FORMAT_1 / "clip", tmp_path / "clip")
    ids = [f"direction-{n}" for n in range(1, 37)]
    page = write_run_html(_with_ids(run, ids), max_thumbnails=0)
    dom = chromium(page.as_uri(), "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    links = dict(
        re.findall(r'id="item-all-([^"]+)".*?<a class="permalink" href="([^"]+)"', dom.stdout)
    )
    assert sorted(links) == sorted(ids)
    assert links["direction-1"] == "#id=direction-1"
    opened = chromium(page.as_uri() + links["direction-1"], "--dump-dom")
    count = re.search(r'<p id="item-count"([^>]*)>', opened.stdout)[1]
    assert 'data-matching="1"' in count  # not the 11 ids starting "direction-1"
    assert re.findall(r'id="item-all-([^"]+)"', opened.stdout) == ["direction-1"]
    searched = chromium(page.as_uri() + "#q=direction-1", "--dump-dom")  # a search still searches
    assert 'data-matching="11"' in re.search(r'<p id="item-count"([^>]*)>', searched.stdout)[1]


def test_compare_page_shows_the_paired_tests(tmp_path: Path):
    out = tmp_path / "both"
    argv = ["compare", str(FORMAT_1 / "clip"), str(FORMAT_1 / "xclip"), "--out", str(out)]
    assert main([*argv, "--n-resamples", "20"]) == 0
    from foilkit.compare import test_rows

    tests = json.loads((out / "comparison.json").read_text())["tests"]
    expected = test_rows(tests)
    assert any(row[3].startswith("mcnemar") for row in expected)
    page = (out / "report.html").read_text()
    caption = f"Paired tests on the same items: A = {FORMAT_1 / 'clip'}, B = {FORMAT_1 / 'xclip'}"
    assert caption in page
    table = page.split(caption, 1)[1].split("</table>", 1)[0]
    shown = [
        [html.unescape(cell) for cell in re.findall(r"<td>([^<]*)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", table)
    ]
    assert [row for row in shown if row] == expected
    markdown = (out / "report.md").read_text()
    assert all(f"| {row[5]} |" in markdown for row in expected if row[5])
