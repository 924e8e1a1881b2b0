"""The papers' own frame sampling: ``int-fps`` (VITATECS CLIP4Clip / X-CLIP), ``segment-start``
(LAVIS, VITATECS' ALPRO) and ``random-consecutive`` (ViLMA), each checked against a port of the
reference's index logic written here from the published code.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
import torch

from foilkit.scorers.video import (
    SamplingPolicy,
    VideoMetadata,
    VideoView,
    decode_views,
    sampling_key,
    window_frames,
)
from foilkit.scorers.video.sampling import _view_generator
from foilkit.synthetic.videos import SyntheticScene, write_video

# The frame rates of the benchmarks' videos, as decoders report them (NTSC rates are N/1001).
FPS_VALUES = {
    "29.97": 30000 / 1001,
    "30": 30.0,
    "25": 25.0,
    "23.976": 24000 / 1001,
    "60": 60.0,
}
# Frame counts: MSR-VTT / VATEX clips of 10-20 s, and windows shorter than every cap.
FRAME_COUNTS = (300, 449, 600, 1200, 12, 5, 1)


# --- the references, ported -------------------------------------------------------------------


def vitatecs_clip4clip_indices(
    frame_count: int, avg_fps: float, feature_framerate: int, max_frames: int
) -> np.ndarray:
    """VITATECS ``X-CLIP/dataloaders/rawvideo_util.py`` ``RawVideoExtractorDecord.video_to_tensor``
    (whole video, decord's ``get_avg_fps``) then ``dataloader_vitatecs.py`` ``_get_rawvideo``
    with ``slice_framepos=2``, as ``eval_vitatecs.sh`` runs it."""
    fps = int(avg_fps)
    assert fps > 0
    total_duration = (frame_count + fps - 1) // fps
    interval = fps // feature_framerate if feature_framerate > 0 else 1
    interval = interval or 1
    inds = list(np.arange(0, fps, interval))
    assert len(inds) >= feature_framerate
    inds = inds[:feature_framerate]
    indices = []
    for sec in np.arange(0, total_duration + 1):
        sec_base = int(sec * fps)
        for ind in inds:
            if sec_base + ind >= frame_count:
                break
            indices.append(sec_base + ind)
    indices = np.asarray(indices)
    if max_frames < len(indices):
        indices = indices[np.linspace(0, len(indices) - 1, num=max_frames, dtype=int)]
    return indices


def lavis_uniform_indices(vlen: int, n_frms: int) -> np.ndarray:
    """LAVIS ``lavis/datasets/data_utils.py`` ``load_video(sampling="uniform")``."""
    n_frms = min(n_frms, vlen)
    return np.arange(0, vlen, vlen / n_frms).astype(int)


def vilma_sample_frame_indices(
    clip_len: int, frame_sample_rate: int, seg_len: int, randint: Callable[[int, int], int]
) -> np.ndarray:
    """ViLMA ``vl_bench/data.py`` ``sample_frame_indices``, with the ``np.random.randint`` draw
    passed in."""
    converted_len = int(clip_len * frame_sample_rate)
    if seg_len > converted_len:
        end_idx = randint(converted_len, seg_len)
    else:
        end_idx = min(converted_len, seg_len) - 1
    start_idx = end_idx - converted_len
    indices = np.linspace(start_idx, end_idx, num=clip_len)
    return np.clip(indices, start_idx, end_idx - 1).astype(np.int64)


def vilma_dataset_v2_rows(
    seg_len: int, clip_len: int, randint: Callable[[int, int], int]
) -> list[int]:
    """ViLMA ``Dataset_v2.__getitem__``: which of the window's ``seg_len`` frames it keeps."""
    rows = list(range(seg_len))
    if seg_len > clip_len:
        rows = vilma_sample_frame_indices(clip_len, 1, seg_len, randint).tolist()
    return rows + (clip_len - len(rows)) * [rows[-1]]


def ffmpeg_fps_filter(frame_count: int, rate: Fraction, out_rate: int) -> list[int]:
    """Which source frame each output frame of ``ffmpeg -filter:v fps=fps=out_rate`` shows
    (ViLMA ``bin/normalize_fps``), run through FFmpeg's own filter with PyAV."""
    import av

    graph = av.filter.Graph()
    source = graph.add_buffer(width=16, height=16, format="gray", time_base=1 / rate)
    fps = graph.add("fps", f"fps={out_rate}")
    sink = graph.add("buffersink")
    source.link_to(fps)
    fps.link_to(sink)
    graph.configure()
    shown: list[int] = []

    def drain() -> None:
        while True:
            try:
                pixels = sink.pull().to_ndarray()
            except (av.BlockingIOError, av.EOFError):
                return
            shown.append(int(pixels[0, 0]) + 256 * int(pixels[0, 1]))

    for index in range(frame_count):
        pixels = np.zeros((16, 16), dtype=np.uint8)
        pixels[0, 0], pixels[0, 1] = index % 256, index // 256
        frame = av.VideoFrame.from_ndarray(pixels, format="gray")
        frame.pts, frame.time_base = index, 1 / rate
        source.push(frame)
        drain()
    source.push(None)
    drain()
    return shown


def torchvision_window(start: Fraction, end: Fraction, rate: int, frame_count: int) -> range:
    """Frames of a ``rate`` fps video that ``read_video(start_pts=start, end_pts=end,
    pts_unit="sec")`` returns: timestamps in ``[start, end]``, both ends included."""
    return range(max(0, math.ceil(start * rate)), min(frame_count - 1, math.floor(end * rate)) + 1)


# --- int-fps: VITATECS CLIP4Clip / X-CLIP ----------------------------------------------------


@pytest.mark.parametrize("fps", FPS_VALUES.values(), ids=FPS_VALUES.keys())
@pytest.mark.parametrize("frame_count", FRAME_COUNTS)
@pytest.mark.parametrize(("target_fps", "max_frames"), [(1, 12), (2, 12), (1, 100)])
@pytest.mark.parametrize("first", [0, 37])
def test_int_fps_matches_vitatecs_clip4clip(
    fps, frame_count, target_fps, max_frames, first
) -> None:
    policy = SamplingPolicy("int-fps", target_fps=target_fps, max_frames=max_frames)
    expected = first + vitatecs_clip4clip_indices(frame_count, fps, target_fps, max_frames)
    assert policy.indices(first, first + frame_count - 1, fps).tolist() == expected.tolist()


def test_fps_policy_is_not_vitatecs_at_ntsc_rates() -> None:
    """Why ``int-fps`` exists: at 29.97 fps CLIP4Clip's "seconds" are 29 frames long."""
    fps, frame_count = 30000 / 1001, 600  # a 20 s MSR-VTT video
    reference = vitatecs_clip4clip_indices(frame_count, fps, 1, 100)
    real_rate = SamplingPolicy("fps", target_fps=1.0).indices(0, frame_count - 1, fps)
    assert reference.tolist() == list(range(0, 600, 29))  # 21 frames, one every 29
    assert len(real_rate) == 21 and real_rate.tolist() != reference.tolist()
    assert int(np.max(np.abs(real_rate - reference))) == 19  # 0.97 frames a second of drift
    capped = SamplingPolicy("fps", target_fps=1.0, max_frames=12).indices(0, 299, fps)
    assert capped.tolist() != vitatecs_clip4clip_indices(300, fps, 1, 12).tolist()


@pytest.mark.parametrize(
    ("kwargs", "fps", "message"),
    [
        ({"target_fps": 1, "max_frames": 12}, 0.0, "frame rate of at least 1"),
        ({"target_fps": 1, "max_frames": 12}, 0.5, "frame rate of at least 1"),
        ({"target_fps": 30, "max_frames": 12}, 25.0, "cannot take 30 frames a second"),
    ],
)
def test_int_fps_rejects_rates_the_reference_asserts_on(kwargs, fps, message) -> None:
    with pytest.raises(ValueError, match=message):
        SamplingPolicy("int-fps", **kwargs).indices(0, 99, fps)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "positive target_fps"),
        ({"target_fps": 0.5}, "whole number"),
        ({"target_fps": 1, "max_frames": 0}, "max_frames"),
    ],
)
def test_int_fps_policy_validates_its_fields(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        SamplingPolicy("int-fps", **kwargs)


# --- segment-start: LAVIS (VITATECS' ALPRO) --------------------------------------------------


@pytest.mark.parametrize("frame_count", FRAME_COUNTS + (301, 241, 17, 8, 7))
@pytest.mark.parametrize("num_frames", [8, 16, 32, 4, 12])
@pytest.mark.parametrize("first", [0, 11])
def test_segment_start_matches_lavis(frame_count, num_frames, first) -> None:
    policy = SamplingPolicy("segment-start", num_frames)
    expected = first + lavis_uniform_indices(frame_count, num_frames)
    assert policy.indices(first, first + frame_count - 1, 25.0).tolist() == expected.tolist()


def test_segment_start_is_exact_where_lavis_float_rounding_is_not() -> None:
    """LAVIS' float ``np.arange`` gives 8 starts, the last past the end, for 7 segments of 17
    frames."""
    assert lavis_uniform_indices(17, 7).tolist() == [0, 2, 4, 7, 9, 12, 14, 17]
    assert SamplingPolicy("segment-start", 7).indices(0, 16, 30.0).tolist() == [
        0,
        2,
        4,
        7,
        9,
        12,
        14,
    ]
    assert SamplingPolicy("segment-start", 8).indices(3, 7, 30.0).tolist() == [
        3,
        4,
        5,
        6,
        7,
    ]  # short window


# --- segment-step: salesforce/BLIP's video loader --------------------------------------------


def blip_video_indices(vlen: int, num_frm: int) -> np.ndarray:
    """salesforce/BLIP's video loader (``data/video_dataset.py``): ``np.arange(0, vlen,
    vlen / num_frm, dtype=int)``."""
    return np.arange(0, vlen, vlen / num_frm, dtype=int)


@pytest.mark.parametrize("frame_count", FRAME_COUNTS + (301, 241, 17, 8, 7, 2000))
@pytest.mark.parametrize("num_frames", [8, 4, 12])
@pytest.mark.parametrize("first", [0, 11])
def test_segment_step_matches_blip(frame_count, num_frames, first) -> None:
    policy = SamplingPolicy("segment-step", num_frames)
    expected = first + blip_video_indices(frame_count, num_frames)
    assert policy.indices(first, first + frame_count - 1, 25.0).tolist() == expected.tolist()


def test_blip_paper_protocol_takes_blips_frames_not_lavis() -> None:
    """At 300 frames BLIP steps by floor(300/8) = 37 (0, 37, 74, ..., 259); LAVIS' floor(k*300/8)
    is 0, 37, 75, ..., 262. VITATECS' BLIP protocol takes BLIP's; LAVIS' keeps its own name."""
    from foilkit.scorers.job import sampling_policy
    from foilkit.scorers.protocols import resolve_protocol

    protocol = resolve_protocol("paper", "vitatecs", "blip-itm", accepted=())
    blip = sampling_policy(protocol, seed=0).indices(0, 299, 30.0).tolist()
    assert blip == blip_video_indices(300, 8).tolist() == [0, 37, 74, 111, 148, 185, 222, 259]
    lavis = SamplingPolicy("segment-start", 8).indices(0, 299, 30.0).tolist()
    assert lavis == lavis_uniform_indices(300, 8).tolist() and lavis[2] == 75 and lavis[-1] == 262


# --- random-consecutive: ViLMA ---------------------------------------------------------------


def _vilma_reference(
    frame_count: int, fps: float, start: Fraction, end: Fraction, key: str, seed: int
) -> list[int]:
    """Source frames ViLMA's CLIP / X-CLIP see for the window ``[start, end]`` s:
    ``normalize_fps`` at 30 fps, ``read_video`` of the window, ``Dataset_v2``'s clip, with
    foilkit's draw for ``key``."""
    normalised = ffmpeg_fps_filter(frame_count, Fraction(fps).limit_denominator(1001), 30)
    window = torchvision_window(start, end, 30, len(normalised))
    rows = vilma_dataset_v2_rows(
        len(window), 8, lambda low, high: _view_generator(seed, key).integers(low, high)
    )
    return [normalised[window[row]] for row in rows], len(window)


def _inside(frames: list[int], first: int, last: int) -> list[int]:
    """foilkit's departure: a padded clip's last frame can show source frame ``last + 1`` in
    ViLMA."""
    return np.clip(frames, first, last).tolist()


WINDOWS = {  # (start frame, end frame) in source frames: windows that start and end on a frame
    "long": (37, 160),
    "whole-clip": (0, 299),
    "9-frames": (12, 21),
    "short": (50, 54),
    "one-frame": (80, 81),
}


@pytest.mark.parametrize("fps", FPS_VALUES.values(), ids=FPS_VALUES.keys())
@pytest.mark.parametrize("window", WINDOWS.values(), ids=WINDOWS.keys())
@pytest.mark.parametrize("key", ["video0.mp4|1.0|4.0", "yt-abc.mp4||"])
def test_random_consecutive_matches_vilma(fps, window, key) -> None:
    frame_count = 320
    start, end = (Fraction(bound) / Fraction(fps).limit_denominator(1001) for bound in window)
    view = VideoView("video.mp4", float(start), float(end))
    first, last = window_frames(view, VideoMetadata(frame_count, fps, frame_count / fps, 64, 48))
    policy = SamplingPolicy("random-consecutive", 8, normalized_fps=30)
    expected, segment = _vilma_reference(frame_count, fps, start, end, key, policy.seed)
    if segment > 8:  # a drawn clip: identical, without clipping
        assert min(expected) >= first and max(expected) <= last
    assert policy.indices(first, last, fps, key=key).tolist() == _inside(expected, first, last)


@pytest.mark.parametrize("fps", [30.0, 25.0, 60.0], ids=str)
@pytest.mark.parametrize(("start", "end"), [(1, 4), (0, 10), (2, 3)])
def test_random_consecutive_matches_vilma_on_whole_seconds(fps, start, end) -> None:
    """At whole-number rates ViLMA's usual whole-second windows are recovered exactly."""
    frame_count = round(12 * fps)
    view = VideoView("video.mp4", float(start), float(end))
    first, last = window_frames(view, VideoMetadata(frame_count, fps, frame_count / fps, 64, 48))
    policy = SamplingPolicy("random-consecutive", 8, normalized_fps=30, seed=3)
    expected, segment = _vilma_reference(frame_count, fps, Fraction(start), Fraction(end), "k", 3)
    assert segment > 8 and policy.indices(first, last, fps, key="k").tolist() == expected


@pytest.mark.parametrize("fps", FPS_VALUES.values(), ids=FPS_VALUES.keys())
def test_normalised_frames_are_ffmpegs_over_a_long_video(fps) -> None:
    """Every frame of a 2-minute video through FFmpeg's fps filter: a clip longer than the
    window takes all of the window's normalised frames, so it must show FFmpeg's sequence."""
    frame_count = round(120 * fps)
    normalised = ffmpeg_fps_filter(frame_count, Fraction(fps).limit_denominator(1001), 30)
    policy = SamplingPolicy("random-consecutive", 4000, normalized_fps=30)
    shown = policy.indices(0, frame_count - 1, fps, key="k").tolist()
    assert len(normalised) >= 3599 and shown[: len(normalised)] == normalised


def test_random_consecutive_without_normalisation_counts_source_frames() -> None:
    policy = SamplingPolicy("random-consecutive", 8)
    for key in ("a", "b", "c"):
        draw = _view_generator(0, key).integers
        expected = vilma_dataset_v2_rows(100, 8, draw)
        assert policy.indices(10, 109, 24.0, key=key).tolist() == [10 + row for row in expected]
    assert policy.indices(10, 14, 24.0, key="a").tolist() == [
        10,
        11,
        12,
        13,
        14,
        14,
        14,
        14,
    ]  # padded


def test_random_consecutive_is_deterministic_per_view_and_order_free() -> None:
    keys = [f"video{index}.mp4|1.0|{4.0 + index}" for index in range(40)]
    policy = SamplingPolicy("random-consecutive", 8, normalized_fps=30)

    def draw(order: list[str]) -> dict[str, list[int]]:
        fresh = SamplingPolicy("random-consecutive", 8, normalized_fps=30)  # no state carried over
        return {key: fresh.indices(0, 899, 29.97, key=key).tolist() for key in order}

    forward, backward = draw(keys), draw(keys[::-1])
    assert forward == backward
    assert forward[keys[0]] == policy.indices(0, 899, 29.97, key=keys[0]).tolist()
    assert len({tuple(clip) for clip in forward.values()}) > 30  # different views, different draws
    reseeded = SamplingPolicy("random-consecutive", 8, normalized_fps=30, seed=1)
    assert {key: reseeded.indices(0, 899, 29.97, key=key).tolist() for key in keys} != forward


def test_random_consecutive_draws_vilmas_end_points() -> None:
    """Same distribution as ``np.random.randint(8, L)``: every end point in ``[8, L - 1]``, no
    other."""
    policy, length = SamplingPolicy("random-consecutive", 8), 20
    ends = {policy.indices(0, length - 1, 30.0, key=str(key))[-1] + 1 for key in range(2000)}
    assert ends == set(range(8, length))


@pytest.mark.parametrize(
    ("kwargs", "call", "message"),
    [
        ({}, {"fps": 30.0}, "needs the view's key"),
        ({"normalized_fps": 30}, {"fps": 0.0, "key": "k"}, "positive frame rate"),
    ],
)
def test_random_consecutive_errors(kwargs, call, message) -> None:
    with pytest.raises(ValueError, match=message):
        SamplingPolicy("random-consecutive", **kwargs).indices(0, 99, **call)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"stride": 2}, "consecutive frames"),
        ({"normalized_fps": 0}, "normalized_fps"),
        ({"seed": -1}, "seed"),
    ],
)
def test_random_consecutive_policy_validates_its_fields(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        SamplingPolicy("random-consecutive", **kwargs)


def test_records_name_only_the_fields_set() -> None:
    assert SamplingPolicy("random-consecutive", 8, normalized_fps=30).to_record() == {
        "name": "random-consecutive",
        "num_frames": 8,
        "stride": 1,
        "normalized_fps": 30,
        "seed": 0,
    }
    assert "seed" not in SamplingPolicy("uniform").to_record()
    assert SamplingPolicy("int-fps", target_fps=1, max_frames=12).to_record() == {
        "name": "int-fps",
        "num_frames": 8,
        "stride": 1,
        "target_fps": 1,
        "max_frames": 12,
    }


# --- through the decoder ---------------------------------------------------------------------

DECODE_POLICIES = [
    SamplingPolicy("int-fps", target_fps=1, max_frames=4),
    SamplingPolicy("segment-start", 8),
    SamplingPolicy("random-consecutive", 8, normalized_fps=30),
]


@pytest.fixture(scope="module")
def video_24fps(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("videos") / "clip24.mp4"
    return str(write_video(path, SyntheticScene(direction="down"), num_frames=72, fps=24))


@pytest.mark.parametrize("policy", DECODE_POLICIES, ids=lambda policy: policy.name)
def test_new_policies_decode_real_video(video_24fps: str, policy: SamplingPolicy) -> None:
    views = [
        VideoView(video_24fps),
        VideoView(video_24fps, 0.5, 2.0),
        VideoView(video_24fps, 0.5, 2.0, reversed=True),
    ]
    whole, window, backward = decode_views(views, policy)
    for view, decoded in zip(views, (whole, window, backward)):
        first, last = window_frames(view, VideoMetadata(72, 24.0, 3.0, 64, 48))
        expected = policy.indices(first, last, 24.0, key=sampling_key(view))
        assert decoded.indices.tolist() == (expected[::-1] if view.reversed else expected).tolist()
        assert decoded.frames.shape == (len(expected), 3, 48, 64)
        np.testing.assert_allclose(decoded.timestamps, decoded.indices / 24.0, atol=1e-6)
    assert torch.equal(backward.frames, window.frames.flip(0))  # a reversal sees the same frames


def test_decoded_random_consecutive_clip_is_vilmas(video_24fps: str) -> None:
    """Seconds 0.5-2.0 of a 24 fps clip, normalised to 30: 46 frames, 8 consecutive ones from a
    seeded end."""
    view = VideoView(video_24fps, 0.5, 2.0)
    (decoded,) = decode_views([view], SamplingPolicy("random-consecutive", 8, normalized_fps=30))
    expected, segment = _vilma_reference(
        72, 24.0, Fraction(1, 2), Fraction(2), sampling_key(view), 0
    )
    assert segment == 46 and decoded.indices.tolist() == expected
    assert sampling_key(view) == "clip24.mp4|0.5|2.0"  # the folder is not part of the key
    assert sampling_key(VideoView("/elsewhere/clip24.mp4", 0.5, 2, reversed=True)) == sampling_key(
        view
    )
    assert sampling_key(VideoView(video_24fps)) == "clip24.mp4||"
