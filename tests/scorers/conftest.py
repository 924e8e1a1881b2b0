"""Shared fixtures of the scorer tests: synthetic benchmarks in the canonical schema, tiny
models."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

from foilkit.synthetic.videos import SyntheticScene, write_video
from tests.fault_videos import write_corrupt_video

OPPOSITE = {"left": "right", "right": "left", "up": "down", "down": "up"}
DIRECTIONS = ("left", "right", "up", "down")
COLOURS = ("red", "green", "blue", "yellow")


def benchmark_rows(video_dir: Path) -> list[dict]:
    """A synthetic benchmark in the canonical schema, one motion video per direction.

    Per video: a VITATECS-style row (caption = the true direction, foil = the opposite),
    with ViLMA-style proficiency texts (the colour), and its RTime-style reversed row
    (the reversed view's caption is the opposite direction). Video 0 also has a windowed row.
    """
    rows = []
    for index, (direction, colour) in enumerate(zip(DIRECTIONS, COLOURS)):
        path = write_video(
            video_dir / f"motion_{direction}.mp4",
            SyntheticScene(colour=colour, direction=direction),
        )
        true, false = (
            f"a {colour} square moves {direction}",
            f"a {colour} square moves {OPPOSITE[direction]}",
        )
        common = {
            "video": str(path),
            "start": None,
            "end": None,
            "aspect": "direction",
            "source_id": f"s{index}",
            "proficiency_caption": f"a {colour} square",
            "proficiency_foils": [f"a {COLOURS[index - 1]} square"],
        }
        rows.append(
            {
                **common,
                "id": f"{direction}-forward",
                "caption": true,
                "foils": [false],
                "reversed": False,
                "direction": "forward",
            }
        )
        rows.append(
            {
                **common,
                "id": f"{direction}-reverse",
                "caption": false,
                "foils": [true],
                "reversed": True,
                "direction": "reverse",
            }
        )
    rows.append({**rows[0], "id": "left-window", "start": 0.5, "end": 2.5, "direction": "forward"})
    return rows


def broken_rows(video_dir: Path) -> list[dict]:
    """A corrupt file and a path that does not exist."""
    corrupt = write_corrupt_video(video_dir / "corrupt.mp4")
    base = {
        "start": None,
        "end": None,
        "reversed": False,
        "aspect": "direction",
        "source_id": "bad",
        "direction": "forward",
        "proficiency_caption": None,
        "proficiency_foils": None,
    }
    return [
        {
            **base,
            "id": "corrupt",
            "video": str(corrupt),
            "caption": "a red square moves left",
            "foils": ["a red square moves right"],
        },
        {
            **base,
            "id": "missing",
            "video": str(video_dir / "missing.mp4"),
            "caption": "a red square moves up",
            "foils": ["a red square moves down"],
        },
    ]


def as_dataset(rows: list[dict]):
    import datasets

    return datasets.Dataset.from_list(rows).cast_column("video", datasets.Video())


@pytest.fixture(scope="session")
def video_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("videos")


@pytest.fixture(scope="session")
def benchmark(video_dir):
    """The synthetic benchmark (9 rows over 4 videos) as a ``datasets.Dataset`` with a ``Video``
    column."""
    return as_dataset(benchmark_rows(video_dir))


@pytest.fixture(scope="session")
def benchmark_in():
    """``benchmark_in(folder)``: the synthetic benchmark with its videos written to ``folder``."""
    return lambda folder: as_dataset(benchmark_rows(folder))


@pytest.fixture(scope="session")
def benchmark_with_broken(video_dir):
    """The benchmark plus a corrupt and a missing video."""
    return as_dataset(benchmark_rows(video_dir) + broken_rows(video_dir))


@pytest.fixture(scope="session")
def saved_benchmark(benchmark, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("dataset") / "benchmark"
    benchmark.save_to_disk(str(path))
    return path


@pytest.fixture(scope="session")
def tiny_model():
    """``tiny_model(name) -> path`` of a tiny random model saved with its processor."""
    from foilkit.synthetic.models import tiny_model_path

    return lambda name: str(tiny_model_path(name))


@pytest.fixture
def cache_dir(tmp_path) -> str:
    return str(tmp_path / "cache")


@pytest.fixture(scope="module")
def frames():
    """A view's 8 frames (T x C x H x W, uint8) of a red square moving left."""
    from conformance import render_view

    return render_view()


@pytest.fixture
def killed_at_the_third_batch():
    """``with killed_at_the_third_batch(): foilkit.score(...)``: the run in the block is killed
    (``KeyboardInterrupt``) as it goes to write its third batch of rows, as a user's Ctrl-C would
    kill it; it must be killed, and runs after the block write as usual."""
    from foilkit.scorers.engine import Engine

    @contextmanager
    def killing():
        real_flush, calls = Engine._flush, []

        def dies_on_the_third_batch(self, buffer, bar):
            calls.append(len(buffer))
            if len(calls) == 3:
                raise KeyboardInterrupt("killed")
            return real_flush(self, buffer, bar)

        with pytest.MonkeyPatch.context() as patched, pytest.raises(KeyboardInterrupt):
            patched.setattr(Engine, "_flush", dies_on_the_third_batch)
            yield

    return killing
