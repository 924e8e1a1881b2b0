"""A joined view: two videos played one after the other with black frames between them.

Vinoground's video-score question is asked about one video made of a pair's two videos
(``vinoground_videos_concated``: the first video, two seconds of black, the second), from which
its LLM scripts sample frames as from any file (``eval/llava-onevision.py``:
``np.linspace(0, T - 1, nframes)`` over all ``T`` frames of the joined file). foilkit builds that
video's timeline from the two decoded clips instead of reading a second copy of them:

- the joined video runs at ``rate``, the faster of the two clips' rates (what a concatenation
  writes at); a clip of ``n`` frames at ``fps`` fills ``round(n * rate / fps)`` frames of it
  (its own ``n`` when the rates agree) and the separator ``round(gap_seconds * rate)``;
- the sampling policy picks positions on that timeline as it would in a file of that length;
- a position in a clip shows the clip's frame on screen at that time, one in the separator a
  black frame; where the clips differ in size, each frame is centred on black at the larger
  width and height.

Only the frames the positions need are decoded, in the same pass as the clips' own views
(:func:`layout` says which; the caller decodes them with the rest of each file).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from foilkit.scorers.video.sampling import SamplingPolicy

#: Where a sampled position of a joined view lies.
FIRST, SEPARATOR, SECOND = 0, 1, 2
PARTS = ("first", "separator", "second")


@dataclass(frozen=True)
class JoinedView:
    """Two views (plan view keys) shown in this order, ``gap_seconds`` of black between them."""

    first: str
    second: str
    gap_seconds: float = 2.0

    @property
    def key(self) -> str:
        return f"join({self.first} | {self.gap_seconds:g}s black | {self.second})"


@dataclass(frozen=True)
class Clip:
    """A clip's frames as the joined view takes them: ``first..last`` of its file (inclusive),
    at ``fps``, played backwards when ``reversed``."""

    first: int
    last: int
    fps: float
    reversed: bool = False

    @property
    def num_frames(self) -> int:
        return self.last - self.first + 1


@dataclass(frozen=True)
class JoinedLayout:
    """Where each sampled frame of a joined view comes from.

    ``lengths``: the frames of the first clip, the separator and the second clip on the joined
    timeline; ``positions``: the sampled positions on it; ``parts``: each position's part
    (:data:`FIRST`, :data:`SEPARATOR`, :data:`SECOND`); ``sources``: its frame in its clip's
    file (``-1`` in the separator).
    """

    rate: float
    lengths: tuple[int, int, int]
    positions: np.ndarray
    parts: np.ndarray
    sources: np.ndarray

    def frames_of(self, part: int) -> np.ndarray:
        """The file frames ``part``'s positions show, in the order shown."""
        return self.sources[self.parts == part]

    def sampled(self) -> tuple[int, int, int]:
        """How many sampled frames fall in the first clip, the separator, the second clip."""
        return tuple(int((self.parts == part).sum()) for part in (FIRST, SEPARATOR, SECOND))

    @property
    def timestamps(self) -> np.ndarray:
        """Each sampled frame's time on the joined timeline, in seconds."""
        return self.positions / self.rate


def layout(
    first: Clip, second: Clip, policy: SamplingPolicy, gap_seconds: float, key: str | None = None
) -> JoinedLayout:
    """The joined view of ``first`` then ``second`` (see the module docstring): its timeline and
    the frames ``policy`` samples from it (``key``: the joined view's name, for seeded
    policies)."""
    if not gap_seconds >= 0:
        raise ValueError(f"gap_seconds must be >= 0, got {gap_seconds!r}")
    rate = max(first.fps, second.fps)
    lengths = (
        _length(first, rate),
        int(round(gap_seconds * rate)),
        _length(second, rate),
    )
    positions = policy.indices(0, sum(lengths) - 1, rate, key=key)
    parts = np.full(len(positions), SEPARATOR, dtype=np.int64)
    sources = np.full(len(positions), -1, dtype=np.int64)
    in_first = positions < lengths[0]
    in_second = positions >= lengths[0] + lengths[1]
    parts[in_first], parts[in_second] = FIRST, SECOND
    sources[in_first] = _source(first, positions[in_first], rate)
    sources[in_second] = _source(second, positions[in_second] - lengths[0] - lengths[1], rate)
    return JoinedLayout(rate, lengths, positions, parts, sources)


def _length(clip: Clip, rate: float) -> int:
    return max(1, int(round(clip.num_frames * rate / clip.fps)))


def _source(clip: Clip, offsets: np.ndarray, rate: float) -> np.ndarray:
    """The clip's file frame on screen at each offset (frames of the joined timeline from the
    clip's start)."""
    steps = np.minimum(
        np.floor(offsets * clip.fps / rate + 1e-9).astype(np.int64), clip.num_frames - 1
    )
    return clip.last - steps if clip.reversed else clip.first + steps


def join_frames(first: torch.Tensor, gap: int, second: torch.Tensor) -> torch.Tensor:
    """A joined view's frames (uint8 ``T x C x H x W``): ``first`` (the frames shown of the
    first clip, in order), ``gap`` black frames, ``second``; every frame centred on black at the
    larger size of the two clips. The sampled positions of a joined view run in temporal order,
    so its frames of each part are contiguous."""
    sizes = [frames.shape[1:] for frames in (first, second) if len(frames)]
    if not sizes:  # every sampled position in the separator
        raise ValueError("a joined view needs frames of at least one clip to know its size")
    channels = sizes[0][0]
    height, width = max(size[1] for size in sizes), max(size[2] for size in sizes)
    device = (first if len(first) else second).device
    out = torch.zeros(
        (len(first) + gap + len(second), channels, height, width), dtype=torch.uint8, device=device
    )
    for start, frames in ((0, first), (len(first) + gap, second)):
        top, left = (height - frames.shape[2]) // 2, (width - frames.shape[3]) // 2
        out[
            start : start + len(frames),
            :,
            top : top + frames.shape[2],
            left : left + frames.shape[3],
        ] = frames
    return out


def describe(gap_seconds: float) -> dict[str, object]:
    """How joined views are built, as the run record states it."""
    return {
        "order": "the first video's frames, then the separator, then the second video's",
        "separator": f"{gap_seconds:g} s of black frames at the joined video's rate",
        "rate": "the faster of the two videos' frame rates; a video at another rate is retimed "
        "by showing its frame on screen at each time",
        "size": "the larger width and height of the two videos; a smaller frame is centred on "
        "black",
        "sampling": "the run's sampling policy over the whole joined video, separator included",
    }


def count_range(counts: Sequence[int]) -> list[int] | None:
    """``[min, max]`` of ``counts`` (``None`` when empty), for the run record."""
    return [min(counts), max(counts)] if counts else None


__all__ = [
    "FIRST",
    "PARTS",
    "SECOND",
    "SEPARATOR",
    "Clip",
    "JoinedLayout",
    "JoinedView",
    "describe",
    "join_frames",
    "layout",
]
