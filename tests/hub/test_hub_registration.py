"""An export as the Hub will see it (issue 30, Hub part): an ``eval.yaml`` whose
``evaluation_framework`` is on the Hub's closed list, control tasks of their own, ViLMA's
``average`` on all five tests, no path of the building machine in any uploaded file, partial
exports marked and unregistered, and ``eval.yaml`` uploaded only to the canonical repository."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import ClassVar

import datasets
import huggingface_hub
import pytest
import yaml
from huggingface_hub import DatasetCard

from foilkit.builders import get_benchmark
from foilkit.builders.hub import (
    CONTROLS,
    EVAL_YAML,
    FRAMEWORKS_FILE,
    canonical_benchmarks,
    check_evaluation_framework,
    default_evaluation_framework,
    eval_yaml,
    hub_frameworks,
    hub_repo,
    upload_files,
)
from foilkit.cli import main
from foilkit.scorers import controls


class RecordingHfApi:
    """``HfApi`` whose ``upload_folder`` records the files it would upload."""

    uploads: ClassVar[list[tuple[str, list[str]]]] = []

    def __init__(self, token=None):
        pass

    def create_repo(self, repo_id, **kwargs):
        pass

    def upload_folder(self, *, folder_path, repo_id, allow_patterns, **kwargs):
        self.uploads.append((repo_id, [str(Path(folder_path) / p) for p in allow_patterns]))
        return f"https://huggingface.co/datasets/{repo_id}/commit/0"


@pytest.fixture
def hub(monkeypatch):
    RecordingHfApi.uploads = []
    monkeypatch.setattr(huggingface_hub, "HfApi", RecordingHfApi)
    return RecordingHfApi


def local_paths(*extra: Path) -> list[str]:
    """The building machine's paths a published file must not name."""
    paths = [tempfile.gettempdir(), str(Path.home()), os.getcwd(), *map(str, extra)]
    return sorted({p for p in paths if len(p) > 1}, key=len, reverse=True)


def names_a_local_path(path: Path, local: list[str]) -> list[str]:
    data = path.read_bytes()
    return [p for p in local if p.encode() in data]


# --- evaluation_framework ------------------------------------------------------------------------


def test_the_vendored_framework_list_names_its_source():
    source = hub_frameworks()
    assert source["repository"] == "huggingface/huggingface.js"
    assert source["path"] == "packages/tasks/src/eval.ts"
    assert len(source["commit"]) == 40 and int(source["commit"], 16) >= 0
    assert {"inspect-ai", "mteb", "math-arena"} <= set(source["frameworks"])
    assert FRAMEWORKS_FILE.parent.name == "builders"  # shipped as package data


def test_the_default_framework_is_one_the_hub_accepts():
    accepted = hub_frameworks()["frameworks"]
    assert default_evaluation_framework() in accepted
    assert eval_yaml("vitatecs", {"direction": ["test"]})["evaluation_framework"] in accepted
    chosen = eval_yaml("vitatecs", {"direction": ["test"]}, evaluation_framework="inspect-ai")
    assert chosen["evaluation_framework"] == "inspect-ai"


def test_an_unlisted_framework_is_refused_naming_the_list_and_the_pull_request():
    with pytest.raises(ValueError) as error:
        check_evaluation_framework("foilkit")
    message = str(error.value)
    assert "'foilkit' is not one the Hub accepts" in message and "mteb" in message
    assert "packages/tasks/src/eval.ts" in message and "Registering a benchmark" in message


def test_build_refuses_an_unlisted_framework_before_writing(tmp_path: Path, capsys):
    out = tmp_path / "out"
    argv = ["build", "vitatecs", "--out", str(out), "--evaluation-framework", "foilkit"]
    assert main(argv) == 2
    assert "not one the Hub accepts" in capsys.readouterr().err
    assert not out.exists()


# --- tasks ---------------------------------------------------------------------------------------


def test_the_controls_are_the_scorers_controls():
    assert CONTROLS == controls.CONTROLS


def test_control_tasks_are_declared_apart_from_the_papers_tasks():
    document = eval_yaml("vitatecs", {"direction": ["test"], "all": ["test"]})
    ids = [task["id"] for task in document["tasks"]]
    assert ids[:2] == ["direction", "average"]
    assert {"direction_reversed", "average_shuffled", "direction_single"} <= set(ids)
    assert "_reversed" in document["description"] and "control" in document["description"]


def test_vilma_average_is_scored_on_all_five_tests():
    tests = {test: ["test"] for test in ("action_counting", "situation_awareness")}
    assert "average" not in [t["id"] for t in eval_yaml("vilma", tests)["tasks"]]
    five = {
        test: ["test"]
        for test in (
            "action_counting",
            "situation_awareness",
            "change_of_state",
            "rare_actions",
            "spatial_relations",
        )
    }
    (average,) = [t for t in eval_yaml("vilma", five)["tasks"] if t["id"] == "average"]
    assert average["config"] == "all"


def test_rtime_is_not_filed_under_text_retrieval():
    assert "text-retrieval" not in get_benchmark("rtime").card.task_categories


def test_every_benchmark_with_a_builder_names_its_canonical_repository():
    from foilkit.builders import BUILDERS, get_benchmark

    # a benchmark whose terms forbid redistribution (TemporalBench) has no Hub copy to name
    shareable = {n for n in BUILDERS.names() if not get_benchmark(n).redistribution_forbidden}
    assert set(canonical_benchmarks()) == shareable
    assert all(hub_repo(name).count("/") == 1 for name in canonical_benchmarks())


# --- exports -------------------------------------------------------------------------------------


@pytest.mark.integration
def test_vilma_exports_an_all_config_of_the_five_tests(shared_data: Path, tmp_path: Path):
    from foilkit.builders import export, vilma

    out = export(
        "vilma",
        tmp_path / "vilma",
        list(vilma.TESTS),
        on_missing="keep",
        annotations=shared_data / "vilma",
        cache_dir=str(tmp_path / "cache"),
    )
    cache = str(tmp_path / "load-cache")
    everything = datasets.load_dataset(str(out), "all", split="test", cache_dir=cache)
    parts = [
        datasets.load_dataset(str(out), test, split="test", cache_dir=cache).num_rows
        for test in vilma.TESTS
    ]
    assert everything.num_rows == sum(parts)
    tasks = yaml.safe_load((out / EVAL_YAML).read_text())["tasks"]
    assert {"id": "average", "config": "all", "split": "test"} in tasks
    (info,) = [
        i
        for i in DatasetCard.load(out / "README.md").data.dataset_info
        if i["config_name"] == "all"
    ]
    assert info["splits"][0]["num_examples"] == sum(parts)


@pytest.mark.integration
def test_build_push_uploads_no_local_path(shared_data: Path, tmp_path: Path, hub):
    videos = tmp_path / "videos" / "vitatecs"
    videos.mkdir(parents=True)
    out = tmp_path / "export"
    argv = [
        "build",
        "vitatecs",
        "--config",
        "direction",
        "--annotations",
        str(shared_data / "vitatecs"),
        "--video-root",
        str(videos),
        "--on-missing",
        "keep",
        "--out",
        str(out),
        "--datasets-cache",
        str(tmp_path / "cache"),
        "--push-to-hub",
        hub_repo("vitatecs"),
    ]
    assert main(argv) == 0
    ((repo, uploaded),) = hub.uploads
    assert repo == "foilkit/vitatecs"
    assert {Path(p).name for p in uploaded} >= {"README.md", EVAL_YAML}
    local = local_paths(tmp_path, videos, shared_data)
    for path in uploaded:
        assert not names_a_local_path(Path(path), local), path
    assert "<video_root>" in (out / "README.md").read_text()


@pytest.mark.integration
def test_a_partial_export_is_marked_and_registers_nothing(shared_data: Path, tmp_path: Path):
    from foilkit.builders import export

    rows = [yaml.safe_load(line) for line in (shared_data / "vitatecs" / "Direction.jsonl").open()]
    videos = tmp_path / "videos"
    names = sorted({row["src_dataset"] + "/" + row["video_name"] for row in rows})[:5]
    for name in names:
        (videos / name).parent.mkdir(parents=True, exist_ok=True)
        (videos / name).write_bytes(b"")
    out = export(
        "vitatecs",
        tmp_path / "export",
        ["direction"],
        video_root=videos,
        on_missing="skip",
        annotations=shared_data / "vitatecs",
        cache_dir=str(tmp_path / "cache"),
    )
    card = DatasetCard.load(out / "README.md")
    kept = datasets.load_dataset(
        str(out), "direction", split="test", cache_dir=str(tmp_path / "lc")
    ).num_rows
    assert 0 < kept < len(rows)
    marker = f"partial export: {kept:,} of {len(rows):,} rows of direction, videos missing"
    assert card.data.pretty_name == f"VITATECS ({marker})"
    assert card.text.lstrip().startswith("# VITATECS (partial export:")
    assert "**Partial export**" in card.text
    assert not (out / EVAL_YAML).exists()  # a partial export is no benchmark
    for path in out.rglob("*"):
        if path.is_file():
            assert not names_a_local_path(path, local_paths(tmp_path, shared_data)), path


def test_eval_yaml_goes_only_to_the_canonical_repository(demo_runs: Path, tmp_path: Path):
    from foilkit.builders.hub import write_eval_yaml

    folder = demo_runs.parent / "benchmark"
    assert EVAL_YAML not in upload_files(folder, "me/synthetic")  # the demo has no canonical repo
    assert EVAL_YAML in upload_files(folder, "me/synthetic", register=True)
    copy = tmp_path / "copy"
    copy.mkdir()
    (copy / "README.md").write_text((folder / "README.md").read_text())
    for parquet in folder.glob("*/*.parquet"):
        (copy / parquet.parent.name).mkdir(exist_ok=True)
        (copy / parquet.parent.name / parquet.name).write_bytes(parquet.read_bytes())
    write_eval_yaml(copy, "vitatecs", {"direction": ["test"]})
    assert EVAL_YAML not in upload_files(copy, "me/vitatecs")
    assert EVAL_YAML in upload_files(copy, hub_repo("vitatecs"))
