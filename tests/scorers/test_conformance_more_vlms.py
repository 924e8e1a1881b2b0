"""Conformance of more video LLM families (GLM-4.1V, GLM-4.6V, GLM-GA, GLM-5 Next, ERNIE 4.5 VL,
EXAONE 4.5, HyperCLOVA X SEED Vision V2, Cosmos3 Edge, Muse Glimmer, Muse Spark, MiniMax M3 VL,
Gemma 4 unified), and the refusals of Nemotron-H Omni and Dots 3 Note: each tiny twin, with its
real processor classes and its checkpoint's chat template (or one in its turn format where the
checkpoint's is not public), is scored as a real checkpoint would be.

Per family and mode: the model sees the token ids of the whole rendered chat template (system
and answer turns written as the template reads them, the prompt ending where the template
writes the answer), and the answer scored on the cached video prefix scores as one forward over
the whole prompt; the video's placeholder tokens are as many as the embeddings the model makes
of the frames given, every frame among them; the frames' real times reach the processor (written
into the prompt, or drawn on the frames) and the processor never writes into the view's frames;
a reversed view reverses what the model sees; a benchmark scores end to end with finite scores.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
import torch
from conformance import (
    FRAMES,
    MODES,
    TEXTS,
    TIMESTAMPS,
    assert_follows_the_logits,
    assert_rows_scored,
    assert_the_cached_prefix_scores_as_one_forward,
    assert_the_template_reaches_the_model,
    feature_rows,
    grid_features,
    load_modes,
    processed,
    refusal,
    reversed_prefixes,
    rows_by_id,
    score_benchmark,
    scored_calls,
    temporal_patches,
)

from foilkit.scorers.adapters import load_adapter
from foilkit.synthetic.models import PATCH_SIZE

# --- how each family's processor lays a video out ----------------------------------------------


def grid_frames(per_step: int) -> Callable[[dict], int]:
    """Frames a Qwen-style ``video_grid_thw`` covers, ``per_step`` frames a temporal step."""
    return lambda inputs: int(inputs["video_grid_thw"][0, 0]) * per_step


def gemma_features(model, inputs: dict) -> int:
    """Embeddings Gemma 4 makes of a video's frames (padding patches dropped)."""
    keys = ("pixel_values_videos", "video_position_ids", "num_frames_per_video")
    return feature_rows(model.model.get_video_features(*(inputs[key] for key in keys)))


def frame_major_patches(pixels: torch.Tensor) -> torch.Tensor:
    """Muse Glimmer's rows (patches of 2 frames: frame x channels x pixels), one row per frame."""
    steps = pixels.view(FRAMES // 2, -1, 2, 3 * PATCH_SIZE * PATCH_SIZE)
    return steps.permute(0, 2, 1, 3).reshape(FRAMES, -1)


def glm4v_times(times) -> list[str]:  # a temporal patch's first frame, whole seconds
    return [f"<|end_of_image|>{int(t)}" for t in times[::2]]


def glm46v_times(times) -> list[str]:
    return [f"<|end_of_image|>{t:.1f} seconds" for t in times[::2]]


def hcx_duration(times) -> list[str]:  # the video's duration: its frames at their interval
    interval = (max(times) - min(times)) / (len(times) - 1)
    return [f'"video_duration": {round(len(times) * interval, 2)}']


def cosmos_times(times) -> list[str]:  # every frame, in tenths of a second
    return [f"<{t:.1f} seconds><|vision_start|>" for t in times]


def muse_times(times) -> list[str]:  # a temporal patch's first frame, in tenths of a second
    return [f"Time: {t:.1f}s<|video|>" for t in times[::2]]


def minimax_times(times) -> list[str]:  # a temporal patch's first frame, in tenths of a second
    return [f"]<]{t:.1f} seconds[>[]<]start of image[>[" for t in times[::2]]


def gemma_times(times) -> list[str]:  # every frame, mm:ss
    return [f"{int(t // 60):02d}:{int(t % 60):02d} <start_of_image>" for t in times]


@dataclass(frozen=True)
class Family:
    """What a family's real checkpoint does with a video, as its processor and template
    declare.

    ``answer_opens``: what every prompt ends with, where the model writes its answer (the
    generation prompt's end, and what the template's assistant turn writes before the answer);
    ``lead_in``: the part of it the assistant turn writes beyond the generation prompt;
    ``strings``: the template writes a system/assistant turn's content as it is;
    ``frames_seen`` / ``features``: the frames the processor's video inputs cover, and the
    embeddings the model makes of them; ``timed``: the processor places frames in time (EXAONE
    4.5's Qwen2-VL video processor does not); ``times``: what the prompt writes of the frames'
    times, in order (``None``: nothing; ERNIE draws them on the frames); ``per_frame``: the
    video pixels one row per frame (``None`` where times are drawn on the frames).
    """

    twin: str
    answer_opens: str
    times: Callable[[Sequence[float]], list[str]] | None = None
    per_frame: Callable[[torch.Tensor], torch.Tensor] | None = None
    lead_in: str = ""
    strings: bool = False
    frames_seen: Callable[[dict], int] = grid_frames(2)
    features: Callable[[Any, dict], int] = grid_features
    timed: bool = True


THINK = "<think></think>\n"
MUSE = ("<|header_start|>assistant<|header_end|>\n\n", muse_times, frame_major_patches)
GLM46V = {"times": glm46v_times, "per_frame": temporal_patches, "lead_in": THINK}
FAMILIES = {
    "glm4v": Family("glm4v", "<|assistant|>\n", glm4v_times, temporal_patches, strings=True),
    "glm46v": Family("glm46v", "<|assistant|>\n" + THINK, **GLM46V),
    # GLM-GA: GLM-4.6V's model and processor around its own image and video processors
    "glmga": Family("glmga", "<|assistant|>\n" + THINK, **GLM46V),
    # GLM-5 Next: GLM-4.6V's processor on a hybrid (linear + indexed sparse attention) MoE model
    "glm5_next": Family("glm5-next", "<|assistant|>\n" + THINK, **GLM46V),
    # ERNIE 4.5 VL: the generation prompt's empty reasoning; times drawn on the frames
    "ernie4_5_vl_moe": Family(
        "ernie4.5-vl", "\nAssistant: <think>\n\n</think>\n\n", frames_seen=grid_frames(1)
    ),
    # EXAONE 4.5: Qwen2-VL video processor (no time axis); EXAONE 4.0's turns, a system turn's
    # content written as it is, the generation prompt's empty reasoning
    "exaone4_5": Family(
        "exaone4.5",
        "[|assistant|]\n<think>\n\n</think>\n\n",
        per_frame=temporal_patches,
        strings=True,
        timed=False,
    ),
    # HyperCLOVA X SEED Vision V2: the video's duration written into the prompt
    "hyperclovax_vision_v2": Family(
        "hyperclovax-vision-v2", "<|im_start|>assistant\n", hcx_duration, temporal_patches
    ),
    # Cosmos3 Edge: a timestamped vision segment per frame; frames one by one
    "cosmos3_edge": Family(
        "cosmos3-edge",
        "<|im_start|>assistant\n",
        cosmos_times,
        lambda pixels: pixels.reshape(FRAMES, -1),
        frames_seen=grid_frames(1),
    ),
    # Muse Glimmer: a timestamp per temporal patch, groups between <|vid_start|> and <|vid_end|>
    "muse_glimmer": Family("muse-glimmer", *MUSE),
    # Muse Spark: Muse Glimmer's video path, a mixture-of-experts text model and an audio tower
    "muse_spark": Family("muse-spark", *MUSE),
    # MiniMax M3 VL: a timestamped image span per temporal patch; sparse-indexed attention
    "minimax_m3_vl": Family("minimax-m3-vl", "]~b]ai\n", minimax_times, temporal_patches),
    # Gemma 4 unified: no vision tower; every frame preceded by its mm:ss time
    "gemma4_unified": Family(
        "gemma4-unified",
        "<start_of_turn>model\n",
        gemma_times,
        lambda pixels: pixels.reshape(FRAMES, -1),
        frames_seen=lambda inputs: int(inputs["num_frames_per_video"][0]),
        features=gemma_features,
    ),
}


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request, tiny_model):
    """A family's facts and its twin loaded in each mode."""
    facts = FAMILIES[request.param]
    return facts, load_modes(tiny_model(facts.twin))


@pytest.mark.parametrize("mode", MODES)
def test_the_model_sees_the_whole_rendered_template(family, mode, frames):
    facts, adapters = family
    adapter = adapters[mode]
    assert_the_template_reaches_the_model(adapter, frames, facts.answer_opens, facts.strings)
    if mode == "choice":  # what the assistant turn writes before the answer is led in
        assert adapter.describe().get("answer_lead_in", "") == facts.lead_in


def test_the_cached_video_prefix_scores_as_one_forward_over_the_whole_prompt(family, frames):
    """The video prefix is encoded once and each answer runs on its cache (cut back, or copied
    where a layer keeps a window, a running state or a sparse index): the answer's
    log-probability equals one forward over the whole prompt."""
    facts, adapters = family
    assert_the_cached_prefix_scores_as_one_forward(
        adapters["likelihood"], frames, facts.answer_opens, facts.strings
    )


def test_every_frame_becomes_the_video_tokens_the_model_consumes(family, frames):
    facts, adapters = family
    adapter = adapters["likelihood"]
    prefix, *_ = scored_calls(adapter, frames)
    assert facts.frames_seen(prefix) == FRAMES  # no frame dropped
    with torch.inference_mode():
        consumed = facts.features(adapter.model, prefix)
    # the processor marks the tokens that take the video's embeddings (GLM: <|image|> tokens
    # inside <|begin_of_video|>...<|end_of_video|>)
    if "mm_token_type_ids" in prefix:
        placeholders = int((prefix["mm_token_type_ids"] == 2).sum())
    else:
        placeholders = int((prefix["input_ids"] == adapter.model.config.video_token_id).sum())
    assert placeholders == consumed > 0


def test_the_frames_real_times_reach_the_processor(family, frames):
    """What the model saw is the processor's output for the frames at their real times, which
    differs from what the processor's default (24 fps) would give."""
    facts, adapters = family
    adapter = adapters["likelihood"]
    prefix, *_ = scored_calls(adapter, frames)
    text = adapter.prompt_texts(TEXTS)[0]
    real = processed(adapter, frames, text, TIMESTAMPS)
    default = processed(adapter, frames, text, tuple(k / 24 for k in range(FRAMES)))
    keys = ("input_ids", "pixel_values_videos")
    for key in keys:
        assert torch.equal(prefix[key], real[key]), key
    # a family without a time axis sees the same whatever the times
    assert facts.timed != all(torch.equal(real[key], default[key]) for key in keys)
    if facts.times is not None:  # written into the prompt, in order
        shown, position = adapter.tokenizer.decode(prefix["input_ids"][0]), 0
        for written in facts.times(TIMESTAMPS):
            position = shown.index(written, position) + len(written)


def test_a_reversed_view_reverses_what_the_model_sees(family, frames):
    facts, adapters = family
    forward, backward = reversed_prefixes(adapters["likelihood"], frames)
    if facts.per_frame is not None:  # nothing drawn on the frames: the frames themselves reverse
        before, after = (
            facts.per_frame(call["pixel_values_videos"]) for call in (forward, backward)
        )
        assert torch.equal(after, before.flip(0))


@pytest.fixture(scope="module")
def benchmark(benchmark_with_broken):
    """One video's forward and reversed rows, its windowed row, a corrupt and a missing video."""
    ids = ["left-forward", "left-reverse", "left-window", "corrupt", "missing"]
    return rows_by_id(benchmark_with_broken, ids)


@pytest.mark.parametrize("mode", MODES)
def test_a_benchmark_scores_end_to_end(family, mode, tiny_model, benchmark, tmp_path):
    facts, _ = family
    result, run = score_benchmark(tiny_model(facts.twin), benchmark, mode, tmp_path)
    assert run["adapter"]["adapter"] == "video-llm"
    assert run["adapter"].get("answer_lead_in", "") == facts.lead_in
    rows = [row for row in result if not row["error"]]
    assert {row["id"] for row in result if row["error"]} == {"corrupt", "missing"}
    assert len(rows) == 3
    assert_rows_scored(rows, mode)


# --- families foilkit refuses on video ----------------------------------------------------------


#: model_type -> tiny twin of the families whose video path is broken in transformers 5.23
#: (tests/test_tiny_models.py shows each): Nemotron-H Omni's video forward fails; Dots 3 Note's
#: processor writes a video in a layout the checkpoint never read
REFUSED_ON_VIDEO = {"nemotron_h_omni": "nemotron-h-omni", "dots3_note": "dots3-note"}


@pytest.mark.parametrize("model_type", REFUSED_ON_VIDEO)
def test_a_family_broken_on_video_is_refused_naming_the_transformers_bug(model_type, tiny_model):
    """Refused before its processor, template or weights are read, in one line, as the families
    table says."""
    import transformers

    reason = refusal(tiny_model(REFUSED_ON_VIDEO[model_type]), model_type)
    assert (
        f"model_type {model_type!r} cannot be scored on video with transformers "
        f"{transformers.__version__}: " in reason
    )


@pytest.mark.parametrize("mode", ["generate", "entail"])
def test_generate_and_entail_follow_the_logits(family, mode, frames, tiny_model):
    """``--mode "generate"``: a one-token greedy answer is the token a full forward over the
    whole rendered prompt ranks first; ``--mode "entail"``: P(Yes) / (P(Yes) + P(No)) after each
    text's entailment question equals a full forward over the whole prompt."""
    facts, _ = family
    assert_follows_the_logits(load_adapter(tiny_model(facts.twin), mode=mode, device="cpu"), frames)
