"""``push-results`` against a mocked ``HfApi``: the results dataset commit, then the model's
``.eval_results`` as a pull request (the model repo is never created); the legacy model-index
only on request, with Hub task ids and Hub dataset ids."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import huggingface_hub
import pytest
import yaml

from foilkit.hub_results import TASK_TYPES, eval_results, prepare_upload, push_results
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
