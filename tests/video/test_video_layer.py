"""The video layer: sampling policies, both decoder backends, reversed views, bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from foilkit.scorers.video import (
    SAMPLERS,
    CorruptVideoError,
    EmptyVideoError,
    SamplingPolicy,
    VideoNotFoundError,
    VideoView,
    WindowOutOfRangeError,
    available_backends,
    content_hash,
    decode_view,
    decode_views,
    probe,
    window_frames,
)
from foilkit.synthetic.videos import SyntheticScene, render_frames, write_video
from tests.fault_videos import write_corrupt_video, write_empty_video

NUM_FRAMES, FPS = 24, 8
POLICIES = [
    SamplingPolicy("uniform", 8),
    SamplingPolicy("segment-middle", 8),
    SamplingPolicy("consecutive", 4, stride=2),
    SamplingPolicy("fps", target_fps=2.0, max_frames=5),
]


@pytest.fixture(scope="module")
def video(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("videos") / "video9770.mp4"
    return str(write_video(path, SyntheticScene(direction="right"), num_frames=NUM_FRAMES, fps=FPS))


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        (SamplingPolicy("uniform", 4), [0, 7, 15, 23]),  # linspace with both ends, truncated
        (SamplingPolicy("segment-middle", 4), [3, 9, 15, 21]),  # middle of 4 segments of 6
        (SamplingPolicy("consecutive", 4, stride=2), [8, 10, 12, 14]),  # centred clip
        (SamplingPolicy("fps", target_fps=2.0), [0, 4, 8, 12, 16, 20]),  # every 4th frame at 8 fps
        (SamplingPolicy("fps", target_fps=2.0, max_frames=3), [0, 8, 20]),  # thinned to the cap
        # qwen-vl-utils: 3 s at 2 fps = 6 frames, linspace rounded; at 1 fps 3 -> at least 4
        (SamplingPolicy("qwen-vl-utils"), [0, 5, 9, 14, 18, 23]),
        (SamplingPolicy("qwen-vl-utils", target_fps=1.0), [0, 8, 15, 23]),
    ],
)
def test_policies_pick_documented_indices(policy: SamplingPolicy, expected: list[int]) -> None:
    assert policy.indices(0, 23, float(FPS)).tolist() == expected


def test_policies_stay_inside_window_and_are_deterministic() -> None:
    for name in SAMPLERS:
        stride = 1 if name == "random-consecutive" else 3  # ViLMA's clips are consecutive
        policy = SamplingPolicy(name, 6, stride=stride, target_fps=3.0)
        first = policy.indices(10, 17, 8.0, key="view")
        assert first.min() >= 10 and first.max() <= 17
        assert np.all(np.diff(first) >= 0)
        assert np.array_equal(first, policy.indices(10, 17, 8.0, key="view"))


@pytest.mark.parametrize(
    "kwargs", [{"name": "random"}, {"num_frames": 0}, {"stride": 0}, {"name": "fps"}], ids=str
)
def test_bad_policies_are_rejected(kwargs) -> None:
    with pytest.raises(ValueError):
        SamplingPolicy(**kwargs)


@pytest.mark.parametrize("backend", available_backends())
def test_probe(video: str, backend: str) -> None:
    meta = probe(video, backend)
    assert (meta.num_frames, meta.fps, meta.width, meta.height) == (NUM_FRAMES, FPS, 64, 48)
    assert meta.duration == pytest.approx(NUM_FRAMES / FPS)


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.name)
def test_backends_agree_on_every_policy(video: str, policy: SamplingPolicy) -> None:
    a = decode_view(VideoView(video), policy, "torchcodec")
    b = decode_view(VideoView(video), policy, "pyav")
    assert a.frames.dtype == torch.uint8 and a.frames.shape[1:] == (3, 48, 64)
    assert a.frames.shape[0] == len(a.indices) == len(a.timestamps)
    assert np.array_equal(a.indices, b.indices)
    np.testing.assert_allclose(a.timestamps, a.indices / FPS, atol=1e-6)
    np.testing.assert_allclose(a.timestamps, b.timestamps, atol=1e-6)
    assert (a.frames.float() - b.frames.float()).abs().mean() < 2.0  # same FFmpeg, codec tolerance


def test_decoded_frames_show_the_rendered_motion(video: str) -> None:
    decoded = decode_view(VideoView(video), SamplingPolicy("uniform", 8))
    truth = torch.from_numpy(
        render_frames(SyntheticScene(direction="right"), num_frames=NUM_FRAMES)
    )
    truth = truth.permute(0, 3, 1, 2)[torch.from_numpy(decoded.indices)]
    assert (decoded.frames.float() - truth.float()).abs().mean() < 6.0  # lossy H.264, yuv420p


@pytest.mark.parametrize("backend", available_backends())
def test_reversed_view_is_forward_frames_reversed(video: str, backend: str) -> None:
    policy = SamplingPolicy("uniform", 8)
    forward, backward = decode_views(
        [VideoView(video), VideoView(video, reversed=True)], policy, backend
    )
    assert torch.equal(backward.frames, forward.frames.flip(0))
    for view in (forward, backward):  # T x C x H x W, contiguous: what models and processors take
        assert view.frames.is_contiguous() and view.frames.shape[:2] == (8, 3)
    assert backward.indices.tolist() == forward.indices[::-1].tolist()
    assert (
        backward.reversed
        and backward.to_record()["frame_indices"] == forward.indices[::-1].tolist()
    )


def test_several_views_decode_the_union_once(video: str, monkeypatch) -> None:
    from foilkit.scorers.video import decoding

    calls: list[list[int]] = []
    original = decoding._TorchcodecVideo.get_frames

    def counting(self, indices):
        calls.append(indices.tolist())
        return original(self, indices)

    monkeypatch.setattr(decoding._TorchcodecVideo, "get_frames", counting)
    views = [VideoView(video), VideoView(video, reversed=True), VideoView(video, 1.0, 2.0)]
    out = decode_views(views, SamplingPolicy("uniform", 4))
    assert len(calls) == 1
    assert calls[0] == sorted(set(np.concatenate([d.indices for d in out]).tolist()))
    assert out[2].indices.tolist() == [
        8,
        10,
        12,
        15,
    ]  # linspace(8, 15, 4) truncated: [1 s, 2 s) at 8 fps


def test_bytes_and_feature_mapping_sources_decode_like_paths(video: str) -> None:
    policy = SamplingPolicy("uniform", 4)
    data = Path(video).read_bytes()
    by_path = decode_view(VideoView(video), policy).frames
    assert torch.equal(decode_view(VideoView(data), policy).frames, by_path)
    assert torch.equal(
        decode_view(VideoView({"path": video, "bytes": None}), policy).frames, by_path
    )
    assert content_hash(video) == content_hash(data)


@pytest.mark.parametrize(
    ("unit", "start", "end", "kwargs", "expected"),
    [
        ("sec", 1.0, 2.0, {}, (1.0, 2.0)),
        ("frame", 56, 96, {"fps": 30.0}, (56 / 30, 96 / 30)),
        ("pts", 90000, 180000, {"time_base": 1 / 90000}, (1.0, 2.0)),
    ],
)
def test_window_units_convert_to_seconds(unit, start, end, kwargs, expected) -> None:
    view = VideoView.from_units("v.mp4", start, end, unit=unit, **kwargs)
    assert (view.start, view.end) == pytest.approx(expected)


@pytest.mark.parametrize(("unit", "kwargs"), [("frame", {}), ("pts", {}), ("minutes", {})])
def test_window_units_need_their_scale(unit, kwargs) -> None:
    with pytest.raises(ValueError):
        VideoView.from_units("v.mp4", 1, 2, unit=unit, **kwargs)


@pytest.mark.parametrize(("start", "end"), [(2.0, 1.0), (-1.0, 2.0), (float("nan"), 1.0)])
def test_malformed_windows_name_the_video(start, end) -> None:
    with pytest.raises(ValueError, match="v.mp4"):
        VideoView("v.mp4", start, end)


def test_window_frame_range(video: str) -> None:
    meta = probe(video)
    assert window_frames(VideoView(video), meta) == (0, 23)
    assert window_frames(VideoView(video, 0.5, 1.0), meta) == (4, 7)
    assert window_frames(VideoView(video, 2.5, 3.3), meta) == (20, 23)  # overrun within tolerance
    assert window_frames(VideoView(video, 1.0, 1.01), meta) == (8, 8)  # shorter than a frame


@pytest.mark.parametrize("backend", available_backends())
@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda folder: folder / "missing.mp4", VideoNotFoundError),
        (lambda folder: write_corrupt_video(folder / "corrupt.mp4"), CorruptVideoError),
        (lambda folder: write_empty_video(folder / "empty.mp4"), EmptyVideoError),
    ],
    ids=["missing", "corrupt", "empty"],
)
def test_bad_videos_raise_named_errors(tmp_path, backend, make, error) -> None:
    path = make(tmp_path)
    with pytest.raises(error, match=str(path.name)) as caught:
        decode_view(VideoView(str(path)), SamplingPolicy("uniform", 4), backend)
    assert caught.value.source == str(path)


@pytest.mark.parametrize(("start", "end"), [(5.0, 6.0), (1.0, 4.0)])
def test_window_outside_video_is_an_error(video: str, start: float, end: float) -> None:
    with pytest.raises(WindowOutOfRangeError, match="video9770.mp4"):
        decode_view(VideoView(video, start, end), SamplingPolicy("uniform", 4))


def test_views_of_different_videos_are_not_mixed(video: str, tmp_path) -> None:
    other = str(write_video(tmp_path / "other.mp4"))
    with pytest.raises(ValueError, match="one video"):
        decode_views([VideoView(video), VideoView(other)], SamplingPolicy())
