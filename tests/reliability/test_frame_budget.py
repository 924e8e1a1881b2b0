"""Hostile container metadata and the frame budget of rate sampling (issue 41, item 9).

A few KB of MKV or MP4 can declare frames hours apart, so a frame rate of a millionth of a
frame a second: ``--sampling fps`` laid its positions on that declared timeline, asking for
millions of (repeated) frames of a 4-frame file, and a run died allocating them. Rate sampling
now takes each real frame at most once, holds to a default frame budget (recorded with the
run) and fails a view past it as a row error naming the fix.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import foilkit
from foilkit.scorers.video import (
    SamplingError,
    SamplingPolicy,
    VideoView,
    available_backends,
    decode_views,
    probe,
)
from foilkit.scorers.video.sampling import FRAME_BUDGET
from foilkit.synthetic.videos import write_video

DECODERS = available_backends()
CPU_DECODERS = ["torchcodec", "pyav"]
EVERY_SECOND = SamplingPolicy("fps", target_fps=1.0)


def write_far_apart(path: Path, container: str, seconds_apart: int, num_frames: int = 4) -> Path:
    """A tiny H.264 file (16 x 16, a few KB) of ``num_frames`` frames presented
    ``seconds_apart`` seconds apart: its declared duration is huge, its frame rate tiny."""
    import av

    time_base = Fraction(1, 1000)
    with av.open(str(path), mode="w", format=container) as output:
        stream = output.add_stream("libx264", rate=8)
        stream.width, stream.height, stream.pix_fmt = 16, 16, "yuv420p"
        stream.codec_context.time_base = time_base
        for index in range(num_frames):
            pixels = np.full((16, 16, 3), 40 * index, dtype=np.uint8)
            frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
            frame.pts, frame.time_base = index * seconds_apart * 1000, time_base
            output.mux(stream.encode(frame))
        output.mux(stream.encode())
    return path


#: name -> (container, seconds between frames): the MP4 muxer stores at most ~10^4 s a frame
HOSTILE = {"mkv": ("matroska", 100_000), "mp4": ("mp4", 10_000)}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("hostile")
    return {
        name: str(write_far_apart(folder / f"far.{name}", container, apart))
        for name, (container, apart) in HOSTILE.items()
    }


@pytest.mark.parametrize("decoder", CPU_DECODERS)
@pytest.mark.parametrize("name", list(HOSTILE))
def test_rate_sampling_takes_real_frames_of_a_file_declaring_hours_between_them(
    hostile, name, decoder
):
    path = hostile[name]
    assert Path(path).stat().st_size < 4096  # a few KB
    meta = probe(path, decoder)
    indices = EVERY_SECOND.indices(0, meta.num_frames - 1, meta.fps)
    # at most one position per real frame: all of them where the declared rate is below 1 fps
    assert len(indices) == len(set(indices.tolist())) <= meta.num_frames
    assert indices.min() >= 0 and indices.max() <= meta.num_frames - 1
    if meta.fps < 1:
        assert indices.tolist() == list(range(meta.num_frames))
    (decoded,) = decode_views([VideoView(path)], EVERY_SECOND, decoder)
    assert decoded.frames.shape[0] == len(decoded.indices) <= meta.num_frames


@pytest.mark.parametrize(
    ("fps", "target", "expected"),
    [
        (8.0, 2.0, [0, 4, 8, 12, 16, 20]),  # every 4th frame: unchanged
        (8.0, 8.0, list(range(24))),  # every frame
        (8.0, 30.0, list(range(24))),  # faster than the video: every frame once, not repeated
        (1e-6, 1.0, list(range(24))),  # a declared rate of a frame every 11.6 days
    ],
    ids=["quarter", "same", "faster", "declared-tiny"],
)
def test_rate_sampling_never_repeats_a_frame(fps, target, expected):
    assert SamplingPolicy("fps", target_fps=target).indices(0, 23, fps).tolist() == expected


def test_rate_policies_record_a_default_frame_budget():
    assert FRAME_BUDGET == 768
    for name in ("fps", "int-fps"):
        record = SamplingPolicy(name, target_fps=1).to_record()
        assert record["frame_budget"] == FRAME_BUDGET, name
        # a cap of its own thins longer views, so no budget applies
        assert "frame_budget" not in SamplingPolicy(name, target_fps=1, max_frames=12).to_record()
    assert "frame_budget" not in SamplingPolicy("uniform", 8).to_record()


@pytest.mark.parametrize("command", ["score", "evaluate"])
def test_the_max_frames_help_states_the_budget(command):
    from foilkit.cli import command_parser

    _, parser = command_parser(command)
    assert f"fail a view of more than {FRAME_BUDGET} frames" in " ".join(
        parser.format_help().split()
    )


def test_frame_budget_below_one_is_refused():
    with pytest.raises(ValueError, match="frame_budget must be >= 1, got 0"):
        SamplingPolicy("fps", target_fps=1, frame_budget=0)


@pytest.mark.parametrize("decoder", DECODERS)
def test_a_view_past_the_budget_fails_alone(tmp_path, decoder):
    long = str(write_video(tmp_path / "long.mp4", width=16, height=16, num_frames=40, fps=8))
    policy = SamplingPolicy("fps", target_fps=8.0, frame_budget=16)
    whole, first_second = decode_views(
        [VideoView(long), VideoView(long, 0.0, 1.0)], policy, decoder
    )
    assert isinstance(whole, SamplingError) and whole.source == long
    assert str(whole) == (
        f"{long}: the 'fps' policy would take 40 frames of this window (40 frames at 8 fps), over "
        "the budget of 16 frames a view: pass --max-frames N to thin a longer view to N frames "
        "(max_frames= in Python), or a lower --target-fps"
    )
    assert first_second.indices.tolist() == list(range(8))


def test_a_run_fails_the_row_past_the_default_budget_and_records_it(
    tmp_path, tiny_clip, scoring_dataset
):
    videos = {
        "short": write_video(tmp_path / "short.mp4", width=16, height=16, num_frames=16, fps=8),
        "long": write_video(
            tmp_path / "long.mp4", width=16, height=16, num_frames=FRAME_BUDGET + 8, fps=8
        ),
    }
    rows = [
        {"id": name, "video": str(path), "caption": "a square"} for name, path in videos.items()
    ]
    out = tmp_path / "run"
    scores = foilkit.score(
        tiny_clip,
        scoring_dataset(rows),
        sampling="fps",
        target_fps=8.0,
        num_workers=0,
        progress=False,
        use_cache=False,
        out_dir=str(out),
    )
    assert scores["error"][0] is None and scores["frame_indices"][0] == list(range(16))
    error = scores["error"][1]
    assert error.startswith(f"{videos['long']}: the 'fps' policy would take 776 frames"), error
    assert "over the budget of 768 frames a view: pass --max-frames N" in error
    assert scores["caption_score"][1] is None
    record = json.loads((out / "run.json").read_text())
    assert record["sampling"]["frame_budget"] == FRAME_BUDGET


def test_a_run_over_a_hostile_file_scores_its_real_frames(hostile, tiny_clip, scoring_dataset):
    rows = [{"id": name, "video": path, "caption": "a square"} for name, path in hostile.items()]
    scores = foilkit.score(
        tiny_clip,
        scoring_dataset(rows),
        sampling="fps",
        target_fps=1.0,
        num_workers=0,
        progress=False,
        use_cache=False,
    )
    for index, name in enumerate(hostile):
        indices = scores["frame_indices"][index]
        assert scores["error"][index] is None, scores["error"][index]
        assert len(indices) == len(set(indices)) <= 4, (name, len(indices))
