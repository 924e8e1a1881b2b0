"""``foilkit push-results --dry-run``: exactly the files, commit operations and model-index that would be sent."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import datasets
import yaml
from huggingface_hub import ModelCard
from huggingface_hub.repocard_data import model_index_to_eval_results

from foilkit.cli import main


def _dry_run(demo_dir: Path, tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / "dry-run"
    argv = [
        "push-results",
        str(demo_dir / "runs" / "clip"),
        "--repo",
        "me/clip-foilkit-results",
        "--dry-run",
        str(out),
        *extra,
    ]
    assert main(argv) == 0
    return out


def test_dataset_commit_holds_the_run_files_and_a_loadable_card(demo_dir: Path, tmp_path: Path):
    out = _dry_run(demo_dir, tmp_path)
    commit = json.loads((out / "dataset_commit.json").read_text())
    assert commit["repo_id"] == "me/clip-foilkit-results" and commit["repo_type"] == "dataset"
    paths = [op["path_in_repo"] for op in commit["operations"]]
    assert paths == ["README.md", "scores/all.parquet", "results.json", "accuracy.png", "report.md"]
    for op in commit["operations"]:
        assert (
            op["sha256"]
            == hashlib.sha256((out / "dataset" / op["path_in_repo"]).read_bytes()).hexdigest()
        )
    run = demo_dir / "runs" / "clip"
    assert (out / "dataset" / "results.json").read_bytes() == (run / "results.json").read_bytes()
    assert not (out / "model-index.yaml").exists()  # no --model-repo, no card update
    scores = datasets.load_dataset(
        str(out / "dataset"), "all", split="test", cache_dir=str(tmp_path / "cache")
    )
    assert (
        scores.to_list()
        == datasets.Dataset.from_parquet(str(run / "scores" / "all.parquet")).to_list()
    )


def test_model_index_has_one_result_per_reported_number(demo_dir: Path, tmp_path: Path):
    out = _dry_run(demo_dir, tmp_path, "--model-repo", "me/clip")
    call = json.loads((out / "model_card_update.json").read_text())
    assert (call["function"], call["repo_id"], call["repo_type"]) == (
        "huggingface_hub.metadata_update",
        "me/clip",
        "model",
    )
    index = yaml.safe_load((out / "model-index.yaml").read_text())["model-index"]
    assert index == call["metadata"]["model-index"]
    card = ModelCard(
        f"---\n{yaml.safe_dump({'model-index': index})}---\n"
    )  # the card API reads it back
    model_name, results = model_index_to_eval_results(card.data.to_dict()["model-index"])
    assert model_name == "me/clip"
    computed = json.loads((demo_dir / "runs" / "clip" / "results.json").read_text())
    metric = computed["configs"]["all"]["metrics"]["pairwise_foil_accuracy"]
    expected = {"all": metric["overall"]["accuracy"]} | {
        f"all/{g}": r["accuracy"] for g, r in metric["groups"].items()
    }
    assert {r.metric_config: r.metric_value for r in results} == {
        k: round(100 * v, 2) for k, v in expected.items()
    }
    for result in results:
        assert result.task_type == "zero-shot-classification"
        assert (result.dataset_type, result.dataset_config, result.dataset_split) == (
            "synthetic",
            "all",
            "test",
        )
        assert result.metric_type == "pairwise_foil_accuracy" and result.source_name == "foilkit"
        low, high = result.metric_args["ci_95"]
        assert low <= result.metric_value <= high
