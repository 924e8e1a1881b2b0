"""Conformance of LFM3-VL, and the refusal of Kimi K2.5, whose checkpoints' chat templates live
only on the Hub (each twin's module docstring says what is reconstructed, from which source).

LFM3-VL's tiny twin (real config, model and processor classes, the reconstructed template) is
scored in every mode of the video-llm adapter (``"likelihood"``, ``"choice"``, ``"entail"``,
``"generate"``): the model sees the token ids of the whole rendered template with the video part
replaced whole by the per-patch ``<t seconds><|vision_start|>...<|vision_end|>`` segments of the
reference (Qwen3-VL's) processor, timed by the frames' real times, never nested in an outer vision
pair; as many video placeholders as the vision tower makes features, every frame among them; a
reversed view reversed frame by frame; the answer scored on a copy of the video prefix's cache (its
convolution and sliding-window layers cannot be cut back) as one forward over the whole prompt; a
benchmark scored end to end. Kimi K2.5 is refused in one line naming the transformers bug.
"""

from __future__ import annotations

import math

import pytest
import torch
from conformance import (
    FRAMES,
    MODES,
    TEXTS,
    TIMESTAMPS,
    WRAPPED_VIDEO,
    answered_prompts,
    assert_follows_the_logits,
    assert_rows_scored,
    choice_prompts,
    full_forward_logprob,
    grid_features,
    load_modes,
    placeholder_count,
    reference_video,
    refusal,
    score_benchmark,
    scored_calls,
    temporal_patches,
)

from foilkit.scorers.adapters import load_adapter

TWIN = "lfm3-vl"


@pytest.fixture(scope="module")
def adapters(tiny_model) -> dict:
    """The LFM3-VL twin loaded in each mode."""
    return load_modes(tiny_model(TWIN), (*MODES, "entail"))


@pytest.mark.parametrize("mode", MODES)
def test_the_model_sees_the_whole_template_with_the_reference_video(adapters, mode, frames):
    """Token ids = the whole rendered template with its video part replaced whole by the
    reference's per-patch segments at the frames' real times; one placeholder per feature the
    vision tower makes, every frame among them; finite scores, caption != foil."""
    adapter = adapters[mode]
    model = adapter.model
    assert model.config.model_type == "lfm3_vl"
    prefix, continuations, scores = scored_calls(adapter, frames)
    assert all(map(math.isfinite, scores.scores)) and scores.scores[0] != scores.scores[1]
    grid = prefix["video_grid_thw"][0].tolist()
    assert grid[0] * 2 == FRAMES  # every frame reached the model, 2 a temporal patch
    merge = model.config.vision_config.spatial_merge_size
    placeholders = placeholder_count(prefix, model.config.video_token_id)
    assert placeholders == grid_features(model, prefix) > 0
    seen = [prefix["input_ids"][0].tolist() + continuation for continuation in continuations]
    if mode == "likelihood":
        wholes = answered_prompts(adapter.processor)
    else:  # VITATECS' system prompt a string: LFM2-VL's turns write it so
        wholes = choice_prompts(adapter.processor, "string")
    assert all(whole.count(WRAPPED_VIDEO) == 1 for whole in wholes)
    video = reference_video(TIMESTAMPS, grid, merge)
    expected = [
        adapter.tokenizer(whole.replace(WRAPPED_VIDEO, video))["input_ids"] for whole in wholes
    ]
    assert seen == expected
    assert adapter.describe()["video_part"]["written_as"] == "video_token"
    if mode == "likelihood":  # the scored tokens are the text's own, nothing of the template
        answers = [adapter.tokenizer.decode(ids) for ids in continuations]
        assert answers == list(TEXTS)
    else:  # VITATECS' system prompt reaches the template as the string it concatenates
        assert adapter.system_form() == "string"


def test_the_copied_video_prefix_scores_as_one_forward_over_the_whole_prompt(adapters, frames):
    """LFM3's convolution and sliding-window layers keep no cache that can be cut back: each
    answer runs on a copy of the video prefix's cache, and its log-probability equals one
    forward over the whole prompt."""
    adapter = adapters["likelihood"]
    assert adapter.prefix_reuse == "copy"
    prefix, continuations, scores = scored_calls(adapter, frames)
    ids = torch.tensor([prefix["input_ids"][0].tolist() + continuations[1]])
    inputs = {key: prefix[key] for key in ("pixel_values_videos", "video_grid_thw")}
    expected = full_forward_logprob(
        adapter.model, {"input_ids": ids, **inputs}, len(continuations[1])
    )
    assert scores.details["logprob_sum"][1] == pytest.approx(expected, abs=1e-3)


def test_a_reversed_view_reverses_what_the_model_sees(adapters, frames):
    """The reversed control's frames reach the model in reverse order, on the same increasing
    time axis (the same prompt): a video playing backwards."""
    adapter = adapters["likelihood"]
    forward, *_ = scored_calls(adapter, frames)
    backward, *_ = scored_calls(adapter, frames.flip(0), timestamps=TIMESTAMPS[::-1])
    assert torch.equal(backward["input_ids"], forward["input_ids"])
    before, after = (temporal_patches(call["pixel_values_videos"]) for call in (forward, backward))
    assert torch.equal(after, before.flip(0)) and not torch.equal(after, before)


@pytest.mark.parametrize("mode", MODES)
def test_a_benchmark_scores_end_to_end(mode, tiny_model, benchmark):
    rows = benchmark.select(range(2))  # a view and its reversal
    result, _ = score_benchmark(tiny_model(TWIN), rows, mode)
    assert not any(result["error"])
    assert_rows_scored(result, mode)


def test_generate_answers_what_the_logits_rank_first(tiny_model, frames):
    """``--mode "generate"``: a one-token greedy answer is the token a full forward over the
    whole rendered prompt ranks first."""
    assert_follows_the_logits(load_adapter(tiny_model(TWIN), mode="generate", device="cpu"), frames)


def test_entail_scores_what_the_logits_say(adapters, frames):
    """``--mode "entail"``: P(Yes) / (P(Yes) + P(No)) after each text's entailment question
    equals a full forward over the whole prompt."""
    assert_follows_the_logits(adapters["entail"], frames)


# --- Kimi K2.5: refused on video -----------------------------------------------------------------


def test_kimi_k25_is_refused_naming_the_transformers_bug(tiny_model):
    """Kimi K2.5's video forward fails inside transformers 5.23 (tests/test_tiny_models.py shows
    it on the twin, whose template writes the video placeholder): refused before its weights
    load, in one line, as the families table says, in every mode."""
    path = tiny_model("kimi-k2.5")
    for mode in ("likelihood", "choice", "entail", "generate"):
        reason = refusal(path, "kimi_k25", mode)
    assert "model_type 'kimi_k25' cannot be scored on video with transformers" in reason
