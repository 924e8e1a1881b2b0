"""Synthetic H.264 videos whose temporal content is known: for tests, the demo and benchmarks.

Each scene is a solid-colour shape on a plain background. What happens over time (which way
it moves, which of two shapes appears first, how fast it moves) is set by the scene, so a
caption and its temporal foil are true and false by construction.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (220, 30, 30),
    "green": (30, 180, 60),
    "blue": (40, 70, 220),
    "yellow": (230, 210, 40),
    "white": (240, 240, 240),
}
DIRECTIONS = ("left", "right", "up", "down")
BACKGROUND = (20, 20, 20)


@dataclass(frozen=True)
class SyntheticScene:
    """What a synthetic video shows.

    kind:
        ``motion``: a ``colour`` square crosses the frame towards ``direction`` at ``speed``
        (1.0 = the whole width or height over the clip; 0.5 = half of it).
        ``order``: a ``colour`` square appears in the first half, then a ``second_colour``
        square appears in the second half.
    """

    kind: str = "motion"
    colour: str = "red"
    direction: str = "right"
    speed: float = 1.0
    second_colour: str = "blue"

    def __post_init__(self) -> None:
        if self.kind not in ("motion", "order"):
            raise ValueError(f"unknown scene kind {self.kind!r}; choose 'motion' or 'order'")
        if self.direction not in DIRECTIONS:
            raise ValueError(f"unknown direction {self.direction!r}; choose from {DIRECTIONS}")
        for colour in (self.colour, self.second_colour):
            if colour not in COLOURS:
                raise ValueError(f"unknown colour {colour!r}; choose from {sorted(COLOURS)}")
        if not 0 < self.speed <= 1:
            raise ValueError(f"speed must be in (0, 1], got {self.speed}")


def render_frames(
    scene: SyntheticScene, *, width: int = 64, height: int = 48, num_frames: int = 24
) -> np.ndarray:
    """The scene as uint8 frames ``T x H x W x 3``."""
    frames = np.empty((num_frames, height, width, 3), dtype=np.uint8)
    frames[:] = BACKGROUND
    side = max(4, min(width, height) // 4)
    for t in range(num_frames):
        progress = t / max(1, num_frames - 1)
        if scene.kind == "motion":
            _draw_moving(frames[t], scene, progress, side)
        else:
            _draw_order(frames[t], scene, progress, side)
    return frames


def _draw_moving(frame: np.ndarray, scene: SyntheticScene, progress: float, side: int) -> None:
    height, width, _ = frame.shape
    travel = scene.speed * progress
    start = (1 - scene.speed) / 2  # a slower square covers the middle part of the path
    fraction = start + travel
    if scene.direction in ("left", "up"):
        fraction = 1 - fraction
    if scene.direction in ("left", "right"):
        x, y = int(fraction * (width - side)), (height - side) // 2
    else:
        x, y = (width - side) // 2, int(fraction * (height - side))
    frame[y : y + side, x : x + side] = COLOURS[scene.colour]


def _draw_order(frame: np.ndarray, scene: SyntheticScene, progress: float, side: int) -> None:
    height, width, _ = frame.shape
    y = (height - side) // 2
    if progress >= 0.2:
        frame[y : y + side, width // 4 - side // 2 : width // 4 + side - side // 2] = COLOURS[
            scene.colour
        ]
    if progress >= 0.6:
        x = 3 * width // 4 - side // 2
        frame[y : y + side, x : x + side] = COLOURS[scene.second_colour]


def write_video(
    path: str | Path,
    scene: SyntheticScene | None = None,
    *,
    width: int = 64,
    height: int = 48,
    num_frames: int = 24,
    fps: int = 8,
    rotation: int | None = None,
) -> Path:
    """Render ``scene`` and encode it as an H.264 mp4 (yuv420p) with PyAV; ``rotation``: a
    display matrix telling players to turn the frames (stored as rendered) that many degrees
    counter-clockwise, as phones store portrait video: decoders that honour it return
    ``height`` x ``width`` frames at 90 or 270 degrees."""
    frames = render_frames(
        scene or SyntheticScene(), width=width, height=height, num_frames=num_frames
    )
    return _encode(path, frames, fps=fps, rotation=rotation)


def _encode(
    path: str | Path,
    frames: np.ndarray,
    *,
    fps: int = 8,
    pts: list[int] | None = None,
    rotation: int | None = None,
) -> Path:
    """Encode ``T x H x W x 3`` frames as an H.264 mp4 (yuv420p) with PyAV: at ``fps``, or at
    explicit ``pts`` in milliseconds; with a display ``rotation`` in degrees if given."""
    from fractions import Fraction

    import av

    height, width = frames.shape[1:3]
    options = {"crf": "18", "preset": "ultrafast", "tune": "zerolatency"}
    with _h264(path, width, height, fps, options) as (container, stream):
        if pts is not None:
            stream.codec_context.time_base = Fraction(1, 1000)
        if rotation is not None:
            if not hasattr(stream, "set_display_rotation"):
                raise RuntimeError(
                    f"writing a rotated video needs PyAV >= 18 (found {av.__version__}): "
                    "pip install 'av>=18'"
                )
            stream.set_display_rotation(rotation)
        for index, array in enumerate(frames):
            frame = av.VideoFrame.from_ndarray(array, format="rgb24")
            if pts is not None:
                frame.pts, frame.time_base = pts[index], Fraction(1, 1000)
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    return Path(path)


@contextlib.contextmanager
def _h264(
    path: str | Path, width: int, height: int, fps: int, options: dict[str, str]
) -> Iterator[tuple[Any, Any]]:
    """A new mp4 at ``path`` (its folder made) and its H.264 stream of ``width`` x ``height``
    yuv420p frames at ``fps``, encoded with ``options``: ``(container, stream)``."""
    import av

    if width % 2 or height % 2:
        raise ValueError(f"H.264 yuv420p needs even sizes, got {width}x{height}")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.options = options
        yield container, stream
