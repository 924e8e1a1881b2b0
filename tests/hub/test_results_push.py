"""``push-results`` against a mocked ``HfApi``: the results dataset commit, then the model's
``.eval_results`` as a pull request (the model repo is never created); the legacy model-index
only on request, with Hub task ids and Hub dataset ids."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import huggingface_hub
import pytest
import yaml

from foilkit.hub_results import (
    TASK_TYPES,
    eval_results,
    hub_dataset_id,
    prepare_upload,
    push_results,
)
from foilkit.run import RunResults

#: Hub task ids (pipeline tags) model-index may name.
HUB_TASK_IDS = {
    "zero-shot-classification",
    "multiple-choice",
    "text-retrieval",
    "video-text-to-text",
    "video-classification",
}


class RecordingHfApi:
    calls: ClassVar[list[tuple[str, dict]]] = []

    def __init__(self, token=None):
        pass

    def create_repo(self, repo_id, **kwargs):
        self.calls.append(("create_repo", {"repo_id": repo_id, **kwargs}))

    def create_commit(self, repo_id, operations, **kwargs):
        self.calls.append(
            (
                "create_commit",
                {
                    "repo_id": repo_id,
                    "paths": [op.path_in_repo for op in operations],
                    "contents": {op.path_in_repo: op.path_or_fileobj for op in operations},
                    **kwargs,
                },
            )
        )
        pr = "https://huggingface.co/me/clip/discussions/1" if kwargs.get("create_pr") else None
        return SimpleNamespace(commit_url=f"https://huggingface.co/{repo_id}/commit/0", pr_url=pr)


@pytest.fixture
def hub(monkeypatch):
    RecordingHfApi.calls = []
    monkeypatch.setattr(huggingface_hub, "HfApi", RecordingHfApi)
    return RecordingHfApi


def test_push_opens_a_pull_request_on_the_model(demo_runs: Path, hub):
    upload = prepare_upload(
        demo_runs / "clip", "me/clip-results", model_repo="me/clip", dataset_id="me/synthetic"
    )
    urls = push_results(upload)
    assert urls["model_commit"] == "https://huggingface.co/me/clip/discussions/1"
    names = [(name, call["repo_id"]) for name, call in hub.calls]
    assert names == [
        ("create_repo", "me/clip-results"),
        ("create_commit", "me/clip-results"),
        ("create_commit", "me/clip"),
    ]
    model = hub.calls[-1][1]
    assert model["repo_type"] == "model" and model["create_pr"] is True
    assert model["paths"] == [".eval_results/synthetic.yaml"]
    entries = huggingface_hub.parse_eval_result_entries(
        yaml.safe_load(model["contents"][".eval_results/synthetic.yaml"])
    )
    assert {e.task_id for e in entries} == {"direction", "order", "speed", "average"}
    dataset = hub.calls[1][1]
    assert dataset["create_pr"] is False and "README.md" in dataset["paths"]


def test_model_index_uses_hub_ids_and_names_the_macro_average(demo_runs: Path):
    assert set(TASK_TYPES.values()) <= HUB_TASK_IDS
    results = RunResults.load(demo_runs / "clip")
    entries = eval_results(results, dataset_id="me/synthetic", source_url="https://x")
    assert {e.dataset_type for e in entries} == {"me/synthetic"}
    whole = [e for e in entries if e.metric_config == "all"]
    assert [e.metric_name for e in whole] == ["accuracy, mean over aspects (all)"]


def _copy_run(demo_runs: Path, tmp_path: Path, **changes) -> Path:
    """A copy of the demo's clip run with ``results.json`` fields changed."""
    run = tmp_path / "clip"
    shutil.copytree(demo_runs / "clip", run)
    data = json.loads((run / "results.json").read_text())
    data.update(changes)
    (run / "results.json").write_text(json.dumps(data))
    return run


def _entries(upload) -> dict[str, list]:
    return {
        path: huggingface_hub.parse_eval_result_entries(yaml.safe_load(text))
        for path, text in upload.model_files.items()
    }


def test_a_control_run_reports_its_own_tasks_never_the_papers(demo_runs: Path, tmp_path: Path):
    run = _copy_run(demo_runs, tmp_path, control="reversed")
    upload = prepare_upload(run, "me/r", model_repo="me/clip", dataset_id="me/synthetic")
    ((path, entries),) = _entries(upload).items()
    assert path == ".eval_results/synthetic_reversed.yaml"
    ids = [entry.task_id for entry in entries]
    assert set(ids) == {
        "direction_reversed",
        "order_reversed",
        "speed_reversed",
        "average_reversed",
    }
    declared = yaml.safe_load((demo_runs.parent / "benchmark" / "eval.yaml").read_text())
    assert set(ids) <= {task["id"] for task in declared["tasks"]}  # each a task of the benchmark
    assert all("control reversed" in entry.notes for entry in entries)


def test_notes_are_short_and_name_protocol_frames_control_and_coverage(demo_runs: Path):
    upload = prepare_upload(
        demo_runs / "clip", "me/r", model_repo="me/clip", dataset_id="me/synthetic"
    )
    for entries in _entries(upload).values():
        for entry in entries:
            assert len(entry.notes) <= 120, entry.notes
            for part in ("protocol paper", "8 frames", "control none", "rows scored"):
                assert part in entry.notes
    results = json.loads(upload.files["results.json"])  # the long record stays in the dataset
    assert results["protocol"]["name"] == "paper"


def test_the_canonical_repository_is_the_default_dataset_id(demo_runs: Path):
    from foilkit.builders.hub import hub_repo

    results = RunResults.load(demo_runs / "clip")  # dataset: a local folder
    vitatecs = replace(results, benchmark="vitatecs")
    assert hub_dataset_id(vitatecs) == hub_repo("vitatecs") == "foilkit/vitatecs"
    assert hub_dataset_id(vitatecs, "me/vitatecs") == "me/vitatecs"  # an explicit id wins
    with pytest.raises(ValueError, match="not a Hub dataset id"):
        hub_dataset_id(results)  # the synthetic benchmark has no canonical repository


def test_the_revision_of_the_loaded_hub_dataset_is_filled(demo_runs: Path, tmp_path: Path):
    commit = "0123456789abcdef0123456789abcdef01234567"
    data = json.loads((demo_runs / "clip" / "results.json").read_text())
    for config in data["configs"].values():
        config["run"]["score"]["dataset"]["revision"] = commit
    run = _copy_run(demo_runs, tmp_path, dataset="me/synthetic", configs=data["configs"])
    upload = prepare_upload(run, "me/r", model_repo="me/clip")
    entries = [e for values in _entries(upload).values() for e in values]
    assert entries and {(e.dataset_id, e.dataset_revision) for e in entries} == {
        ("me/synthetic", commit)
    }
    other = prepare_upload(run, "me/r", model_repo="me/clip", dataset_id="someone/synthetic")
    assert {e.dataset_revision for v in _entries(other).values() for e in v} == {None}


def test_hub_revision_reads_the_commit_of_a_hub_cache_folder(tmp_path: Path):
    import datasets

    from foilkit.scorers.dataset_files import hub_revision

    commit = "89abcdef0123456789abcdef0123456789abcdef"
    folder = tmp_path / "me___bench" / "direction" / "0.0.0" / commit
    folder.mkdir(parents=True)
    table = datasets.Dataset.from_dict({"id": ["a"]})
    table.save_to_disk(str(tmp_path / "saved"))
    (arrow,) = (tmp_path / "saved").glob("*.arrow")
    shutil.copy(arrow, folder / "bench-test.arrow")
    assert hub_revision(datasets.Dataset.from_file(str(folder / "bench-test.arrow"))) == commit
    assert hub_revision(datasets.Dataset.from_file(str(arrow))) is None  # not a Hub cache
    assert hub_revision(table) is None  # in memory
