"""Faults in real videos: each view of a file fails or succeeds on its own, variable-frame-rate
windows select frames by their timestamps, rotated files decode alike in both decoders
(issue 15, items 1, 7 and 8)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

import foilkit
from foilkit.scorers.video import (
    CorruptVideoError,
    DecodedFrames,
    SamplingPolicy,
    VideoMetadata,
    VideoNotFoundError,
    VideoView,
    WindowOutOfRangeError,
    available_backends,
    decode_view,
    decode_views,
    probe,
    window_frames,
)
from foilkit.synthetic.videos import SyntheticScene, render_frames, write_video
from tests.fault_videos import write_corrupt_video, write_vfr_video

DECODERS = available_backends()
FOUR = SamplingPolicy("uniform", 4)
EVERY_FRAME = SamplingPolicy("uniform", 24)  # a 3 s video at 8 fps: every frame


@pytest.fixture(scope="module")
def video(tmp_path_factory) -> str:
    """24 frames at 8 fps: 3 s, frame ``i`` presented at ``i / 8`` s."""
    return str(write_video(tmp_path_factory.mktemp("cfr") / "clip.mp4", num_frames=24, fps=8))


def outside(video: str, start: float, end: float | None, duration: str = "3.000") -> str:
    bounds = f"{start:.3f}, {'end' if end is None else f'{end:.3f}'}"
    return f"{video}: window [{bounds}] s lies outside the video (duration {duration} s)"


# --- item 1: a bad window fails its own view only ------------------------------------------------

# (start, end, reversed) of each view -> its frames under FOUR, or None where its window is refused
VIEWS = [
    ((None, None, False), [0, 7, 15, 23]),
    ((5.0, 6.0, False), None),  # starts after the end
    ((0.5, 1.0, False), [4, 5, 6, 7]),
    ((1.0, 4.0, True), None),  # ends 1 s after the end: beyond the 0.5 s tolerance
    ((2.5, 3.3, True), [23, 22, 21, 20]),  # overruns within the tolerance
]


@pytest.mark.parametrize("decoder", DECODERS)
def test_a_bad_window_fails_only_its_own_view(video, decoder):
    views = [VideoView(video, start, end, backward) for (start, end, backward), _ in VIEWS]
    out = decode_views(views, FOUR, decoder)
    assert len(out) == len(views)
    for ((start, end, _), frames), view, result in zip(VIEWS, views, out):
        if frames is None:
            assert isinstance(result, WindowOutOfRangeError)
            assert str(result) == outside(video, start, end) and result.source == video
        else:
            assert isinstance(result, DecodedFrames)
            assert (result.indices.tolist(), result.reversed) == (frames, view.reversed)
            # the same frames as the view decoded without its bad neighbours
            alone = decode_view(view, FOUR, decoder)
            assert np.array_equal(result.indices, alone.indices)
            assert torch.equal(result.frames, alone.frames)


@pytest.mark.parametrize("decoder", DECODERS)
def test_a_file_whose_every_window_is_bad_decodes_nothing(video, decoder, monkeypatch):
    from foilkit.scorers.video import decoding

    opened = []
    real_open = decoding.open_video

    def spying(view, backend="torchcodec", *options):
        handle = real_open(view, backend, *options)
        opened.append(handle)
        monkeypatch.setattr(handle, "get_frames", lambda indices: pytest.fail("decoded frames"))
        return handle

    monkeypatch.setattr(decoding, "open_video", spying)
    out = decode_views(
        [VideoView(video, 5.0, 6.0), VideoView(video, 4.0, None)], EVERY_FRAME, decoder
    )
    assert [str(error) for error in out] == [outside(video, 5.0, 6.0), outside(video, 4.0, None)]
    assert len(opened) == 1


@pytest.mark.parametrize("decoder", DECODERS)
def test_decode_view_raises_the_window_error_naming_the_window(video, decoder):
    with pytest.raises(WindowOutOfRangeError) as caught:
        decode_view(VideoView(video, 5.0, 6.0), EVERY_FRAME, decoder)
    assert str(caught.value) == outside(video, 5.0, 6.0)


@pytest.mark.parametrize("decoder", DECODERS)
@pytest.mark.parametrize(
    ("make", "error", "message"),
    [
        (lambda folder: folder / "missing.mp4", VideoNotFoundError, "no such file"),
        (
            lambda folder: write_corrupt_video(folder / "corrupt.mp4"),
            CorruptVideoError,
            "cannot open it",
        ),
    ],
    ids=["missing", "corrupt"],
)
def test_a_fault_of_the_file_fails_every_view(tmp_path, decoder, make, error, message):
    path = str(make(tmp_path))
    views = [VideoView(path), VideoView(path, 0.5, 1.0), VideoView(path, 5.0, 6.0)]
    with pytest.raises(error, match=message) as caught:
        decode_views(views, EVERY_FRAME, decoder)
    assert caught.value.source == path


#: each decoder's name as its messages give it
DECODER_NAMES = {"torchcodec": "torchcodec", "torchcodec-cuda": "torchcodec-cuda", "pyav": "PyAV"}


@pytest.mark.parametrize("decoder", DECODERS)
def test_a_corrupt_file_s_message_names_the_decoder_that_ran(tmp_path, decoder, scoring_dataset):
    """Issue 40, section 2: under torchcodec the message said "PyAV cannot open it" (the PyAV
    probe that tells an empty container from a corrupt one spoke for it)."""
    from foilkit.synthetic.models import tiny_model_path

    path = str(write_corrupt_video(tmp_path / "corrupt.mp4"))
    named = DECODER_NAMES[decoder]
    with pytest.raises(CorruptVideoError) as caught:
        decode_view(VideoView(path), EVERY_FRAME, decoder)
    message = str(caught.value)
    assert message.startswith(f"{path}: {named} cannot open it: "), message
    assert "Invalid data found when processing input" in message
    assert ("torchcodec" if decoder == "pyav" else "PyAV") not in message, message
    assert ".cpp:" not in message  # torchcodec's C++ source location is left out
    rows = [{"id": "bad", "video": path, "caption": "a square moves right"}]
    scores = foilkit.score(
        str(tiny_model_path("clip")),
        scoring_dataset(rows),
        decoder=decoder,
        num_workers=0,
        progress=False,
        use_cache=False,
    )
    assert scores["error"] == [message]


def _rows(video: str, windows: list[tuple[float | None, float | None]], prefix: str) -> list[dict]:
    return [
        {
            "id": f"{prefix}{index}",
            "video": video,
            "start": start,
            "end": end,
            "caption": "a square moves right",
        }
        for index, (start, end) in enumerate(windows)
    ]


@pytest.mark.parametrize("model", ["clip", "blip-itm"])  # dual encoder; cross-encoder requests
def test_a_run_fails_the_rows_of_a_bad_window_and_scores_the_file_s_other_rows(
    model, video, scoring_dataset, tmp_path
):
    from foilkit.synthetic.models import tiny_model_path

    corrupt = str(write_corrupt_video(tmp_path / "corrupt.mp4"))
    windows = [(None, None), (5.0, 6.0), (0.5, 2.0), (1.0, 4.0), (5.0, 6.0), (2.5, None)]
    rows = _rows(video, windows, "good-file-") + _rows(
        corrupt, [(None, None), (0.5, 1.0)], "bad-file-"
    )
    scores = foilkit.score(
        str(tiny_model_path(model)),
        scoring_dataset(rows),
        num_workers=0,
        progress=False,
        use_cache=False,
    )
    corrupt_error = scores["error"][len(windows)]
    assert corrupt_error is not None and corrupt_error.startswith(f"{corrupt}: ")
    assert scores["error"] == [
        None,
        outside(video, 5.0, 6.0),
        None,
        outside(video, 1.0, 4.0),
        outside(video, 5.0, 6.0),  # a second row of the same bad view
        None,
        corrupt_error,
        corrupt_error,
    ]
    scored = [True, False, True, False, False, True, False, False]  # the rows without an error
    assert [score is not None for score in scores["caption_score"]] == scored
    assert [len(indices) > 0 for indices in scores["frame_indices"]] == scored


# --- item 7: variable frame rate -----------------------------------------------------------------

# 8 frames in the first second, 10 in the next, one at 2.058 s, then 9 more: 28 frames over
# 3.025 s, an average of 9.26 fps, by which [1, 2) s would be frames 10-18 (frame 18 at
# 2.058 s counted, frames 8 and 9 at 1.0 and 1.1 s missed)
VFR_TIMES = (
    [i / 8 for i in range(8)]
    + [1 + i / 10 for i in range(10)]
    + [2.058]
    + [2.1 + i / 10 for i in range(9)]
)

# window -> (first, last) frame by the timestamps
VFR_WINDOWS = {
    "issue-example": ((1.0, 2.0), (8, 17)),
    "first-second": ((0.0, 1.0), (0, 7)),
    "from-a-frame-time": ((2.058, 2.35), (18, 21)),
    "no-frame-inside": ((2.06, 2.09), (18, 18)),  # the frame on screen during it
    "overrun-within-tolerance": ((2.5, 3.4), (23, 27)),
    "open-end": ((1.95, None), (18, 27)),
}


@pytest.fixture(scope="module")
def vfr_video(tmp_path_factory) -> str:
    return str(write_vfr_video(tmp_path_factory.mktemp("vfr") / "vfr.mp4", VFR_TIMES))


@pytest.mark.parametrize("decoder", DECODERS)
def test_both_decoders_report_the_frame_timestamps(vfr_video, decoder):
    meta = probe(vfr_video, decoder)
    assert (meta.num_frames, meta.variable_rate) == (28, True)
    assert meta.fps == pytest.approx(28 / 3.025)
    np.testing.assert_allclose(meta.frame_times, VFR_TIMES, atol=1e-6)
    # what the average rate alone would select: the frames 10-18
    assert window_frames(
        VideoView(vfr_video, 1.0, 2.0), dataclasses.replace(meta, frame_times=None)
    ) == (10, 18)


@pytest.mark.parametrize("decoder", DECODERS)
@pytest.mark.parametrize(("window", "expected"), VFR_WINDOWS.values(), ids=VFR_WINDOWS)
def test_a_vfr_window_selects_the_frames_presented_in_it(vfr_video, decoder, window, expected):
    view = VideoView(vfr_video, *window)
    first, last = window_frames(view, probe(vfr_video, decoder))
    assert (first, last) == expected
    decoded = decode_view(view, SamplingPolicy("uniform", last - first + 1), decoder)
    assert decoded.indices.tolist() == list(range(first, last + 1))
    np.testing.assert_allclose(decoded.timestamps, VFR_TIMES[first : last + 1], atol=1e-6)


@pytest.mark.parametrize("decoder", DECODERS)
def test_vfr_bytes_are_windowed_like_the_file(vfr_video, decoder):
    data = Path(vfr_video).read_bytes()
    decoded = decode_view(VideoView(data, 1.0, 2.0), SamplingPolicy("uniform", 10), decoder)
    assert decoded.indices.tolist() == list(range(8, 18))


# frame times -> variable rate? (a constant rate stored in whole milliseconds is still constant)
RATES = {
    "29.97-fps-in-ms": ([round(i * 1001 / 30) / 1000 for i in range(1800)], False),
    "8-fps": ([i / 8 for i in range(24)], False),
    "one-late-frame": (
        [i / 8 for i in range(12)] + [1.5 + 0.02] + [1.625 + i / 8 for i in range(11)],
        True,
    ),
    "issue-file": (VFR_TIMES, True),
}


@pytest.mark.parametrize(("times", "variable"), RATES.values(), ids=RATES)
def test_variable_rate_is_told_by_the_timestamps(times, variable):
    # a wrong last-frame duration skews the average rate: it must not make the stream variable
    skewed = VideoMetadata(len(times), len(times) / times[-1], times[-1], 64, 48, np.asarray(times))
    assert skewed.variable_rate is variable


@pytest.mark.parametrize("decoder", DECODERS)
def test_a_vfr_window_beyond_the_video_is_its_own_error(vfr_video, decoder):
    out = decode_views(
        [VideoView(vfr_video, 3.1, 3.2), VideoView(vfr_video, 1.0, 2.0)], EVERY_FRAME, decoder
    )
    assert str(out[0]) == outside(vfr_video, 3.1, 3.2, duration="3.025")
    assert isinstance(out[1], DecodedFrames) and set(out[1].indices.tolist()) == set(range(8, 18))


@pytest.mark.parametrize("decoder", DECODERS)
@pytest.mark.parametrize("start", np.arange(0, 2.9, 0.0625).tolist())
def test_constant_rate_windows_are_found_by_the_rate(video, decoder, start):
    """A constant-rate file is not taken for variable rate, and the timestamps would agree."""
    meta = probe(video, decoder)
    assert not meta.variable_rate
    by_rate = dataclasses.replace(meta, frame_times=None)
    for end in np.arange(start + 0.0625, 3.4, 0.0625):
        view = VideoView(video, start, float(end))
        assert window_frames(view, meta) == window_frames(view, by_rate)
        first, last = window_frames(view, meta)
        times = meta.frame_times[first : last + 1]
        assert times[0] >= start - 1e-6 and (len(times) == 1 or times[-1] < end)


# --- item 8: rotation ----------------------------------------------------------------------------


@pytest.mark.parametrize("degrees", [0, 90, 180, 270])
def test_both_decoders_turn_a_rotated_file_upright(tmp_path, degrees):
    path = str(
        write_video(tmp_path / f"rotated{degrees}.mp4", rotation=degrees, width=64, height=48)
    )
    upright = np.rot90(
        render_frames(SyntheticScene(), width=64, height=48), degrees // 90, axes=(1, 2)
    )
    size = (48, 64) if degrees % 180 else (64, 48)  # (width, height) as displayed
    policy = SamplingPolicy("uniform", 6)
    decoded = {}
    for decoder in DECODERS:
        meta = probe(path, decoder)
        assert (meta.width, meta.height) == size
        decoded[decoder] = decode_view(VideoView(path), policy, decoder)
        frames = decoded[decoder].frames
        assert frames.shape == (6, 3, size[1], size[0])
        shown = torch.from_numpy(np.ascontiguousarray(upright[decoded[decoder].indices])).permute(
            0, 3, 1, 2
        )
        assert (frames.float() - shown.float()).abs().mean() < 3.0  # codec tolerance
    a, b = decoded["pyav"], decoded["torchcodec"]
    assert np.array_equal(a.indices, b.indices)
    assert (a.frames.float() - b.frames.float()).abs().mean() < 2.0
