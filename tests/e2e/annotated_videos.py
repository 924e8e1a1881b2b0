"""What the end-to-end tests on real annotation rows share: which of a benchmark's videos to
render (those whose rows' windows end earliest) and the synthetic mp4s standing in for them,
named after the rows' videos, so a builder finds them under its video root.

A helper module, not a test module: ``test_evaluate_benchmarks.py``, ``test_evaluate_tasks.py``
and ``test_video_text_encoders_e2e.py`` import it (as ``tests/scorers/conformance.py`` serves the
conformance tests), so no test module imports another.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from foilkit.builders import build
from foilkit.synthetic.videos import SyntheticScene, write_video


def render_rows(
    name: str, config: str, count: int, root: Path, annotations: Path, cache: str
) -> list[str]:
    """Render under ``root`` the ``count`` videos of each split of benchmark ``name``'s
    ``config`` (built text-only from the files under ``annotations / name``, in ``cache``) whose
    rows' windows end earliest; their paths."""
    text_only = build(
        name, config, annotations=annotations / name, cache_dir=cache, on_missing="keep"
    )
    durations = {
        path: seconds
        for split in text_only.values()
        for path, seconds in shortest_windows(split, count).items()
    }
    render_videos(root, durations)
    return list(durations)


def shortest_windows(rows: Mapping[str, Any], count: int) -> dict[str, float]:
    """The ``count`` videos whose rows' windows end earliest -> the seconds the video must last.

    ``rows``: a built split (or any mapping with ``video_path`` and ``end`` columns)."""
    ends: dict[str, float] = {}
    for path, end in zip(rows["video_path"], rows["end"], strict=True):
        ends[path] = max(ends.get(path, 0.0), end or 0.0)
    return dict(sorted(ends.items(), key=lambda item: item[1])[:count])


def render_videos(root: Path, durations: Mapping[str, float], fps: int = 4) -> None:
    """A synthetic video at ``root / relative`` for each ``relative`` path, lasting its seconds
    (plus one, at least 12 frames), each moving its own way."""
    for index, (relative, seconds) in enumerate(durations.items()):
        path = root / relative
        scene = SyntheticScene(direction=("left", "right", "up", "down")[index % 4])
        # FFmpeg probes the content, so an mp4 stands in for other containers (.webm, .avi).
        frames = max(12, int(fps * (seconds + 1)))
        write_video(path.with_suffix(".mp4"), scene, num_frames=frames, fps=fps).rename(path)
