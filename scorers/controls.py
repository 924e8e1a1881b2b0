"""Temporal controls: the same items scored with the frames' order broken on purpose.

A model whose accuracy does not move when its frames are ``reversed``, ``shuffled`` (seeded)
or cut to a ``single`` middle frame is not using temporal order. The control is applied
after decoding, to the frames (and the indices recorded with them) a model sees.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np

from foilkit.scorers.video import DecodedFrames, take_frames

CONTROLS = ("reversed", "shuffled", "single")


def check_control(control: str | None) -> None:
    if control is not None and control not in CONTROLS:
        raise ValueError(
            f"unknown temporal control {control!r}; choose from {list(CONTROLS)} or None"
        )


def apply_control(
    decoded: DecodedFrames, control: str | None, *, seed: int, view_key: str
) -> DecodedFrames:
    """``decoded`` with its frames reordered by ``control``.

    ``shuffled`` draws its permutation from ``seed`` and ``view_key``; the engine passes the
    video's content hash with the view's window and direction, so the permutation is the same
    for a view whichever process, batch, run, folder or machine handles it.
    """
    check_control(control)
    count = len(decoded.indices)
    if control is None:
        return decoded
    if control == "reversed":
        order = np.arange(count)[::-1]
    elif control == "shuffled":
        view_seed = int.from_bytes(hashlib.sha256(view_key.encode()).digest()[:8], "little")
        order = np.random.default_rng([seed, view_seed]).permutation(count)
    else:
        order = np.array([count // 2])
    return replace(
        decoded,
        frames=take_frames(decoded.frames, order),
        indices=decoded.indices[order],
        timestamps=decoded.timestamps[order],
    )
