"""Small helpers shared by adapters: turning model outputs and frames into what they need."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch


def pooled(output: Any) -> torch.Tensor:
    """The embedding tensor of a ``get_*_features`` call (a tensor, or an output's
    ``pooler_output``)."""
    return output if isinstance(output, torch.Tensor) else output.pooler_output


def text_max_length(config: Any) -> int | None:
    """The text tower's position limit, used to truncate long captions instead of failing."""
    text_config = getattr(config, "text_config", config)
    return getattr(text_config, "max_position_embeddings", None)


def token_logprobs(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Log-probability of each target token; ``logits[i]`` is the prediction for ``targets[i]``."""
    return torch.log_softmax(logits.float(), dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def likelihood_details(logprobs: list[torch.Tensor]) -> dict[str, tuple[float, ...]]:
    """Sum, mean and count of per-token log-probabilities, one entry per text."""
    return {
        "logprob_sum": tuple(float(lp.sum()) for lp in logprobs),
        "logprob_mean": tuple(float(lp.mean()) for lp in logprobs),
        "num_tokens": tuple(float(len(lp)) for lp in logprobs),
    }


# A grid of every FINGERPRINT_STRIDE-th row and column of a frame is hashed; frames whose
# samples match are then compared in full, so the result is exact while hashing reads ~1% of it.
FINGERPRINT_STRIDE = 10


def distinct_frames(views: Sequence[torch.Tensor]) -> tuple[list[torch.Tensor], list[list[int]]]:
    """The distinct frames of several views, and for each view the positions of its frames there.

    A view and its reversal (and every request on one view) share all their frames, so a model
    that runs once per distinct frame does that work once; frames are told apart by content.
    """
    images: list[torch.Tensor] = []
    candidates: dict[bytes, list[int]] = {}  # sampled fingerprint -> positions in ``images``
    slots = []
    for view in views:
        slot = []
        for frame in view:
            grid = frame[..., ::FINGERPRINT_STRIDE, ::FINGERPRINT_STRIDE]  # a view: no copy
            sample = grid.contiguous().cpu().numpy().tobytes()  # a few bytes off a GPU frame
            key = hashlib.blake2b(
                sample + str(tuple(frame.shape)).encode(), digest_size=16
            ).digest()
            same = candidates.setdefault(key, [])
            position = next((i for i in same if _equal(images[i], frame)), None)
            if position is None:
                position = len(images)
                images.append(frame)
                same.append(position)
            slot.append(position)
        slots.append(slot)
    return images, slots


def _equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two decoded frames are equal; numpy compares CPU uint8 frames ~7x faster than
    ``torch.equal`` (frames decoded on a GPU are compared there)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.device.type != "cpu" or b.device.type != "cpu":
        return a.device == b.device and torch.equal(a, b)
    return bool(np.array_equal(a.numpy(), b.numpy()))
