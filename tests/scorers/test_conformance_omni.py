"""Conformance of the omni models (Qwen2.5-Omni, Qwen3-Omni), scored through their thinker
without audio: each tiny twin is a whole omni checkpoint (real config, processor classes, special
tokens and chat template); the video-llm adapter loads its thinker and scores it in both modes
(``"likelihood"``, ``"choice"``) and in ``"generate"`` and ``"entail"`` modes, and what reaches
the model is checked as for the open video LLMs (``conformance.py``'s tests, collected here on
this module's families), plus the omni processors' own time axis: the frames' rate reaches them
as ``fps``."""

from __future__ import annotations

import pytest
import torch
from conformance import (  # noqa: F401  (the shared tests, collected here on FAMILIES)
    FRAMES,
    INTERVAL,
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

FAMILIES = {
    # the processor's own video size (at least 128*28*28 pixels a frame, as qwen-omni-utils)
    # overrides the video processor's: 48x64 frames become 288x368, 36x46 patches of 8x8 merged
    # 2x2, 2 frames a temporal patch: 414 <|VIDEO|> tokens every 2 frames
    "qwen2_5_omni": VideoFamily("qwen2.5-omni", lambda frames: 207 * frames),
    # at least 128*32*32 pixels a frame: 48x64 frames become 320x432, 40x54 patches of 8x8
    # merged 2x2: 540 <|video_pad|> tokens every 2 frames
    "qwen3_omni_moe": VideoFamily("qwen3-omni-moe", lambda frames: 270 * frames),
}


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request, tiny_model):
    """A family's expectations and its twin loaded in each mode."""
    expect = FAMILIES[request.param]
    return expect, load_modes(
        expect.path(tiny_model), ("likelihood", "choice", "generate", "entail")
    )


def test_the_thinker_is_scored_without_audio(family, frames):
    """The checkpoint is read as its thinker (recorded), and no audio reaches it."""
    _, adapters = family
    adapter = adapters["likelihood"]
    assert adapter.describe()["loaded_as"].endswith("_thinker")
    assert type(adapter.model).__name__.endswith("ThinkerForConditionalGeneration")
    calls = recorded_calls(adapter, [TextsRequest(TEXTS, frames, timestamps=TIMESTAMPS)])
    assert calls and all(call.get("input_features") is None for call in calls)


def test_the_frames_rate_sets_the_thinkers_time_axis(family, frames):
    """The omni processors place frames in time from the ``fps`` keyword, not the metadata:
    given the frames' real rate, each temporal patch spans 2 sampling intervals; the model's
    temporal position ids follow it, so the same frames at another rate score differently."""
    _, adapters = family
    adapter = adapters["likelihood"]
    (prefix,) = prefix_calls(recorded_calls(adapter, [TextsRequest(TEXTS, frames, TIMESTAMPS)]))
    patch = adapter.processor.video_processor.temporal_patch_size
    assert prefix["video_second_per_grid"].tolist() == pytest.approx([patch * INTERVAL])
    slower = tuple(2 * time for time in TIMESTAMPS)
    (slow_prefix,) = prefix_calls(recorded_calls(adapter, [TextsRequest(TEXTS, frames, slower)]))
    assert slow_prefix["video_second_per_grid"].tolist() == pytest.approx([2 * patch * INTERVAL])
    scores = [
        adapter.score([TextsRequest(TEXTS, frames, times)])[0].scores
        for times in (TIMESTAMPS, slower)
    ]
    assert scores[0] != scores[1]
    assert torch.equal(prefix["pixel_values_videos"], slow_prefix["pixel_values_videos"])
    assert "sampling rate" in adapter.processor_settings()["call"]["fps"]  # recorded in run.json


def _frames_seen(adapter, pixel_values_videos: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
    """The frames in a Qwen-style video input: its rows are the patches of each temporal patch
    (``grid`` = [t, h, w]), each row a patch's channels x ``temporal_patch_size`` frames x
    pixels; one row of all a frame's patches per frame, in the order shown."""
    frames_per_patch = adapter.processor.video_processor.temporal_patch_size
    t, h, w = grid.tolist()
    channels = adapter.processor.video_processor.patch_size**2
    patches = pixel_values_videos.view(t, h * w, -1, frames_per_patch, channels)
    return patches.permute(0, 3, 1, 2, 4).reshape(t * frames_per_patch, -1)


def test_a_reversed_view_reverses_what_the_model_sees(family, frames):
    _, adapters = family
    adapter = adapters["likelihood"]
    forward = TextsRequest(TEXTS, frames, timestamps=TIMESTAMPS)
    backward = TextsRequest(TEXTS, frames.flip(0), timestamps=TIMESTAMPS[::-1])
    seen = [
        _frames_seen(adapter, call["pixel_values_videos"], call["video_grid_thw"][0])
        for call in prefix_calls(recorded_calls(adapter, [forward, backward]))
    ]
    assert len(seen) == 2 and len(seen[0]) == FRAMES
    assert torch.equal(seen[0], seen[1].flip(0))
    assert not torch.equal(seen[0][0], seen[0][-1])  # the frames differ: the order is visible
