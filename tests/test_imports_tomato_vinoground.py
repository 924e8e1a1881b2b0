"""``foilkit import`` of lmms-eval's ``tomato`` and ``vinoground`` samples: how an answer finds
its row, and the lines it refuses. The samples are written here in the forms lmms-eval 0.7.3
logs them (``tests/test_imports_lmms_eval_tomato_vinoground.py`` imports lmms-eval's own files):
saved (``EvaluationTracker.save_results_samples``: no ``doc``, the prompt as ``input``, the task
scorer's record beside the answer) and unsaved (``doc`` and ``arguments`` kept)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foilkit.builders.tomato.answers import lmms_eval_tomato_prompt, read_lmms_eval_tomato_prompt
from foilkit.cli import main
from foilkit.imports import AMBIGUOUS, NO_ANSWER
from foilkit.run import RunFolder, RunResults
from tests.upstream_formats import (
    VINOGROUND_ROWS,
    VINOGROUND_SCRIPT_SUFFIX,
    vinoground_csv,
    vinoground_text_item,
    vinoground_video_item,
)

#: Two published TOMATO questions that share question, options and video type (direction 0
#: and 1: only their videos differ), and one of its own.
SHARED = ("0", "1")
OWN = ("count", "0")


def _write(folder: Path, name: str, samples: list[dict]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
    return path


def _run(source: Path, benchmark: str, annotations: Path, out: Path) -> int:
    argv = ["import", str(source), "--benchmark", benchmark, "--out", str(out)]
    return main([*argv, "--annotations", str(annotations), "--n-resamples", "20"])


def _tomato_sample(stem: str, record: dict, answer: str, saved: bool, **changes) -> dict:
    doc = {
        "id": "7",
        "question": record["question"],
        "options": record["options"],
        "answer": record["answer"],
        "video_path": f"videos/{record['demonstration_type']}/{record['key']}.mp4",
        "reason_type": stem,
        "demonstration_type": record["demonstration_type"],
        **changes,
    }
    prompt = lmms_eval_tomato_prompt(doc["question"], doc["options"])
    logged = {
        "question_id": doc["id"],
        "score": 0.0,
        "reason_type": doc["reason_type"],
        "demonstration_type": doc["demonstration_type"],
    }
    sample = {"doc_id": 0, "filtered_resps": [answer], "tomato_score": logged}
    return sample | ({"input": prompt} if saved else {"doc": doc, "arguments": [prompt]})


def _tomato(shared_data: Path, stem: str, question_id: str) -> dict:
    return json.loads((shared_data / "tomato" / "data" / f"{stem}.json").read_text())[question_id]


@pytest.mark.parametrize("saved", [True, False], ids=["as-saved", "unsaved"])
def test_tomato_samples_name_rows_by_their_question_and_never_guess_a_video(
    shared_data: Path, tmp_path: Path, saved: bool
):
    """A TOMATO sample names its row by reasoning and video type, question and options; two
    questions that differ only in their video are told apart where the sample keeps its
    document (its ``video_path``), and fail as ambiguous where it does not (lmms-eval's saved
    files), with the other rows counted as unanswered; a true letter reads as the caption."""
    own = _tomato(shared_data, *OWN)
    samples = [_tomato_sample(OWN[0], own, "ABCDEFG"[own["answer"]], saved)]
    for question_id in SHARED:
        record = _tomato(shared_data, "direction", question_id)
        samples.append(_tomato_sample("direction", record, "ABCDEFG"[record["answer"]], saved))
    source = _write(tmp_path / "lmms-eval", "20260101_samples_tomato.jsonl", samples)
    assert _run(source, "tomato", shared_data / "tomato", tmp_path / "run") == 0
    entry = RunResults.load(tmp_path / "run").configs["all"]
    rows = RunFolder(tmp_path / "run").load_scores("all").to_pandas().set_index("id")
    assert rows.loc["count-0", "caption_score"] == 1.0
    assert entry.score.adapter["prompts_differ"] == 0
    shared = [rows.loc[f"direction-{question_id}"] for question_id in SHARED]
    if saved:
        assert [row.error for row in shared] == [AMBIGUOUS, AMBIGUOUS]
        assert entry.coverage.causes == {AMBIGUOUS: 2, NO_ANSWER: entry.num_rows - 3}
    else:
        assert [row.caption_score for row in shared] == [1.0, 1.0]
        assert entry.coverage.causes == {NO_ANSWER: entry.num_rows - 3}


def test_the_prompt_is_read_back_into_question_and_options(shared_data: Path):
    record = _tomato(shared_data, *OWN)
    prompt = lmms_eval_tomato_prompt(record["question"], record["options"])
    assert read_lmms_eval_tomato_prompt(prompt) == (record["question"], tuple(record["options"]))
    assert read_lmms_eval_tomato_prompt("What moves?\nA. left\nB. right") is None


@pytest.mark.parametrize(
    "change, message",
    [
        ({"reason_type": "Counting"}, "reason_type 'Counting' is not one of TOMATO's"),
        ({"input": "Which way?"}, "holds no <question> and <options>"),
        ({"question": "How many times does nobody jump?"}, "no tomato item"),
    ],
)
def test_a_tomato_sample_foilkit_cannot_place_is_one_line_naming_it(
    shared_data: Path, tmp_path: Path, capsys, change: dict, message: str
):
    record = _tomato(shared_data, *OWN)
    sample = _tomato_sample(OWN[0], record, "A", True, **change)
    if "reason_type" in change:
        sample["tomato_score"]["reason_type"] = change["reason_type"]
    if "input" in change:
        sample["input"] = change["input"]
    source = _write(tmp_path / "lmms-eval", "20260101_samples_tomato.jsonl", [sample])
    assert _run(source, "tomato", shared_data / "tomato", tmp_path / "run") != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and f"{source}:1:" in error[0] and message in error[0], error


def test_more_tomato_answers_than_the_rows_they_name_is_an_error(
    shared_data: Path, tmp_path: Path, capsys
):
    record = _tomato(shared_data, "direction", SHARED[0])
    samples = [_tomato_sample("direction", record, "A", True) for _ in range(3)]
    source = _write(tmp_path / "lmms-eval", "20260101_samples_tomato.jsonl", samples)
    assert _run(source, "tomato", shared_data / "tomato", tmp_path / "run") != 0
    assert f"{source}:3: 3 answers to the 2 items they name" in capsys.readouterr().err


# --- Vinoground -----------------------------------------------------------------------------

#: Per pair of ``tests/upstream_formats.py``: whether its text questions show the positive
#: caption first (per side), and whether its joined video shows the positive video first.
ORDERS = {"0": ((True, True), True), "1": ((False, True), False), "2": ((True, False), False)}


def vinoground_files(folder: Path) -> dict[str, dict]:
    """``folder`` as lmms-eval's ``$HF_HOME/vinoground`` for the pairs of
    ``tests/upstream_formats.py``: ``vinoground.csv`` and the two question files (caption and
    video orders from :data:`ORDERS`); the questions by ``<pair>_<side>_<text|video>``."""
    (folder / "vinoground_videos").mkdir(parents=True)
    (folder / "vinoground_videos_concated").mkdir()
    (folder / "vinoground.csv").write_text(vinoground_csv())
    asked, text_items, video_items = {}, [], []
    for row in VINOGROUND_ROWS:
        i, pos, neg = row[0], row[6], row[10]
        (pos_first_text, neg_first_text), pos_first = ORDERS.get(i, ((True, True), True))
        for side, own, first in (("pos", pos, pos_first_text), ("neg", neg, neg_first_text)):
            shown = (pos, neg) if first else (neg, pos)
            item = vinoground_text_item(f"{i}_{side}", *shown, "AB"[shown.index(own)])
            video = vinoground_video_item(
                f"{i}_{side}", own, f"vinoground_videos_concated/{i}.mp4",
                "A" if (side == "pos") == pos_first else "B",
            )  # fmt: skip
            text_items.append(item)
            video_items.append(video)
            asked[f"{i}_{side}_text"], asked[f"{i}_{side}_video"] = item, video
    (folder / "vinoground_videos" / "vinoground_textscore.json").write_text(json.dumps(text_items))
    (folder / "vinoground_videos_concated" / "vinoground_videoscore.json").write_text(
        json.dumps(video_items)
    )
    return asked


def _vinoground_sample(index: str, question: dict, answer: str, saved: bool) -> dict:
    """lmms-eval's ``vinoground`` sample of the document ``index`` (``<pair>_<side>_<type>``)."""
    pair, side, kind = index.split("_")
    row = next(r for r in VINOGROUND_ROWS if r[0] == pair)
    categories = ["all", row[1], *row[2].split(";")]
    prompt = question["question"] + VINOGROUND_SCRIPT_SUFFIX
    logged = {"index": f"{pair}_{side}", "categories": categories, "question_type": kind}
    sample = {
        "doc_id": 0,
        "filtered_resps": [answer],
        "vinoground_score": logged | {"pred": answer},
    }
    doc = {"index": index, "major": row[1], "minor": row[2] or None}
    return sample | ({"input": prompt} if saved else {"doc": doc, "arguments": [prompt]})


def _answers(asked: dict[str, dict], pairs: tuple[str, ...], letter) -> list[dict]:
    return [
        _vinoground_sample(index, question, letter(question), True)
        for index, question in asked.items()
        if index.split("_")[0] in pairs
    ]


@pytest.mark.parametrize("saved", [True, False], ids=["as-saved", "unsaved"])
def test_vinoground_pairs_take_their_four_answers_by_index(tmp_path: Path, saved: bool):
    """Each of a pair's four lmms-eval answers fills its place in the pair's two 2x2 blocks,
    whatever order its question showed the captions or the videos in: the true letters give
    text, video and group scores of 1 on every pair, the other letters 0; a pair short of an
    answer, or with none, is counted as unanswered, its missing questions named."""
    annotations = tmp_path / "vinoground"
    asked = vinoground_files(annotations)
    for letter, score in (("GT", 1.0), ("other", 0.0)):
        samples = [
            _vinoground_sample(index, q, q["GT"] if letter == "GT" else "AB"[q["GT"] == "A"], saved)
            for index, q in asked.items()
            if index.split("_")[0] in ("0", "1") or index == "2_pos_text"
        ]
        source = _write(tmp_path / letter, "20260101_samples_vinoground.jsonl", samples)
        out = tmp_path / letter / "run"
        assert _run(source, "vinoground", annotations, out) == 0
        entry = RunResults.load(out).configs["all"]
        overall = entry.metrics["winoground_score"].overall
        assert [overall[s] for s in ("text_score", "video_score", "group_score")] == [score] * 3
        assert (entry.coverage.scored, entry.coverage.causes) == (2, {NO_ANSWER: 2})
        assert entry.score.adapter["prompts_differ"] == 0
        rows = RunFolder(out).load_scores("all").to_pandas().set_index("id")
        assert rows.loc["2", "error"] == f"{NO_ANSWER} to neg_text, pos_video, neg_video"
        assert rows.loc["3", "error"] == NO_ANSWER
        assert list(rows.loc["0", "video_question_answer_choices"]) == (
            [0, 1] if letter == "GT" else [1, 0]
        )


def test_vinoground_answers_read_letters_as_lmms_eval_does(tmp_path: Path):
    """``a`` on pair 0's questions but its last: its text questions show the positive caption
    first on both videos (the negative video's answer names the positive caption: text score
    0), its joined video shows the positive video first (``a`` names it for the positive
    caption); ``Both`` on the negative caption's video question reads as ``B``, the second
    segment: the negative video. Lower case and a word starting with the letter read as
    lmms-eval reads them (the first character)."""
    annotations = tmp_path / "vinoground"
    asked = vinoground_files(annotations)
    samples = _answers(asked, ("0",), lambda q: "a")
    samples[-1]["filtered_resps"] = ["Both"]  # pos_text, pos_video, neg_text, neg_video
    source = _write(tmp_path / "samples", "20260101_samples_vinoground.jsonl", samples)
    assert _run(source, "vinoground", annotations, tmp_path / "run") == 0
    rows = RunFolder(tmp_path / "run").load_scores("all").to_pandas().set_index("id")
    pair = rows.loc["0"]
    assert (pair.caption_score, list(pair.foil_scores)) == (1.0, [0.0])  # v0 names c0
    assert (pair.foil_video_caption_score, list(pair.foil_video_foil_scores)) == (1.0, [0.0])
    # c0's answer "a" names v0 (first); c1's answer "Both" reads B: the second segment, v1
    assert (pair.video_question_caption_score, list(pair.video_question_foil_scores)) == (
        1.0,
        [0.0],
    )
    assert list(pair.foil_video_question_foil_scores) == [1.0]


@pytest.mark.parametrize(
    "change, message",
    [
        ("no-videoscore", "do not say which segment of the joined video is which video"),
        ("categories", "its categories ['all', 'object'] are not Vinoground pair 0's"),
        ("captions", "its question does not show pair 0's two captions as A and B"),
        ("question", "not the question vinoground_videoscore.json asks about pair 0's pos"),
        ("question-type", "question 'pos_audio' is not one of"),
    ],
)
def test_a_vinoground_sample_foilkit_cannot_place_is_one_line_naming_it(
    tmp_path: Path, capsys, change: str, message: str
):
    annotations = tmp_path / "vinoground"
    asked = vinoground_files(annotations)
    samples = _answers(asked, ("0",), lambda q: "A")
    line = 1
    if change == "no-videoscore":
        (annotations / "vinoground_videos_concated" / "vinoground_videoscore.json").unlink()
        line = 2
    elif change == "categories":
        samples[0]["vinoground_score"]["categories"] = ["all", "object"]
    elif change == "captions":
        samples[0]["input"] = samples[0]["input"].replace("a toddler", "a child")
    elif change == "question":
        samples[1]["input"] = samples[1]["input"].replace("2-second", "1-second")
        line = 2
    else:
        samples[0]["vinoground_score"]["question_type"] = "audio"
    source = _write(tmp_path / "samples", "20260101_samples_vinoground.jsonl", samples)
    assert _run(source, "vinoground", annotations, tmp_path / "run") != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and f"{source}:{line}:" in error[0] and message in error[0], error
