"""``foilkit push-results --dry-run``: exactly the files, commit operations, ``.eval_results`` and
model-index that would be sent."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

import datasets
import pytest
import yaml
from huggingface_hub import ModelCard, parse_eval_result_entries
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


@pytest.fixture
def model_index_dry_run(demo_dir: Path, tmp_path: Path) -> Path:
    """The dry run of a push that also updates the model card's model-index."""
    repos = ["--model-repo", "me/clip", "--dataset-id", "me/synthetic"]
    return _dry_run(demo_dir, tmp_path, *repos, "--model-index")


def test_dataset_commit_holds_the_run_files_and_a_loadable_card(demo_dir: Path, tmp_path: Path):
    out = _dry_run(demo_dir, tmp_path)
    commit = json.loads((out / "dataset_commit.json").read_text())
    assert commit["repo_id"] == "me/clip-foilkit-results" and commit["repo_type"] == "dataset"
    paths = [op["path_in_repo"] for op in commit["operations"]]
    assert paths == [
        "README.md",
        "scores/all.parquet",
        "results.json",
        "accuracy.png",
        "report.md",
        "report.html",
    ]
    for op in commit["operations"]:
        assert (
            op["sha256"]
            == hashlib.sha256((out / "dataset" / op["path_in_repo"]).read_bytes()).hexdigest()
        )
    run = demo_dir / "runs" / "clip"
    sent = json.loads((out / "dataset" / "results.json").read_text())
    computed = json.loads((run / "results.json").read_text())
    assert sent["configs"]["all"]["metrics"] == computed["configs"]["all"]["metrics"]
    assert not (out / "model-index.yaml").exists()  # no --model-repo, no card update
    assert not (out / "model").exists()
    scores = datasets.load_dataset(
        str(out / "dataset"), "all", split="test", cache_dir=str(tmp_path / "cache")
    )
    assert (
        scores.to_list()
        == datasets.Dataset.from_parquet(str(run / "scores" / "all.parquet")).to_list()
    )


def test_eval_results_read_back_with_the_dataset_id_and_numeric_values(
    demo_dir: Path, tmp_path: Path
):
    out = _dry_run(demo_dir, tmp_path, "--model-repo", "me/clip", "--dataset-id", "me/synthetic")
    (path,) = (out / "model").rglob("*.yaml")
    assert path.relative_to(out / "model").as_posix() == ".eval_results/synthetic.yaml"
    entries = parse_eval_result_entries(yaml.safe_load(path.read_text()))
    computed = json.loads((demo_dir / "runs" / "clip" / "results.json").read_text())
    metric = computed["configs"]["all"]["metrics"]["pairwise_foil_accuracy"]
    expected = {g: r["accuracy"] for g, r in metric["groups"].items()} | {
        "average": metric["overall"]["macro_accuracy"]
    }
    assert {e.task_id: e.value for e in entries} == {
        k: round(100 * v, 2) for k, v in expected.items()
    }
    for entry in entries:
        assert entry.dataset_id == "me/synthetic" and isinstance(entry.value, float)
        assert entry.source_url == "https://huggingface.co/datasets/me/clip-foilkit-results"
        assert "protocol paper" in entry.notes and "control none" in entry.notes
        assert "8 frames" in entry.notes and "95% CI" in entry.notes
    commit = json.loads((out / "model_commit.json").read_text())
    assert (commit["repo_id"], commit["repo_type"], commit["create_pr"], commit["create_repo"]) == (
        "me/clip",
        "model",
        True,
        None,
    )  # a pull request to someone's model; the repo is never created
    assert [op["path_in_repo"] for op in commit["operations"]] == [".eval_results/synthetic.yaml"]
    assert not (out / "model-index.yaml").exists()  # legacy metadata only with --model-index


def test_a_control_run_gets_its_own_file_and_direct_commits_on_request(
    demo_dir: Path, tmp_path: Path
):
    out = tmp_path / "dry-run"
    assert (
        main(
            [
                "push-results",
                str(demo_dir / "runs" / "xclip-shuffled"),
                "--repo",
                "me/r",
                "--model-repo",
                "me/xclip",
                "--dataset-id",
                "me/synthetic",
                "--direct",
                "--dry-run",
                str(out),
            ]
        )
        == 0
    )
    path = out / "model" / ".eval_results" / "synthetic_shuffled.yaml"
    entries = parse_eval_result_entries(yaml.safe_load(path.read_text()))
    assert {e.task_id for e in entries} == {  # the control's own tasks, never the paper's
        "direction_shuffled",
        "order_shuffled",
        "speed_shuffled",
        "average_shuffled",
    }
    assert json.loads((out / "model_commit.json").read_text())["create_pr"] is False


def test_a_local_dataset_is_no_hub_id(demo_dir: Path, tmp_path: Path, capsys):
    argv = [
        "push-results",
        str(demo_dir / "runs" / "clip"),
        "--repo",
        "me/r",
        "--model-repo",
        "me/clip",
        "--dry-run",
        str(tmp_path / "dry-run"),
    ]
    assert main(argv) == 2
    assert "not a Hub dataset id: pass --dataset-id" in capsys.readouterr().err


def test_nothing_uploaded_names_a_local_path(demo_dir: Path, model_index_dry_run: Path):
    out = model_index_dry_run
    results = json.loads((demo_dir / "runs" / "clip" / "results.json").read_text())
    local = [results["model"], results["dataset"], str(demo_dir), str(Path.home()), os.getcwd()]
    local.append(tempfile.gettempdir() + "/")
    for folder in ("dataset", "model"):  # every file the two commits would upload
        for path in (out / folder).rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                assert not [p for p in local if p.encode() in data], path
    card = (out / "dataset" / "README.md").read_text()
    assert yaml.safe_load(card.split("---")[1])["license"] == "cc-by-4.0"


def test_model_index_has_one_result_per_reported_number(demo_dir: Path, model_index_dry_run: Path):
    out = model_index_dry_run
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
            "me/synthetic",
            "all",
            "test",
        )
        assert result.metric_type == "pairwise_foil_accuracy" and result.source_name == "foilkit"
        assert "accuracy (all)" != result.metric_name  # "all" is the mean over aspects, said so
        low, high = result.metric_args["ci_95"]
        assert low <= result.metric_value <= high
