"""Typed errors for bad video input. Each names the file it is about."""

from __future__ import annotations


class VideoError(Exception):
    """A video could not be turned into frames. ``source`` names the file (or ``<bytes>``);
    ``cause`` says what went wrong in a few words (coverage counts failed rows by it)."""

    cause = "unreadable video"

    def __init__(self, source: str, message: str):
        super().__init__(f"{source}: {message}")
        self.source = source


class VideoNotFoundError(VideoError, FileNotFoundError):
    """The video file does not exist."""

    cause = "video missing"


class CorruptVideoError(VideoError):
    """The container cannot be opened or its video stream cannot be decoded."""

    cause = "corrupt video"


class EmptyVideoError(VideoError):
    """The video stream holds no frames."""

    cause = "empty video"


class TooFewFramesError(EmptyVideoError):
    """The stream holds a single frame (an image saved as ``.mp4``, a clip cut to one frame):
    nothing to order in time, so a temporal item cannot be scored on it."""

    cause = "fewer than two frames"


class FrameTooLargeError(VideoError):
    """The frames exceed the decoding pixel budget and the decoder cannot scale them down while
    decoding (the CUDA decoder); the message names their resolution."""

    cause = "frames too large for the decoder"


class WindowOutOfRangeError(VideoError, ValueError):
    """The requested time window does not lie inside the video: a fault of that view alone
    (``decode_views`` returns it in the view's place; the file's other views still decode)."""

    cause = "window out of range"


class SamplingError(VideoError, ValueError):
    """The sampling policy cannot take frames from this view (e.g. ``int-fps`` at more frames a
    second than the video has): a fault of that view alone, like a window out of range."""

    cause = "view cannot be sampled"
