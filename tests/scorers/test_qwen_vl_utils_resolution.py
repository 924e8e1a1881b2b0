"""The ``reference`` preprocessing of the Qwen-VL video LLMs: frames sized by qwen-vl-utils'
rules (``smart_resize`` within 128..768 tokens a frame and the video's share of a 128000-token
context), whatever the checkpoint's processor would do; recorded in the run, asked for by the
VITATECS paper protocol. The rule itself is checked against a port of qwen-vl-utils 0.0.14
(``foilkit.scorers.adapters._qwen_vl_utils``; it agrees with the real package on 6000 random
sizes)."""

from __future__ import annotations

import math

import pytest
import torch

from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.adapters._qwen_vl_utils import QwenVLUtilsResolution, frame_size
from foilkit.scorers.adapters.video_llm import VideoLLMAdapter
from foilkit.scorers.protocols import resolve_protocol
from foilkit.scorers.requests import TextsRequest

#: (frames, height, width): raised to the 128-token floor, inside the range, capped at 768 tokens
#: a frame, an odd count, a wide frame
CASES = [(4, 48, 64), (4, 360, 640), (4, 720, 1280), (3, 200, 300), (4, 90, 1000)]


def _video_processor(kind: str):
    """The video processor of a real checkpoint's config (transformers' defaults): Qwen2-VL's
    14-pixel patches (Qwen2.5-VL's too), Qwen3-VL's 16-pixel ones."""
    from transformers import Qwen2VLVideoProcessor, Qwen3VLVideoProcessor

    return {"qwen2-vl": Qwen2VLVideoProcessor, "qwen3-vl": Qwen3VLVideoProcessor}[kind]()


def _grid(video_processor, frames: torch.Tensor, **kwargs) -> list[int]:
    out = video_processor(videos=[frames], do_sample_frames=False, return_tensors="pt", **kwargs)
    return out["video_grid_thw"][0].tolist()


def _frames(count: int, height: int, width: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    return torch.randint(0, 256, (count, 3, height, width), dtype=torch.uint8, generator=generator)


@pytest.mark.parametrize("kind", ["qwen2-vl", "qwen3-vl"])
@pytest.mark.parametrize("count, height, width", CASES)
def test_the_model_gets_the_reference_frame_size_and_token_count(kind, count, height, width):
    video_processor = _video_processor(kind)
    factor = video_processor.patch_size * video_processor.merge_size
    frames = _frames(count, height, width)
    resized, sizing = QwenVLUtilsResolution().prepare(frames, video_processor)
    expected_height, expected_width = frame_size(count, height, width, factor)
    assert resized.shape[-2:] == (expected_height, expected_width)
    grid = _grid(video_processor, resized, **sizing)
    patch = video_processor.patch_size
    assert grid == [math.ceil(count / 2), expected_height // patch, expected_width // patch]
    tokens = grid[0] * grid[1] * grid[2] // video_processor.merge_size**2
    assert tokens == math.ceil(count / 2) * (expected_height // factor) * (expected_width // factor)
    assert 128 <= tokens // grid[0] <= 768  # qwen-vl-utils' token range of a frame


#: Qwen2-VL's and Qwen2.5-VL's checkpoints configure their processors by ``min_pixels`` 3136 and
#: ``max_pixels`` 12845056 (``preprocessor_config.json``), which a video processor reads as ``size``
QWEN2_VL_CHECKPOINT_SIZE = {"shortest_edge": 3136, "longest_edge": 12845056}


def test_the_processors_own_sizing_is_not_the_references():
    """What the policy corrects: Qwen3-VL's processor spreads one clip budget (768 tokens) over
    all frames where qwen-vl-utils allows each frame 768; a Qwen2/2.5-VL checkpoint's processor
    keeps a 720p frame near its size where qwen-vl-utils caps it at 768 tokens."""
    from transformers import Qwen2VLVideoProcessor

    checkpoints = {
        "qwen3-vl": _video_processor("qwen3-vl"),
        "qwen2-vl": Qwen2VLVideoProcessor(size=QWEN2_VL_CHECKPOINT_SIZE),
    }
    for kind, video_processor in checkpoints.items():
        count, height, width = 4, 720, 1280
        own = _grid(video_processor, _frames(count, height, width), cap_pixels_per_frame=False)
        patch = video_processor.patch_size
        factor = patch * video_processor.merge_size
        reference = [x // patch for x in frame_size(count, height, width, factor)]
        assert own[1:] != reference


@pytest.fixture(scope="module")
def qwen3_vl(tiny_model):
    return tiny_model("qwen3-vl")


@pytest.mark.parametrize("twin", ["qwen3-vl", "qwen2-vl"])
def test_the_adapter_applies_and_records_the_rule(twin, tiny_model):
    """Through the adapter, for a Qwen3-VL and a Qwen2-VL video processor (8x8 patches, 2x2
    merge: a factor of 16): the reference's frame size reaches the model; by default, the
    processor's own."""
    path = tiny_model(twin)
    frames = _frames(8, 48, 64)
    request = TextsRequest(("a red square",), frames, timestamps=tuple(k / 2 for k in range(8)))
    reference = load_adapter(path, mode="likelihood", device="cpu", preprocess="reference")
    record = reference.processor_settings()["resolution"]
    assert record["rule"] == "qwen-vl-utils" and record["factor"] == 16
    assert record["min_pixels"] == 128 * 16 * 16 and record["max_pixels"] == 768 * 16 * 16
    prefix, _ = reference.prompt_texts(request.texts)
    grid = reference.model_inputs(request, prefix)["video_grid_thw"][0].tolist()
    height, width = frame_size(8, 48, 64, 16)
    assert grid == [4, height // 8, width // 8]
    assert math.isfinite(reference.score([request])[0].scores[0])
    default = load_adapter(path, mode="likelihood", device="cpu")
    assert default.processor_settings()["resolution"] == {"rule": "processor"}
    assert default.model_inputs(request, prefix)["video_grid_thw"][0].tolist() != grid


def test_a_family_without_a_declared_reference_keeps_its_processor(tiny_model):
    adapter = load_adapter(tiny_model("llava-next-video"), device="cpu", preprocess="reference")
    record = adapter.processor_settings()["resolution"]
    assert record["rule"] == "processor" and "LlavaNextVideoVideoProcessor" in record["why"]
    with pytest.raises(ValueError, match=r"unknown preprocess 'qwen'.*'reference'"):
        load_adapter(tiny_model("llava-next-video"), device="cpu", preprocess="qwen")


def test_the_vitatecs_paper_protocol_asks_for_the_reference_preprocessing():
    protocol = resolve_protocol("paper", "vitatecs", "video-llm", accepted=VideoLLMAdapter.options)
    assert protocol.adapter_options(VideoLLMAdapter.options)["preprocess"] == "reference"
    assert "qwen-vl-utils" in protocol.reference


def test_a_run_records_the_rule_and_its_frames(qwen3_vl, benchmark, tmp_path):
    """``preprocess="reference"`` and qwen-vl-utils' sampling, end to end: the run record says
    which rule sized the frames, and each view has the frame count of its fps rule (a 3 s clip
    at 8 fps: 6 frames at 2 fps)."""
    import json

    import foilkit

    result = foilkit.score(
        qwen3_vl,
        benchmark.select(range(1)),
        mode="likelihood",
        preprocess="reference",
        sampling="qwen-vl-utils",
        out_dir=str(tmp_path / "run"),
        num_workers=0,
        progress=False,
        use_cache=False,
    )
    assert not any(result["error"]) and len(result[0]["frame_indices"]) == 6
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["processor"]["resolution"]["rule"] == "qwen-vl-utils"
    assert run["protocol"]["settings"]["preprocess"] == "reference"
    assert run["sampling"]["name"] == "qwen-vl-utils"
