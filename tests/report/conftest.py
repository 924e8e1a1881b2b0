"""Fixtures of the HTML report tests: the demo's run folders (headless Chromium, ``chromium``, is
in ``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def llava_demo_run():
    """``llava_demo_run(out, score_options, **options)``: the run folder of the tiny random
    LLaVA-NeXT-Video evaluated with ``score_options`` (and ``evaluate``'s ``options``) on every
    config of the demo's synthetic benchmark, both written under ``out``."""
    from foilkit.demo import DEMO_BENCHMARK, write_demo_benchmark
    from foilkit.evaluation import evaluate
    from foilkit.synthetic.models import tiny_model_path

    def run(out: Path, score_options, **options) -> Path:
        benchmark = write_demo_benchmark(out / "benchmark")
        return evaluate(
            DEMO_BENCHMARK,
            str(tiny_model_path("llava-next-video")),
            config="all",
            dataset=benchmark,
            videos=benchmark / "videos",
            out_dir=out / "run",
            score_options=score_options,
            **options,
        ).run_dir

    return run


@pytest.fixture(scope="session")
def choice_run(tmp_path_factory: pytest.TempPathFactory, llava_demo_run):
    """A tiny LLaVA-NeXT-Video in choice mode on the demo's synthetic benchmark: a run folder
    whose scores hold each option order's letter probabilities and whose run.json holds the
    rendered prompt's template (the random model's scores sit near 0.5: near ties)."""
    from foilkit.scorers.api import ScoreOptions

    options = ScoreOptions(num_frames=8, mode="choice", progress=False)
    return llava_demo_run(tmp_path_factory.mktemp("choice"), options, n_resamples=50)
