"""Conformance of the open video LLMs (LLaVA-OneVision, ...): each family's tiny twin, built
with the family's real processor classes, special tokens and chat template, is scored through
the video-llm adapter in both modes, and what reaches the model is checked: the whole rendered
prompt's token ids, as many video placeholders as the model makes video features for the
frames given, the frames' real times in the video processor, and a reversed view reversed;
``generate`` and ``entail`` follow the logits. The checks are ``conformance.py``'s tests,
collected here on this module's families (``test_conformance_omni.py`` runs them on the omni
models); the reversed view reads each family's own video input."""

from __future__ import annotations

import pytest
import torch
from conformance import (  # noqa: F401  (the shared tests, collected here on FAMILIES)
    FRAMES,
    TEXTS,
    TIMESTAMPS,
    VideoFamily,
    load_modes,
    prefix_calls,
    recorded_calls,
    test_a_benchmark_is_scored_end_to_end,
    test_entail_scores_what_the_logits_say,
    test_generate_answers_what_the_logits_rank_first,
    test_the_frames_real_times_reach_the_video_processor,
    test_the_model_sees_the_whole_prompts_token_ids,
    test_video_placeholders_are_the_features_the_model_makes,
)

from foilkit.scorers.requests import TextsRequest

#: model_type -> its twin and what its model must be given
FAMILIES = {
    # 4x4 patches pooled to 2x2 a frame, then one image_newline after the video
    "llava_onevision": VideoFamily("llava-onevision", lambda frames: 4 * frames + 1),
    # each frame an image tile: 4x4 patches pixel-shuffled to 2x2 <IMG_CONTEXT> tokens
    "internvl": VideoFamily(
        "internvl",
        lambda frames: 4 * frames,
        video_input="pixel_values",
        placeholder="image_token_id",
        features="get_image_features",
    ),
    # Vicuna's real tokenizer; every frame keeps its CLS token: 4x4 patches + 1
    "video_llava": VideoFamily("video-llava", lambda frames: 17 * frames, real_tokenizer="llama2"),
    # each frame an image of 4 tokens (4x4 patches pixel-shuffled by 2), after its timestamp
    "smolvlm": VideoFamily(
        "smolvlm",
        lambda frames: 4 * frames,
        video_input="pixel_values",
        placeholder="image_token_id",
        features="get_image_features",
        prompt_times=(
            r"Frame from (\d\d:\d\d):",
            lambda t: f"{int(t // 60):02d}:{int(t % 60):02d}",
        ),
    ),
    # the frames share 32*32*8 pixels (48x64 frames: 16x32 a frame of 8, 32x48 a frame of 4),
    # 8x8 patches merged 2x2; the patches that repeat the previous frame's are dropped
    "video_llama_3": VideoFamily(
        "video-llama-3",
        lambda frames: {8: 8 * 2, 4: 4 * 6}[frames],
        kept="video_compression_mask",
        prompt_times=(r"Time (\d+\.\d)s:", lambda t: f"{t:.1f}"),
    ),
    # 4x4 patches (CLS dropped) average-pooled to 2x2 a frame; a template that writes BOS and
    # a system prompt given as a plain string
    "perception_lm": VideoFamily(
        "perception-lm",
        lambda frames: 4 * frames,
        features="get_image_features",
        system_form="string",
    ),
    # 4x4 patches attention-pooled 2x2 a frame, after the frame's time; no system role
    "molmo2": VideoFamily(
        "molmo2",
        lambda frames: 4 * frames,
        prompt_times=(r"(\d+\.\d) <frame_start>", lambda t: f"{t:.1f}"),
        system_form="user",
    ),
}


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request, tiny_model):
    """A family's expectations and its twin loaded in each mode."""
    expect = FAMILIES[request.param]
    return expect, load_modes(
        expect.path(tiny_model), ("likelihood", "choice", "generate", "entail")
    )


def _per_frame(video: torch.Tensor, count: int) -> list[torch.Tensor]:
    """A video input cut into its ``count`` frames' parts along the frame (or batch) axis."""
    video = video[0] if video.shape[0] == 1 and video.dim() == 5 else video
    return list(video.chunk(count))


def test_a_reversed_view_reverses_what_the_model_sees(family, frames):
    expect, adapters = family
    adapter = adapters["likelihood"]
    forward = TextsRequest(TEXTS, frames, timestamps=TIMESTAMPS)
    backward = TextsRequest(TEXTS, frames.flip(0), timestamps=TIMESTAMPS[::-1])
    seen = [
        _per_frame(call[expect.video_input], FRAMES)
        for call in prefix_calls(recorded_calls(adapter, [forward, backward]))
    ]
    assert len(seen) == 2 and len(seen[0]) == FRAMES
    for shown, reversed_shown in zip(seen[0], seen[1][::-1]):
        assert torch.equal(shown, reversed_shown)
    assert not torch.equal(seen[0][0], seen[0][-1])  # the frames differ: the order is visible
