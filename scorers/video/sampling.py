"""Frame sampling policies: which frame indices of a window a model sees.

Peers disagree on this (linspace with both ends in VITATECS and lmms-eval, segment middles in
TSN-style code, consecutive strided clips in X-CLIP, a fixed rate in Qwen-VL), so the policy
is named and recorded with every result. All policies are deterministic.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

SamplerFn = Callable[["SamplingPolicy", int, int, float], np.ndarray]
SAMPLERS: dict[str, SamplerFn] = {}


def register_sampler(name: str) -> Callable[[SamplerFn], SamplerFn]:
    def decorator(fn: SamplerFn) -> SamplerFn:
        SAMPLERS[name] = fn
        return fn

    return decorator


@dataclass(frozen=True)
class SamplingPolicy:
    """How to pick frames from a window ``[first, last]`` of frame indices (both inclusive).

    Args:
        name: one of ``SAMPLERS`` (``uniform``, ``segment-middle``, ``consecutive``, ``fps``).
        num_frames: frames per view (for ``fps``: ignored in favour of ``max_frames``).
        stride: frame step of ``consecutive``.
        target_fps: sampling rate of ``fps``.
        max_frames: cap of ``fps``; longer windows are thinned uniformly to the cap.
    """

    name: str = "uniform"
    num_frames: int = 8
    stride: int = 1
    target_fps: float | None = None
    max_frames: int | None = None

    def __post_init__(self) -> None:
        if self.name not in SAMPLERS:
            raise ValueError(f"unknown sampling policy {self.name!r}; choose from {sorted(SAMPLERS)}")
        if self.num_frames < 1:
            raise ValueError(f"num_frames must be >= 1, got {self.num_frames}")
        if self.stride < 1:
            raise ValueError(f"stride must be >= 1, got {self.stride}")
        if self.name == "fps" and (self.target_fps is None or self.target_fps <= 0):
            raise ValueError(f"the 'fps' policy needs a positive target_fps, got {self.target_fps}")

    def indices(self, first: int, last: int, fps: float) -> np.ndarray:
        """Frame indices (int64, in temporal order, repeats allowed) for frames ``first..last``."""
        if last < first:
            raise ValueError(f"empty frame range [{first}, {last}]")
        return SAMPLERS[self.name](self, first, last, fps).astype(np.int64)

    def to_record(self) -> dict:
        """A JSON-serialisable description, stored with every result."""
        return {key: value for key, value in asdict(self).items() if value is not None}


@register_sampler("uniform")
def _uniform(policy: SamplingPolicy, first: int, last: int, fps: float) -> np.ndarray:
    # np.linspace over both ends, truncated to int: the lmms-eval / VITATECS convention.
    return np.linspace(first, last, policy.num_frames, dtype=np.int64)


@register_sampler("segment-middle")
def _segment_middle(policy: SamplingPolicy, first: int, last: int, fps: float) -> np.ndarray:
    # TSN test-time sampling: the middle frame of num_frames equal segments.
    length = last - first + 1
    middles = (np.arange(policy.num_frames) + 0.5) * length / policy.num_frames
    return first + np.floor(middles).astype(np.int64)


@register_sampler("consecutive")
def _consecutive(policy: SamplingPolicy, first: int, last: int, fps: float) -> np.ndarray:
    # X-CLIP style: one clip of num_frames frames at a fixed stride, centred in the window.
    span = (policy.num_frames - 1) * policy.stride
    start = int(round((first + last - span) / 2))
    return np.clip(start + policy.stride * np.arange(policy.num_frames), first, last)


@register_sampler("fps")
def _fixed_rate(policy: SamplingPolicy, first: int, last: int, fps: float) -> np.ndarray:
    # Frames at target_fps from the window start (Qwen-VL style), thinned uniformly to the cap.
    step = fps / policy.target_fps
    positions = np.floor(np.arange(first, last + 1, step)).astype(np.int64)
    cap = policy.max_frames
    if cap is not None and len(positions) > cap:
        positions = positions[np.linspace(0, len(positions) - 1, cap, dtype=np.int64)]
    return positions
