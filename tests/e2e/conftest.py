"""Fixtures of the end-to-end tests: the demo run (timed), a tiny CLIP, a PNG check."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from foilkit.cli import main

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
def clip_model() -> str:
    from foilkit.testing.models import tiny_model_path

    return str(tiny_model_path("clip"))


def _is_png(path: Path) -> bool:
    from PIL import Image

    if path.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
        return False
    with Image.open(path) as image:
        image.verify()
    with Image.open(path) as image:
        return image.format == "PNG" and image.width >= 400 and image.height >= 300


@pytest.fixture(scope="session")
def is_png():
    """``is_png(path)``: a PNG file Pillow can open, of a size a person can read."""
    return _is_png


@pytest.fixture(scope="session")
def n_resamples() -> int:
    return N_RESAMPLES
