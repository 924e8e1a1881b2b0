"""``foilkit generate vilma``: every stage on JSONL files, rows the canonical schema accepts."""

from __future__ import annotations

import argparse
import hashlib
import json

import datasets
import pytest

from foilkit.generation.foil import foils_dataset, read_foils, row_foils
from foilkit.generation.provenance import RunRecord
from foilkit.generation.vilma import cli
from foilkit.synthetic.models import tiny_model_path


def _run(tmp_path, stage: str, records: list[dict], *options: str) -> list[dict]:
    source, out = tmp_path / f"{stage}.in.jsonl", tmp_path / stage
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    parser = argparse.ArgumentParser()
    cli.configure(parser)
    assert cli.run(parser.parse_args([stage, "-i", str(source), "-o", str(out), *options])) == 0
    dataset = read_foils(out)  # the foils dataset in the canonical schema
    rows = dataset.to_list()
    assert dataset.features == foils_dataset(rows, **_metadata(rows)).features
    for row in rows:
        assert [f.text for f in row_foils(row)] == row["foils"]
    record = RunRecord.read(out / "run.json")
    assert (record.pipeline, record.stage) == ("vilma", stage)
    assert record.results["rows_written"] == len(rows)
    assert record.inputs["input"]["sha256"] == hashlib.sha256(source.read_bytes()).hexdigest()
    return rows


def _metadata(rows: list[dict]) -> dict:
    if rows and "proficiency_caption" in rows[0]:
        text, texts = datasets.Value("string"), datasets.List(datasets.Value("string"))
        return {
            "subtest": text,
            "verb": text,
            "noun": text,
            "proficiency_caption": text,
            "proficiency_foils": texts,
            "proficiency_provenance": texts,
        }
    if rows and "start_pts" in rows[0]:
        frames = datasets.Value("int32")
        return {"subtest": datasets.Value("string"), "start_pts": frames, "end_pts": frames}
    return {"subtest": datasets.Value("string")} if rows and "subtest" in rows[0] else {}


def test_counting(tmp_path):
    rows = _run(
        tmp_path,
        "counting",
        [
            {
                "id": "q0",
                "template": "a man skips rope exactly <number> times.",
                "count": 2,
                "video": "000.mp4",
            },
            {"id": "q1", "template": "a man skips rope exactly <number> times.", "count": 7},
            {"id": "q2", "template": "a man skips rope exactly <number> times.", "count": 12},
        ],
        "--digits",
    )
    assert [(r["id"], r["subtest"], r["caption"]) for r in rows] == [
        ("q0", "easy", "a man skips rope exactly 2 times."),
        ("q1", "difficult", "a man skips rope exactly 7 times."),
    ]


def test_counting_reports_each_row_it_does_not_write(tmp_path, capsys):
    template = "a man skips rope exactly <number> times."
    records = [
        {"id": f"q{i}", "template": template, "count": count}
        for i, count in enumerate([2, 14, 7, 0, 11])
    ]
    rows = _run(tmp_path, "counting", records)
    assert [row["id"] for row in rows] == ["q0", "q2"]
    out = capsys.readouterr().out
    assert "row 'q1' not written: count 14 is above --max-count 10" in out
    assert "row 'q3' not written: count 0" in out and "row 'q4' not written" in out
    dropped = RunRecord.read(tmp_path / "counting" / "run.json").results["dropped_rows"]
    assert [(row["id"], row["count"]) for row in dropped] == [("q1", 14), ("q3", 0), ("q4", 11)]
    assert "ViLMA's counting items hold 1 to 10" in dropped[0]["reason"]
    # Raising --max-count generates them, in ViLMA's number words.
    rows = _run(tmp_path, "counting", records, "--max-count", "14")
    assert [row["caption"] for row in rows if row["id"] == "q1"] == [
        "a man skips rope exactly fourteen times."
    ]
    with pytest.raises(SystemExit, match=r"row 'q0': 'count' must be a whole number.*'2'"):
        _run(tmp_path, "counting", [{"id": "q0", "template": template, "count": "2"}])


def test_counting_cuts_quva_videos_into_windows(tmp_path):
    import numpy as np

    from foilkit.generation.vilma.counting import fill_count_template

    quva = tmp_path / "quva-annotations"
    quva.mkdir()
    np.save(quva / "000_rope_beach.npy", np.array([13, 27, 41, 56, 70, 83, 96]))
    np.save(quva / "001_trampoline.npy", np.array([25, 50, 75, 100, 125]))  # frames at 25 fps
    template = "a man skips rope exactly <number> times."
    options = ("--digits", "--quva-annotations", str(quva), "--seed", "3")
    records = [
        {"id": "000", "template": template, "video": "000_rope_beach.mp4"},
        {"id": "001", "template": template, "annotation": "001_trampoline", "fps": 25},
    ]
    rows = _run(tmp_path, "counting", records, *options)
    assert len({row["id"] for row in rows}) == len(rows)
    by_video = {
        video: [row for row in rows if row["id"].startswith(video)] for video in ("000", "001")
    }
    assert {row["subtest"] for row in by_video["000"]} == {"easy", "difficult"}
    assert {row["subtest"] for row in by_video["001"]} == {"easy", "difficult"}
    boundaries = {"000": [0, 13, 27, 41, 56, 70, 83, 96], "001": [0, 25, 50, 75, 100, 125]}
    for video, video_rows in by_video.items():
        fps = 30.0 if video == "000" else 25.0
        for row in video_rows:
            first = boundaries[video].index(row["start_pts"])
            count = boundaries[video].index(row["end_pts"]) - first
            assert row["caption"] == fill_count_template(template, count, spelled=False)
            assert (row["subtest"] == "easy") == (count <= 3)
            assert (row["start"], row["end"]) == (
                round(row["start_pts"] / fps, 4),
                round(row["end_pts"] / fps, 4),
            )
    # Video 001 has one difficult window (0-125, five repetitions) and two of four.
    hard = {(r["start_pts"], r["end_pts"]) for r in by_video["001"] if r["subtest"] != "easy"}
    assert hard == {(0, 100), (25, 125), (0, 125)}
    record = RunRecord.read(tmp_path / "counting" / "run.json")
    assert record.parameters["quva_annotations"] == str(quva)
    assert record.parameters["windows_per_video"] == 10
    assert rows == _run(tmp_path, "counting", records, *options)  # the seed fixes the draws
    rescaled = _run(tmp_path, "counting", records[1:], *options, "--target-fps", "30")
    assert {(r["start_pts"], r["end_pts"]) for r in rescaled if r["subtest"] != "easy"} == {
        (0, 120),
        (30, 150),
        (0, 150),
    }
    assert all(row["end"] == round(row["end_pts"] / 30, 4) for row in rescaled)
    missing = [{"id": "002", "template": template}]
    with pytest.raises(SystemExit, match="no 002.npy"):
        _run(tmp_path, "counting", missing, *options)


def test_change_of_state(tmp_path):
    rows = _run(
        tmp_path,
        "change-of-state",
        [
            {
                "id": "c0",
                "argument": "the door",
                "pre_state": "open",
                "verb": "close",
                "post_state": "closed",
                "reverse_verb": "open",
            },
        ],
    )
    assert [r["subtest"] for r in rows] == ["action", "prestate", "poststate", "inverse"]
    assert rows[0]["foils"] == ["Someone opens the door."]


def test_actor_swap(tmp_path):
    rows = _run(
        tmp_path,
        "actor-swap",
        [
            {"id": "s0", "caption": "A boy pushes the girl."},
            {"id": "s1", "caption": "A man sleeps."},
        ],
    )
    assert [r["foils"] for r in rows] == [["The girl pushes a boy."]]


@pytest.mark.parametrize("stage", ["spatial", "masked-lm"])
def test_model_stages_with_tiny_models(tmp_path, stage):
    captions = [
        {"id": "r0", "caption": "putting a pen into a cup"},
        {"id": "r1", "caption": "taking a pen out of a cup"},
        {"id": "r2", "caption": "pouring water onto a chair"},
    ]
    filters = ["--cola", str(tiny_model_path("cola")), "--grammaticality-threshold", "0"]
    if stage == "spatial":
        options = ["--t5", str(tiny_model_path("t5")), "--top-k", "2", *filters]
    else:
        options = [
            "--mlm",
            f"fill-mask:{tiny_model_path('roberta-mlm')}",
            "--mlm",
            f"t5:{tiny_model_path('t5')}",
            "--role",
            "object",
            "--top-k",
            "3",
            *filters,
        ]
    rows = _run(tmp_path, stage, captions, *options)
    assert rows and all(len(r["foils"]) == 1 for r in rows)
    for row in rows:
        (foil,) = row_foils(row)
        assert "grammaticality" in foil.filter_scores and foil.text != row["caption"]
    models = RunRecord.read(tmp_path / stage / "run.json").models
    assert models["cola"]["id"] == str(tiny_model_path("cola"))
    assert ("t5" in models) == (stage == "spatial") and ("mlm.1" in models) == (stage != "spatial")


@pytest.mark.parametrize(("foil_type", "top_k"), [("proficiency", 3), ("action_replacement", 32)])
def test_masked_lm_top_k_defaults_follow_the_paper(tmp_path, foil_type, top_k):
    rows = _run(
        tmp_path,
        "masked-lm",
        [{"id": "r0", "caption": "someone peels a melon"}],
        "--mlm",
        f"fill-mask:{tiny_model_path('roberta-mlm')}",
        "--role",
        "object",
        "--foil-type",
        foil_type,
        "--all-foils",
    )
    (row,) = rows
    assert len(row["foils"]) == top_k
    assert {f.parameters["top_k"] for f in row_foils(row)} == {top_k}


@pytest.mark.parametrize(
    ("replace", "mlm"), [("action", "t5:{t5}"), ("object", "fill-mask:{roberta}")]
)
def test_rare_actions(tmp_path, replace, mlm):
    """RareAct (verb, object) pairs -> ViLMA's captions, foils from the model, and the
    "there is at least one <object>" proficiency item with another object of the file."""
    pairs = [
        {"id": "ra0", "verb": "peel", "noun": "corn", "video": "a.mp4", "start": 50, "end": 60},
        {"id": "ra1", "verb": "cut", "noun": "keyboard", "detected": ["corn"]},
        {"id": "ra2", "verb": "throw", "noun": "shirt"},
    ]
    spec = mlm.format(t5=tiny_model_path("t5"), roberta=tiny_model_path("roberta-mlm"))
    rows = _run(
        tmp_path,
        "rare-actions",
        pairs,
        "--replace",
        replace,
        "--mlm",
        spec,
        "--top-k",
        "8",
        "--excluded-actions",
    )
    by_id = {row["id"]: row for row in rows}
    assert by_id and set(by_id) <= {"ra0", "ra1", "ra2"}
    captions = {"ra0": "peeling some corns", "ra1": "cutting a keyboard", "ra2": "throwing a shirt"}
    for row in rows:
        assert row["caption"] == captions[row["id"]] and len(row["foils"]) == 1
        assert row["subtest"] == f"{replace}_replacement"
        assert row["proficiency_caption"] in (
            "there are some corns",
            "there is at least one keyboard",
            "there is at least one shirt",
        )
        (other,) = row["proficiency_foils"]
        assert other != row["proficiency_caption"] and other.startswith("there ")
        proficiency = json.loads(row["proficiency_provenance"][0])
        assert proficiency["rule"] == "vilma.rare_actions.existence"
    if "ra0" in by_id:
        assert (by_id["ra0"]["start"], by_id["ra0"]["end"]) == (50.0, 60.0)
    if "ra1" in by_id:  # the detector saw corn in ra1's video: not its proficiency foil
        assert by_id["ra1"]["proficiency_foils"] == ["there is at least one shirt"]


def test_change_of_state_command_regenerates_every_published_action_item(tmp_path, shared_data):
    """``foilkit generate vilma change-of-state`` on ViLMA's 624 published 4-tuples, without a
    ``transitive`` field: each verb's transitivity comes from ViLMA's list, as in the library,
    so every action caption and foil comes back word for word ("The athlete jumps.")."""
    from foilkit.cli import main

    published = json.loads((shared_data / "vilma" / "change-state-action.json").read_text())
    source, out = tmp_path / "cos.jsonl", tmp_path / "cos"
    with source.open("w") as handle:
        for key, item in published.items():
            c = item["change_of_state"]
            row = {
                "id": key,
                "argument": c["object"],
                "pre_state": c["pre-state"],
                "verb": c["verb"],
                "post_state": c["post-state"],
                "reverse_verb": c["state-inverse"],
            }
            handle.write(json.dumps(row) + "\n")
    assert main(["generate", "vilma", "change-of-state", "-i", str(source), "-o", str(out)]) == 0
    actions = {
        row["id"].removesuffix("-action"): (row["caption"], row["foils"])
        for row in read_foils(out).to_list()
        if row["subtest"] == "action"
    }
    expected = {key: (item["caption"], item["foils"]) for key, item in published.items()}
    assert len(actions) == 624
    assert {k: v for k, v in actions.items() if v != expected[k]} == {}


def test_change_of_state_transitive_must_be_a_boolean(tmp_path):
    row = {
        "id": "c0",
        "argument": "the athlete",
        "pre_state": "in a lower position",
        "verb": "jump",
        "post_state": "in a higher position",
        "reverse_verb": "descend",
    }
    assert _run(tmp_path, "change-of-state", [row])[0]["caption"] == "The athlete jumps."
    forced = _run(tmp_path, "change-of-state", [{**row, "transitive": True}])
    assert forced[0]["caption"] == "Someone jumps the athlete."
    with pytest.raises(SystemExit, match=r"row 'c0'.*'transitive'.*true or false.*'yes'"):
        _run(tmp_path, "change-of-state", [{**row, "transitive": "yes"}])
