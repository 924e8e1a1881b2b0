"""qwen-vl-utils' video rules: the reference preprocessing of Qwen2-VL, Qwen2.5-VL and Qwen3-VL.

The Qwen model cards feed video through ``qwen_vl_utils.process_vision_info``, which picks each
frame's size before the processor sees it (``vision_process.py`` of qwen-vl-utils 0.0.14, the
release for Qwen3-VL; 0.0.8, for Qwen2/2.5-VL, has the same rule in pixels of a 28 factor):

* ``smart_resize``: both sides a multiple of ``factor`` (the vision tower's patch size times its
  2x2 merge: 28 for Qwen2/2.5-VL, 32 for Qwen3-VL), the aspect ratio kept, the area within
  ``[min_pixels, max_pixels]``;
* per frame, ``min_pixels = VIDEO_MIN_TOKEN_NUM * factor**2`` (128 tokens) and
  ``max_pixels = max(min(VIDEO_MAX_TOKEN_NUM * factor**2, total_pixels / nframes * FRAME_FACTOR),
  1.05 * min_pixels)``, ``total_pixels = MODEL_SEQ_LEN * factor**2 * 0.9`` (768 tokens a frame,
  and the whole video within 90% of a 128000-token context);
* ``smart_nframes`` (2 frames a second, at least 4, an even count): the frame sampling policy
  ``qwen-vl-utils`` (:mod:`foilkit.scorers.video.sampling`).

transformers' Qwen2-VL/Qwen3-VL video processors size frames by their own ``size`` bounds
instead (Qwen3-VL's over the whole clip, not per frame) and apply no per-frame cap unless
``cap_pixels_per_frame=True``, whose budget still differs. :class:`QwenVLUtilsResolution` gives
the processor frames already resized as qwen-vl-utils resizes them (bicubic, antialiased) with
``size`` bounds that keep that size, so the model sees the reference's frame size and token count.
This module is a port written from the reference's rules; nothing of it is imported.
"""

from __future__ import annotations

import math
from typing import Any

#: qwen-vl-utils 0.0.14 ``vision_process.py`` constants
VIDEO_MIN_TOKEN_NUM = 128
VIDEO_MAX_TOKEN_NUM = 768
FRAME_FACTOR = 2
MODEL_SEQ_LEN = 128000
MAX_RATIO = 200
REFERENCE = "qwen-vl-utils 0.0.14 (QwenLM/Qwen3-VL) vision_process.py: smart_resize, fetch_video"

#: The video processors whose checkpoints' model cards preprocess with qwen-vl-utils: every
#: Qwen2-VL, Qwen2.5-VL and Qwen3-VL-processor family (Qwen3-VL(-MoE), Qwen3.5(-MoE), Qwen4-Exp).
QWEN_VL_VIDEO_PROCESSORS = ("Qwen2VLVideoProcessor", "Qwen3VLVideoProcessor")


def _round_by(number: float, factor: int) -> int:
    return round(number / factor) * factor


def _ceil_by(number: float, factor: int) -> int:
    return math.ceil(number / factor) * factor


def _floor_by(number: float, factor: int) -> int:
    return math.floor(number / factor) * factor


def smart_resize(
    height: int, width: int, factor: int, min_pixels: float, max_pixels: float
) -> tuple[int, int]:
    """A frame's size with both sides multiples of ``factor``, the aspect ratio kept as closely
    as possible and the area within ``[min_pixels, max_pixels]``."""
    if max(height, width) / min(height, width) > MAX_RATIO:
        raise ValueError(
            f"a {height}x{width} frame has an aspect ratio over {MAX_RATIO}, which Qwen-VL's "
            "preprocessing refuses"
        )
    new_height = max(factor, _round_by(height, factor))
    new_width = max(factor, _round_by(width, factor))
    if new_height * new_width > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        new_height = _floor_by(height / beta, factor)
        new_width = _floor_by(width / beta, factor)
    elif new_height * new_width < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        new_height = _ceil_by(height * beta, factor)
        new_width = _ceil_by(width * beta, factor)
    return new_height, new_width


def frame_pixels(num_frames: int, factor: int) -> tuple[int, float]:
    """``(min_pixels, max_pixels)`` of each frame of a ``num_frames``-frame video."""
    min_pixels = VIDEO_MIN_TOKEN_NUM * factor * factor
    total_pixels = MODEL_SEQ_LEN * factor * factor * 0.9
    share = total_pixels / num_frames * FRAME_FACTOR
    max_pixels = max(min(VIDEO_MAX_TOKEN_NUM * factor * factor, share), int(min_pixels * 1.05))
    return min_pixels, max_pixels


def frame_size(num_frames: int, height: int, width: int, factor: int) -> tuple[int, int]:
    """The size qwen-vl-utils gives each frame of a ``num_frames``-frame ``height x width``
    video, for a vision tower of ``factor`` pixels a merged token side."""
    return smart_resize(height, width, factor, *frame_pixels(num_frames, factor))


def resize_frames(frames: Any, factor: int) -> Any:
    """``frames`` (T x C x H x W) resized to :func:`frame_size` as qwen-vl-utils resizes them
    (bicubic, antialiased), as float (as it returns them)."""
    import torch
    from torchvision.transforms import InterpolationMode
    from torchvision.transforms.functional import resize

    count, _, height, width = frames.shape
    new_height, new_width = frame_size(count, height, width, factor)
    return resize(
        frames.float() if not torch.is_floating_point(frames) else frames,
        [new_height, new_width],
        interpolation=InterpolationMode.BICUBIC,
        antialias=True,
    )


def applies_to(video_processor: Any) -> bool:
    """Whether qwen-vl-utils is the reference preprocessing of this video processor's family."""
    return type(video_processor).__name__ in QWEN_VL_VIDEO_PROCESSORS


def factor_of(video_processor: Any) -> int:
    """Pixels a merged token side: the patch size times the spatial merge size."""
    return int(video_processor.patch_size) * int(video_processor.merge_size)


class QwenVLUtilsResolution:
    """Frames sized as qwen-vl-utils sizes them, handed to a Qwen-VL video processor."""

    name = "qwen-vl-utils"

    def prepare(self, frames: Any, video_processor: Any) -> tuple[Any, dict[str, Any]]:
        """``(frames, processor keywords)``: ``frames`` (T x C x H x W) resized to
        :func:`frame_size` with qwen-vl-utils' bicubic antialiased resize (as float, as it
        returns them), and ``size`` bounds within which the processor's own ``smart_resize``
        keeps that size (per frame for Qwen2-VL's, over the clip for Qwen3-VL's)."""
        count = len(frames)
        resized = resize_frames(frames, factor_of(video_processor))
        area = resized.shape[-2] * resized.shape[-1]
        temporal = int(getattr(video_processor, "temporal_patch_size", FRAME_FACTOR) or 1)
        size = {"shortest_edge": area, "longest_edge": area * (count + temporal)}
        return resized, {"size": size, "cap_pixels_per_frame": False}

    def to_record(self, video_processor: Any) -> dict[str, Any]:
        """The rule and its constants for this processor's factor, for ``run.json``."""
        factor = factor_of(video_processor)
        return {
            "rule": self.name,
            "factor": factor,
            "min_pixels": VIDEO_MIN_TOKEN_NUM * factor * factor,
            "max_pixels": VIDEO_MAX_TOKEN_NUM * factor * factor,
            "total_pixels": MODEL_SEQ_LEN * factor * factor * 0.9,
            "frame_factor": FRAME_FACTOR,
            "reference": REFERENCE,
        }
