"""Fixtures of the HTML report tests: the demo's run folders, headless Chromium."""

from __future__ import annotations

import shutil
import subprocess

import pytest

#: Chromium flags for a headless run on a machine without a display, sandbox or network.
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
)


@pytest.fixture(scope="session")
def chromium(tmp_path_factory: pytest.TempPathFactory):
    """``chromium(url, *flags) -> CompletedProcess``: headless Chromium with a fresh profile; the
    test skips when no Chromium is installed (``./dev.sh test`` installs it as root)."""
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium)")

    def run(url: str, *flags: str) -> subprocess.CompletedProcess:
        profile = tmp_path_factory.mktemp("chromium-profile")
        command = [executable, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *flags, url]
        return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)

    return run


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
