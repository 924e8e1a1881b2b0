"""``report.html``: item outcomes, thumbnails, a self-contained page, ``foilkit report``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from launch import assert_imports_none

from foilkit.cli import main
from foilkit.html_report import informative_order, mark_disagreements, outcome, write_run_html


def page_data(path: Path) -> dict:
    """The JSON the page's item browser reads."""
    text = path.read_text(encoding="utf-8")
    return json.loads(
        re.search(
            r'<script type="application/json" id="report-data">(.*?)</script>', text, re.DOTALL
        )[1]
    )


@pytest.mark.parametrize(
    ("caption", "foils", "kind", "expected"),
    [
        (0.3, [0.2], "similarity", ("correct", pytest.approx(0.1))),
        (0.2, [0.3, 0.1], "similarity", ("wrong", pytest.approx(-0.1))),
        (0.2, [0.2], "similarity", ("tied", 0.0)),
        (5.0, [7.0], "perplexity", ("correct", pytest.approx(2.0))),  # lower perplexity wins
        (7.0, [5.0, 9.0], "perplexity", ("wrong", pytest.approx(-2.0))),
        (None, None, "similarity", ("error", None)),
    ],
)
def test_outcome_orients_the_margin_by_score_kind(caption, foils, kind, expected):
    assert outcome(caption, foils, kind) == expected


def test_an_error_is_its_own_outcome():
    assert outcome(0.3, [0.2], "similarity", "video9770.mp4: no such file") == ("error", None)


def test_disagreeing_items_come_first_then_ties_wrong_and_small_margins():
    items = [
        {"r": 0, "t": "all", "id": "a", "o": "correct", "m": 0.01},
        {"r": 0, "t": "all", "id": "b", "o": "wrong", "m": -0.5},
        {"r": 0, "t": "all", "id": "c", "o": "tied", "m": 0.0},
        {"r": 1, "t": "all", "id": "a", "o": "wrong", "m": -0.2},
        {"r": 1, "t": "all", "id": "b", "o": "wrong", "m": -0.4},
        {"r": 1, "t": "all", "id": "c", "o": "tied", "m": 0.0},
    ]
    assert mark_disagreements(items) == 1
    assert [item["d"] for item in items] == [1, 0, 0, 1, 0, 0]
    assert informative_order(items) == [0, 3, 2, 5, 1, 4]  # an item's runs stay together


def test_run_page_is_self_contained_and_holds_every_item(demo_dir: Path):
    run = demo_dir / "runs" / "clip-reversed"
    page = run / "report.html"
    assert page.is_file(), "write_run_report writes report.html beside report.md"
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), "no network resource"
    assert "<link" not in text and "data:image/png;base64," in text  # the plot, inline
    data = page_data(page)
    assert len(data["items"]) == 36 and data["runs"][0]["control"] == "reversed"
    assert {item["o"] for item in data["items"]} <= {"correct", "wrong", "tied"}
    assert "50.0 [" in text  # the paper-layout cells with their CIs (report_tables.run_table)


def test_thumbnails_follow_the_recorded_frame_order_and_the_cap(demo_dir: Path, tmp_path: Path):
    import numpy as np
    import pyarrow.parquet as pq

    run = tmp_path / "run"
    shutil.copytree(demo_dir / "runs" / "xclip-shuffled", run)
    page = write_run_html(run, max_thumbnails=5)
    data = page_data(page)
    thumbnailed = [item for item in data["items"] if "k" in item]
    assert len(thumbnailed) == 5
    assert data["thumbnailNote"].startswith("Thumbnails: 5 of 36 items")
    order = informative_order(data["items"])[:5]
    assert {data["items"][i]["id"] for i in order} == {item["id"] for item in thumbnailed}
    recorded = {
        row["id"]: row["frame_indices"]
        for row in pq.read_table(run / "scores" / "all.parquet").to_pylist()
    }
    for item in thumbnailed:
        assert item["fi"] == recorded[item["id"]]  # shuffled, as the model saw them
        assert all(f"{item['k']}:{index}" in data["frames"] for index in item["fi"])
    assert any(item["fi"] != sorted(item["fi"]) for item in thumbnailed)
    from base64 import b64decode
    from io import BytesIO

    from PIL import Image

    spreads = []
    for uri in data["frames"].values():
        assert uri.startswith("data:image/jpeg;base64,")
        with Image.open(BytesIO(b64decode(uri.split(",", 1)[1]))) as image:
            assert image.height == 48
            spreads.append(np.asarray(image).std())
    assert max(spreads) > 10  # the squares are there, not blank frames only


def test_missing_videos_and_failed_items_still_give_a_page(demo_dir: Path, tmp_path: Path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    run = tmp_path / "run"
    shutil.copytree(demo_dir / "runs" / "clip", run)
    table = pq.read_table(run / "scores" / "all.parquet").to_pylist()
    table[0].update(
        caption_score=None,
        foil_scores=None,
        frame_indices=[],
        error="direction/000.mp4: corrupt video",
    )
    table[1]["video_path"] = "nowhere/missing.mp4"
    table[2]["caption"] = "</script><script>alert(1)</script>"
    pq.write_table(pa.Table.from_pylist(table), run / "scores" / "all.parquet")
    page = write_run_html(run)
    data = page_data(page)
    first, second, third = data["items"][:3]
    assert first["o"] == "error" and "corrupt" in first["e"] and "k" not in first
    assert "k" not in second and "1 videos could not be read" in data["thumbnailNote"]
    assert third["c"] == "</script><script>alert(1)</script>"  # travels as data, never as markup
    assert page.read_text(encoding="utf-8").count("</script>") == 3


def test_foilkit_report_rebuilds_the_page(demo_dir: Path, tmp_path: Path, capsys):
    run = tmp_path / "run"
    shutil.copytree(demo_dir / "runs" / "xclip", run)
    (run / "report.html").unlink()
    assert main(["report", str(run), "--max-thumbnails", "3"]) == 0
    assert "Thumbnails: 3 of 36" in page_data(run / "report.html")["thumbnailNote"]
    out = tmp_path / "side"
    runs = [str(demo_dir / "runs" / name) for name in ("clip", "xclip")]
    assert main(["report", *runs, "--out", str(out)]) == 0
    data = page_data(out / "report.html")
    assert len(data["items"]) == 72 and data["disagreeing"] >= 1
    assert main(["report", *runs]) == 2
    assert "need --out" in capsys.readouterr().err


@pytest.mark.slow
def test_a_vitatecs_sized_run_gives_a_bounded_page(demo_dir: Path, tmp_path: Path):
    """13,838 items (VITATECS' size) on the demo's videos: thumbnails stay capped, the page
    small."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    run = tmp_path / "run"
    shutil.copytree(demo_dir / "runs" / "clip", run)
    rows = pq.read_table(run / "scores" / "all.parquet").to_pylist()
    many = [
        {**rows[i % len(rows)], "id": f"item-{i:05d}", "caption_score": 0.2 + (i % 97) / 1000}
        for i in range(13_838)
    ]
    pq.write_table(pa.Table.from_pylist(many), run / "scores" / "all.parquet")
    page = write_run_html(run)
    data = page_data(page)
    assert len(data["items"]) == 13_838
    assert sum("k" in item for item in data["items"]) == 300
    assert page.stat().st_size < 8_000_000


def test_a_leaderboard_folder_gets_its_page(tmp_path: Path):
    from PIL import Image

    (tmp_path / "leaderboard.csv").write_text(
        "benchmark,task,rank,model,value,ci_low,ci_high,n,p_value_vs_next,difference_vs_next,source\n"
        "vitatecs,direction,1,clip,61.5,58.0,65.0,100,0.02,4.5,runs/clip\n"
        "vitatecs,direction,2,<b>xclip</b>,57.0,53.0,61.0,100,,,runs/xclip\n",
        encoding="utf-8",
    )
    Image.new("RGB", (400, 300), "white").save(tmp_path / "leaderboard.png")
    assert main(["report", str(tmp_path)]) == 0
    text = (tmp_path / "leaderboard.html").read_text(encoding="utf-8")
    assert (
        "vitatecs / direction" in text
        and "61.50 [58.0, 65.0]" in text
        and "+4.5, p = 0.020" in text
    )
    assert "&lt;b&gt;xclip&lt;/b&gt;" in text and "data:image/png;base64," in text
    assert 'id="report-data"' not in text  # no item browser: the runs are of several benchmarks


def test_the_option_orders_and_their_questions_are_read_without_the_video_adapter():
    """The report reads a choice-mode row's per-order details and words each order's question
    from the scores file's own names (``foilkit.scorers.output``) and the prompts, not from the
    video LLM adapter (and torch, transformers behind it)."""
    code = (
        "from foilkit.html_report import order_probabilities, order_questions\n"
        "row = {'caption_order_0': 0.6, 'caption_order_1': 0.7, 'foil_order_0': [0.4],"
        " 'foil_order_1': [0.3]}\n"
        "assert order_probabilities(row) == [[0.6, 0.7], [0.4, 0.3]], order_probabilities(row)\n"
        "assert len(order_questions('vitatecs', ['a', 'b'])) == 2\n"
    )
    assert_imports_none(code, ("foilkit.scorers.adapters.video_llm", "transformers"))
