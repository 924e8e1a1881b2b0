"""``accelerate launch`` with 2 CPU processes gives the same per-sample file as 1 process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from launch import accelerate_launch


def _score(command: list[str], out: Path, model: str, dataset: Path) -> None:
    args = [
        "-m",
        "foilkit",
        "score",
        "--model",
        model,
        "--dataset",
        str(dataset),
        "--out",
        str(out),
        "--batch-size",
        "2",
        "--num-workers",
        "1",
        "--no-cache",
        "--no-progress",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        command + args, capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("model", ["clip"])  # a dual encoder: batched text and frame embeddings
def test_two_processes_give_the_scores_of_one(model, tiny_model, saved_benchmark, tmp_path):
    _score([sys.executable], tmp_path / "one", tiny_model(model), saved_benchmark)
    _score(
        accelerate_launch(2),
        tmp_path / "two",
        tiny_model(model),
        saved_benchmark,
    )
    assert json.loads((tmp_path / "two/run.json").read_text())["hardware"]["num_processes"] == 2
    shards = sorted(path.name for path in (tmp_path / "two/shards").iterdir())
    assert shards == ["rank-00000.jsonl", "rank-00001.jsonl"]
    assert all((tmp_path / "two/shards" / shard).read_text() for shard in shards)  # both did work
    assert (tmp_path / "two/scores.jsonl").read_bytes() == (
        tmp_path / "one/scores.jsonl"
    ).read_bytes()
