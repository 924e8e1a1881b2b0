"""Resolve once, run once: a scoring call checks its inputs once, loads its dataset once and
makes its served backend and its judge once (:func:`foilkit.scorers.api.check_inputs` resolves
them into the job the runner takes), counted by wrapping each."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

import foilkit
from tests.openai_server import OpenAICompatibleServer


@pytest.fixture
def calls(monkeypatch) -> Counter:
    """How often the inputs were checked, a dataset loaded, a served backend, a judge and an
    adapter made: each wrapped to count its calls, then run as before."""
    import foilkit.scorers.api as api
    import foilkit.scorers.job as job
    from foilkit.scorers.judge import Judge
    from foilkit.scorers.served import ServerBackend

    counted: Counter = Counter()

    def counting(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counted[name] += 1
            return function(*args, **kwargs)

        return wrapper

    wrapped = [
        ("checks", api, "check_inputs"),
        ("dataset", api, "load_scoring_dataset"),
        ("server", ServerBackend, "__post_init__"),
        ("judge", Judge, "__init__"),
        ("adapter", job.ScoringJob, "load_adapter"),
    ]
    for name, owner, attribute in wrapped:
        monkeypatch.setattr(owner, attribute, counting(name, getattr(owner, attribute)))
    return counted


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
    assert (calls["checks"], calls["dataset"], calls["adapter"]) == (1, 1, 1)
    assert (calls["server"], calls["judge"]) == (1 + judges, judges)


def test_a_local_score_matrix_checks_and_loads_once(calls, saved_benchmark, tiny_model, tmp_path):
    matrix = foilkit.score_matrix(
        tiny_model("clip"), str(saved_benchmark), num_workers=0, progress=False, use_cache=False
    )
    assert matrix.scores.shape == (9, 9)
    assert (calls["checks"], calls["dataset"], calls["adapter"]) == (1, 1, 1)
    assert (calls["server"], calls["judge"]) == (0, 0)
