"""``accelerate launch`` with 2 CPU processes gives the same per-sample file as 1 process."""

from __future__ import annotations

import json
import sys

import pytest
from launch import accelerate_launch, launched_score, run_to_success


@pytest.mark.slow
@pytest.mark.parametrize("model", ["clip"])  # a dual encoder: batched text and frame embeddings
def test_two_processes_give_the_scores_of_one(model, tiny_model, saved_benchmark, tmp_path):
    for command, out in ([sys.executable], "one"), (accelerate_launch(2), "two"):
        args = launched_score(tiny_model(model), saved_benchmark, tmp_path / out, 2, 1)
        run_to_success([*command, *args])
    assert json.loads((tmp_path / "two/run.json").read_text())["hardware"]["num_processes"] == 2
    shards = sorted(path.name for path in (tmp_path / "two/shards").iterdir())
    assert shards == ["rank-00000.jsonl", "rank-00001.jsonl"]
    assert all((tmp_path / "two/shards" / shard).read_text() for shard in shards)  # both did work
    assert (tmp_path / "two/scores.jsonl").read_bytes() == (
        tmp_path / "one/scores.jsonl"
    ).read_bytes()
