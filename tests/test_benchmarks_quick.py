"""The scoring benchmark in its smallest mode: it runs, prints its ratios, and its counts hold.

``benchmarks/scoring_speed.py --smoke`` (3 short videos, tiny models, CPU) is run as a user
runs it; the printed tables must carry the ratios and the JSON record the engine's promises:
one decode per unique (video, window), none from a warm cache, one per item in the naive
loop, one video-LLM prefix forward per view.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "scoring_speed.py"


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory) -> tuple[str, dict]:
    out = tmp_path_factory.mktemp("benchmark")
    env = {**os.environ, "FOILKIT_CACHE": str(out / "cache")}
    command = [
        sys.executable,
        str(SCRIPT),
        "--smoke",
        "--models",
        "clip-tiny,llava-next-video-tiny",
        "--shapes",
        "vitatecs,rtime",
        "--json",
        str(out / "record.json"),
    ]
    run = subprocess.run(command, check=False, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return run.stdout, json.loads((out / "record.json").read_text())


def test_the_tables_carry_the_ratios(smoke_run):
    stdout, record = smoke_run
    for heading in ("engine views/s", "naive items/s", "decode-only views/s", "model-only views/s"):
        assert heading in stdout
    for ratio in ("engine/naive", "engine/decode-only", "engine/model-only"):
        assert ratio in stdout
    assert len(record["cases"]) == 4
    for case in record["cases"]:
        assert f"| {case['model']}" in stdout
        assert all(value > 0 and math.isfinite(value) for value in case["ratios"].values())


def test_cpu_use_is_measured_and_bounds_the_ratio(smoke_run):
    stdout, record = smoke_run
    assert "engine/naive, every core busy" in stdout
    for case in record["cases"]:
        cpu = case["cpu"]
        assert cpu["cores"] >= 1 and cpu["engine_cpu_ms_per_item"] > 0
        # decoding threads and the model share the process: it keeps more than no core busy,
        # and no more than every core (plus sampling slack)
        assert 0 < cpu["cores_busy"]["engine"] <= cpu["cores"] + 0.25
        # the engine's own ratio is what the bound gives at the cores it actually kept busy
        at_busy = (
            cpu["engine/naive with every core busy"] * cpu["cores_busy"]["engine"] / cpu["cores"]
        )
        assert math.isclose(at_busy, case["ratios"]["engine/naive"], rel_tol=1e-9)


def test_one_decode_per_unique_video_window(smoke_run):
    _, record = smoke_run
    for case in record["cases"]:
        counts = case["counts"]
        assert counts["engine"]["decode_passes"] == case["unique_video_windows"] == 3
        assert counts["naive"]["decode_passes"] == case["rows"]
        assert case["views"] == (6 if case["shape"] == "rtime" else 3)  # reversed views: no decode
        assert all(case["checks"].values()), case["checks"]


def test_the_cache_and_the_prefix_are_reused(smoke_run):
    _, record = smoke_run
    by_model = {}
    for case in record["cases"]:
        by_model.setdefault(case["model"], []).append(case)
    for case in by_model["clip-tiny"]:
        assert case["counts"]["engine, cached"]["decode_passes"] == 0
    for case in by_model["llava-next-video-tiny"]:
        assert case["counts"]["engine"]["prefix_forwards"] == case["views"]
        assert case["counts"]["naive"]["prefix_forwards"] == case["rows"]
        assert case["counts"]["engine"]["continuations"] == 2 * case["rows"]


GENERATE_SCRIPT = SCRIPT.parent / "generate_speed.py"


def test_generate_speed_runs_and_its_answers_are_the_naive_loops(tmp_path):
    """``generate_speed.py --smoke --model tiny``: one prefix forward per video, both videos'
    questions decoded in one batch, against the engine decoding each video's questions in a
    batch of their own, decoding them one at a time, and one ``model.generate`` per question:
    the same greedy answers, the ratios in the record."""
    env = {**os.environ, "FOILKIT_CACHE": str(tmp_path / "cache")}
    out = tmp_path / "generate.json"
    command = [
        sys.executable,
        str(GENERATE_SCRIPT),
        "--smoke",
        "--model",
        "tiny",
        "--json",
        str(out),
    ]
    run = subprocess.run(command, check=False, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "engine/naive wall" in run.stdout and "answers equal" in run.stdout
    record = json.loads(out.read_text())
    assert record["answers_equal"] is True
    assert record["prefix_forwards"] == record["views"] == 2
    assert record["naive_generate_calls"] == record["questions"] == 6
    assert record["decode_batches"] == record["cross_view_batches"] == 1
    assert record["batched_questions"] == 6
    assert record["per_view_decode_batches"] == record["views"]
    assert record["batching"]["batching"] == record["batching"]["across_views"] == "padded"
    assert set(record["phases"]) == {"engine", "per_view", "unbatched", "naive"}
    ratios = ["engine_over_naive", "engine_over_naive_cpu", "unbatched_over_naive"]
    ratios += ["engine_over_per_view", "engine_over_per_view_cpu", "per_view_over_naive"]
    for ratio in [*ratios, "engine_over_unbatched", "engine_over_unbatched_cpu"]:
        assert record[ratio] > 0 and math.isfinite(record[ratio])
