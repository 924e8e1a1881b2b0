"""Test-wide settings (never touch the network, keep caches inside the test session), the
demo run every end-to-end and report test shares, and headless Chromium for the report pages."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
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
#: foilkit's caches (embeddings, the judge's and served models' replies) in a folder of this
#: session, inherited by the commands tests start: a rerun never reads a reply an earlier run
#: cached under $HF_HOME/foilkit. A folder made here is removed at the end (:func:`_session_cache`).
_OWN_CACHE = "FOILKIT_CACHE" not in os.environ
if _OWN_CACHE:
    os.environ["FOILKIT_CACHE"] = tempfile.mkdtemp(prefix="foilkit-test-cache-")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session", autouse=True)
def _session_cache():
    yield
    if _OWN_CACHE:
        shutil.rmtree(os.environ["FOILKIT_CACHE"], ignore_errors=True)


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
