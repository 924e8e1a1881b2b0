"""Videos with faults, for the tests of how decoding refuses or reads them: a file that is no
container, a container with no frames, an image under a video's name, huge frames, a variable
frame rate. Built on :mod:`foilkit.synthetic.videos`, which the demo and benchmarks use too."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from foilkit.synthetic.videos import SyntheticScene, _encode, _h264, render_frames


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
