"""Fixtures of the end-to-end tests: a tiny CLIP, a PNG check (the timed demo run is in
tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def clip_model() -> str:
    from foilkit.synthetic.models import tiny_model_path

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
