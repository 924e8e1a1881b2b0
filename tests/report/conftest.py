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
