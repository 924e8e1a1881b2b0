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
from answering_model import (
    assert_entail_follows_the_logits,
    assert_greedy_answer_follows_the_logits,
)

import foilkit
from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.adapters.video_llm import CHOICE_SYSTEM, LIKELIHOOD_QUESTION, choice_question
from foilkit.scorers.requests import TextsRequest
from foilkit.synthetic.models import NUM_FRAMES, PATCH_SIZE
from foilkit.synthetic.videos import SyntheticScene, render_frames

TWIN = "lfm3-vl"
MODES = ("likelihood", "choice")
TEXTS = ("a red square moves to the left", "a red square moves to the right")
TIMESTAMPS = tuple(0.375 + 0.75 * k for k in range(NUM_FRAMES))  # 0.75 s apart
WRAPPED = "<|vision_start|><|video_pad|><|vision_end|>"


@pytest.fixture(scope="module")
def frames() -> torch.Tensor:
    scene = SyntheticScene(direction="left")
    rendered = render_frames(scene, num_frames=NUM_FRAMES)
    return torch.from_numpy(rendered).permute(0, 3, 1, 2).contiguous()


@pytest.fixture(scope="module")
def adapters(tiny_model) -> dict:
    """The LFM3-VL twin loaded in each mode."""
    path = tiny_model(TWIN)
    return {mode: load_adapter(path, mode=mode, device="cpu") for mode in (*MODES, "entail")}


class ModelCalls:
    """The keyword inputs of every forward of a model (a forward pre-hook)."""

    def __init__(self, model: torch.nn.Module):
        self.calls: list[dict] = []
        self._handle = model.register_forward_pre_hook(self._record, with_kwargs=True)

    def _record(self, module, args, kwargs):
        self.calls.append(dict(kwargs))

    def __enter__(self) -> ModelCalls:
        return self

    def __exit__(self, *exc) -> None:
        self._handle.remove()


def _scored(adapter, frames, timestamps=TIMESTAMPS):
    """Score the texts on ``frames``: the video prefix's forward inputs, each continuation's
    ids, and the scores."""
    decoded = frames.clone()
    with ModelCalls(adapter.model) as recorded:
        (scores,) = adapter.score([TextsRequest(TEXTS, frames, timestamps=timestamps)])
    assert torch.equal(frames, decoded)  # the processor never writes into the view's frames
    prefixes = [call for call in recorded.calls if call.get("pixel_values_videos") is not None]
    assert len(prefixes) == 1  # the video is encoded once for the view
    continuations = [
        call["input_ids"][0].tolist()
        for call in recorded.calls
        if call.get("past_key_values") is not None
    ]
    return prefixes[0], continuations, scores


def _rendered(adapter) -> list[str]:
    """Each model input's whole prompt from ``apply_chat_template`` alone: likelihood, the
    prompt and each text as the assistant's answer; choice, VITATECS' system prompt (a string:
    LFM2-VL's turns write it so) and question in each order of the options, up to the answer."""
    processor = adapter.processor

    def user(question: str) -> dict:
        return {"role": "user", "content": [{"type": "video"}, {"type": "text", "text": question}]}

    if adapter.mode == "likelihood":
        messages = [user(LIKELIHOOD_QUESTION)]
        prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        wholes = []
        for text in TEXTS:
            answer = {"role": "assistant", "content": [{"type": "text", "text": text}]}
            answered = processor.apply_chat_template([*messages, answer], tokenize=False)
            assert answered.startswith(prompt)
            wholes.append(answered[: answered.index(text, len(prompt)) + len(text)])
        return wholes
    system = {"role": "system", "content": CHOICE_SYSTEM.format(count="two")}
    return [
        processor.apply_chat_template(
            [system, user(choice_question(order))], add_generation_prompt=True, tokenize=False
        )
        for order in (TEXTS, TEXTS[::-1])
    ]


def _reference_video(grid: list[int], merge: int) -> str:
    """The video as the reference (Qwen3-VL) processor writes it: per temporal patch (2 frames),
    the mean of its frames' real times as ``<t seconds>``, then its own vision pair."""
    per_patch = grid[1] * grid[2] // merge**2
    return "".join(
        f"<{(TIMESTAMPS[2 * patch] + TIMESTAMPS[2 * patch + 1]) / 2:.1f} seconds>"
        f"<|vision_start|>{'<|video_pad|>' * per_patch}<|vision_end|>"
        for patch in range(grid[0])
    )


def _per_frame(pixels: torch.Tensor) -> torch.Tensor:
    """The video pixels (rows: patches of 2 frames, channels x frame x pixels), one row per
    frame."""
    steps = pixels.view(NUM_FRAMES // 2, -1, 3, 2, PATCH_SIZE * PATCH_SIZE)
    return steps.permute(0, 3, 1, 2, 4).reshape(NUM_FRAMES, -1)


@pytest.mark.parametrize("mode", MODES)
def test_the_model_sees_the_whole_template_with_the_reference_video(adapters, mode, frames):
    """Token ids = the whole rendered template with its video part replaced whole by the
    reference's per-patch segments at the frames' real times; one placeholder per feature the
    vision tower makes, every frame among them; finite scores, caption != foil."""
    adapter = adapters[mode]
    model = adapter.model
    assert model.config.model_type == "lfm3_vl"
    prefix, continuations, scores = _scored(adapter, frames)
    assert all(map(math.isfinite, scores.scores)) and scores.scores[0] != scores.scores[1]
    grid = prefix["video_grid_thw"][0].tolist()
    assert grid[0] * 2 == NUM_FRAMES  # every frame reached the model, 2 a temporal patch
    merge = model.config.vision_config.spatial_merge_size
    placeholders = int((prefix["input_ids"] == model.config.video_token_id).sum())
    with torch.inference_mode():
        features = model.model.get_video_features(
            pixel_values_videos=prefix["pixel_values_videos"],
            video_grid_thw=prefix["video_grid_thw"],
        )
    assert placeholders == sum(len(part) for part in features.pooler_output) > 0
    seen = [prefix["input_ids"][0].tolist() + continuation for continuation in continuations]
    wholes = _rendered(adapter)
    assert all(whole.count(WRAPPED) == 1 for whole in wholes)
    video = _reference_video(grid, merge)
    expected = [adapter.tokenizer(whole.replace(WRAPPED, video))["input_ids"] for whole in wholes]
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
    from foilkit.scorers.adapters._features import token_logprobs

    adapter = adapters["likelihood"]
    assert adapter.prefix_reuse == "copy"
    prefix, continuations, scores = _scored(adapter, frames)
    ids = torch.tensor([prefix["input_ids"][0].tolist() + continuations[1]])
    inputs = {key: prefix[key] for key in ("pixel_values_videos", "video_grid_thw")}
    with torch.inference_mode():
        logits = adapter.model(input_ids=ids, **inputs).logits[0]
    count = len(continuations[1])
    expected = token_logprobs(logits[-count - 1 : -1], ids[0, -count:])
    assert scores.details["logprob_sum"][1] == pytest.approx(float(expected.sum()), abs=1e-3)


def test_a_reversed_view_reverses_what_the_model_sees(adapters, frames):
    """The reversed control's frames reach the model in reverse order, on the same increasing
    time axis (the same prompt): a video playing backwards."""
    adapter = adapters["likelihood"]
    forward, *_ = _scored(adapter, frames)
    backward, *_ = _scored(adapter, frames.flip(0), timestamps=TIMESTAMPS[::-1])
    assert torch.equal(backward["input_ids"], forward["input_ids"])
    before, after = (_per_frame(call["pixel_values_videos"]) for call in (forward, backward))
    assert torch.equal(after, before.flip(0)) and not torch.equal(after, before)


@pytest.mark.parametrize("mode", MODES)
def test_a_benchmark_scores_end_to_end(mode, tiny_model, benchmark):
    rows = benchmark.select(range(2))  # a view and its reversal
    result = foilkit.score(
        tiny_model(TWIN), rows, mode=mode, num_workers=0, progress=False, use_cache=False
    )
    assert not any(result["error"])
    for row in result:
        assert len(row["frame_indices"]) == NUM_FRAMES
        scores = [row["caption_score"], *row["foil_scores"]]
        assert all(map(math.isfinite, scores)) and scores[0] != scores[1]
        if mode == "choice":
            assert sum(scores) == pytest.approx(1.0, abs=1e-5)


def test_generate_answers_what_the_logits_rank_first(tiny_model, frames):
    """``--mode "generate"``: a one-token greedy answer is the token a full forward over the
    whole rendered prompt ranks first."""
    adapter = load_adapter(tiny_model(TWIN), mode="generate", device="cpu")
    assert_greedy_answer_follows_the_logits(adapter, frames, TEXTS, TIMESTAMPS)


def test_entail_scores_what_the_logits_say(adapters, frames):
    """``--mode "entail"``: P(Yes) / (P(Yes) + P(No)) after each text's entailment question
    equals a full forward over the whole prompt."""
    assert_entail_follows_the_logits(adapters["entail"], frames, TEXTS, TIMESTAMPS)


# --- Kimi K2.5: refused on video -----------------------------------------------------------------


def test_kimi_k25_is_refused_naming_the_transformers_bug(tiny_model):
    """Kimi K2.5's video forward fails inside transformers 5.23 (tests/test_tiny_models.py shows
    it on the twin, whose template writes the video placeholder): refused before its weights
    load, in one line, as the families table says, in every mode."""
    from foilkit.synthetic.models.families import family

    path = tiny_model("kimi-k2.5")
    for mode in ("likelihood", "choice", "entail", "generate"):
        with pytest.raises(ValueError) as error:
            load_adapter(path, mode=mode, device="cpu")
        reason = str(error.value)
        assert "\n" not in reason and reason == f"{path}: {family('kimi_k25').reason}"
    assert "model_type 'kimi_k25' cannot be scored on video with transformers" in reason
    assert family("kimi_k25").status == "refused"
