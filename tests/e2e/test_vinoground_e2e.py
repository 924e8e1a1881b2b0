"""``foilkit evaluate vinoground`` end to end: built from its upstream format (a fixture: the
annotations live only on the Hub), synthetic mp4s named after the pairs, a tiny dual encoder and a
tiny video LLM (choice mode, and generate mode with a model that answers letters); every video
decoded once, the numbers those of the port of Vinoground's scorer on the run's own per-sample
scores (in generate mode, of get_score_all.py on the run's own answers, written as its question
and response files), the report's rows the paper's categories; compare, the leaderboard, the
Hub results and the HTML report read the runs."""

from __future__ import annotations

import csv
import html
import io
import itertools
import json
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import datasets
import pytest
from references import vinoground_get_score_all, vinoground_videoclip_scores
from upstream_formats import (
    VINOGROUND_ROWS,
    vinoground_csv,
    vinoground_text_item,
    vinoground_video_item,
)

from foilkit.compare import compare_runs
from foilkit.evaluation import evaluate
from foilkit.html_report import run_items
from foilkit.hub_results import task_values
from foilkit.leaderboard import local_entries
from foilkit.metrics.winoground_score.winoground_score import winoground_score
from foilkit.scorers.adapters.video_llm import VideoLLMAdapter
from foilkit.scorers.api import ScoreOptions
from foilkit.scorers.video import decoding
from foilkit.synthetic.models import tiny_model_path
from foilkit.synthetic.videos import SyntheticScene, write_video

OPPOSITE = {"left": "right", "right": "left", "up": "down", "down": "up"}
PAIRS = 3  # pairs 0..2 rendered; pair 3's videos are missing (dropped at build)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("vinoground")
    annotations = folder / "annotations"
    annotations.mkdir()
    (annotations / "vinoground.csv").write_text(vinoground_csv())
    root = folder / "videos"
    for index, direction in zip(range(PAIRS), ("left", "up", "right"), strict=True):
        for role, shown in (("pos", direction), ("neg", OPPOSITE[direction])):
            path = root / "vinoground_videos" / f"{index}_{role}.mp4"
            write_video(path, SyntheticScene(direction=shown), num_frames=12, fps=4)
    return annotations, root


@pytest.fixture(scope="module")
def runs(inputs, tmp_path_factory, n_resamples, answering_model):
    """A run per model family (and the video LLM's modes), with the number of times each video
    file was opened."""
    annotations, root = inputs
    out = tmp_path_factory.mktemp("vinoground-runs")
    cache = str(out / "datasets-cache")
    models = {
        "clip": (tiny_model_path("clip"), {}),
        "llava-next-video": (tiny_model_path("llava-next-video"), {"mode": "choice"}),
        "generate": (answering_model, {"mode": "generate", "max_new_tokens": 2}),
    }
    made = {}
    real = decoding.open_video
    patches = pytest.MonkeyPatch()
    patches.setattr(VideoLLMAdapter, "generate", _varied(VideoLLMAdapter.generate))
    for name, (model, options) in models.items():
        opened: Counter = Counter()

        def counting(view, *args, opened=opened):
            opened[Path(view.source).name] += 1
            return real(view, *args)

        decoding.open_video = counting
        try:
            result = evaluate(
                "vinoground",
                str(model),
                out_dir=out / name,
                videos=root,
                annotations=annotations,
                on_missing="skip",
                n_resamples=n_resamples,
                datasets_cache_dir=cache,
                score_options=ScoreOptions(
                    num_workers=0, progress=False, use_cache=False, num_frames=4, **options
                ),
            )
        finally:
            decoding.open_video = real
        made[name] = (result, opened)
    patches.undo()
    return made


#: Answers as models write them, each a different reading for get_score_all.py: the letters in
#: either case, a letter after a space (wrong there), a sentence, nothing.
VARIED = ("A", "b. the second", "B", "a", "", "b", " A", "A", "The answer is B")


def _varied(generate):
    """The in-process ``generate``, its answers then replaced by :data:`VARIED` in turn, question
    after question as the run asks them (the same on any machine): the tiny model's greedy
    letters are nearly all alike, and the port must meet every reading, right and wrong."""
    asked = itertools.count()

    def answering(self, requests):
        return [
            replace(answers, texts=(VARIED[next(asked) % len(VARIED)],) * len(answers.texts))
            for answers in generate(self, requests)
        ]

    return answering


def _scores(result) -> list[dict]:
    return datasets.Dataset.from_parquet(str(result.run_dir / "scores" / "all.parquet")).to_list()


def _blocks(rows, question: bool = False, detail: tuple[str, str] = ("score", "score")) -> list:
    """Each row's 2x2 block from its video's and foil video's columns (``question``: of the
    video-score question): the scores, or per video the named detail (``order_0``,
    ``shown_first``)."""
    prefix, foil_prefix = (
        ("video_question_", "foil_video_question_") if question else ("", "foil_video_")
    )
    video, foil_video = detail
    caption = "caption_score" if video == "score" else f"caption_{video}"
    foil = "foil_scores" if video == "score" else f"foil_{video}"
    foil_caption = "caption_score" if foil_video == "score" else f"caption_{foil_video}"
    foil_foil = "foil_scores" if foil_video == "score" else f"foil_{foil_video}"
    return [
        [
            [row[f"{prefix}{caption}"], row[f"{prefix}{foil}"][0]],
            [row[f"{foil_prefix}{foil_caption}"], row[f"{foil_prefix}{foil_foil}"][0]],
        ]
        for row in rows
    ]


def _table(result) -> dict[str, tuple[float, float, float]]:
    computed = result.results.configs["all"].metrics["winoground_score"]
    table = {}
    for category in ("all", *computed.groups):
        source = computed.overall if category == "all" else computed.groups[category]
        table[category] = tuple(source[f"{s}_score"] * 100 for s in ("text", "video", "group"))
    return table


CSV_ROWS = [list(row) for row in VINOGROUND_ROWS[:PAIRS]]


@pytest.mark.parametrize("model", ["clip", "llava-next-video", "generate"])
def test_each_video_decoded_once_and_scores_equal_the_port(runs, model):
    """The video LLM's video score compares its answers to the video-score question about the
    joined videos (its own 2x2 block); the dual encoder's compares the same four scores."""
    result, opened = runs[model]
    assert opened == {f"{i}_{role}.mp4": 1 for i in range(PAIRS) for role in ("pos", "neg")}
    record = result.results.configs["all"].score
    assert record.dataset["num_videos"] == 2 * PAIRS
    assert record.throughput["decoded_videos"] == 2 * PAIRS
    scores = _scores(result)
    assert len(scores) == PAIRS and not any(row["error"] for row in scores)
    assert "foil_video" not in scores[0]
    asked = model != "clip"
    assert ("video_question_caption_score" in scores[0]) == asked
    theirs = vinoground_videoclip_scores(
        _blocks(scores), CSV_ROWS, _blocks(scores, question=True) if asked else None
    )
    ours = _table(result)
    assert set(ours) == set(theirs)
    for category, values in theirs.items():
        assert ours[category] == pytest.approx(values), category
    if asked:  # how the joined videos were built, in the run record and per row
        joined = record.video_question
        assert joined["gap_seconds"] == 2.0 and "black" in joined["joined_view"]["separator"]
        assert joined["question"].startswith("Which video segment matches this caption?")
        # 12 frames, 8 black ones (2 s at 4 fps), 12 frames: 4 sampled at 0, 10, 20 and 31
        assert [row["video_question_frames"] for row in scores] == [[[2, 0, 2], [2, 0, 2]]] * 3
        assert joined["sampled_frames"] == {"first": [2, 2], "separator": [0, 0], "second": [2, 2]}


def test_generate_mode_equals_get_score_all_on_the_runs_answers(runs):
    """Each order of the run's questions written as Vinoground's question and response files:
    get_score_all.py's table on them is winoground_score's on that order's answer shares (the
    run's own scores average the two orders). The answers are varied (:func:`_varied`)."""
    result, _ = runs["generate"]
    scores = _scores(result)
    # right and wrong answers of every kind, so the tables are no accident of one reading
    columns = ("answer_outcomes", "foil_video_answer_outcomes", "video_question_answer_outcomes")
    outcomes = {o for row in scores for column in columns for o in row[column]}
    assert outcomes == {"parsed", "unparseable", "refused"}
    tables = [_order_table(scores, order) for order in (0, 1)]
    text, video, group = zip(*(table["all"] for table in tables))
    assert max(text) > 0 and max(video) > 0 and max(group) > 0 and min(text + video) < 100


def _order_table(scores, order: int) -> dict[str, tuple[float, float, float]]:
    """get_score_all.py's table on the answers to order ``order`` of every question, asserted
    equal to winoground_score's on that order's shares; returned."""
    text_gt, video_gt, text_responses, video_responses = [], [], [], []
    for i, row in enumerate(scores):
        pos_cap, neg_cap = row["caption"], row["foils"][0]
        shown = (pos_cap, neg_cap) if order == 0 else (neg_cap, pos_cap)
        # order 0 lists the caption first (A) on both videos; the video-first view shows the
        # positive video first (A), the other view the negative one
        for role, answers, right in (("pos", row["answers"], pos_cap), ("neg", None, neg_cap)):
            answers = answers or row["foil_video_answers"]
            idx = f"{i}_{role}"
            text_gt.append(vinoground_text_item(idx, *shown, "AB"[shown.index(right)]))
            text_responses.append({"idx": idx, "response": answers[order]})
        asked = row["video_question_answers"]  # caption on both views, then the foil
        for k, (role, caption) in enumerate((("pos", pos_cap), ("neg", neg_cap))):
            idx = f"{i}_{role}"
            gt = "AB"[(k + order) % 2]
            video_gt.append(vinoground_video_item(idx, caption, f"concat/{i}.mp4", gt))
            video_responses.append({"idx": idx, "response": asked[2 * k + order]})
    theirs = vinoground_get_score_all(text_gt, video_gt, CSV_ROWS, text_responses, video_responses)
    shown = ("shown_first", "shown_second")[:: 1 if order == 0 else -1]
    ours = winoground_score(
        _blocks(scores, detail=(f"order_{order}",) * 2),
        video_pair_scores=_blocks(scores, question=True, detail=shown),
        categories=[[row[1], *filter(None, row[2].split(";"))] for row in CSV_ROWS],
        n_resamples=0,
    )
    for category, values in theirs.items():
        suffix = "" if category == "all" else f"_{category}"
        got = tuple(ours[f"{s}_score{suffix}"] * 100 for s in ("text", "video", "group"))
        assert got == pytest.approx(values), category
    return theirs


def test_report_rows_are_the_categories_and_coverage_counts_the_missing_pair(runs):
    result, _ = runs["clip"]
    report = result.report.read_text()
    assert "| category | text | video | group | n | tied |" in report
    for category in ("action", "object", "viewpoint", "interaction", "cyclical", "spatial", "all"):
        assert f"| {category} |" in report
    coverage = result.results.configs["all"].coverage
    assert (coverage.benchmark_rows, coverage.dropped_missing_video) == (len(VINOGROUND_ROWS), 1)


def test_compare_leaderboard_and_hub_tasks_read_the_runs(runs):
    clip, llm = runs["clip"][0], runs["llava-next-video"][0]
    tests = compare_runs(clip.run_dir, llm.run_dir, n_resamples=20)
    scopes = tests["all"]["winoground_score"]
    assert "all" in scopes and "interaction" in scopes
    entries = local_entries([clip.run_dir, llm.run_dir])
    assert {entry.benchmark for entry in entries} == {"vinoground"}
    tasks = {value.task.id: value.value for value in task_values(clip.results)}
    computed = clip.results.configs["all"].metrics["winoground_score"].overall
    assert tasks == {
        f"{s}_score": pytest.approx(computed[f"{s}_score"] * 100)
        for s in ("text", "video", "group")
    }


def test_the_html_report_shows_the_video_question(runs, chromium):
    """report.html shows each pair's answers to the video-score question (its 2x2 block, both
    views' scores, the joined views' frames and, in generate mode, every answer and the video it
    named), as it shows the text question's; a dual encoder asked none."""
    clip = runs["clip"][0]
    assert all("vq" not in item for item in run_items(clip.run_dir, clip.results))
    for name in ("llava-next-video", "generate"):
        result = runs[name][0]
        rows = {row["id"]: row for row in _scores(result)}
        items = [i for i in run_items(result.run_dir, result.results) if i["o"] != "error"]
        assert items
        for item in items:
            row, asked = rows[item["id"]], item["vq"]
            assert asked["s"] == [list(pair) for pair in zip(*_blocks([row], question=True)[0])]
            assert asked["o"][1][0] == [
                row["video_question_foil_shown_first"][0],
                row["video_question_foil_shown_second"][0],
            ]
            assert asked["fr"] == row["video_question_frames"]
            assert ("a" in asked) == (name == "generate")
    answered, row = items[0]["vq"], rows[items[0]["id"]]
    assert answered["a"] == row["video_question_answers"]
    assert answered["ac"] == row["video_question_answer_choices"]
    dom = chromium((result.run_dir / "report.html").as_uri(), "--dump-dom")
    assert dom.returncode == 0 and 'data-ready="1"' in dom.stdout, dom.stderr[-2000:]
    page = html.unescape(dom.stdout)
    heading = "video question (which segment of the joined video a text describes), share of"
    assert page.count(heading) == len(items)
    frames = " + ".join(map(str, answered["fr"][0]))
    assert f"(first video + separator + second video): video first {frames}," in page
    named = {None: "", 0: ": the video", 1: ": the foil video"}[answered["ac"][0]]
    text = json.dumps(answered["a"][0])
    assert f"caption, video first: {text} ({answered['ao'][0]}{named})" in page


def test_the_html_report_shows_a_pairs_2x2_block(runs, chromium, tmp_path):
    """report.html shows each pair row's scores on the video and on the foil video (its 2x2
    block: the ``foil_video_*`` columns beside the video's), and its CSV export carries the foil
    video's scores at full precision."""
    result = runs["clip"][0]
    rows = {row["id"]: row for row in _scores(result)}
    items = run_items(result.run_dir, result.results)
    assert len(items) == PAIRS and all(item["o"] != "error" for item in items)
    for item in items:
        row = rows[item["id"]]
        assert item["fv"]["cs"] == row["foil_video_caption_score"]
        assert item["fv"]["fs"] == row["foil_video_foil_scores"]
        assert item["fv"]["fi"] == row["foil_video_frame_indices"]
    # the page as a user exports it: the Blob's text read back into the DOM
    export = """URL.createObjectURL = function (blob) { blob.text().then(function (text) {
      document.body.setAttribute("data-test", JSON.stringify({csv: text})); }); return "blob:t"; };
    HTMLAnchorElement.prototype.click = function () {};
    document.getElementById("export").click();"""
    text = (result.run_dir / "report.html").read_text(encoding="utf-8")
    page = tmp_path / "report.html"
    page.write_text(text.replace("</body>", f"<script>{export}</script></body>"), encoding="utf-8")
    dom = chromium(page.as_uri(), "--dump-dom", "--virtual-time-budget=5000")
    assert dom.returncode == 0 and 'data-ready="1"' in dom.stdout, dom.stderr[-2000:]
    for item in items:
        card = dom.stdout.split(f'id="item-all-{item["id"]}"')[1].split('class="item ')[0]
        block = card.split('class="pair-scores"')[1].split("</table>")[0]
        assert "<th>scores: text × video</th><th>caption</th><th>foil</th>" in block
        shown = [float(v) for v in re.findall(r'<td class="score">([^<]*)</td>', block)]
        video, foil_video = _blocks([rows[item["id"]]])[0]
        assert shown == pytest.approx(video + foil_video, rel=1e-3)
        assert "the foil video</td>" in block
    written = json.loads(html.unescape(re.search(r'data-test="([^"]*)"', dom.stdout)[1]))["csv"]
    exported = {row["id"]: row for row in csv.DictReader(io.StringIO(written))}
    assert set(exported) == set(rows)
    for key, row in rows.items():
        assert float(exported[key]["foil_video_caption_score"]) == row["foil_video_caption_score"]
        assert json.loads(exported[key]["foil_video_foil_scores"]) == row["foil_video_foil_scores"]
