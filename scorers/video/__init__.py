"""The video layer shared by builders and scorers: views, sampling policies, decoding."""
from foilkit.scorers.video.decoding import (
    BACKENDS,
    DecodedFrames,
    VideoMetadata,
    decode_view,
    decode_views,
    open_video,
    probe,
    take_frames,
    window_frames,
)
from foilkit.scorers.video.errors import (
    CorruptVideoError,
    EmptyVideoError,
    VideoError,
    VideoNotFoundError,
    WindowOutOfRangeError,
)
from foilkit.scorers.video.sampling import SAMPLERS, SamplingPolicy
from foilkit.scorers.video.view import VideoSource, VideoView, content_hash

__all__ = [
    "BACKENDS", "DecodedFrames", "VideoMetadata", "decode_view", "decode_views", "open_video", "probe", "take_frames",
    "window_frames", "CorruptVideoError", "EmptyVideoError", "VideoError", "VideoNotFoundError",
    "WindowOutOfRangeError", "SAMPLERS", "SamplingPolicy", "VideoSource", "VideoView", "content_hash",
]
