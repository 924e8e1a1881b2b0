"""Conformance of the Qwen3-VL-processor video LLMs (Qwen3-VL, Qwen3-VL-MoE, Qwen3.5-MoE,
Qwen4-Exp, Cosmos3 Omni's Reasoner) and the image-text dual encoders SigLIP 2, Chinese-CLIP,
MetaCLIP 2 and AltCLIP: each tiny twin (real processor classes, the checkpoints' chat template)
is scored in every mode of its adapter, and what the model receives is checked against the
reference: the whole prompt's token ids with the video expanded as the reference processor
expands it (one ``<t seconds>`` segment per temporal patch, never nested in the template's own
vision pair), the frames' real times, as many video placeholders as the vision tower gives
features, and a reversed view reversed."""

from __future__ import annotations

import math

import pytest
import torch
from conformance import (
    TEXTS,
    TIMESTAMPS,
    WRAPPED_VIDEO,
    answered_prompts,
    assert_follows_the_logits,
    assert_rows_scored,
    choice_prompts,
    grid_features,
    has_real_tokenizer,
    placeholder_count,
    reference_video,
    score_benchmark,
    scored_calls,
)

from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.requests import TextsRequest, presented_metadata
from foilkit.synthetic.models import FIDELITY_MODELS, NUM_FRAMES, fidelity_model_path

#: model_type -> tiny twin
VIDEO_LLMS = {
    "qwen3_vl": "qwen3-vl",
    "qwen3_vl_moe": "qwen3-vl-moe",
    "qwen3_5_moe": "qwen3.5-moe",
    "qwen4_exp": "qwen4-exp",
    # Cosmos3 Omni (nvidia/Cosmos3-Nano): transformers reads its Reasoner tower, a Qwen3-VL
    "cosmos3_omni": "cosmos3-omni",
}
#: The prompt checks also run on Qwen3-VL around its real tokenizer (Qwen3's), skipped where
#: ``./dev.sh`` has not fetched it: twin -> model_type
REAL_TOKENIZER_TWINS = {"qwen3-vl-qwen3": "qwen3_vl"}


@pytest.fixture(scope="module")
def adapters(tiny_model):
    """``adapters(twin, mode)``: each twin's adapter in each mode, loaded once."""
    loaded: dict = {}

    def get(twin: str, mode: str):
        if (twin, mode) not in loaded:
            if twin in FIDELITY_MODELS and not has_real_tokenizer("qwen3"):
                pytest.skip("the real Qwen3 tokenizer is not fetched (./dev.sh test fetches it)")
            path = str(fidelity_model_path(twin)) if twin in FIDELITY_MODELS else tiny_model(twin)
            loaded[twin, mode] = load_adapter(path, mode=mode, device="cpu")
        return loaded[twin, mode]

    return get


@pytest.mark.parametrize("mode", ["likelihood", "choice"])
@pytest.mark.parametrize(
    "model_type, twin",
    [*VIDEO_LLMS.items(), *((kind, twin) for twin, kind in REAL_TOKENIZER_TWINS.items())],
)
def test_the_model_sees_the_reference_prompt(model_type, twin, mode, adapters, frames):
    """Token ids = the whole rendered template with the video part replaced whole by the
    reference's per-patch segments, timed by the frames' real timestamps; one placeholder per
    feature the vision tower gives."""
    adapter = adapters(twin, mode)
    model = adapter.model
    assert model.config.model_type == model_type
    prefix, continuations, scored = scored_calls(adapter, frames)
    scores = scored.scores
    assert all(map(math.isfinite, scores)) and scores[0] != scores[1]
    grid = prefix["video_grid_thw"][0].tolist()
    assert grid[0] == NUM_FRAMES // 2  # every frame reached the model, 2 a temporal patch
    merge = model.config.vision_config.spatial_merge_size
    placeholders = placeholder_count(prefix, model.config.video_token_id)
    assert placeholders == grid[0] * grid[1] * grid[2] // merge**2
    assert placeholders == grid_features(model, prefix)
    seen = [prefix["input_ids"][0].tolist() + continuation for continuation in continuations]
    video = reference_video(TIMESTAMPS, grid, merge)
    if mode == "likelihood":
        wholes = answered_prompts(adapter.processor)
    else:  # a thinking template's prompt: its reasoning block written empty and closed
        wholes = choice_prompts(adapter.processor, enable_thinking=False)
    expected = [
        adapter.tokenizer(whole.replace(WRAPPED_VIDEO, video))["input_ids"] for whole in wholes
    ]
    assert seen == expected
    if mode == "likelihood":  # the scored tokens are the text's own, nothing of the template
        answers = [adapter.tokenizer.decode(ids) for ids in continuations]
        assert answers == list(TEXTS)
    assert adapter.describe()["video_part"]["written_as"] == "video_token"


@pytest.mark.parametrize("model_type", VIDEO_LLMS)
def test_a_reversed_view_is_shown_reversed_at_the_real_rate(model_type, adapters, frames):
    """The reversed control's frames reach the processor in reverse order, placed on an
    increasing time axis one real sampling interval apart."""
    adapter = adapters(VIDEO_LLMS[model_type], "likelihood")
    prefix, _ = adapter.prompt_texts(TEXTS)
    reversed_request = TextsRequest(TEXTS, frames.flip(0), timestamps=TIMESTAMPS[::-1])
    shown = adapter.model_inputs(reversed_request, prefix)
    forward = adapter.model_inputs(TextsRequest(TEXTS, frames, timestamps=TIMESTAMPS), prefix)
    by_hand = adapter.processor(
        text=[prefix],
        videos=[frames.flip(0)],
        video_metadata=[presented_metadata(TIMESTAMPS)],
        do_sample_frames=False,
        return_tensors="pt",
    )
    torch.testing.assert_close(shown["pixel_values_videos"], by_hand["pixel_values_videos"])
    assert not torch.equal(shown["pixel_values_videos"], forward["pixel_values_videos"])
    # the same prompt, times increasing: a video playing backwards, not time running backwards
    assert shown["input_ids"].tolist() == forward["input_ids"].tolist()
    text = adapter.tokenizer.decode(shown["input_ids"][0])
    assert "<0.8 seconds>" in text and text.index("<0.8 seconds>") < text.index("<5.2 seconds>")


@pytest.mark.parametrize("mode", ["likelihood", "choice"])
@pytest.mark.parametrize("model_type", VIDEO_LLMS)
def test_each_family_scores_a_benchmark_end_to_end(
    model_type, mode, tiny_model, benchmark, tmp_path
):
    rows = benchmark.select(range(2))  # a view and its reversal
    result, _ = score_benchmark(tiny_model(VIDEO_LLMS[model_type]), rows, mode)
    assert not any(result["error"])
    assert_rows_scored(result, mode)


# --- image-text dual encoders: SigLIP 2, Chinese-CLIP, MetaCLIP 2, AltCLIP ----------------------

#: model_type -> tiny twin
DUAL_ENCODERS = {
    "siglip2": "siglip2",
    "chinese_clip": "chinese-clip",
    "metaclip_2": "metaclip-2",
    "altclip": "altclip",
}
CAPTIONS = ["a red square moves left", "a blue square moves right", "the ball rolls slowly"]


@pytest.mark.parametrize("model_type", DUAL_ENCODERS)
def test_a_dual_encoder_embeds_as_the_models_own_forward(model_type, tiny_model, frames):
    """Frames and texts through the checkpoint's own processor call (SigLIP 2: NaFlex patches
    and texts padded to 64 tokens) and forward give the adapter's embeddings; the logits are its
    scale times the cosine (plus SigLIP 2's bias)."""
    from transformers import AutoModel, AutoProcessor

    path = tiny_model(DUAL_ENCODERS[model_type])
    adapter = load_adapter(path, device="cpu", pooling="mean-of-similarities")
    assert adapter.name == "dual-encoder" and adapter.model.config.model_type == model_type
    view = adapter.encode_views([frames[:3]])[0]
    texts = adapter.encode_texts(CAPTIONS)
    model, processor = AutoModel.from_pretrained(path).eval(), AutoProcessor.from_pretrained(path)
    padding = {} if model_type == "siglip2" else {"padding": True}  # Siglip2Processor pads itself
    inputs = processor(images=list(frames[:3]), text=CAPTIONS, return_tensors="pt", **padding)
    with torch.no_grad():
        out = model(**inputs)
    torch.testing.assert_close(view, out.image_embeds, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(texts, out.text_embeds, rtol=1e-4, atol=1e-5)
    bias = float(getattr(model, "logit_bias", torch.zeros(1)).detach())
    logits = adapter.logit_scale * (view.double() @ texts.double().T) + bias
    torch.testing.assert_close(logits.float(), out.logits_per_image, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("model_type", DUAL_ENCODERS)
def test_a_dual_encoder_scores_a_benchmark_end_to_end(model_type, tiny_model, benchmark):
    """Chosen from its config, scored in the adapter's one mode: every row finite; the
    order-free pooling ties a view and its reversal, caption and foil apart."""
    path = tiny_model(DUAL_ENCODERS[model_type])
    result, _ = score_benchmark(path, benchmark)
    assert not any(result["error"])
    rows = {row["id"]: row for row in result}
    for row in rows.values():
        scores = [row["caption_score"], *row["foil_scores"]]
        assert all(map(math.isfinite, scores)) and scores[0] != scores[1]
    forward, reverse = rows["left-forward"], rows["left-reverse"]
    assert forward["caption_score"] == reverse["foil_scores"][0]


@pytest.mark.parametrize("model_type", VIDEO_LLMS)
def test_generate_answers_what_the_logits_rank_first(model_type, adapters, frames):
    """``--mode "generate"`` on each family: a one-token greedy answer is the token a full
    forward over the whole rendered prompt (per-frame segments, real times) ranks first."""
    assert_follows_the_logits(adapters(VIDEO_LLMS[model_type], "generate"), frames)


@pytest.mark.parametrize("model_type", VIDEO_LLMS)
def test_entail_scores_what_the_logits_say(model_type, adapters, frames):
    """``--mode "entail"`` on each family: P(Yes) / (P(Yes) + P(No)) after each text's
    entailment question equals a full forward over the whole prompt (per-frame segments)."""
    assert_follows_the_logits(adapters(VIDEO_LLMS[model_type], "entail"), frames)
