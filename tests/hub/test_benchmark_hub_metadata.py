"""An exported benchmark as a Hub benchmark: ``eval.yaml`` with stable task ids, and a card whose
YAML gives split sizes (so a re-export is not served from a stale cache), task and size
categories, source datasets and the paper."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest
import yaml
from huggingface_hub import DatasetCard

from foilkit.builders import builder_class, export
from foilkit.builders.hub import (
    CONTROLS,
    eval_yaml,
    hub_frameworks,
    hub_tasks,
    validate_eval_yaml,
)

#: The documented task ids (each spec's hub_tasks): changing one breaks every leaderboard.
EXPECTED_TASK_IDS = {
    "vitatecs": [
        "direction",
        "intensity",
        "sequence",
        "localization",
        "compositionality",
        "type",
        "average",
    ],
    "vilma": [
        "action_counting",
        "situation_awareness",
        "change_of_state",
        "rare_actions",
        "spatial_relations",
        "average",
    ],
    "rtime": [
        "origin_t2v_r1",
        "origin_v2t_r1",
        "hard_t2v_r1",
        "hard_v2t_r1",
        "binary_t2v",
        "binary_v2t",
    ],
    "contrast_sets": ["verb_lm", "verb_human", "gender", "random"],
    "tomato": [
        "count",
        "direction",
        "rotation",
        "shape_trend",
        "velocity_frequency",
        "visual_cues",
        "overall",
    ],
}


def with_controls(ids: list[str]) -> list[str]:
    """The paper's task ids, then the same under each temporal control (their own tasks)."""
    return [*ids, *(f"{task}_{control}" for control in CONTROLS for task in ids)]


@pytest.mark.parametrize("name", sorted(EXPECTED_TASK_IDS))
def test_every_config_exported_registers_the_documented_tasks(name: str):
    configs = {config: ["test"] for config in builder_class(name).builder_configs}
    document = eval_yaml(name, configs)
    assert [task["id"] for task in document["tasks"]] == with_controls(EXPECTED_TASK_IDS[name])
    assert document["evaluation_framework"] in hub_frameworks()["frameworks"]
    for task in document["tasks"]:
        assert task["split"] == "test"
        assert task["config"] in configs or (name, task["config"]) == ("vilma", "all")


def test_a_partial_export_lists_only_the_tasks_it_can_serve():
    document = eval_yaml("vilma", {"change_of_state": ["test"], "rare_actions": ["test"]})
    assert [task["id"] for task in document["tasks"]] == with_controls(
        ["change_of_state", "rare_actions"]
    )
    assert [t.id for t in hub_tasks("vilma") if t.mean_of] == ["average"]  # needs all five tests


@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"name": "x", "description": "d", "evaluation_framework": "mteb", "tasks": []},
            "non-empty list",
        ),
        ({"name": "", "description": "d", "evaluation_framework": "mteb", "tasks": [{}]}, "'name'"),
        (
            {
                "name": "x",
                "description": "d",
                "evaluation_framework": "mteb",
                "tasks": [{"id": "a b", "config": "c", "split": "test"}],
            },
            "invalid or repeated",
        ),
        (
            {
                "name": "x",
                "description": "d",
                "evaluation_framework": "mteb",
                "tasks": [{"id": "a", "config": "nope", "split": "test"}],
            },
            "does not have",
        ),
        (  # the Hub's list is closed: an unlisted framework is a YAML Metadata Error there
            {
                "name": "x",
                "description": "d",
                "evaluation_framework": "foilkit",
                "tasks": [{"id": "a", "config": "c", "split": "test"}],
            },
            "'foilkit' is not one the Hub accepts",
        ),
    ],
)
def test_validation_rejects_what_the_hub_would(document, message):
    with pytest.raises(ValueError, match=message):
        validate_eval_yaml(document, {"c": ["test"]})


@pytest.mark.integration
def test_exported_folder_holds_eval_yaml_and_a_complete_card(shared_data: Path, tmp_path: Path):
    out = export(
        "rtime",
        tmp_path / "rtime",
        on_missing="keep",
        annotations=shared_data / "rtime",
        cache_dir=str(tmp_path / "cache"),
    )
    document = yaml.safe_load((out / "eval.yaml").read_text())
    card = DatasetCard.load(out / "README.md").data
    splits = {c["config_name"]: [f["split"] for f in c["data_files"]] for c in card.configs}
    validate_eval_yaml(document, splits)
    assert [task["id"] for task in document["tasks"]] == with_controls(EXPECTED_TASK_IDS["rtime"])
    assert card.task_categories and card.size_categories and card.source_datasets
    assert "text-retrieval" not in card.task_categories  # text-only retrieval; RTime is video
    infos = {info["config_name"]: info for info in card.dataset_info}
    for config in ("origin", "hard", "binary"):
        assert [split["name"] for split in infos[config]["splits"]] == ["test", "validation"]
        for split in infos[config]["splits"]:
            files = [str(path) for path in (out / config).glob(f"{split['name']}-*.parquet")]
            assert split["num_examples"] == datasets.Dataset.from_parquet(files).num_rows
            assert split["num_bytes"] > 0


@pytest.mark.integration
def test_a_re_export_with_different_rows_loads_the_new_rows(shared_data: Path, tmp_path: Path):
    out, load_cache = tmp_path / "vilma", str(tmp_path / "load-cache")
    config = "spatial_relations_prepositions"
    options = {
        "on_missing": "keep",
        "annotations": shared_data / "vilma",
        "cache_dir": str(tmp_path / "cache"),
    }
    export("vilma", out, [config], validity_filter=False, **options)
    assert (
        datasets.load_dataset(str(out), config, split="test", cache_dir=load_cache).num_rows == 708
    )
    export("vilma", out, [config], **options)  # the paper's validity filter: fewer rows
    assert (
        datasets.load_dataset(str(out), config, split="test", cache_dir=load_cache).num_rows == 393
    )
    assert not (out / "eval.yaml").exists()  # a subtest is no leaderboard task


def test_the_demo_benchmark_registers_its_tasks(demo_runs: Path):
    folder = demo_runs.parent / "benchmark"
    document = yaml.safe_load((folder / "eval.yaml").read_text())
    card = DatasetCard.load(folder / "README.md").data
    validate_eval_yaml(
        document, {c["config_name"]: [f["split"] for f in c["data_files"]] for c in card.configs}
    )
    assert [task["id"] for task in document["tasks"]] == with_controls(
        ["direction", "order", "speed", "average"]
    )
