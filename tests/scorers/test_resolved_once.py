"""Resolve once, run once: a scoring call checks its inputs once, loads its dataset once and
makes its served backend and its judge once (:meth:`foilkit.scorers.job.ScoringJob.resolve`
resolves them into the job the runner takes), and ``evaluate`` resolves each config once,
counted by wrapping each."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from launch import count_calls

import foilkit
from tests.openai_server import OpenAICompatibleServer


@pytest.fixture
def calls(monkeypatch) -> Counter:
    """How often the inputs were resolved, a dataset loaded, a served backend, a judge asked for
    and made and an adapter made: each wrapped to count its calls, then run as before."""
    import foilkit.scorers.job as job
    from foilkit.scorers.judge import Judge
    from foilkit.scorers.served import ServerBackend

    return count_calls(
        monkeypatch,
        [
            ("checks", job.ScoringJob, "resolve"),
            ("dataset", job, "load_scoring_dataset"),
            ("judges", job, "make_judge"),
            ("server", ServerBackend, "__post_init__"),
            ("judge", Judge, "__init__"),
            ("adapter", job.ScoringJob, "load_adapter"),
        ],
    )


@pytest.mark.parametrize("judged", [False, True])
def test_a_served_score_makes_its_backend_and_judge_once(
    calls, saved_benchmark, tmp_path, monkeypatch, judged
):
    """``foilkit.score`` of a served video LLM in generate mode (with the judge, which has a
    client of its own): one check, one dataset load, one backend per client, one judge."""
    monkeypatch.setenv("SERVED_KEY", "sk-served")
    with OpenAICompatibleServer(lambda body: "I cannot tell.") as server:
        options: dict[str, Any] = {"backend": "openai", "base_url": server.base_url}
        options |= {"api_key_env": "SERVED_KEY", "mode": "generate", "num_frames": 2}
        if judged:
            options |= {"judge_model": "gpt-4o-mini", "judge_base_url": server.base_url}
            options |= {"judge_api_key_env": "SERVED_KEY"}
        rows = foilkit.score(
            "served-vlm",
            str(saved_benchmark),
            out_dir=str(tmp_path / "out"),
            cache_dir=str(tmp_path / "cache"),
            num_workers=0,
            progress=False,
            **options,
        )
    assert rows.num_rows == 9
    judges = 1 if judged else 0
    assert (calls["checks"], calls["dataset"], calls["adapter"], calls["judges"]) == (1, 1, 1, 1)
    assert (calls["server"], calls["judge"]) == (1 + judges, judges)


def test_a_local_score_matrix_checks_and_loads_once(calls, saved_benchmark, tiny_model, tmp_path):
    matrix = foilkit.score_matrix(
        tiny_model("clip"), str(saved_benchmark), num_workers=0, progress=False, use_cache=False
    )
    assert matrix.scores.shape == (9, 9)
    assert (calls["checks"], calls["dataset"], calls["adapter"]) == (1, 1, 1)
    assert (calls["server"], calls["judge"], calls["judges"]) == (0, 0, 1)


def test_evaluate_resolves_each_config_once(calls, tiny_model, tmp_path):
    """``foilkit.evaluate`` over three configs: each config's inputs resolved once (its dataset
    loaded, its judge asked for), before any is scored, and one adapter per config."""
    from foilkit.demo import write_demo_benchmark

    benchmark = write_demo_benchmark(tmp_path / "benchmark")
    configs = ["direction", "order", "speed"]
    run = foilkit.evaluate(
        "synthetic",
        tiny_model("clip"),
        out_dir=tmp_path / "run",
        config=configs,
        limit=3,
        dataset=benchmark,
        videos=benchmark / "videos",
        n_resamples=10,
        score_options=foilkit.ScoreOptions(num_workers=0, progress=False, use_cache=False),
    )
    assert run.results is not None and list(run.results.configs) == configs
    each = (calls["checks"], calls["dataset"], calls["judges"], calls["adapter"])
    assert each == (3, 3, 3, 3)
