"""A run folder's ``config.yaml`` replays it: ``foilkit evaluate --config-file <run>/config.yaml
--out <new>`` (and ``foilkit score``'s) gives the same scores, on the demo's synthetic benchmark
and the tiny CLIP."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from foilkit.cli import main


@pytest.fixture(scope="module")
def small_benchmark(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's synthetic benchmark (its videos and exported folder), without the demo run."""
    from foilkit.demo import write_demo_benchmark

    return write_demo_benchmark(tmp_path_factory.mktemp("benchmark"))


@pytest.fixture
def order_args(small_benchmark: Path, clip_model: str, n_resamples: int) -> list[str]:
    """``foilkit evaluate`` of the tiny CLIP on 6 rows of the synthetic benchmark's ``order``."""
    return [
        "evaluate",
        *("--benchmark", "synthetic", "--config", "order", "--limit", "6"),
        *("--dataset", str(small_benchmark), "--videos", str(small_benchmark / "videos")),
        *("--model", clip_model, "--n-resamples", str(n_resamples)),
        *("--no-progress", "--num-workers", "0", "--no-cache"),
    ]


#: What a run records of its clock (when, how fast), which no replay repeats.
TIMES = ("started_at", "finished_at", "throughput")


def untimed(record: object) -> object:
    """``record`` without the keys of :data:`TIMES`, at any depth."""
    if isinstance(record, dict):
        return {key: untimed(value) for key, value in record.items() if key not in TIMES}
    return record


def test_evaluate_replays_from_its_config_yaml(
    order_args: list[str], clip_model: str, tmp_path: Path
) -> None:
    first, replay = tmp_path / "first", tmp_path / "replay"
    flags = ["--num-frames", "4", "--control", "reversed", "--out", str(first)]
    assert main([*order_args, *flags]) == 0
    config = yaml.safe_load((first / "config.yaml").read_text())
    assert config["model"] == clip_model and config["configs"] == ["order"]
    assert config["limit"] == 6
    assert config["protocol"]["benchmark"] == "synthetic"
    assert config["frames"]["num_frames"] == 4 and config["frames"]["control"] == "reversed"
    assert "out_dir" not in config["work"]  # the run folder is --out's, not the file's
    results = json.loads((first / "results.json").read_text())
    assert results["invocation"]["config"] == config  # the run record holds it too
    assert results["invocation"]["argv"][:2] == ["foilkit", "evaluate"]  # and its argv

    assert (
        main(["evaluate", "--config-file", str(first / "config.yaml"), "--out", str(replay)]) == 0
    )
    again = json.loads((replay / "results.json").read_text())
    assert untimed(again["configs"]) == untimed(results["configs"])
    assert again["configs"]["order"]["metrics"] == results["configs"]["order"]["metrics"]
    assert again["protocol"] == results["protocol"]
    scores = pq.read_table(first / "scores" / "order.parquet").to_pylist()
    assert pq.read_table(replay / "scores" / "order.parquet").to_pylist() == scores
    assert yaml.safe_load((replay / "config.yaml").read_text()) == config


def test_score_replays_from_its_config_yaml(
    small_benchmark: Path, clip_model: str, tmp_path: Path
) -> None:
    benchmark = small_benchmark
    first, replay = tmp_path / "first", tmp_path / "replay"
    argv = [
        "score",
        *("--model", clip_model, "--dataset", str(benchmark), "--config", "order"),
        *("--video-root", str(benchmark / "videos"), "--num-frames", "4"),
        *("--no-progress", "--num-workers", "0", "--no-cache"),
    ]
    assert main([*argv, "--out", str(first)]) == 0
    config = yaml.safe_load((first / "config.yaml").read_text())
    assert config["dataset"] == str(benchmark) and config["frames"]["num_frames"] == 4
    assert main(["score", "--config-file", str(first / "config.yaml"), "--out", str(replay)]) == 0
    rows = [json.loads(line) for line in (first / "scores.jsonl").read_text().splitlines()]
    again = [json.loads(line) for line in (replay / "scores.jsonl").read_text().splitlines()]
    assert again == rows and rows


def test_the_python_api_takes_evaluate_options_and_keywords_over_them(
    small_benchmark: Path, clip_model: str, tmp_path: Path, n_resamples: int
) -> None:
    import foilkit

    options = foilkit.EvaluateOptions(
        config="order",
        limit=4,
        dataset=small_benchmark,
        videos=small_benchmark / "videos",
        n_resamples=n_resamples,
        score_options=foilkit.ScoreOptions(num_workers=0, progress=False, use_cache=False),
    )
    run = foilkit.evaluate(
        "synthetic", clip_model, out_dir=tmp_path / "api", options=options, limit=2
    )
    assert run.results is not None and run.results.configs["order"].num_rows == 2
    config = yaml.safe_load((run.run_dir / "config.yaml").read_text())
    assert config["limit"] == 2 and config["configs"] == ["order"]
    assert config["frames"]["video_root"] == [str(small_benchmark / "videos")]
