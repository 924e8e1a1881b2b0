"""What the conformance tests of the video LLM families share: the view they score, a record of
what the model is given, the prompts built from ``apply_chat_template`` alone, the video as the
reference processor writes it, the count of the embeddings the model makes, the full forward an
answer scored on the cached video prefix must equal, the one-line refusals, and the checks of a
benchmark scored end to end.

Each ``test_conformance_*.py`` declares its families as data and keeps only what is its families'
own; the checks themselves live here, once. The tests of the open VLMs' checks are here too, as
tests: ``test_conformance_open_vlms.py`` and ``test_conformance_omni.py`` import them, so that
pytest collects them in each, on that module's own families.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from answering_model import (
    assert_entail_follows_the_logits,
    assert_greedy_answer_follows_the_logits,
)

import foilkit
from foilkit.builders.vitatecs.answers import CHOICE_SYSTEM, choice_question
from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.modes import LIKELIHOOD_QUESTION
from foilkit.scorers.requests import TextsRequest
from foilkit.synthetic.models import NUM_FRAMES, PATCH_SIZE
from foilkit.synthetic.videos import SyntheticScene, render_frames

TEXTS = ("a red square moves to the left", "a red square moves to the right")
FRAMES = NUM_FRAMES  # the frames of a view
INTERVAL = 0.75  # seconds between the sampled frames of the tests' views
TIMESTAMPS = tuple(0.375 + INTERVAL * k for k in range(FRAMES))
#: the modes whose scores every family's prompt checks run in
MODES = ("likelihood", "choice")
#: the vision pair a Qwen-style template writes for the video, before the processor expands it
WRAPPED_VIDEO = "<|vision_start|><|video_pad|><|vision_end|>"


def render_view(count: int = FRAMES) -> torch.Tensor:
    """``count`` frames (T x C x H x W, uint8) of a red square moving left."""
    rendered = render_frames(SyntheticScene(direction="left"), num_frames=count)
    return torch.from_numpy(rendered).permute(0, 3, 1, 2).contiguous()


def load_modes(path: str, modes: Sequence[str] = MODES) -> dict:
    """The adapter of the model at ``path`` loaded in each of ``modes``, by mode."""
    return {mode: load_adapter(path, mode=mode, device="cpu") for mode in modes}


# --- what the model is given ---------------------------------------------------------------------


class ModelCalls:
    """The keyword inputs of every forward of a model (a forward pre-hook) in a ``with`` block."""

    def __init__(self, model: torch.nn.Module):
        self.calls: list[dict] = []
        self._handle = model.register_forward_pre_hook(self._record, with_kwargs=True)

    def _record(self, module, args, kwargs):
        self.calls.append(dict(kwargs))

    def __enter__(self) -> ModelCalls:
        return self

    def __exit__(self, *exc) -> None:
        self._handle.remove()


def recorded_calls(adapter, requests: list[TextsRequest]) -> list[dict]:
    """The keyword inputs of every forward of ``adapter``'s model while it scores
    ``requests``."""
    with ModelCalls(adapter.model) as recorded:
        adapter.score(requests)
    return recorded.calls


def prefix_calls(calls: list[dict]) -> list[dict]:
    """The forwards that encode a video prefix (no cache to continue from)."""
    return [call for call in calls if call.get("past_key_values") is None]


def scored_calls(
    adapter, frames: torch.Tensor, timestamps: Sequence[float] | None = TIMESTAMPS
) -> tuple[dict, list[list[int]], Any]:
    """Score :data:`TEXTS` on ``frames``: the video prefix's forward inputs, each continuation's
    ids, and the scores; the video is encoded once for the view and the processor never writes
    into the view's frames."""
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


def placeholder_count(prefix: dict, token_id: int) -> int:
    """How many of the prefix's tokens are the placeholder ``token_id``."""
    return int((prefix["input_ids"] == token_id).sum())


def feature_rows(features) -> int:
    """How many embeddings a ``get_video_features`` result holds (a tensor, a list of them, or
    a model output whose ``pooler_output`` is one of those)."""
    features = getattr(features, "pooler_output", features)
    if isinstance(features, torch.Tensor):
        return features.reshape(-1, features.shape[-1]).shape[0]
    return sum(feature_rows(part) for part in features)


def grid_features(model, inputs: dict) -> int:
    """Embeddings the model makes of a Qwen-style video (``pixel_values_videos`` + grid)."""
    with torch.inference_mode():
        features = model.model.get_video_features(
            pixel_values_videos=inputs["pixel_values_videos"],
            video_grid_thw=inputs["video_grid_thw"],
        )
    return feature_rows(features)


def temporal_patches(pixels: torch.Tensor) -> torch.Tensor:
    """The rows of a video of patches of 2 frames (channels x frame x pixels: GLM's, Qwen2-VL's,
    LFM3-VL's), one row per frame."""
    steps = pixels.view(FRAMES // 2, -1, 3, 2, PATCH_SIZE * PATCH_SIZE)
    return steps.permute(0, 3, 1, 2, 4).reshape(FRAMES, -1)


def processed(adapter, frames: torch.Tensor, text: str, timestamps: Sequence[float]) -> dict:
    """The processor's inputs for ``text`` and ``frames`` shown at ``timestamps`` (metadata
    built here, not by the adapter)."""
    return adapter.processor(
        text=[text],
        videos=[frames],
        video_metadata=[video_metadata(timestamps)],
        do_sample_frames=False,
        return_metadata=True,  # Cosmos3 Edge's processor expands the video only with it
        return_tensors="pt",
    )


def video_metadata(timestamps: Sequence[float]) -> dict:
    """``video_metadata`` of frames shown at these times, built here, not by the adapter."""
    fps = (len(timestamps) - 1) / (max(timestamps) - min(timestamps))
    return {
        "total_num_frames": len(timestamps),
        "fps": fps,
        "frames_indices": [t * fps for t in sorted(timestamps)],
        "duration": len(timestamps) / fps,
    }


def reference_video(times: Sequence[float], grid: Sequence[int], merge: int) -> str:
    """The video as Qwen3-VL's reference processor writes it: per temporal patch (2 frames), the
    mean time of its frames as ``<t seconds>``, then its own vision pair around its tokens."""
    per_patch = grid[1] * grid[2] // merge**2
    return "".join(
        f"<{(times[2 * patch] + times[2 * patch + 1]) / 2:.1f} seconds>"
        f"<|vision_start|>{'<|video_pad|>' * per_patch}<|vision_end|>"
        for patch in range(grid[0])
    )


# --- the prompts, from apply_chat_template alone --------------------------------------------------


def user_turn(question: str) -> dict:
    """A user turn of the video then ``question``."""
    return {"role": "user", "content": [{"type": "video"}, {"type": "text", "text": question}]}


def answered_prompts(
    processor, question: str = LIKELIHOOD_QUESTION, *, turn: bool = False, extends: bool = True
) -> list[str]:
    """The likelihood mode's whole prompt of each text: the generation prompt, then the text as
    the template writes the assistant's answer, to the text's end (``turn``: the turn's end).
    ``extends``: the answered turn must extend the generation prompt; otherwise, where it does
    not (LLaVA-OneVision's writes ``assistant\\n`` to generate, ``assistant \\n`` before a given
    answer), the text follows the generation prompt, as the model would generate it."""
    messages = [user_turn(question)]
    render = processor.apply_chat_template
    prompt = render(messages, add_generation_prompt=True, tokenize=False)
    wholes = []
    for text in TEXTS:
        answer = {"role": "assistant", "content": [{"type": "text", "text": text}]}
        answered = render([*messages, answer], tokenize=False)
        extended = answered.startswith(prompt)
        assert extended or not extends
        if not extended:
            wholes.append(prompt + text)
        elif turn:
            wholes.append(answered)
        else:
            wholes.append(answered[: answered.index(text, len(prompt)) + len(text)])
    return wholes


def choice_prompts(
    processor, system_form: str | None = "parts", question=choice_question, **options
) -> list[str]:
    """The choice mode's whole prompt of each order of the options: VITATECS' system prompt in
    the template's ``system_form`` (a system turn of text ``"parts"`` or of a ``"string"``;
    ``"user"``: no system role, the system prompt opens the user turn; ``None``: no system
    prompt), then ``question`` of the options, up to where the answer starts; ``options`` go to
    ``apply_chat_template`` (``enable_thinking=False``: a thinking template's reasoning block
    written empty and closed)."""
    system = CHOICE_SYSTEM.format(count="two")
    wholes = []
    for order in (TEXTS, TEXTS[::-1]):
        asked = question(order)
        if system_form == "user":
            messages = [user_turn(f"{system}\n{asked}")]
        elif system_form is None:
            messages = [user_turn(asked)]
        else:
            content = system if system_form == "string" else [{"type": "text", "text": system}]
            messages = [{"role": "system", "content": content}, user_turn(asked)]
        wholes.append(
            processor.apply_chat_template(
                messages, add_generation_prompt=True, tokenize=False, **options
            )
        )
    return wholes


def prompts_up_to_the_answer(adapter, answer_opens: str, strings: bool = False) -> list[str]:
    """The prompt of each model input from the template's answered turns: the generation prompt
    and what the template's assistant turn writes before the answer (which every prompt ends
    with, ``answer_opens``), then the answer (likelihood), or up to where the answer starts
    (choice, per order of the options); ``strings``: the template writes a system or assistant
    turn's content as it is, not as text parts."""
    processor = adapter.processor

    def text(value: str):
        return value if strings else [{"type": "text", "text": value}]

    def up_to_answer(messages: list[dict], answer: str) -> str:
        prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
        answered = processor.apply_chat_template(
            messages + [{"role": "assistant", "content": text(answer)}], tokenize=False
        )
        if answered.startswith(prompt):  # the template writes the answer after the prompt
            prompt = answered[: answered.rindex(answer)]
        assert prompt.endswith(answer_opens)
        return prompt

    if adapter.mode == "likelihood":
        return [up_to_answer([user_turn(LIKELIHOOD_QUESTION)], answer) + answer for answer in TEXTS]
    system = {"role": "system", "content": text(CHOICE_SYSTEM.format(count="two"))}
    return [
        up_to_answer([system, user_turn(choice_question(order))], "A")
        for order in (TEXTS, TEXTS[::-1])
    ]


# --- the checks ---------------------------------------------------------------------------------


def assert_the_template_reaches_the_model(
    adapter, frames: torch.Tensor, answer_opens: str, strings: bool = False
) -> None:
    """The model sees the ids of :func:`prompts_up_to_the_answer` (the processor's, at the frames'
    real times); likelihood scores the answer's own tokens, not what opens the turn; choice reads
    the letter where the template writes the answer."""
    prefix, continuations, scores = scored_calls(adapter, frames)
    wholes = prompts_up_to_the_answer(adapter, answer_opens, strings)
    assert len(continuations) == len(wholes)
    for whole, continuation in zip(wholes, continuations):
        assert "{'type'" not in whole  # no turn reaches the model as a Python repr
        expected = processed(adapter, frames, whole, TIMESTAMPS)["input_ids"][0]
        assert prefix["input_ids"][0].tolist() + continuation == expected.tolist()
    if adapter.mode == "likelihood":
        for position, (whole, answer) in enumerate(zip(wholes, TEXTS)):
            before = whole[: whole.rindex(answer)]
            count = len(adapter.encode(whole)) - len(adapter.encode(before))
            assert scores.details["num_tokens"][position] == count
    else:
        assert adapter.prompt_templates()["2"].endswith(answer_opens)


def full_forward_logprob(model, inputs: dict, count: int) -> float:
    """The log-probability one forward over ``inputs`` gives its last ``count`` tokens."""
    from foilkit.scorers.adapters._features import token_logprobs

    with torch.inference_mode():
        logits = model(**inputs).logits[0]
    ids = inputs["input_ids"][0, -count:]
    return float(token_logprobs(logits[-count - 1 : -1], ids).sum())


def assert_the_cached_prefix_scores_as_one_forward(
    adapter, frames: torch.Tensor, answer_opens: str, strings: bool = False
) -> None:
    """The first answer's likelihood, scored on the cached video prefix, equals one forward over
    the whole prompt (:func:`prompts_up_to_the_answer`)."""
    *_, scores = scored_calls(adapter, frames)
    whole = prompts_up_to_the_answer(adapter, answer_opens, strings)[0]
    inputs = processed(adapter, frames, whole, TIMESTAMPS)
    inputs = {key: value for key, value in inputs.items() if torch.is_tensor(value)}
    expected = full_forward_logprob(adapter.model, inputs, int(scores.details["num_tokens"][0]))
    assert scores.details["logprob_sum"][0] == pytest.approx(expected, abs=1e-3)


def reversed_prefixes(adapter, frames: torch.Tensor) -> tuple[dict, dict]:
    """The video prefix's inputs for ``frames`` and for the reversed view (the frames in reverse
    order at the same increasing times: a video playing backwards), which must be the
    processor's output for the reversed frames and differ from the forward view's."""
    forward, *_ = scored_calls(adapter, frames)
    backward, *_ = scored_calls(adapter, frames.flip(0), timestamps=TIMESTAMPS[::-1])
    text = adapter.prompt_texts(TEXTS)[0]
    shown = processed(adapter, frames.flip(0), text, TIMESTAMPS)
    for key in ("input_ids", "pixel_values_videos"):
        assert torch.equal(backward[key], shown[key]), key
    assert not torch.equal(backward["pixel_values_videos"], forward["pixel_values_videos"])
    return forward, backward


def assert_follows_the_logits(
    adapter, frames: torch.Tensor, timestamps: Sequence[float] | None = TIMESTAMPS
) -> None:
    """``generate``: a one-token greedy answer is the token a full forward over the whole
    rendered prompt ranks first; ``entail``: P(Yes) / (P(Yes) + P(No)) after each text's
    entailment question equals a full forward over the whole prompt."""
    check = {
        "generate": assert_greedy_answer_follows_the_logits,
        "entail": assert_entail_follows_the_logits,
    }[adapter.mode]
    check(adapter, frames, TEXTS, timestamps)


def refusal(path: str, model_type: str, mode: str = "likelihood") -> str:
    """The one line ``load_adapter`` refuses ``path`` with: the families table's reason for
    ``model_type``, which the table marks refused."""
    from foilkit.synthetic.models.families import family

    with pytest.raises(ValueError) as error:
        load_adapter(path, mode=mode, device="cpu")
    reason = str(error.value)
    assert "\n" not in reason and reason == f"{path}: {family(model_type).reason}"
    assert family(model_type).status == "refused"
    return reason


# --- a benchmark scored end to end ----------------------------------------------------------------


def rows_by_id(dataset, ids: Sequence[str]):
    """The rows of ``dataset`` with these ids, in this order."""
    return dataset.select([dataset["id"].index(row_id) for row_id in ids])


def score_benchmark(path: str, rows, mode: str | None = None, out: Path | None = None, **options):
    """``foilkit.score`` in this process, quietly: into ``out/run`` with its cache in
    ``out/cache`` (returns the result and run.json), or uncached, nothing written (the result
    and ``None``); ``mode`` ``None``: the adapter's default."""
    folders = {"out_dir": str(out / "run"), "cache_dir": str(out / "cache")} if out else {}
    result = foilkit.score(
        path,
        rows,
        mode=mode,
        num_workers=0,
        progress=False,
        **(folders or {"use_cache": False}),
        **options,
    )
    run = json.loads((out / "run" / "run.json").read_text()) if out else None
    return result, run


def assert_rows_scored(rows, mode: str, frames: int = FRAMES) -> None:
    """Each row scored on ``frames`` frames, every score finite; the caption apart from its foil
    and, in choice mode, the texts' shares summing to 1; in generate mode, an answer in each
    order of the options read into shares."""
    for row in rows:
        assert len(row["frame_indices"]) == frames
        scores = [row["caption_score"], *row["foil_scores"]]
        assert all(map(math.isfinite, scores))
        if mode == "generate":
            assert len(row["answers"]) == len(row["answer_outcomes"]) == 2
            assert all(0 <= score <= 1 for score in scores)
            continue
        assert scores[0] != scores[1]
        if mode == "choice":
            assert sum(scores) == pytest.approx(1.0, abs=1e-5)


# --- tests the open VLM and omni modules collect on their own families ----------------------------
#
# ``test_conformance_open_vlms.py`` and ``test_conformance_omni.py`` import these tests, so that
# pytest collects each in both modules, run on the module's own ``family`` fixture: a
# (:class:`VideoFamily`, {mode: adapter}) pair per family, its twin loaded in every mode.


@dataclass(frozen=True)
class VideoFamily:
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
    #: how the template takes VITATECS' system prompt (:func:`choice_prompts`)
    system_form: str = "parts"

    def path(self, tiny_model) -> str:
        """The twin's folder (a fidelity twin's skips where its real tokenizer is not
        fetched)."""
        from foilkit.synthetic.models import fidelity_model_path

        if self.real_tokenizer is None:
            return tiny_model(self.twin)
        if not has_real_tokenizer(self.real_tokenizer):
            pytest.skip(f"real {self.real_tokenizer} tokenizer not fetched (./dev.sh test does)")
        return str(fidelity_model_path(self.twin))


def has_real_tokenizer(name: str) -> bool:
    """Whether real tokenizer ``name`` was fetched (:mod:`foilkit.synthetic.real_tokenizers`):
    the tests that need it skip without it."""
    from foilkit.synthetic.real_tokenizers import RealTokenizerMissing, real_tokenizer_dir

    try:
        real_tokenizer_dir(name)
    except RealTokenizerMissing:
        return False
    return True


@pytest.mark.parametrize("mode", MODES)
def test_the_model_sees_the_whole_prompts_token_ids(family, mode, frames):
    """The prefix's and each continuation's ids are the processor's for the whole rendered
    prompt (:func:`answered_prompts`, where a template's answered turn does not extend its
    generation prompt the text after the generation prompt; :func:`choice_prompts` in the
    family's system form), with no second BOS."""
    expect, adapters = family
    adapter = adapters[mode]
    request = TextsRequest(TEXTS, frames, timestamps=TIMESTAMPS)
    calls = recorded_calls(adapter, [request])
    (prefix,) = prefix_calls(calls)  # the video prefix is encoded once for the view
    continuations = [call["input_ids"][0].tolist() for call in calls if call is not prefix]
    assert adapter.system_form() == expect.system_form
    if mode == "likelihood":
        wholes = answered_prompts(adapter.processor, extends=False)
    else:
        wholes = choice_prompts(adapter.processor, expect.system_form)
        system = CHOICE_SYSTEM.format(count="two")
        assert system in wholes[0] and "'type'" not in wholes[0]  # as text, not a list's repr
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
        made.append(feature_rows(features))
        return features

    monkeypatch.setattr(model, expect.features, counting)
    request = TextsRequest(TEXTS, render_view(count), TIMESTAMPS[:count])
    (prefix,) = prefix_calls(recorded_calls(adapter, [request]))
    placeholders = placeholder_count(prefix, getattr(adapter.model.config, expect.placeholder))
    assert made == [expect.video_tokens(count)]
    consumed = made[0]
    if expect.kept is not None:  # the features the model keeps (VideoLLaMA3's pruning)
        mask = prefix[expect.kept]
        assert len(mask) == made[0] and 0 < int(mask.sum()) <= made[0]
        consumed = int(mask.sum())
    assert placeholders == consumed


def test_the_frames_real_times_reach_the_video_processor(family, monkeypatch, frames):
    expect, adapters = family
    adapter = adapters["likelihood"]
    video_processor = adapter.processor.video_processor
    seen: list[dict] = []
    original = video_processor.preprocess

    def recording(*args, **kwargs):
        seen.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(video_processor, "preprocess", recording)
    calls = recorded_calls(adapter, [TextsRequest(TEXTS, frames, timestamps=TIMESTAMPS)])
    assert seen and all(call["do_sample_frames"] is False for call in seen)
    for call in seen:
        (metadata,) = call["video_metadata"]
        assert metadata["fps"] == pytest.approx(1 / INTERVAL)
        times = [index / metadata["fps"] for index in metadata["frames_indices"]]
        assert times == pytest.approx(list(TIMESTAMPS))
    if expect.prompt_times is not None:  # and the prompt states them
        pattern, written = expect.prompt_times
        (prefix,) = prefix_calls(calls)
        prompt = adapter.tokenizer.decode(prefix["input_ids"][0])
        assert re.findall(pattern, prompt) == [written(time) for time in TIMESTAMPS]


@pytest.mark.parametrize("mode", MODES)
def test_a_benchmark_is_scored_end_to_end(family, mode, benchmark, tiny_model, tmp_path):
    """A view and its reversal (the RTime-style pair of rows): every text scored, finite, the
    caption apart from its foil, and the reversed view scored as a different video."""
    expect, _ = family
    rows = benchmark.select([0, 1])  # left-forward and its reversed row
    result, _ = score_benchmark(expect.path(tiny_model), rows, mode, tmp_path, num_frames=FRAMES)
    forward, backward = result
    assert not any(result["error"])
    assert_rows_scored(result, mode)
    # the same prompt on the reversed frames (choice: one order, whose letter probabilities
    # the video moves; their mean over orders barely moves in a random model)
    same_prompt = "proficiency_caption_" + ("score" if mode == "likelihood" else "order_0")
    assert backward[same_prompt] != forward[same_prompt]
    assert backward["frame_indices"] == forward["frame_indices"][::-1]


def test_generate_answers_what_the_logits_rank_first(family):
    """``--mode "generate"`` on each family: a one-token greedy answer is the token a full
    forward over the whole rendered prompt ranks first."""
    _, adapters = family
    assert_follows_the_logits(adapters["generate"], render_view(4), TIMESTAMPS[:4])


def test_entail_scores_what_the_logits_say(family):
    """``--mode "entail"`` on each family: P(Yes) / (P(Yes) + P(No)) after each text's
    entailment question equals a full forward over the whole rendered prompt."""
    _, adapters = family
    assert_follows_the_logits(adapters["entail"], render_view(4), TIMESTAMPS[:4])
