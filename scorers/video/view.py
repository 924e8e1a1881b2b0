"""``VideoView``: which part of which video, played in which direction."""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

# What callers may pass as a video: a path, raw container bytes, or the ``{"path", "bytes"}``
# mapping that the ``datasets`` ``Video`` feature stores (``decode=False``).
VideoSource = str | os.PathLike | bytes | Mapping[str, Any]

TIME_UNITS = ("sec", "frame", "pts")

#: How a window in seconds becomes frames. ``half-open``: the frames presented from ``start`` up
#: to, not including, ``end``. ``read-video``: what torchvision's ``read_video(start_pts,
#: end_pts, pts_unit="sec")`` returns (ViLMA reads every window so): the frame at ``end`` is
#: included, and a ``start`` between two frames also brings the frame before it (the one on
#: screen at ``start``).
WINDOW_RULES = ("half-open", "read-video")


@dataclass(frozen=True)
class VideoView:
    """A video source, an optional window in seconds, and a ``reversed`` flag.

    A reversed view is played back from the same decoded frames in reverse order: it never
    causes a second decode or a re-encoded file.
    """

    source: VideoSource = field(repr=False)
    start: float | None = None
    end: float | None = None
    reversed: bool = False
    #: The window's rule (see :data:`WINDOW_RULES`): ``half-open`` ``[start, end)``, or
    #: ``read-video`` (torchvision's ``read_video(start_pts, end_pts, pts_unit="sec")``).
    window_rule: str = "half-open"

    def __post_init__(self) -> None:
        source = self.source
        if isinstance(source, Mapping):
            path, data = source.get("path"), source.get("bytes")
            if data is None and not path:
                raise ValueError(f"video mapping has neither 'path' nor 'bytes': {dict(source)!r}")
            object.__setattr__(self, "source", data if data is not None else str(path))
        elif isinstance(source, os.PathLike):
            object.__setattr__(self, "source", os.fspath(source))
        elif not isinstance(source, (str, bytes)):
            raise TypeError(f"unsupported video source type {type(source).__name__}")
        for name in ("start", "end"):
            value = getattr(self, name)
            if value is not None and (math.isnan(value) or value < 0):
                raise ValueError(f"{self.name}: window {name}={value!r} must be a number >= 0")
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError(f"{self.name}: window end {self.end} must be after start {self.start}")
        if self.window_rule not in WINDOW_RULES:
            raise ValueError(
                f"unknown window rule {self.window_rule!r}; choose from {list(WINDOW_RULES)}"
            )

    @property
    def name(self) -> str:
        """How errors and records name the video: its path, or ``<N bytes>``."""
        return self.source if isinstance(self.source, str) else f"<{len(self.source)} bytes>"

    @property
    def source_key(self) -> str:
        """Identifies the source cheaply: the path, or a hash of in-memory bytes."""
        if isinstance(self.source, str):
            return self.source
        return "sha256:" + hashlib.sha256(self.source).hexdigest()

    def flipped(self) -> VideoView:
        """The same window played the other way."""
        return replace(self, reversed=not self.reversed)

    @classmethod
    def from_units(
        cls,
        source: VideoSource,
        start: float | None,
        end: float | None,
        *,
        unit: str = "sec",
        fps: float | None = None,
        time_base: float | None = None,
        reversed: bool = False,
    ) -> VideoView:
        """Build a view from a window in ``sec``, ``frame`` (index at ``fps``) or ``pts`` units.

        ``pts`` are presentation timestamps in stream ``time_base`` ticks (seconds = pts *
        time_base). Some annotation files call frame indices "pts"; convert those as ``frame``.
        """
        if unit not in TIME_UNITS:
            raise ValueError(f"unknown time unit {unit!r}; choose from {TIME_UNITS}")
        if unit == "frame":
            if not fps or fps <= 0:
                raise ValueError(
                    f"converting frame indices to seconds needs a positive fps, got {fps!r}"
                )
            scale = 1.0 / fps
        elif unit == "pts":
            if not time_base or time_base <= 0:
                raise ValueError(
                    f"converting pts to seconds needs a positive time_base, got {time_base!r}"
                )
            scale = time_base
        else:
            scale = 1.0
        return cls(
            source,
            None if start is None else float(start) * scale,
            None if end is None else float(end) * scale,
            reversed,
        )


def content_hash(source: VideoSource, chunk_size: int = 1 << 20) -> str:
    """SHA-256 of the video's bytes: a cache key that survives renames and moved folders."""
    view = source if isinstance(source, VideoView) else VideoView(source)
    digest = hashlib.sha256()
    if isinstance(view.source, bytes):
        digest.update(view.source)
    else:
        path = Path(view.source)
        if not path.is_file():
            from foilkit.scorers.video.errors import VideoNotFoundError

            raise VideoNotFoundError(view.name, "no such file")
        with path.open("rb") as handle:
            while chunk := handle.read(chunk_size):
                digest.update(chunk)
    return digest.hexdigest()
