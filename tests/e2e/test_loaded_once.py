"""A model loaded once per run: ``foilkit evaluate`` over several configs, and ``--tasks`` over
several benchmarks, load the model and its processor once, check each config's inputs once, and
make the served backend and the judge once (counted by wrapping the loaders)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
import transformers
from annotated_videos import render_videos
from launch import count_calls

from foilkit.builders import build
from foilkit.cli import main
from foilkit.synthetic.videos import SyntheticScene, write_video


@pytest.fixture
def calls(monkeypatch) -> Counter:
    """How often the model, the processor, the input checks, the served backend and the judge
    were made: each wrapped to count its calls, then run as before."""
    from foilkit.scorers.job import ScoringJob
    from foilkit.scorers.judge import Judge
    from foilkit.scorers.openai_client import ServerBackend

    return count_calls(
        monkeypatch,
        [
            ("model", transformers.AutoModel, "from_pretrained"),
            ("processor", transformers.AutoProcessor, "from_pretrained"),
            ("checks", ScoringJob, "resolve"),
            ("server", ServerBackend, "__post_init__"),
            ("judge", Judge, "__init__"),
        ],
    )


def test_every_config_of_a_run_shares_one_model_load(calls, clip_model, tmp_path, capsys):
    """Three configs, each scored by its own adapter: one load of the weights and the processor,
    one input check per config; the numbers are those of a run of each config alone."""
    from foilkit.demo import write_demo_benchmark

    benchmark = write_demo_benchmark(tmp_path / "benchmark")
    argv = ["evaluate", "--benchmark", "synthetic", "--dataset", str(benchmark)]
    argv += ["--video-root", str(benchmark / "videos"), "--model", clip_model, "--no-cache"]
    argv += ["--n-resamples", "20", "--num-workers", "0", "--no-progress"]
    configs = ["direction", "order", "speed"]
    assert main([*argv, "--config", ",".join(configs), "--out", str(tmp_path / "run")]) == 0
    assert (calls["model"], calls["processor"], calls["checks"]) == (1, 1, len(configs))
    together = json.loads((tmp_path / "run" / "results.json").read_text())["configs"]
    assert main([*argv, "--config", "order", "--out", str(tmp_path / "alone")]) == 0
    alone = json.loads((tmp_path / "alone" / "results.json").read_text())["configs"]
    assert together["order"]["metrics"] == alone["order"]["metrics"]
    assert calls["model"] == 2  # a new run loads it again: nothing is kept beyond a run


def test_tasks_over_two_benchmarks_load_the_model_once(
    calls, clip_model, shared_data, tmp_path, capsys
):
    """``--tasks vitatecs/direction,vitatecs/sequence,vilma/change_of_state_action --limit 2``:
    three configs of two benchmarks, one load."""
    cache = str(tmp_path / "datasets-cache")
    tasks = {"vitatecs": ["direction", "sequence"], "vilma": ["change_of_state_action"]}
    for name, configs in tasks.items():
        for config in configs:  # the videos of the first 2 rows, the rows --limit 2 selects
            rows = build(
                name,
                config,
                annotations=shared_data / name,
                cache_dir=cache,
                on_missing="keep",
                limit=2,
            )["test"]
            durations: dict[str, float] = {}
            for path, end in zip(rows["video_path"], rows["end"], strict=True):
                durations[path] = max(durations.get(path, 0.0), end or 0.0)
            render_videos(tmp_path / "videos" / name, durations)
    items = [f"{name}/{config}" for name, configs in tasks.items() for config in configs]
    argv = ["evaluate", "--tasks", ",".join(items), "--limit", "2", "--model", clip_model]
    argv += ["--video-root", str(tmp_path / "videos"), "--annotations", str(shared_data)]
    argv += ["--out", str(tmp_path / "out"), "--no-cache", "--n-resamples", "20"]
    argv += ["--num-workers", "0", "--no-progress"]
    assert main(argv) == 0, capsys.readouterr().err
    assert (calls["model"], calls["processor"], calls["checks"]) == (1, 1, 3)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert [run["benchmark"] for run in summary["runs"]] == list(tasks)


def test_a_served_run_makes_its_backend_and_judge_once(
    calls, shared_data, tmp_path, monkeypatch, capsys
):
    """Two TempCompass task types in generate mode on a served model with the judge: one
    backend for the served model, one judge per answer parser (each task type has its own),
    however many times the inputs are checked and configs scored; each config's judge record
    counts its own asks only."""
    from tests.openai_server import OpenAICompatibleServer

    videos = tmp_path / "videos"
    for name, direction in {"1034419625": "left", "1034419625_reverse": "right"}.items():
        write_video(videos / f"{name}.mp4", SyntheticScene(direction=direction), num_frames=8)
    monkeypatch.setenv("SERVED_KEY", "sk-served")
    out = tmp_path / "run"
    with OpenAICompatibleServer(lambda body: "I cannot tell.") as server:
        argv = ["evaluate", "--benchmark", "tempcompass", "--config", "multi_choice,yes_no"]
        argv += ["--mode", "generate", "--backend", "openai", "--base-url", server.base_url]
        argv += ["--model", "served-vlm", "--api-key-env", "SERVED_KEY"]
        argv += ["--judge-model", "gpt-3.5-turbo-1106", "--judge-base-url", server.base_url]
        argv += ["--judge-api-key-env", "SERVED_KEY", "--cache-dir", str(tmp_path / "cache")]
        argv += ["--videos", str(videos), "--annotations", str(shared_data / "tempcompass")]
        argv += ["--on-missing", "skip", "--min-coverage", "0", "--out", str(out)]
        argv += ["--n-resamples", "20", "--num-workers", "0", "--no-progress"]
        assert main(argv) == 0, capsys.readouterr().err
        sent = len(server.requests)
    assert (calls["checks"], calls["judge"]) == (2, 2)
    assert calls["server"] == 1 + calls["judge"]  # the served model's, and each judge's own
    configs = json.loads((out / "results.json").read_text())["configs"]
    judged = [entry["run"]["score"]["judge"] for entry in configs.values()]
    answers = [sum(entry["run"]["score"]["answers"].values()) for entry in configs.values()]
    served = [entry["run"]["score"]["backend"]["usage"]["requests"] for entry in configs.values()]
    for record, asked in zip(judged, answers, strict=True):
        assert record["answers_judged"] == asked  # every answer unparseable: each judged
    total = sum(r["usage"]["requests"] + r["usage"]["cache_hits"] for r in judged) + sum(served)
    assert total == sent  # the configs' records add up to what the server was sent
