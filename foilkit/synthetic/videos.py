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


def write_corrupt_video(path: str | Path) -> Path:
    """A file named like a video whose bytes are not a container."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 8)
    return path


def write_empty_video(path: str | Path, *, width: int = 64, height: int = 48, fps: int = 8) -> Path:
    """A well-formed mp4 that holds no video frames (the muxer writes an empty container)."""
    import av

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        container.start_encoding()
    return path


def write_image_as_video(path: str | Path, *, width: int = 64, height: int = 48) -> Path:
    """A PNG image saved under a video's name (``clip.mp4``): FFmpeg opens it as a stream of
    one frame, which a temporal benchmark must refuse rather than score as a still video."""
    from PIL import Image

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = render_frames(SyntheticScene(), width=width, height=height, num_frames=1)[0]
    Image.fromarray(frame).save(path, format="PNG")
    return path


def write_large_video(
    path: str | Path, *, width: int = 8192, height: int = 8192, num_frames: int = 2, fps: int = 8
) -> Path:
    """An H.264 mp4 of huge flat frames (a few hundred KB at 8192 x 8192), written one frame at
    a time: a small file whose decoded frames take hundreds of MB each, for tests of the
    decoding memory bound."""
    import av

    with _h264(path, width, height, fps, {"preset": "ultrafast"}) as (container, stream):
        for index in range(num_frames):  # Y rows, then the U and V planes: yuv420p's layout
            planes = np.full((height * 3 // 2, width), 128, dtype=np.uint8)
            planes[:height] = 40 + (160 * index) // max(1, num_frames - 1)
            container.mux(stream.encode(av.VideoFrame.from_ndarray(planes, format="yuv420p")))
        container.mux(stream.encode())
    return Path(path)


def write_vfr_video(
    path: str | Path,
    frame_times: list[float],
    scene: SyntheticScene | None = None,
    *,
    width: int = 64,
    height: int = 48,
) -> Path:
    """A variable-frame-rate H.264 mp4: frame ``i`` of ``scene`` presented at ``frame_times[i]``.

    Times are seconds, increasing, stored in milliseconds; with uneven gaps a window maps to
    different frames through the timestamps than through the average rate, which is what
    tests of variable-rate handling need.
    """
    ticks = [round(time * 1000) for time in frame_times]
    if not ticks or ticks[0] < 0 or np.any(np.diff(ticks) <= 0):
        raise ValueError(
            f"frame_times must increase from >= 0 in steps of at least 1 ms, got {frame_times}"
        )
    frames = render_frames(
        scene or SyntheticScene(), width=width, height=height, num_frames=len(ticks)
    )
    return _encode(path, frames, pts=ticks)


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
