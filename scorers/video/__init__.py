"""The video layer shared by builders and scorers: views, sampling policies, decoding."""

from foilkit.scorers.video.decoding import (
    BACKENDS,
    DecodedFrames,
    DecoderUnavailableError,
    VideoMetadata,
    available_backends,
    decode_view,
    decode_views,
    open_video,
    probe,
    resolve_decoder,
    sampling_key,
    take_frames,
    window_frames,
)
from foilkit.scorers.video.errors import (
    CorruptVideoError,
    EmptyVideoError,
    SamplingError,
    VideoError,
    VideoNotFoundError,
    WindowOutOfRangeError,
)
from foilkit.scorers.video.sampling import SAMPLERS, SEEDED_POLICIES, SamplingPolicy
from foilkit.scorers.video.view import WINDOW_RULES, VideoSource, VideoView, content_hash

__all__ = [
    "BACKENDS",
    "SAMPLERS",
    "SEEDED_POLICIES",
    "CorruptVideoError",
    "DecodedFrames",
    "DecoderUnavailableError",
    "EmptyVideoError",
    "SamplingError",
    "SamplingPolicy",
    "VideoError",
    "VideoMetadata",
    "VideoNotFoundError",
    "VideoSource",
    "VideoView",
    "WINDOW_RULES",
    "WindowOutOfRangeError",
    "available_backends",
    "content_hash",
    "decode_view",
    "decode_views",
    "open_video",
    "probe",
    "resolve_decoder",
    "sampling_key",
    "take_frames",
    "window_frames",
]
