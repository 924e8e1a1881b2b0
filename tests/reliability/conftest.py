"""Fixtures of the fault-injection tests: real mp4s, a tiny model, annotation folders."""

from __future__ import annotations

from pathlib import Path

import pytest
from upstream_formats import Annotations

from foilkit.synthetic.videos import SyntheticScene, write_video


@pytest.fixture
def annotations(tmp_path) -> Annotations:
    return Annotations(tmp_path / "annotations")


@pytest.fixture(scope="session")
def motion_videos(tmp_path_factory) -> dict[str, Path]:
    """Two real mp4s (a square moving left, one moving right) in a session folder."""
    folder = tmp_path_factory.mktemp("motion")
    return {
        direction: write_video(folder / f"{direction}.mp4", SyntheticScene(direction=direction))
        for direction in ("left", "right")
    }


@pytest.fixture(scope="session")
def tiny_clip() -> str:
    """Path of a tiny random CLIP dual encoder saved with its processor."""
    from foilkit.synthetic.models import tiny_model_path

    return str(tiny_model_path("clip"))


@pytest.fixture(scope="session")
def scoring_dataset():
    """``scoring_dataset(rows)``: rows (``id``, ``video``, ``caption``, optional window) in the
    canonical schema as a ``datasets.Dataset`` with a ``Video`` column."""
    import datasets

    def make(rows: list[dict]):
        canonical = [
            {"start": None, "end": None, "reversed": False, "foils": ["a square moves up"], **row}
            for row in rows
        ]
        return datasets.Dataset.from_list(canonical).cast_column("video", datasets.Video())

    return make
