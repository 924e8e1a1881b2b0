"""Fixtures of the HTML report tests: the demo's run folders (headless Chromium, ``chromium``, is
in ``tests/conftest.py``)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def choice_run(tmp_path_factory: pytest.TempPathFactory):
    """A tiny LLaVA-NeXT-Video in choice mode on the demo's synthetic benchmark: a run folder
    whose scores hold each option order's letter probabilities and whose run.json holds the
    rendered prompt's template (the random model's scores sit near 0.5: near ties)."""
    from foilkit.demo import DEMO_BENCHMARK, write_demo_benchmark
    from foilkit.evaluation import evaluate
    from foilkit.scorers.api import ScoreOptions
    from foilkit.synthetic.models import tiny_model_path

    out = tmp_path_factory.mktemp("choice")
    benchmark = write_demo_benchmark(out / "benchmark")
    return evaluate(
        DEMO_BENCHMARK,
        str(tiny_model_path("llava-next-video")),
        config="all",
        dataset=benchmark,
        videos=benchmark / "videos",
        out_dir=out / "run",
        n_resamples=50,
        score_options=ScoreOptions(num_frames=8, mode="choice", progress=False),
    ).run_dir
