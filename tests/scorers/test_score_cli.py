"""``foilkit score``: the CLI runs the same engine, for per-sample scores and retrieval matrices."""

from __future__ import annotations

import json

import numpy as np
from launch import score_argv

from foilkit.cli import main


def test_score_writes_scores_and_run_record(tiny_model, saved_benchmark, tmp_path):
    out = tmp_path / "run"
    argv = score_argv(tiny_model("gpt2"), saved_benchmark, out, "--num-workers", "0")
    assert main([*argv, "--no-progress"]) == 0
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    run = json.loads((out / "run.json").read_text())
    assert len(rows) == run["dataset"]["num_rows"] == 9
    assert {row["score_kind"] for row in rows} == {"perplexity"}
    assert run["adapter"]["adapter"] == "text-lm" and run["model"]["id"] == tiny_model("gpt2")
    for field in (
        "num_frames",
        "sampling",
        "decoder",
        "dtype",
        "seed",
        "control",
        "packages",
        "hardware",
    ):
        assert field in run, field


def test_score_matrix_from_the_cli(tiny_model, saved_benchmark, tmp_path):
    out = tmp_path / "matrix"
    argv = score_argv(tiny_model("clip"), saved_benchmark, out, "--matrix", "--num-workers", "0")
    argv += ["--no-progress", "--cache-dir", str(tmp_path / "c")]
    assert main(argv) == 0
    matrix = np.load(out / "matrix.npy")
    names = json.loads((out / "matrix.json").read_text())
    assert matrix.shape == (9, 9) and len(names["ids"]) == len(names["texts"]) == 9
    assert np.isfinite(matrix).all() and np.abs(matrix).max() <= 1.0 + 1e-6  # cosine similarities


def test_window_preprocess_and_score_scale_flags_override_the_protocol(
    tiny_model, saved_benchmark, tmp_path, capsys
):
    """``--window``, ``--preprocess`` and ``--score-scale`` reach the run as overrides of the
    protocol, recorded; a window rule that does not exist is one clear error."""
    out = tmp_path / "run"
    argv = score_argv(tiny_model("clip"), saved_benchmark, out, "--num-workers", "0")
    flags = ["--window", "read-video", "--preprocess", "pil", "--score-scale", "logit"]
    assert main([*argv, *flags, "--no-progress", "--no-cache"]) == 0
    run = json.loads((out / "run.json").read_text())
    given = {name: value["given"] for name, value in run["protocol"]["overrides"].items()}
    assert given == {"window": "read-video", "preprocess": "pil", "score_scale": "logit"}
    assert run["adapter"]["preprocess"] == "pil" and run["adapter"]["score_scale"] == "logit"
    capsys.readouterr()
    bad = score_argv(tiny_model("clip"), saved_benchmark, tmp_path / "x")
    assert main([*bad, "--window", "closed"]) != 0
    assert "unknown window rule 'closed' (--window)" in capsys.readouterr().err
