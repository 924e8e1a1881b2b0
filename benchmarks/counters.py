"""Counting the work a scoring run does: video decodes and video-LLM prefix forwards.

``DecodeCounter`` wraps a decoder backend of ``foilkit.scorers.video.decoding.DECODERS`` (the
registry every decode goes through, the engine's and the naive loop's alike) so that each
file opened and each decode pass (one ``get_frames`` call: the union of a file's sampled
frames) is counted, from whichever thread decodes (the engine's decoding threads included).

``ForwardCounter`` wraps a video-LLM adapter's prefix and continuation forwards on the
instance, to show that ``choice`` mode runs the video prefix once per view and only the
short question continuations per option order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from typing_extensions import Self

from foilkit.scorers.video import decoding


class DecodeCounter:
    """Counts opens, decode passes and decoded frames of ``backend`` while active (a context
    manager)."""

    def __init__(self, backend: str):
        self.backend = backend
        self.opens = self.passes = self.decoded_frames = 0
        self._lock = threading.Lock()
        self._real: Callable[..., Any] | None = None

    def __enter__(self) -> Self:
        self._real = real = decoding.DECODERS[self.backend]

        def counting_opener(view: Any, **options: Any) -> Any:
            video = real(view, **options)
            with self._lock:
                self.opens += 1
            get_frames = video.get_frames

            def counted_get_frames(indices: Any) -> Any:
                with self._lock:
                    self.passes += 1
                    self.decoded_frames += len(indices)
                return get_frames(indices)

            video.get_frames = counted_get_frames
            return video

        decoding.DECODERS[self.backend] = counting_opener
        return self

    def __exit__(self, *exc: object) -> None:
        decoding.DECODERS[self.backend] = self._real

    def counts(self) -> dict[str, int]:
        return {
            "opens": self.opens,
            "decode_passes": self.passes,
            "decoded_frames": self.decoded_frames,
        }


class ForwardCounter:
    """Counts a video-LLM adapter's prefix forwards and question continuations (a context
    manager)."""

    def __init__(self, adapter: Any):
        self.adapter = adapter
        self.prefix_forwards = 0
        self.continuations = 0

    def __enter__(self) -> Self:
        encode_prefix, continue_ = self.adapter._encode_prefix, self.adapter._continue

        def counted_prefix(*args: Any, **kwargs: Any) -> Any:
            self.prefix_forwards += 1
            return encode_prefix(*args, **kwargs)

        def counted_continue(*args: Any, **kwargs: Any) -> Any:
            self.continuations += 1
            return continue_(*args, **kwargs)

        self.adapter._encode_prefix, self.adapter._continue = counted_prefix, counted_continue
        return self

    def __exit__(self, *exc: object) -> None:
        del self.adapter._encode_prefix, self.adapter._continue  # back to the class's methods

    def counts(self) -> dict[str, int]:
        return {"prefix_forwards": self.prefix_forwards, "continuations": self.continuations}
