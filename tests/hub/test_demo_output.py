"""Defect 6: ``foilkit demo`` writes only its own progress; not a terminal: one line per phase.

It used to print 62 stderr lines, 16 of them the libraries' progress bars ("Creating parquet
from Arrow format", "Loading weights") that ``--no-progress`` did not silence, and ``[A``
cursor escapes into a file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _run_demo(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "FOILKIT_TINY_MODELS": str(tmp_path / "tiny-models")}  # builds them anew
    argv = [
        sys.executable,
        "-m",
        "foilkit",
        "demo",
        "--out",
        str(tmp_path / "demo"),
        "--models",
        "clip",
        "--n-resamples",
        "20",
        "--no-finetune",
        *extra,
    ]
    done = subprocess.run(argv, check=False, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _demo(tmp_path: Path, *extra: str) -> list[str]:
    return _run_demo(tmp_path, *extra).stderr.splitlines()


def test_not_a_terminal_one_line_per_phase(tmp_path: Path):
    lines = _demo(tmp_path)
    assert lines == [
        "demo: rendering the synthetic benchmark",
        "demo: [1/3] evaluating clip",
        "demo: [2/3] evaluating clip (reversed)",
        "demo: [3/3] evaluating clip (shuffled)",
        "demo: writing the side-by-side report",
    ]


@pytest.fixture(scope="module")
def quiet_demo(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess:
    """``foilkit demo --no-progress`` (with its controls), run once for the tests below."""
    return _run_demo(tmp_path_factory.mktemp("quiet"), "--no-progress")


def test_no_progress_is_silent(quiet_demo: subprocess.CompletedProcess):
    assert quiet_demo.stderr.splitlines() == []


def test_the_demo_prints_its_headline_table(quiet_demo: subprocess.CompletedProcess):
    """Issue 30: the demo used to end with ``report: runs/demo/report.md``; the result it exists
    to show is now in the terminal: a row per run, each model before its controls, and chance."""
    lines = quiet_demo.stdout.splitlines()
    assert lines[0] == "| run | direction (n=16) | order (n=12) | speed (n=8) | all (n=36) | tied |"
    assert [line.split(" | ")[0] for line in lines[2:6]] == [
        "| clip",
        "| clip (reversed)",
        "| clip (shuffled)",
        "| chance",
    ]
    assert lines[5] == "| chance | 50.0 | 50.0 | 50.0 | 50.0 |  |"
    assert lines[-2].startswith("report: ")
