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


#: The flags of ``foilkit evaluate`` that are no setting of the run: where it is written
#: (``--out``, ``--overwrite``, ``--resume``), the file itself, and ``--tasks`` (a run folder is
#: one benchmark's; ``--matrix`` is refused).
NOT_REPLAYED = {"help", "config_file", "out", "overwrite", "resume", "tasks", "matrix"}


def config_keys(config: dict) -> set[str]:
    """The keys of a ``config.yaml``: its top-level ones and its sections'."""
    sections = {key for key, value in config.items() if isinstance(value, dict)}
    return (set(config) - sections) | {key for name in sections for key in config[name]}


def test_evaluate_replays_from_its_config_yaml(
    order_args: list[str], clip_model: str, tmp_path: Path, capsys
) -> None:
    """Every flag of the run is in its ``config.yaml`` (those of the command line the run does
    not read too: ``--min-coverage``, ``--verbosity``, ``--json``, ``--log-with``,
    ``--tracking-dir``), and the replay gives the same scores and the same file."""
    from foilkit.cli import command_parser

    first, replay = tmp_path / "first", tmp_path / "replay"
    flags = ["--num-frames", "4", "--control", "reversed", "--out", str(first)]
    flags += ["--min-coverage", "0.5", "--verbosity", "warning", "--json"]
    flags += ["--log-with", "tensorboard", "--tracking-dir", str(tmp_path / "tracking")]
    assert main([*order_args, *flags]) == 0
    assert json.loads(capsys.readouterr().out)["command"] == "evaluate"  # --json
    config = yaml.safe_load((first / "config.yaml").read_text())
    assert config["model"] == clip_model and config["configs"] == ["order"]
    assert config["limit"] == 6
    assert (config["min_coverage"], config["verbosity"], config["json"]) == (0.5, "warning", True)
    assert config["log_with"] == ["tensorboard"]
    assert config["tracking_dir"] == str(tmp_path / "tracking")
    _, parser = command_parser("evaluate")
    flagged = {action.dest for action in parser._actions} - NOT_REPLAYED
    assert flagged - config_keys(config) == set()
    assert config["protocol"]["benchmark"] == "synthetic"
    assert config["frames"]["num_frames"] == 4 and config["frames"]["control"] == "reversed"
    assert "out_dir" not in config["work"]  # the run folder is --out's, not the file's
    results = json.loads((first / "results.json").read_text())
    assert results["invocation"]["config"] == config  # the run record holds it too
    assert results["invocation"]["argv"][:2] == ["foilkit", "evaluate"]  # and its argv

    assert (
        main(["evaluate", "--config-file", str(first / "config.yaml"), "--out", str(replay)]) == 0
    )
    assert json.loads(capsys.readouterr().out)["run_dir"] == str(replay)  # --json, from the file
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
    assert main([*argv, "--out", str(first), "--min-coverage", "0.5"]) == 0
    config = yaml.safe_load((first / "config.yaml").read_text())
    assert config["dataset"] == str(benchmark) and config["frames"]["num_frames"] == 4
    assert (config["min_coverage"], config["verbosity"], config["json"]) == (0.5, "info", False)
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


@pytest.mark.parametrize("matrix", [False, True])
def test_the_python_api_writes_the_config_that_replays_it(
    small_benchmark: Path, clip_model: str, tmp_path: Path, matrix: bool
) -> None:
    """``foilkit.score``/``score_matrix`` with ``out_dir`` write ``config.yaml`` as ``foilkit
    score`` does: ``foilkit score --config-file`` gives the same scores."""
    import foilkit

    first, replay = tmp_path / "first", tmp_path / "replay"
    options = {"video_root": str(small_benchmark / "videos"), "num_frames": 4}
    options |= {"num_workers": 0, "progress": False, "use_cache": False}
    call = foilkit.score_matrix if matrix else foilkit.score
    call(clip_model, str(small_benchmark), "order", out_dir=str(first), **options)
    config = yaml.safe_load((first / "config.yaml").read_text())
    assert (config["model"], config["dataset"]) == (clip_model, str(small_benchmark))
    assert (config["configs"], config["matrix"]) == (["order"], matrix)
    assert config["frames"]["num_frames"] == 4 and config["work"]["progress"] is False
    assert main(["score", "--config-file", str(first / "config.yaml"), "--out", str(replay)]) == 0
    written = "matrix.npy" if matrix else "scores.jsonl"
    assert (replay / written).read_bytes() == (first / written).read_bytes()


def test_a_dataset_given_as_an_object_is_named_missing_in_the_config(
    small_benchmark: Path, clip_model: str, tmp_path: Path
) -> None:
    import foilkit
    from foilkit.scorers.api import load_scoring_dataset

    rows = load_scoring_dataset(str(small_benchmark), "order")
    foilkit.score(
        clip_model,
        rows,
        out_dir=str(tmp_path / "run"),
        video_root=small_benchmark / "videos",  # a path, written as its text
        num_workers=0,
        progress=False,
        use_cache=False,
    )
    text = (tmp_path / "run" / "config.yaml").read_text()
    assert yaml.safe_load(text)["dataset"] is None
    assert yaml.safe_load(text)["frames"]["video_root"] == str(small_benchmark / "videos")
    assert "# Note: the dataset was given as an object: name it with --dataset." in text
