"""Frame sampling policies: which frame indices of a window a model sees.

Each paper's own evaluation code picks frames its own way, so the policy is named and
recorded with every result:

``uniform``
    ``np.linspace`` over the window with both ends, truncated: lmms-eval's video loaders
    (``lmms_eval/models/model_utils/load_video.py`` and most video-LLM wrappers).
``segment-middle``
    the middle frame of equal segments: TSN-style test-time sampling.
``consecutive``
    one strided clip centred in the window: X-CLIP-style.
``fps``
    a fixed rate from the window start at the real frame rate, thinned uniformly to a cap
    (Qwen-VL style); never more than one position per real frame of the window.
``int-fps``
    VITATECS' CLIP4Clip / X-CLIP evaluation (``X-CLIP/dataloaders/rawvideo_util.py``,
    ``RawVideoExtractorDecord.video_to_tensor``; cap from ``dataloader_vitatecs.py``): the
    first frames of every second, where a "second" is ``int(fps)`` frames, thinned by linspace
    to ``max_frames``.
``segment-start``
    LAVIS ``load_video(sampling="uniform")``, which VITATECS' ALPRO evaluation runs: the first
    frame of ``num_frames`` equal segments, ``floor(k * length / num_frames)``.
``segment-step``
    salesforce/BLIP's video loader (``data/video_dataset.py``,
    ``np.arange(0, vlen, vlen / num_frames, dtype=int)``): numpy's integer ``arange`` steps by
    ``floor(length / num_frames)``, so frame ``k`` is ``k * floor(length / num_frames)`` (at 300
    frames and 8: 0, 37, 74, ..., 259, where ``segment-start`` ends at 262).
``qwen-vl-utils``
    the Qwen-VL model cards' preprocessing (qwen-vl-utils 0.0.14 ``smart_nframes`` and
    ``fetch_video``): ``target_fps`` frames a second (2 when unset) of the window, at least 4,
    at most ``max_frames`` (768) and the window's frames, floored to an even count (two frames
    a temporal patch), at ``linspace(first, last, n)`` rounded.
``random-consecutive``
    ViLMA (``vl_bench/data.py``, ``Dataset_v2`` + ``sample_frame_indices``): ``num_frames``
    consecutive frames of a video re-encoded at ``normalized_fps``, ending at a random point.
    Its draw is seeded per view, so it is reproducible.

Every policy is a deterministic function of the window, the frame rate and (for
``random-consecutive``) the policy's seed and the view's key.

``fps`` and ``int-fps`` take a count of frames that grows with the window and with the frame
rate the container declares, which a small file can set to anything. Without ``max_frames``
they hold to a frame budget (:data:`FRAME_BUDGET`, recorded as the policy's ``frame_budget``):
a view that would take more frames is a row error naming the count and the fix, never an
allocation that ends the run.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

SamplerFn = Callable[["SamplingPolicy", int, int, float, "str | None"], np.ndarray]
SAMPLERS: dict[str, SamplerFn] = {}
#: Policies whose indices depend on a seed (the others ignore it, and do not record one).
SEEDED_POLICIES = ("random-consecutive",)

#: The most frames ``fps`` and ``int-fps`` take from one view when no ``max_frames`` thins them
#: (qwen-vl-utils' own cap, ``QWEN_VL_UTILS_FRAMES["max_frames"]``): a view past it fails with
#: the fix (``--max-frames N``) instead of decoding thousands of frames.
FRAME_BUDGET = 768
#: The policies whose frame count follows the window's length and rate, not ``num_frames``.
RATE_POLICIES = ("fps", "int-fps")

# Window bounds in seconds are recovered from frame indices in float; this absorbs the rounding
# (the same tolerance ``decoding.window_frames`` uses).
_EPS = 1e-6


def register_sampler(name: str) -> Callable[[SamplerFn], SamplerFn]:
    def decorator(fn: SamplerFn) -> SamplerFn:
        SAMPLERS[name] = fn
        return fn

    return decorator


@dataclass(frozen=True)
class SamplingPolicy:
    """How to pick frames from a window ``[first, last]`` of frame indices (both inclusive).

    Args:
        name: one of ``SAMPLERS`` (see the module docstring).
        num_frames: frames per view (``fps`` and ``int-fps`` ignore it in favour of
            ``max_frames``; ``segment-start`` takes fewer from a window with fewer frames).
        stride: frame step of ``consecutive`` (``random-consecutive`` takes only 1, ViLMA's
            ``frame_sample_rate``).
        target_fps: sampling rate of ``fps`` and ``int-fps`` (a whole number for ``int-fps``,
            like the reference's ``--feature_framerate``).
        max_frames: cap of ``fps`` and ``int-fps``; longer windows are thinned by linspace.
        normalized_fps: the rate ``random-consecutive`` counts frames at, as if the video had
            been re-encoded with FFmpeg's ``fps`` filter (ViLMA's ``bin/normalize_fps``: 30);
            ``None`` counts the video's own frames.
        seed: seed of ``random-consecutive``'s draws (0 when not given).
        frame_budget: the most frames a view may take; more is an error of that view (a
            ``ValueError``; ``decode_views`` returns it as the view's ``SamplingError``). The
            rate policies without ``max_frames`` default to :data:`FRAME_BUDGET`; ``None``
            elsewhere (their count is ``num_frames``).
    """

    name: str = "uniform"
    num_frames: int = 8
    stride: int = 1
    target_fps: float | None = None
    max_frames: int | None = None
    normalized_fps: float | None = None
    seed: int | None = None
    frame_budget: int | None = None

    def __post_init__(self) -> None:
        if self.name not in SAMPLERS:
            raise ValueError(
                f"unknown sampling policy {self.name!r}; choose from {sorted(SAMPLERS)}"
            )
        for name in ("num_frames", "stride", "max_frames", "frame_budget"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be >= 1, got {value}")
        if self.name in RATE_POLICIES and self.max_frames is None and self.frame_budget is None:
            object.__setattr__(self, "frame_budget", FRAME_BUDGET)  # recorded with the run
        if self.name in ("fps", "int-fps") and (self.target_fps is None or self.target_fps <= 0):
            raise ValueError(
                f"the {self.name!r} policy needs a positive target_fps, got {self.target_fps}"
            )
        if self.name == "qwen-vl-utils" and self.target_fps is not None and self.target_fps <= 0:
            raise ValueError(
                f"the 'qwen-vl-utils' policy needs a positive target_fps, got {self.target_fps}"
            )
        if self.name == "int-fps" and self.target_fps != int(self.target_fps):
            raise ValueError(
                "the 'int-fps' policy samples a whole number of frames a second, got "
                f"{self.target_fps}"
            )
        if self.normalized_fps is not None and not self.normalized_fps > 0:
            raise ValueError(f"normalized_fps must be positive, got {self.normalized_fps}")
        if self.seed is not None and (not isinstance(self.seed, int) or self.seed < 0):
            raise ValueError(f"seed must be an integer >= 0, got {self.seed!r}")
        if self.name == "random-consecutive":
            if self.stride != 1:
                raise ValueError(
                    "the 'random-consecutive' policy takes consecutive frames (its reference's "
                    f"frame_sample_rate=1), got stride={self.stride}"
                )
            if self.seed is None:
                object.__setattr__(self, "seed", 0)  # recorded, so a run says which draws it saw

    def indices(self, first: int, last: int, fps: float, *, key: str | None = None) -> np.ndarray:
        """Frame indices (int64, in temporal order, repeats allowed) for frames ``first..last``.

        ``key`` names the view stably (same video and window, whatever the direction); the
        seeded policy ``random-consecutive`` needs it so that each view gets its own draw.
        """
        if last < first:
            raise ValueError(f"empty frame range [{first}, {last}]")
        indices = SAMPLERS[self.name](self, first, last, fps, key).astype(np.int64)
        if self.frame_budget is not None and len(indices) > self.frame_budget:
            raise ValueError(
                f"the {self.name!r} policy would take {len(indices):,} frames of this window "
                f"({last - first + 1:,} frames at {fps:g} fps), over the budget of "
                f"{self.frame_budget:,} frames a view: pass --max-frames N to thin a longer "
                "view to N frames (max_frames= in Python), or a lower --target-fps"
            )
        return indices

    def to_record(self) -> dict:
        """A JSON-serialisable description, stored with every result."""
        return {key: value for key, value in asdict(self).items() if value is not None}


@register_sampler("uniform")
def _uniform(
    policy: SamplingPolicy, first: int, last: int, fps: float, key: str | None
) -> np.ndarray:
    # np.linspace over both ends, truncated to int: the lmms-eval convention.
    return np.linspace(first, last, policy.num_frames, dtype=np.int64)


@register_sampler("segment-middle")
def _segment_middle(
    policy: SamplingPolicy, first: int, last: int, fps: float, key: str | None
) -> np.ndarray:
    # TSN test-time sampling: the middle frame of num_frames equal segments.
    length = last - first + 1
    middles = (np.arange(policy.num_frames) + 0.5) * length / policy.num_frames
    return first + np.floor(middles).astype(np.int64)


@register_sampler("consecutive")
def _consecutive(
    policy: SamplingPolicy, first: int, last: int, fps: float, key: str | None
) -> np.ndarray:
    # X-CLIP style: one clip of num_frames frames at a fixed stride, centred in the window.
    span = (policy.num_frames - 1) * policy.stride
    start = int(round((first + last - span) / 2))
    return np.clip(start + policy.stride * np.arange(policy.num_frames), first, last)


@register_sampler("fps")
def _fixed_rate(
    policy: SamplingPolicy, first: int, last: int, fps: float, key: str | None
) -> np.ndarray:
    """Frames at ``target_fps`` from the window start (Qwen-VL style), thinned uniformly to
    ``max_frames``. Positions are real frames, each taken at most once: where ``target_fps``
    exceeds the video's rate (or a container declares a rate far below its frames', placing a
    few frames hours apart) the window's every frame is taken once, rather than frames repeated
    along the declared timeline (a 3 KB file would otherwise ask for millions)."""
    step = max(1.0, fps / policy.target_fps)
    positions = np.floor(np.arange(first, last + 1, step)).astype(np.int64)
    return _thin(positions, policy.max_frames)


def _thin(positions: np.ndarray, cap: int | None) -> np.ndarray:
    """At most ``cap`` of ``positions``, by linspace over both ends (CLIP4Clip's
    slice_framepos=2)."""
    if cap is not None and len(positions) > cap:
        positions = positions[np.linspace(0, len(positions) - 1, cap, dtype=np.int64)]
    return positions


@register_sampler("int-fps")
def _int_fps(
    policy: SamplingPolicy, first: int, last: int, fps: float, key: str | None
) -> np.ndarray:
    """VITATECS' CLIP4Clip / X-CLIP frames: a "second" is ``int(fps)`` frames, not ``fps``.

    Within each such second the frames at offsets ``0, step, 2*step, ...`` (``target_fps`` of
    them, ``step = int(fps) // target_fps``) are taken, up to the window's end; the window is
    treated as the reference treats a whole video. At 29.97 fps every "second" is 29 frames,
    so the n-th sampled frame drifts n frames ahead of the n-th real second.
    """
    frames_per_second = int(fps)
    per_second = int(policy.target_fps)
    if frames_per_second < 1:
        raise ValueError(f"the 'int-fps' policy needs a frame rate of at least 1, got fps={fps}")
    if per_second > frames_per_second:
        raise ValueError(
            f"the 'int-fps' policy cannot take {per_second} frames a second from a {fps} fps video "
            f"(the reference asserts this)"
        )
    offsets = np.arange(per_second) * max(1, frames_per_second // per_second)
    seconds = np.arange((last - first) // frames_per_second + 1)
    positions = (seconds[:, None] * frames_per_second + offsets[None, :]).ravel()
    return _thin(first + positions[positions <= last - first], policy.max_frames)


@register_sampler("segment-start")
def _segment_start(
    policy: SamplingPolicy, first: int, last: int, fps: float, key: str | None
) -> np.ndarray:
    """LAVIS' uniform sampling: the first frame of ``n = min(num_frames, length)`` equal segments.

    foilkit computes ``floor(k * length / n)`` in integers. LAVIS computes
    ``np.arange(0, length, length / n).astype(int)`` in float64, which is the same for the
    frame counts the references use (n = 3, 4, 5, 6, 8, 10, 12, 16, 32: checked for every
    length below 20000) but for some other n shifts a start by one frame or yields n + 1
    starts, the last one possibly past the end (e.g. ``length=17, n=7``).
    """
    length = last - first + 1
    count = min(policy.num_frames, length)
    return first + np.arange(count) * length // count


@register_sampler("segment-step")
def _segment_step(
    policy: SamplingPolicy, first: int, last: int, fps: float, key: str | None
) -> np.ndarray:
    """BLIP's video frames: ``np.arange(0, length, length / n, dtype=int)`` as BLIP writes it.

    numpy's integer ``arange`` casts the first two values and steps by their difference, so
    the frames are ``k * floor(length / n)``, ``k < n``: the clip ends up to ``n - 1`` frames
    short of the window's end, and a window shorter than ``n`` frames repeats its first frame
    ``n`` times (step 0), as BLIP does. The expression is numpy's own, so the count matches
    BLIP's for every ``n``.
    """
    length = last - first + 1
    return first + np.arange(0, length, length / policy.num_frames, dtype=np.int64)


#: qwen-vl-utils 0.0.14's frame-count constants: FPS, FPS_MIN_FRAMES, FPS_MAX_FRAMES, FRAME_FACTOR
QWEN_VL_UTILS_FRAMES = {"fps": 2.0, "min_frames": 4, "max_frames": 768, "frame_factor": 2}


def qwen_vl_utils_count(
    total_frames: int, video_fps: float, fps: float | None = None, max_frames: int | None = None
) -> int:
    """How many frames qwen-vl-utils' ``smart_nframes`` takes from ``total_frames`` frames at
    ``video_fps``: ``fps`` a second, within ``[min_frames, min(max_frames, total_frames)]``,
    floored to a multiple of ``frame_factor`` (:data:`QWEN_VL_UTILS_FRAMES`)."""
    rule = QWEN_VL_UTILS_FRAMES
    factor = rule["frame_factor"]
    fps = rule["fps"] if fps is None else fps
    low = math.ceil(rule["min_frames"] / factor) * factor
    cap = max_frames if max_frames is not None else min(rule["max_frames"], total_frames)
    high = math.floor(cap / factor) * factor
    wanted = total_frames / video_fps * fps
    count = math.floor(min(max(wanted, low), high, total_frames) / factor) * factor
    if not factor <= count <= total_frames:
        raise ValueError(
            f"the 'qwen-vl-utils' policy takes between {factor} and the window's {total_frames} "
            f"frames, got {count} (target_fps={fps}, max_frames={max_frames}): choose a longer "
            "window or another --sampling"
        )
    return count


@register_sampler("qwen-vl-utils")
def _qwen_vl_utils(
    policy: SamplingPolicy, first: int, last: int, fps: float, key: str | None
) -> np.ndarray:
    """qwen-vl-utils' frames: :func:`qwen_vl_utils_count` of them over the window, at
    ``torch.linspace(first, last, n).round()`` (round half to even, as ``np.round``)."""
    count = qwen_vl_utils_count(last - first + 1, fps, policy.target_fps, policy.max_frames)
    return np.round(np.linspace(first, last, count)).astype(np.int64)


@register_sampler("random-consecutive")
def _random_consecutive(
    policy: SamplingPolicy, first: int, last: int, fps: float, key: str | None
) -> np.ndarray:
    """ViLMA's clip: ``num_frames`` consecutive frames of the window, ending at a random frame.

    The window is first counted in frames of the normalised video (``normalized_fps``; see
    ``_normalized_window``). With ``L`` frames there and ``n = num_frames``: if ``L > n``, the
    clip is frames ``e - n .. e - 1`` with ``e`` drawn uniformly from ``[n, L - 1]`` (as
    ``np.random.randint(n, L)`` in ``sample_frame_indices``, so the window's last frame is
    never in the clip); otherwise all ``L`` frames, the last repeated up to ``n``.

    Departure: ViLMA draws ``e`` from one global ``np.random.seed(0)`` stream in item order,
    which PyTorch's DataLoader workers copy rather than reseed, so its clips depend on the
    batch size and worker count. foilkit draws each view's ``e`` from a generator seeded by
    ``(seed, key)``: the same distribution, reproducible whatever the process count, batch or
    order.
    """
    if key is None:
        raise ValueError(
            "the 'random-consecutive' policy draws a clip per view and needs the view's key "
            "(indices(..., key=...)); decode_views passes one"
        )
    if policy.normalized_fps is not None and not fps > 0:
        raise ValueError(
            "the 'random-consecutive' policy needs a positive frame rate to normalise, got "
            f"fps={fps}"
        )
    start, length = _normalized_window(first, last, fps, policy.normalized_fps)
    count = policy.num_frames
    if length > count:
        end = int(_view_generator(policy.seed, key).integers(count, length))
        positions = np.arange(end - count, end)
    else:
        positions = np.minimum(np.arange(count), length - 1)
    return _source_frames(start + positions, first, last, fps, policy.normalized_fps)


def _view_generator(seed: int, key: str) -> np.random.Generator:
    """A generator for one view: seeded by the policy's seed and the view's key, nothing else."""
    digest = hashlib.sha256(f"{seed}\x00{key}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def _normalized_window(first: int, last: int, fps: float, rate: float | None) -> tuple[int, int]:
    """First frame and frame count of the window on the timeline re-encoded at ``rate``.

    ViLMA reads a window ``[start, end]`` seconds of the normalised video with torchvision's
    ``read_video``, which keeps the frames whose timestamps lie in it, end included. foilkit
    sees the window as source frames, so ``start = first / fps`` and ``end = (last + 1) / fps``:
    exact when the annotated bounds fall on source frames (whole seconds at whole-number fps,
    ViLMA's usual windows), otherwise the count can differ from ViLMA's by one frame at either
    end. ViLMA's whole-video items (no end) and frame-unit (``pts``) windows have no frame at
    ``end``, so there foilkit counts one frame more than ViLMA: only the range of the random end
    point is one frame longer, as the window's last frame is never in a drawn clip. Under the
    ``read-video`` window rule (``VideoView.window_rule``), ``first``/``last`` are already the
    frames ``read_video`` returns from the source video, so this count can be one normalised
    frame longer than ViLMA's; ViLMA itself normalises only QUVA, whose 30 fps copies the user
    supplies, so its paper protocol leaves ``normalized_fps`` unset.
    """
    if rate is None:
        return first, last - first + 1
    begin = math.ceil(first * rate / fps - _EPS)
    end = math.floor((last + 1) * rate / fps + _EPS)
    return begin, max(1, end - begin + 1)


def _source_frames(
    normalized: np.ndarray, first: int, last: int, fps: float, rate: float | None
) -> np.ndarray:
    """The source frame FFmpeg's ``fps`` filter shows as each frame of the normalised video.

    ``ffmpeg -i in -filter:v fps=fps=R out`` (``bin/normalize_fps``) rounds each source
    timestamp ``i / fps`` to the nearest output tick (``round=near``, halves away from zero)
    and shows at output frame ``k`` the last source frame whose tick is ``<= k``: source frame
    ``ceil((k + 1/2) * fps / R) - 1``. This assumes a constant frame rate with the first frame
    at time 0. The frame at the window's end can show source frame ``last + 1`` (rounded half a
    tick early); foilkit keeps every frame inside the window, clipping it to ``last``. It is
    never in a drawn clip, so only padded clips of windows of at most ``num_frames`` normalised
    frames can differ from ViLMA's there.
    """
    if rate is None:
        return normalized
    indices = np.ceil((normalized + 0.5) * fps / rate - _EPS).astype(np.int64) - 1
    return np.clip(indices, first, last)
