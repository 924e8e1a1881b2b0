"""``foilkit generate vilma``: every stage on JSONL files, rows the canonical schema accepts."""

from __future__ import annotations

import argparse
import json

import datasets
import pytest
from foilkit.generation.foil import foils_dataset, row_foils
from foilkit.generation.vilma import cli

from foilkit.synthetic.models import tiny_model_path


def _run(tmp_path, stage: str, records: list[dict], *options: str) -> list[dict]:
    source, out = tmp_path / f"{stage}.in.jsonl", tmp_path / f"{stage}.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records))
    parser = argparse.ArgumentParser()
    cli.configure(parser)
    assert cli.run(parser.parse_args([stage, "-i", str(source), "-o", str(out), *options])) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    metadata = {"subtest": datasets.Value("string")} if rows and "subtest" in rows[0] else {}
    foils_dataset(rows, **metadata)  # the canonical features accept them
    for row in rows:
        assert [f.text for f in row_foils(row)] == row["foils"]
    assert json.loads(out.with_name(f"{stage}.jsonl.run.json").read_text())["rows_written"] == len(
        rows
    )
    return rows


def test_counting(tmp_path):
    rows = _run(tmp_path, "counting", [
        {"id": "q0", "template": "a man skips rope exactly <number> times.", "count": 2, "video": "000.mp4"},
        {"id": "q1", "template": "a man skips rope exactly <number> times.", "count": 7},
        {"id": "q2", "template": "a man skips rope exactly <number> times.", "count": 12},
    ], "--digits")  # fmt: skip
    assert [(r["id"], r["subtest"], r["caption"]) for r in rows] == [
        ("q0", "easy", "a man skips rope exactly 2 times."),
        ("q1", "difficult", "a man skips rope exactly 7 times."),
    ]


def test_change_of_state(tmp_path):
    rows = _run(tmp_path, "change-of-state", [
        {"id": "c0", "argument": "the door", "pre_state": "open", "verb": "close",
         "post_state": "closed", "reverse_verb": "open"},
    ])  # fmt: skip
    assert [r["subtest"] for r in rows] == ["action", "prestate", "poststate", "inverse"]
    assert rows[0]["foils"] == ["Someone opens the door."]


def test_actor_swap(tmp_path):
    rows = _run(tmp_path, "actor-swap", [{"id": "s0", "caption": "A boy pushes the girl."},
                                         {"id": "s1", "caption": "A man sleeps."}])  # fmt: skip
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
        options = ["--mlm", f"fill-mask:{tiny_model_path('roberta-mlm')}",
                   "--mlm", f"t5:{tiny_model_path('t5')}", "--role", "object", "--top-k", "3", *filters]  # fmt: skip
    rows = _run(tmp_path, stage, captions, *options)
    assert rows and all(len(r["foils"]) == 1 for r in rows)
    for row in rows:
        (foil,) = row_foils(row)
        assert "grammaticality" in foil.filter_scores and foil.text != row["caption"]


@pytest.mark.parametrize(("foil_type", "top_k"), [("proficiency", 3), ("action_replacement", 32)])
def test_masked_lm_top_k_defaults_follow_the_paper(tmp_path, foil_type, top_k):
    rows = _run(
        tmp_path, "masked-lm", [{"id": "r0", "caption": "someone peels a melon"}],
        "--mlm", f"fill-mask:{tiny_model_path('roberta-mlm')}", "--role", "object",
        "--foil-type", foil_type, "--all-foils",
    )  # fmt: skip
    (row,) = rows
    assert len(row["foils"]) == top_k
    assert {f.parameters["top_k"] for f in row_foils(row)} == {top_k}
