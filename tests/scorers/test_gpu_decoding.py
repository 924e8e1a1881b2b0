"""``--decoder torchcodec-cuda``: NVDEC decoding where a GPU has it, a recorded fallback where
not."""

from __future__ import annotations

import json

import pytest
import torch

from foilkit.scorers.api import score
from foilkit.scorers.video import SamplingPolicy, VideoView, decode_views, resolve_decoder


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the fallback of a CPU-only machine")
def test_without_cuda_the_run_decodes_on_the_cpu_and_says_why(
    tiny_model, benchmark, tmp_path, caplog
):
    options = {"num_workers": 0, "progress": False, "use_cache": False}
    cpu = score(tiny_model("clip"), benchmark, out_dir=str(tmp_path / "cpu"), **options)
    with caplog.at_level("WARNING"):
        fallback = score(
            tiny_model("clip"),
            benchmark,
            decoder="torchcodec-cuda",
            out_dir=str(tmp_path / "cuda"),
            **options,
        )
    assert "torchcodec-cuda needs a CUDA device" in caplog.text
    run = json.loads((tmp_path / "cuda" / "run.json").read_text())
    assert run["decoder"] == "torchcodec" and run["decoder_requested"] == "torchcodec-cuda"
    assert "torch.cuda.is_available() is False" in run["decoder_fallback"]
    assert fallback["caption_score"] == cpu["caption_score"]


def test_unknown_decoders_are_refused():
    with pytest.raises(ValueError, match="unknown decoder 'nvdec'"):
        resolve_decoder("nvdec")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device with NVDEC")
def test_nvdec_frames_stay_on_the_gpu_and_match_the_cpu_decode(video_dir):
    view = VideoView(str(sorted(video_dir.glob("motion_*.mp4"))[0]))
    policy = SamplingPolicy("uniform", 8)
    (cpu,) = decode_views([view], policy, "torchcodec")
    (gpu,) = decode_views([view, view.flipped()], policy, "torchcodec-cuda")[:1]
    assert gpu.frames.device.type == "cuda" and gpu.frames.shape == cpu.frames.shape
    assert (gpu.indices == cpu.indices).all()
    # NVDEC's colour conversion may round differently from FFmpeg's on the CPU
    difference = (gpu.frames.cpu().float() - cpu.frames.float()).abs().mean()
    assert difference < 3.0
