"""Fixtures of the Hub tests: the demo's runs (both tiny models, no controls: quick)."""

from __future__ import annotations

from pathlib import Path

import pytest

from foilkit.cli import main


@pytest.fixture(scope="session")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``foilkit demo --no-controls --no-finetune`` run once (the two tiny models); returns the
    folder of its run folders."""
    out = tmp_path_factory.mktemp("demo")
    argv = [
        "demo",
        "--out",
        str(out),
        "--n-resamples",
        "100",
        "--no-progress",
        "--no-controls",
        "--no-finetune",
    ]
    assert main(argv) == 0
    return out / "runs"
