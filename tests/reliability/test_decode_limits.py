"""Files that are not videos, and frames too large to hold (issue 35, section 4).

A file of fewer than two frames (a PNG named ``.mp4``, a clip cut to one frame) is a row error
that says so, not a video sampled as ``[0, 0, ..., 0]``. Frames over the decoding pixel budget
are scaled down inside the decoder, so a small file declaring 8192 x 8192 frames costs a run
hundreds of MB rather than gigabytes; the decoder that cannot scale (torchcodec-cuda) fails the
file naming its resolution.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import foilkit
from foilkit.scorers.api import ScoreOptions
from foilkit.scorers.video import (
    MAX_DECODE_PIXELS,
    DecoderUnavailableError,
    EmptyVideoError,
    FrameTooLargeError,
    SamplingPolicy,
    TooFewFramesError,
    VideoView,
    available_backends,
    decode_size,
    decode_view,
    decode_views,
    decoding,
)
from foilkit.synthetic.videos import write_video
from tests.fault_videos import write_image_as_video, write_large_video

DECODERS = available_backends()
CPU_DECODERS = ["torchcodec", "pyav"]
EIGHT = SamplingPolicy("uniform", 8)
MIB = 1 << 20


# --- fewer than two frames -----------------------------------------------------------------------

STILLS = {
    "png-named-mp4": (lambda folder: write_image_as_video(folder / "image.mp4"), "'png'"),
    "one-frame-h264": (lambda folder: write_video(folder / "one.mp4", num_frames=1), "'h264'"),
}


@pytest.mark.parametrize("decoder", DECODERS)
@pytest.mark.parametrize("still", list(STILLS))
def test_a_file_of_one_frame_is_refused_by_every_decoder(tmp_path, decoder, still):
    make, codec = STILLS[still]
    path = str(make(tmp_path))
    with pytest.raises(TooFewFramesError) as caught:
        decode_views([VideoView(path), VideoView(path, reversed=True)], EIGHT, decoder)
    assert caught.value.source == path
    assert str(caught.value).startswith(f"{path}: the video stream holds only 1 frame (codec ")
    assert codec in str(caught.value) and "needs at least 2 frames" in str(caught.value)
    assert isinstance(caught.value, EmptyVideoError)  # code that catches empty files catches it


@pytest.mark.parametrize("decoder", DECODERS)
def test_two_frames_are_a_video(tmp_path, decoder):
    path = str(write_video(tmp_path / "two.mp4", num_frames=2))
    assert decode_view(VideoView(path), EIGHT, decoder).indices.tolist() == [0] * 7 + [1]


def test_a_run_fails_the_rows_of_a_one_frame_file_and_scores_the_others(
    tmp_path, tiny_clip, scoring_dataset
):
    videos = {
        "video": write_video(tmp_path / "clip.mp4", num_frames=8),
        "png": write_image_as_video(tmp_path / "image.mp4"),
        "one-frame": write_video(tmp_path / "one.mp4", num_frames=1),
    }
    rows = [
        {"id": name, "video": str(path), "caption": "a red square"} for name, path in videos.items()
    ]
    scores = foilkit.score(
        tiny_clip, scoring_dataset(rows), num_workers=0, progress=False, use_cache=False
    )
    assert scores["error"][0] is None and scores["caption_score"][0] is not None
    for index, name in ((1, "png"), (2, "one-frame")):
        error = scores["error"][index]
        assert error.startswith(f"{videos[name]}: the video stream holds only 1 frame"), error
        assert scores["caption_score"][index] is None and scores["frame_indices"][index] == []


# --- the pixel budget ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "budget", "expected"),
    [
        ((8192, 8192), MAX_DECODE_PIXELS, (2880, 2880)),
        ((3840, 2160), MAX_DECODE_PIXELS, (3840, 2160)),  # 4K UHD: exactly the default budget
        ((1920, 1080), MAX_DECODE_PIXELS, (1920, 1080)),
        ((7680, 4320), MAX_DECODE_PIXELS, (3840, 2160)),  # 8K: halved, aspect kept
        ((64, 48), 32 * 24, (32, 24)),
        ((100000, 2), 1000, (1000, 1)),  # a side never drops below one pixel
        ((2, 100000), 1000, (1, 1000)),
        ((1000, 1000), 999999, (999, 999)),
    ],
)
def test_decode_size_fits_the_budget_and_keeps_the_aspect(size, budget, expected):
    width, height = decode_size(*size, budget)
    assert (width, height) == expected and width * height <= budget


def test_decode_size_refuses_a_budget_below_one_pixel():
    with pytest.raises(ValueError, match="max_pixels must be >= 1, got 0"):
        decode_size(64, 48, 0)


def _resized(frames: torch.Tensor, height: int, width: int) -> torch.Tensor:
    return F.interpolate(
        frames.float(), size=(height, width), mode="bilinear", antialias=True, align_corners=False
    )


@pytest.mark.parametrize("decoder", CPU_DECODERS)
@pytest.mark.parametrize("degrees", [0, 90])
def test_frames_over_the_budget_are_scaled_down_while_decoding(tmp_path, decoder, degrees):
    path = str(write_video(tmp_path / "clip.mp4", rotation=degrees, width=64, height=48))
    full = decode_view(VideoView(path), EIGHT, decoder)
    small = decode_view(VideoView(path), EIGHT, decoder, max_pixels=32 * 24)
    height, width = (32, 24) if degrees else (24, 32)  # as displayed, halved
    assert full.frames.shape[2:] == (2 * height, 2 * width)
    assert small.frames.shape == (8, 3, height, width) and small.frames.dtype == torch.uint8
    assert small.indices.tolist() == full.indices.tolist()
    # the same picture: the full-size frames resized afterwards, within codec and filter noise
    assert (small.frames.float() - _resized(full.frames, height, width)).abs().mean() < 6.0


def test_both_cpu_decoders_scale_alike(tmp_path):
    path = str(write_video(tmp_path / "clip.mp4", width=64, height=48))
    a, b = (decode_view(VideoView(path), EIGHT, name, max_pixels=32 * 24) for name in CPU_DECODERS)
    assert a.frames.shape == b.frames.shape == (8, 3, 24, 32)
    assert (a.frames.float() - b.frames.float()).abs().mean() < 3.0


def test_a_decoder_that_cannot_scale_fails_the_file_naming_its_resolution(tmp_path, monkeypatch):
    """torchcodec-cuda cannot resize while decoding; checked on the CPU (its logic alone)."""
    monkeypatch.setattr(decoding._TorchcodecCudaVideo, "device", "cpu")
    path = str(write_video(tmp_path / "clip.mp4", width=64, height=48))
    with pytest.raises(FrameTooLargeError) as caught:
        decode_view(VideoView(path), EIGHT, "torchcodec-cuda", max_pixels=32 * 24)
    assert caught.value.source == path
    assert "its frames are 64x48 (3,072 pixels), over the decoding budget of 768 pixels" in str(
        caught.value
    )
    assert "--decoder torchcodec" in str(caught.value) and "--max-decode-pixels" in str(
        caught.value
    )
    within = decode_view(VideoView(path), EIGHT, "torchcodec-cuda", max_pixels=64 * 48)
    assert within.frames.shape == (8, 3, 48, 64)


def test_a_file_nvdec_cannot_open_fails_naming_its_resolution_when_over_the_budget(
    tmp_path, monkeypatch
):
    """NVDEC refuses frames beyond its limits when the decoder is made: over the budget, that is
    the file's fault (a row error), not an unusable GPU (which stops the run)."""
    import torchcodec.decoders

    def refusing(*args, **kwargs):
        raise RuntimeError("NVDEC: resolution not supported")

    monkeypatch.setattr(torchcodec.decoders, "VideoDecoder", refusing)
    path = str(write_video(tmp_path / "clip.mp4", width=64, height=48))
    with pytest.raises(FrameTooLargeError, match="its frames are 64x48 "):
        decode_view(VideoView(path), EIGHT, "torchcodec-cuda", max_pixels=32 * 24)
    with pytest.raises(DecoderUnavailableError, match="rerun with --decoder torchcodec"):
        decode_view(VideoView(path), EIGHT, "torchcodec-cuda", max_pixels=64 * 48)


@pytest.mark.parametrize("value", [0, -1, 2.5, True, "8294400"])
def test_score_options_refuse_a_bad_budget(value):
    with pytest.raises(ValueError, match="max_decode_pixels must be a whole number"):
        ScoreOptions(max_decode_pixels=value)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [([], MAX_DECODE_PIXELS), (["--max-decode-pixels", "7680x4320"], 7680 * 4320)],
)
@pytest.mark.parametrize("command", ["score", "evaluate"])
def test_the_flag_reaches_the_score_options(command, argv, expected):
    from foilkit.cli import command_parser
    from foilkit.cli.score import score_options

    required = ["--model", "m", "--out", "o"]
    required += ["--dataset", "d"] if command == "score" else ["--benchmark", "vitatecs"]
    _, parser = command_parser(command)
    assert score_options(parser.parse_args([*required, *argv])).max_decode_pixels == expected


@pytest.mark.parametrize("value", ["0", "-5", "lots", "64x"])
def test_the_flag_refuses_a_bad_value(value, capsys):
    from foilkit.cli import main

    with pytest.raises(SystemExit) as caught:
        main(
            ["score", "--model", "m", "--dataset", "d", "--out", "o", "--max-decode-pixels", value]
        )
    assert caught.value.code == 2
    assert "is not a pixel count >= 1" in capsys.readouterr().err


def test_the_budget_is_recorded_in_run_json(tmp_path, tiny_clip, scoring_dataset):
    path = str(write_video(tmp_path / "clip.mp4", width=64, height=48))
    out = tmp_path / "run"
    rows = [{"id": "a", "video": path, "caption": "a red square"}]
    foilkit.score(
        tiny_clip,
        scoring_dataset(rows),
        out_dir=str(out),
        max_decode_pixels=32 * 24,
        num_workers=0,
        progress=False,
        use_cache=False,
    )
    run = json.loads((out / "run.json").read_text())
    assert run["max_decode_pixels"] == run["identity"]["max_decode_pixels"] == 768
    # a different budget is a different run: resuming under another one is refused
    with pytest.raises(ValueError, match="max_decode_pixels was 768, now 8294400"):
        foilkit.score(
            tiny_clip,
            scoring_dataset(rows),
            out_dir=str(out),
            resume=True,
            num_workers=0,
            progress=False,
            use_cache=False,
        )


# --- peak memory of a run with an 8192 x 8192 file --------------------------------------------

# Scores a one-row dataset of argv[1] (a small video), then of argv[2] (the 8192 x 8192 file), in
# one process, printing the peak resident memory after each: the second run's growth over the
# first is what the huge file costs.
_PEAK_SCRIPT = """
import json, resource, sys
import datasets, foilkit
from foilkit.synthetic.models import tiny_model_path

model = str(tiny_model_path("clip"))

def peak_after_scoring(video):
    rows = [{"id": "a", "video": video, "start": None, "end": None, "reversed": False,
             "caption": "a grey screen", "foils": ["a red square"]}]
    data = datasets.Dataset.from_list(rows).cast_column("video", datasets.Video())
    scores = foilkit.score(model, data, decoder=sys.argv[3], num_workers=0, progress=False,
                           use_cache=False)
    assert scores["error"] == [None], scores["error"]
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux

print(json.dumps([peak_after_scoring(sys.argv[1]), peak_after_scoring(sys.argv[2])]))
"""


@pytest.fixture(scope="module")
def huge_video(tmp_path_factory) -> str:
    """Two 8192 x 8192 H.264 frames: a file of under 1 MB, 201 MB a frame decoded as RGB."""
    return str(write_large_video(tmp_path_factory.mktemp("huge") / "huge.mp4"))


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux only")
@pytest.mark.parametrize("decoder", CPU_DECODERS)
def test_an_8192_square_file_costs_a_run_under_1_gib(tmp_path, huge_video, decoder):
    """Before the budget the 8192 x 8192 frames took a run ~2.4 GB above the same run on a small
    video (3 frames decoded, then copied and gathered at full size); now ~0.4-0.8 GB."""
    small = str(write_video(tmp_path / "small.mp4", width=64, height=48, num_frames=2))
    result = subprocess.run(
        [sys.executable, "-c", _PEAK_SCRIPT, small, huge_video, decoder],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    baseline, with_huge = json.loads(result.stdout.strip().splitlines()[-1])
    growth = with_huge - baseline
    assert growth < 1024 * MIB, f"the 8192x8192 file took the run {growth / MIB:.0f} MiB higher"
    assert "decoding them at 2880x2880" in result.stderr  # scaled down, not failed


def test_a_run_from_before_the_budget_resumes_under_the_default(
    tmp_path, tiny_clip, scoring_dataset
):
    path = str(write_video(tmp_path / "clip.mp4", width=64, height=48))
    out = tmp_path / "run"
    data = scoring_dataset([{"id": "a", "video": path, "caption": "a red square"}])
    options = dict(out_dir=str(out), num_workers=0, progress=False, use_cache=False)
    foilkit.score(tiny_clip, data, **options)
    record = json.loads((out / "run.json").read_text())
    del record["identity"]["max_decode_pixels"]  # as a run.json written before the budget
    (out / "run.json").write_text(json.dumps(record))
    resumed = foilkit.score(tiny_clip, data, resume=True, **options)
    assert resumed["error"] == [None]
    with pytest.raises(ValueError, match="max_decode_pixels was 8294400, now 768"):
        foilkit.score(tiny_clip, data, resume=True, max_decode_pixels=768, **options)
