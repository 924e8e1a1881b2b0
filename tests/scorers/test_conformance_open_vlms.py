"""Conformance of the open video LLMs (LLaVA-OneVision, ...): each family's tiny twin, built
with the family's real processor classes, special tokens and chat template, is scored through
the video-llm adapter in both modes, and what reaches the model is checked: the whole rendered
prompt's token ids, as many video placeholders as the model makes video features for the
frames given, the frames' real times in the video processor, and a reversed view reversed."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
import torch
from answering_model import (
    assert_entail_follows_the_logits,
    assert_greedy_answer_follows_the_logits,
)
from test_video_llm_fidelity import INTERVAL, TEXTS, TIMESTAMPS, ModelCalls

import foilkit
from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.adapters.video_llm import CHOICE_SYSTEM, choice_question
from foilkit.scorers.adapters.video_llm import LIKELIHOOD_QUESTION as QUESTION
from foilkit.scorers.requests import TextsRequest
from foilkit.synthetic.models import fidelity_model_path
from foilkit.synthetic.real_tokenizers import has_real_tokenizer
from foilkit.synthetic.videos import SyntheticScene, render_frames

MODES = ("likelihood", "choice")
FRAMES = 8


@dataclass(frozen=True)
class Family:
    """A family's twin and what its model must be given for ``frames`` frames of 48x64."""

    twin: str
    #: video features the model makes for ``frames`` frames
    video_tokens: Callable[[int], int]
    #: the model input that carries the frames
    video_input: str = "pixel_values_videos"
    #: the config field naming the placeholder token, and the model method making its features
    placeholder: str = "video_token_id"
    features: str = "get_video_features"
    #: the model input masking the features the model keeps (``None``: it keeps them all)
    kept: str | None = None
    #: the real tokenizer a fidelity twin is built around (``None``: a tiny twin)
    real_tokenizer: str | None = None
    #: where the processor writes frame times into the prompt: a pattern finding them in the
    #: decoded prompt, and how a time in seconds is written there
    prompt_times: tuple[str, Callable[[float], str]] | None = None
    #: how the template takes VITATECS' system prompt (``SYSTEM_FORMS``)
    system_form: str = "parts"


FAMILIES = {
    # 4x4 patches pooled to 2x2 a frame, then one image_newline after the video
    "llava_onevision": Family("llava-onevision", lambda frames: 4 * frames + 1),
    # each frame an image tile: 4x4 patches pixel-shuffled to 2x2 <IMG_CONTEXT> tokens
    "internvl": Family(
        "internvl",
        lambda frames: 4 * frames,
        video_input="pixel_values",
        placeholder="image_token_id",
        features="get_image_features",
    ),
    # Vicuna's real tokenizer; every frame keeps its CLS token: 4x4 patches + 1
    "video_llava": Family("video-llava", lambda frames: 17 * frames, real_tokenizer="llama2"),
    # each frame an image of 4 tokens (4x4 patches pixel-shuffled by 2), after its timestamp
    "smolvlm": Family(
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
    "video_llama_3": Family(
        "video-llama-3",
        lambda frames: {8: 8 * 2, 4: 4 * 6}[frames],
        kept="video_compression_mask",
        prompt_times=(r"Time (\d+\.\d)s:", lambda t: f"{t:.1f}"),
    ),
    # 4x4 patches (CLS dropped) average-pooled to 2x2 a frame; a template that writes BOS and
    # a system prompt given as a plain string
    "perception_lm": Family(
        "perception-lm",
        lambda frames: 4 * frames,
        features="get_image_features",
        system_form="string",
    ),
    # 4x4 patches attention-pooled 2x2 a frame, after the frame's time; no system role
    "molmo2": Family(
        "molmo2",
        lambda frames: 4 * frames,
        prompt_times=(r"(\d+\.\d) <frame_start>", lambda t: f"{t:.1f}"),
        system_form="user",
    ),
}


def _frames(count: int = FRAMES) -> torch.Tensor:
    scene = SyntheticScene(direction="left")
    return torch.from_numpy(render_frames(scene, num_frames=count)).permute(0, 3, 1, 2).contiguous()


def _twin_path(expect: Family, tiny_model) -> str:
    if expect.real_tokenizer is None:
        return tiny_model(expect.twin)
    if not has_real_tokenizer(expect.real_tokenizer):
        pytest.skip(f"real {expect.real_tokenizer} tokenizer not fetched (./dev.sh test does)")
    return str(fidelity_model_path(expect.twin))


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request, tiny_model):
    """A family's expectations and its twin loaded in each mode."""
    expect = FAMILIES[request.param]
    path = _twin_path(expect, tiny_model)
    adapters = {mode: load_adapter(path, mode=mode, device="cpu") for mode in MODES}
    return expect, adapters


def _recorded(adapter, requests: list[TextsRequest]) -> list[dict]:
    """The keyword inputs of every forward of ``adapter``'s model while it scores
    ``requests``."""
    calls = ModelCalls(adapter.model)
    try:
        adapter.score(requests)
    finally:
        calls.remove()
    return calls.calls


def _prefixes(calls: list[dict]) -> list[dict]:
    """The forwards that encode a video prefix (no cache to continue from)."""
    return [call for call in calls if call.get("past_key_values") is None]


def _choice_prompts(adapter) -> list[str]:
    """The whole rendered prompt of each order of the options in choice mode: VITATECS' system
    prompt in the family's form (a system turn of text parts; of a string where the template
    would print a list as its repr, Perception LM's ``content|trim``; the start of the user turn
    where the template has no system role, Molmo2's), then the question."""
    system, form = CHOICE_SYSTEM.format(count="two"), adapter.system_form()
    wholes = []
    for question in (choice_question(TEXTS), choice_question(TEXTS[::-1])):
        user = {"role": "user", "content": [{"type": "video"}, {"type": "text", "text": question}]}
        if form == "user":  # no system role: the system prompt opens the user turn
            user["content"][1]["text"] = f"{system}\n{question}"
            messages = [user]
        else:
            content = system if form == "string" else [{"type": "text", "text": system}]
            messages = [{"role": "system", "content": content}, user]
        wholes.append(
            adapter.processor.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=False
            )
        )
    assert system in wholes[0] and "'type'" not in wholes[0]  # as text, not a list's repr
    return wholes


def _expected_prompts(adapter) -> list[str]:
    """The whole rendered prompt of each model input (:func:`_choice_prompts`; likelihood: the
    prompt and the text as the template writes an answer), except where a template's answered
    turn does not extend its generation prompt (LLaVA-OneVision's writes ``assistant\\n`` to
    generate, ``assistant \\n`` before a given answer): there the text follows the generation
    prompt, as the model would generate it."""
    if adapter.mode == "choice":
        return _choice_prompts(adapter)
    messages = [
        {"role": "user", "content": [{"type": "video"}, {"type": "text", "text": QUESTION}]}
    ]
    render = adapter.processor.apply_chat_template
    prompt = render(messages, add_generation_prompt=True, tokenize=False)
    wholes = []
    for text in TEXTS:
        answer = [{"role": "assistant", "content": [{"type": "text", "text": text}]}]
        answered = render(messages + answer, tokenize=False)
        if answered.startswith(prompt):
            wholes.append(answered[: answered.index(text, len(prompt)) + len(text)])
        else:
            wholes.append(prompt + text)
    return wholes


@pytest.mark.parametrize("mode", MODES)
def test_the_model_sees_the_whole_prompts_token_ids(family, mode):
    expect, adapters = family
    adapter, frames = adapters[mode], _frames()
    request = TextsRequest(TEXTS, frames, timestamps=TIMESTAMPS)
    calls = _recorded(adapter, [request])
    (prefix,) = _prefixes(calls)  # the video prefix is encoded once for the view
    continuations = [call["input_ids"][0].tolist() for call in calls if call is not prefix]
    wholes = _expected_prompts(adapter)
    assert adapter.system_form() == expect.system_form
    assert len(continuations) == len(wholes)
    bos = adapter.tokenizer.bos_token
    for whole, continuation in zip(wholes, continuations):
        # tokenized as transformers tokenizes a rendered chat: no second BOS where it has one
        expected = adapter.processor(
            text=[whole],
            videos=[frames],
            return_tensors="pt",
            add_special_tokens=not (bos and whole.startswith(bos)),
            **adapter.video_kwargs(request),
        )["input_ids"][0]
        ids = prefix["input_ids"][0].tolist() + continuation
        assert ids == expected.tolist()
        assert ids.count(adapter.tokenizer.bos_token_id) <= 1


def _feature_rows(features) -> int:
    """How many embeddings a ``get_video_features`` result holds (a tensor, a list of them, or
    a model output whose ``pooler_output`` is one of those)."""
    features = getattr(features, "pooler_output", features)
    if isinstance(features, torch.Tensor):
        return features.reshape(-1, features.shape[-1]).shape[0]
    return sum(_feature_rows(part) for part in features)


@pytest.mark.parametrize("count", [4, FRAMES])
def test_video_placeholders_are_the_features_the_model_makes(family, count, monkeypatch):
    """The prompt holds one placeholder per video embedding the model makes for the frames
    given, as many as the family's processor writes for that many frames."""
    expect, adapters = family
    adapter = adapters["likelihood"]
    model = adapter.model.model
    made: list[int] = []
    original = getattr(model, expect.features)

    def counting(*args, **kwargs):
        features = original(*args, **kwargs)
        made.append(_feature_rows(features))
        return features

    monkeypatch.setattr(model, expect.features, counting)
    times = TIMESTAMPS[:count]
    (prefix,) = _prefixes(_recorded(adapter, [TextsRequest(TEXTS, _frames(count), times)]))
    placeholder = getattr(adapter.model.config, expect.placeholder)
    placeholders = int((prefix["input_ids"] == placeholder).sum())
    assert made == [expect.video_tokens(count)]
    consumed = made[0]
    if expect.kept is not None:  # the features the model keeps (VideoLLaMA3's pruning)
        mask = prefix[expect.kept]
        assert len(mask) == made[0] and 0 < int(mask.sum()) <= made[0]
        consumed = int(mask.sum())
    assert placeholders == consumed


def test_the_frames_real_times_reach_the_video_processor(family, monkeypatch):
    expect, adapters = family
    adapter = adapters["likelihood"]
    video_processor = adapter.processor.video_processor
    seen: list[dict] = []
    original = video_processor.preprocess

    def recording(*args, **kwargs):
        seen.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(video_processor, "preprocess", recording)
    calls = _recorded(adapter, [TextsRequest(TEXTS, _frames(), timestamps=TIMESTAMPS)])
    assert seen and all(call["do_sample_frames"] is False for call in seen)
    for call in seen:
        (metadata,) = call["video_metadata"]
        assert metadata["fps"] == pytest.approx(1 / INTERVAL)
        times = [index / metadata["fps"] for index in metadata["frames_indices"]]
        assert times == pytest.approx(list(TIMESTAMPS))
    if expect.prompt_times is not None:  # and the prompt states them
        pattern, written = expect.prompt_times
        (prefix,) = _prefixes(calls)
        prompt = adapter.tokenizer.decode(prefix["input_ids"][0])
        assert re.findall(pattern, prompt) == [written(time) for time in TIMESTAMPS]


def _per_frame(video: torch.Tensor, count: int) -> list[torch.Tensor]:
    """A video input cut into its ``count`` frames' parts along the frame (or batch) axis."""
    video = video[0] if video.shape[0] == 1 and video.dim() == 5 else video
    return list(video.chunk(count))


def test_a_reversed_view_reverses_what_the_model_sees(family):
    expect, adapters = family
    adapter, frames = adapters["likelihood"], _frames()
    forward = TextsRequest(TEXTS, frames, timestamps=TIMESTAMPS)
    backward = TextsRequest(TEXTS, frames.flip(0), timestamps=TIMESTAMPS[::-1])
    seen = [
        _per_frame(call[expect.video_input], FRAMES)
        for call in _prefixes(_recorded(adapter, [forward, backward]))
    ]
    assert len(seen) == 2 and len(seen[0]) == FRAMES
    for shown, reversed_shown in zip(seen[0], seen[1][::-1]):
        assert torch.equal(shown, reversed_shown)
    assert not torch.equal(seen[0][0], seen[0][-1])  # the frames differ: the order is visible


@pytest.mark.parametrize("mode", MODES)
def test_a_benchmark_is_scored_end_to_end(family, mode, benchmark, tiny_model, tmp_path):
    """A view and its reversal (the RTime-style pair of rows): every text scored, finite, the
    caption apart from its foil, and the reversed view scored as a different video."""
    expect, _ = family
    rows = benchmark.select([0, 1])  # left-forward and its reversed row
    result = foilkit.score(
        _twin_path(expect, tiny_model),
        rows,
        mode=mode,
        num_frames=FRAMES,
        out_dir=str(tmp_path / "run"),
        cache_dir=str(tmp_path / "cache"),
        num_workers=0,
        progress=False,
    )
    forward, backward = result
    for row in result:
        assert not row["error"] and len(row["frame_indices"]) == FRAMES
        scores = [row["caption_score"], *row["foil_scores"]]
        assert all(map(math.isfinite, scores)) and scores[0] != scores[1]
        if mode == "choice":
            assert sum(scores) == pytest.approx(1.0, abs=1e-5)
    # the same prompt on the reversed frames (choice: one order, whose letter probabilities
    # the video moves; their mean over orders barely moves in a random model)
    same_prompt = "proficiency_caption_" + ("score" if mode == "likelihood" else "order_0")
    assert backward[same_prompt] != forward[same_prompt]
    assert backward["frame_indices"] == forward["frame_indices"][::-1]


def test_generate_answers_what_the_logits_rank_first(family, tiny_model):
    """``--mode "generate"`` on each family: a one-token greedy answer is the token a full
    forward over the whole rendered prompt ranks first."""
    expect, _ = family
    adapter = load_adapter(_twin_path(expect, tiny_model), mode="generate", device="cpu")
    scene = SyntheticScene(direction="left")
    frames = torch.from_numpy(render_frames(scene, num_frames=4)).permute(0, 3, 1, 2).contiguous()
    assert_greedy_answer_follows_the_logits(adapter, frames, TEXTS, TIMESTAMPS[:4])


def test_entail_scores_what_the_logits_say(family, tiny_model):
    """``--mode "entail"`` on each family: P(Yes) / (P(Yes) + P(No)) after each text's
    entailment question equals a full forward over the whole rendered prompt."""
    expect, _ = family
    adapter = load_adapter(_twin_path(expect, tiny_model), mode="entail", device="cpu")
    scene = SyntheticScene(direction="left")
    frames = torch.from_numpy(render_frames(scene, num_frames=4)).permute(0, 3, 1, 2).contiguous()
    assert_entail_follows_the_logits(adapter, frames, TEXTS, TIMESTAMPS[:4])
