"""Test-wide settings (never touch the network, keep caches inside the test session) and the
demo run every end-to-end and report test shares."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from foilkit.cli import main

for _var in (
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "HF_EVALUATE_OFFLINE",
    "TRANSFORMERS_OFFLINE",
):
    os.environ[_var] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real annotation files; tests using them skip cleanly when ../shared is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data (the published annotation files) is not present")
    return SHARED_DATA


#: Bootstrap resamples in tests: enough for an interval, cheap enough for CI.
N_RESAMPLES = 200


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``foilkit demo`` run once: both tiny models under every temporal control."""
    out = tmp_path_factory.mktemp("demo")
    started = time.perf_counter()
    argv = ["demo", "--out", str(out), "--n-resamples", str(N_RESAMPLES), "--no-progress"]
    assert main(argv) == 0
    (out / "elapsed_seconds.txt").write_text(f"{time.perf_counter() - started:.1f}")
    return out


@pytest.fixture(scope="session")
def n_resamples() -> int:
    return N_RESAMPLES


@pytest.fixture(scope="session")
def answering_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny video LLM that answers multiple-choice questions with letters
    (``tests/answering_model.py``), saved once per session: its folder."""
    from answering_model import letter_answering_model

    return str(letter_answering_model(tmp_path_factory.mktemp("answering") / "model"))
