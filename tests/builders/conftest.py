"""Fixtures for the builder tests: one datasets cache per session, synthetic videos for real
rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from foilkit.builders import build
from foilkit.synthetic.videos import SyntheticScene, write_video


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("datasets-cache"))


@pytest.fixture(scope="session")
def build_shared(shared_data: Path, cache_dir: str):
    """``build_shared(name, config, **options)``: build from ../shared/data/<name>, text-only by
    default."""

    def _build(name: str, config: str, **options):
        options.setdefault("on_missing", "keep")
        return build(name, config, annotations=shared_data / name, cache_dir=cache_dir, **options)

    return _build


@pytest.fixture(scope="session")
def write_videos():
    """``write_videos(root, video_paths)``: a small synthetic video at each relative path under
    ``root``."""

    def _write(root: Path, video_paths: list[str]) -> None:
        for index, relative in enumerate(video_paths):
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            scene = SyntheticScene(direction=("left", "right", "up", "down")[index % 4])
            # write_video makes H.264 mp4; FFmpeg probes the content, so an mp4 stands in for the
            # .webm files the Something-Something layout names.
            write_video(path.with_suffix(".mp4"), scene, num_frames=12).rename(path)

    return _write
