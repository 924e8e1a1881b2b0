"""The scorer's record is one typed object (:class:`foilkit.scorers.record.ScoringRun`): the
scorer fills it, its ``to_record`` is ``run.json`` and the ``run`` of ``results.json``, its
``from_record`` is every reader's, records of older versions included; the scoring folder's file
names are spelled once (:class:`foilkit.folders.ScoresFolder`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foilkit.folders import SCORES, ScoresFolder
from foilkit.run import RunResults
from foilkit.scorers.protocols import resolve_protocol
from foilkit.scorers.record import ScoringRun

FORMAT_1 = Path(__file__).parents[1] / "e2e" / "fixtures" / "run-format-1"

#: ``run.json``'s keys as foilkit writes them, in order (the optional ones included).
KEYS = [
    "identity",
    "model",
    "adapter",
    "prompt_templates",
    "processor",
    "mode",
    "questions",
    "video_question",
    "score_kind",
    "protocol",
    "num_frames",
    "sampling",
    "decoder",
    "decoder_requested",
    "decoder_fallback",
    "max_decode_pixels",
    "video_root",
    "video_roots",
    "dtype",
    "device",
    "placement",
    "backend",
    "seed",
    "control",
    "batch_size",
    "num_workers",
    "model_threads",
    "dataset",
    "cache",
    "errors",
    "answers",
    "judge",
    "throughput",
    "packages",
    "foilkit",
    "hardware",
    "finished_at",
]
OPTIONAL = ("prompt_templates", "questions", "video_question", "answers")


def full_record(**changes) -> ScoringRun:
    """A generate-mode record with every field given."""
    protocol = resolve_protocol("paper", "tempcompass", "video-llm", {"mode": "generate"})
    fields = dict(
        identity={"kind": "score", "num_frames": 8},
        model="org/model",
        revision="main",
        adapter={"adapter": "video-llm", "parser": "letter", "decoding": {"strategy": "greedy"}},
        prompt_templates={"2": "{question} A or B?"},
        processor={"max_pixels": 1024},
        mode="generate",
        questions={"rows": 3, "prompt": "own", "scored": "labels"},
        video_question={"question": "which?"},
        score_kind="probability",
        protocol=protocol,
        num_frames=8,
        sampling={"name": "uniform", "num_frames": 8},
        decoder="torchcodec",
        decoder_requested="torchcodec",
        decoder_fallback=None,
        max_decode_pixels=768,
        video_roots=["/data/a", "/data/b"],
        dtype="float32",
        device="cpu",
        placement=None,
        backend={"kind": "local"},
        seed=0,
        control="reversed",
        batch_size=8,
        num_workers=2,
        model_threads=4,
        dataset={"config": "yes_no", "revision": "c" * 40, "num_rows": 3},
        cache=None,
        errors={"rows": 1, "causes": {"video missing": 1}, "messages": ["gone"]},
        answers={"parsed": 2, "judged": 0, "unparseable": 0, "refused": 0},
        judge=None,
        throughput={"views": 3},
        packages={"foilkit": "0"},
        foilkit={"version": "0"},
        hardware={"cpu_count": 2},
        finished_at="2026-11-29T08:00:00+00:00",
    )
    return ScoringRun(**{**fields, **changes})


def test_a_record_writes_todays_keys_in_order_and_reads_back_as_it_was():
    record = full_record()
    written = record.to_record()
    assert list(written) == KEYS
    assert written["model"] == {"id": "org/model", "revision": "main"}
    assert (written["video_root"], written["video_roots"]) == ("/data/a", ["/data/a", "/data/b"])
    assert written["protocol"] == record.protocol.to_record()
    read = ScoringRun.from_record(json.loads(json.dumps(written)))
    assert read == record and read.to_record() == written
    assert (read.adapter_name, read.parser, read.decoding) == (
        "video-llm",
        "letter",
        {"strategy": "greedy"},
    )
    assert (read.num_rows, read.failed_rows, read.error_causes) == (3, 1, {"video missing": 1})
    assert (read.sampling_name, read.dataset_revision) == ("uniform", "c" * 40)


@pytest.mark.parametrize("key", OPTIONAL)
def test_a_record_holds_an_optional_key_only_when_it_has_a_value(key):
    written = full_record(**{key: None}).to_record()
    assert list(written) == [k for k in KEYS if k != key]
    assert written["judge"] is None and written["placement"] is None  # always written


def test_a_record_of_an_unconfined_run_names_no_root():
    written = full_record(video_roots=None).to_record()
    assert written["video_root"] is None and written["video_roots"] is None
    assert ScoringRun.from_record(written).video_roots is None


@pytest.mark.parametrize("model", ["clip", "xclip"])
def test_an_older_record_reads_by_todays_names_and_writes_back_unchanged(model):
    """``run-format-1`` records were written before ``frames`` was named ``num_frames`` and
    before several video roots: read under today's names, written back as they were."""
    raw = json.loads((FORMAT_1 / model / "results.json").read_text())
    old = raw["configs"]["all"]["run"]["score"]
    assert "num_frames" not in old and "video_roots" not in old
    record = ScoringRun.from_record(old)
    assert record.num_frames == old["frames"] == 8
    assert record.identity["num_frames"] == old["identity"]["frames"]
    assert record.video_roots == [old["video_root"]]
    assert record.protocol.settings["frames"] == 8  # the protocol's settings as recorded
    assert record.adapter_name == old["adapter"]["adapter"]
    assert record.to_record() == old
    loaded = RunResults.load(FORMAT_1 / model)
    assert loaded.configs["all"].score == record


def test_a_start_record_reads_as_a_record_that_has_not_finished():
    from foilkit.scorers.record import start_json

    record = ScoringRun.from_record(json.loads(start_json({"kind": "score", "frames": 4})))
    assert record.identity == {"kind": "score", "num_frames": 4} and record.finished_at is None


def test_the_scoring_folder_kind_owns_the_files_the_scorer_writes(tmp_path):
    folder = ScoresFolder(tmp_path)
    assert (folder.record, folder.scores) == (tmp_path / "run.json", tmp_path / "scores.jsonl")
    assert (folder.matrix, folder.matrix_index) == (
        tmp_path / "matrix.npy",
        tmp_path / "matrix.json",
    )
    assert all(SCORES.owns(name) for name in ScoresFolder.ENTRIES)


@pytest.mark.parametrize("matrix", [False, True])
def test_the_scorer_writes_its_record_and_files_by_the_folder_and_type(
    tiny_model, saved_benchmark, tmp_path, matrix
):
    """What ``score``/``score_matrix`` return is what reading their ``run.json`` gives, the
    folder holds only the scoring folder's own files, and a record from before the frame count
    was renamed (and before the decoding budget) resumes."""
    from foilkit.scorers.api import ScoreOptions, score_pool, score_rows

    out = tmp_path / "out"
    given = dict(out_dir=str(out), num_workers=0, progress=False, use_cache=False)
    scoring = score_pool if matrix else score_rows
    scored = scoring(tiny_model("clip"), str(saved_benchmark), None, ScoreOptions(**given))
    folder = ScoresFolder(out)
    written = json.loads(folder.record.read_text())
    assert written == json.loads(json.dumps(scored.run)) and list(written) == [
        key for key in KEYS if key not in OPTIONAL
    ]
    assert ScoringRun.load(folder.record) == ScoringRun.from_record(written)
    assert isinstance(scored.record, ScoringRun) and scored.record.num_rows == 9
    made = {path.name for path in out.iterdir()} - {".foilkit-folder", ".foilkit.lock"}
    assert made and made <= set(ScoresFolder.ENTRIES)
    assert folder.matrix.is_file() == matrix == (not folder.scores.is_file())
    # as a run.json written before the rename and the budget
    written["identity"]["frames"] = written["identity"].pop("num_frames")
    del written["identity"]["max_decode_pixels"]
    folder.record.write_text(json.dumps(written))
    options = ScoreOptions(**given, resume=True)
    resumed = scoring(tiny_model("clip"), str(saved_benchmark), None, options)
    assert resumed.record.throughput["resumed_rows"] == 9
