"""Conformance of more video LLM families (GLM-4.1V, GLM-4.6V, GLM-GA): each tiny twin, with
its real processor classes and its checkpoint's chat template, is scored as a real checkpoint
would be.

Per family and mode: the model sees the token ids of the whole rendered chat template (system
and answer turns written as the template reads them, the prompt ending where the template
writes the answer); the video's placeholder tokens are as many as the embeddings the model makes
of the frames given, every frame among them; the frames' real times are written into the prompt;
a reversed view reverses what the model sees; a benchmark scores end to end with finite scores.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import torch

import foilkit
from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.adapters.video_llm import (
    CHOICE_SYSTEM,
    LIKELIHOOD_QUESTION,
    choice_question,
)
from foilkit.scorers.requests import TextsRequest
from foilkit.synthetic.videos import SyntheticScene, render_frames

TEXTS = ("a red square moves to the left", "a red square moves to the right")
FRAMES = 8
TIMESTAMPS = tuple(0.375 + 0.75 * k for k in range(FRAMES))  # 0.75 s apart
MODES = ("likelihood", "choice")


@dataclass(frozen=True)
class Family:
    """What a family's real checkpoint does with a video, as its processor and template
    declare: ``times`` writes the time of each temporal patch (its first frame's) as the prompt
    shows it; ``answer_opens`` is what the template's assistant turn writes before the answer;
    ``system_and_answer_as_strings``: the template writes those turns' content as it is."""

    twin: str
    times: Callable[[float], str]
    frames_per_patch: int = 2
    answer_opens: str = ""
    system_and_answer_as_strings: bool = False


def glm46v_times(t: float) -> str:
    return f"<|end_of_image|>{t:.1f} seconds"


FAMILIES = {
    "glm4v": Family(
        "glm4v", lambda t: f"<|end_of_image|>{int(t)}", system_and_answer_as_strings=True
    ),
    "glm46v": Family("glm46v", glm46v_times, answer_opens="<think></think>\n"),
    # GLM-GA: GLM-4.6V's model and processor around its own image and video processors
    "glmga": Family("glmga", glm46v_times, answer_opens="<think></think>\n"),
}


@pytest.fixture(scope="module")
def frames() -> torch.Tensor:
    scene = SyntheticScene(direction="left")
    return (
        torch.from_numpy(render_frames(scene, num_frames=FRAMES)).permute(0, 3, 1, 2).contiguous()
    )


@pytest.fixture(scope="module", params=list(FAMILIES))
def family(request, tiny_model):
    """A family's facts and its twin loaded in each mode."""
    facts = FAMILIES[request.param]
    path = tiny_model(facts.twin)
    adapters = {mode: load_adapter(path, mode=mode, device="cpu") for mode in MODES}
    return facts, adapters


class ModelCalls:
    """The keyword inputs of every forward of a model (a forward pre-hook)."""

    def __init__(self, model: torch.nn.Module):
        self.calls: list[dict] = []
        self._handle = model.register_forward_pre_hook(self._record, with_kwargs=True)

    def _record(self, module, args, kwargs):
        self.calls.append(dict(kwargs))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._handle.remove()


def _scored_calls(adapter, frames, timestamps=TIMESTAMPS) -> tuple[dict, list[list[int]], Any]:
    """Score the texts on ``frames``: the video prefix's forward inputs, each continuation's
    ids, and the scores."""
    with ModelCalls(adapter.model) as recorded:
        (scores,) = adapter.score([TextsRequest(TEXTS, frames, timestamps=timestamps)])
    prefixes = [call for call in recorded.calls if call.get("pixel_values_videos") is not None]
    assert len(prefixes) == 1  # the video is encoded once for the view
    continuations = [
        call["input_ids"][0].tolist()
        for call in recorded.calls
        if call.get("past_key_values") is not None
    ]
    return prefixes[0], continuations, scores


def _whole_prompts(adapter, facts: Family) -> list[str]:
    """The prompt of each model input, from ``apply_chat_template`` and the family's facts
    alone: up to the answer's end (likelihood), or up to where the answer starts (choice, per
    order of the options), the system prompt and answer written as the checkpoint's template
    reads them."""
    processor = adapter.processor

    def text(value: str):
        return value if facts.system_and_answer_as_strings else [{"type": "text", "text": value}]

    def user(question: str) -> dict:
        return {"role": "user", "content": [{"type": "video"}, {"type": "text", "text": question}]}

    def up_to_answer(messages: list[dict], answer: str, keep: bool) -> str:
        answered = processor.apply_chat_template(
            messages + [{"role": "assistant", "content": text(answer)}], tokenize=False
        )
        start = answered.rindex(answer)
        assert answered[:start].endswith(facts.answer_opens)
        return answered[: start + len(answer)] if keep else answered[:start]

    if adapter.mode == "likelihood":
        return [up_to_answer([user(LIKELIHOOD_QUESTION)], answer, True) for answer in TEXTS]
    system = {"role": "system", "content": text(CHOICE_SYSTEM.format(count="two"))}
    return [
        up_to_answer([system, user(choice_question(order))], "A", False)
        for order in (TEXTS, TEXTS[::-1])
    ]


def _video_metadata(timestamps) -> dict:
    """``video_metadata`` of frames shown at these times, built here, not by the adapter."""
    fps = (len(timestamps) - 1) / (max(timestamps) - min(timestamps))
    return {
        "total_num_frames": len(timestamps),
        "fps": fps,
        "frames_indices": [t * fps for t in sorted(timestamps)],
        "duration": len(timestamps) / fps,
    }


@pytest.mark.parametrize("mode", MODES)
def test_the_model_sees_the_whole_rendered_template(family, mode, frames):
    facts, adapters = family
    adapter = adapters[mode]
    prefix, continuations, scores = _scored_calls(adapter, frames)
    wholes = _whole_prompts(adapter, facts)
    assert len(continuations) == len(wholes)
    for whole, continuation in zip(wholes, continuations):
        assert "{'type'" not in whole  # no turn reaches the model as a Python repr
        expected = adapter.processor(
            text=[whole],
            videos=[frames],
            video_metadata=[_video_metadata(TIMESTAMPS)],
            do_sample_frames=False,
            return_tensors="pt",
        )["input_ids"][0]
        assert prefix["input_ids"][0].tolist() + continuation == expected.tolist()
    if mode == "likelihood":  # the answer's own tokens are scored, not what opens the turn
        for position, (whole, answer) in enumerate(zip(wholes, TEXTS)):
            before = whole[: whole.rindex(answer)]
            count = len(adapter.encode(whole)) - len(adapter.encode(before))
            assert scores.details["num_tokens"][position] == count
    if mode == "choice":  # the letter is read where the template writes the answer
        assert adapter.prompt_templates()["2"].endswith(f"<|assistant|>\n{facts.answer_opens}")
        assert adapter.describe().get("answer_lead_in", "") == facts.answer_opens


def test_every_frame_becomes_the_video_tokens_the_model_consumes(family, frames):
    facts, adapters = family
    adapter = adapters["likelihood"]
    prefix, *_ = _scored_calls(adapter, frames)
    grid = prefix["video_grid_thw"]
    assert grid[0, 0].item() == FRAMES // facts.frames_per_patch  # no frame dropped
    with torch.inference_mode():
        features = adapter.model.get_video_features(prefix["pixel_values_videos"], grid)
    consumed = sum(len(part) for part in features.pooler_output)
    # GLM writes a video's tokens as <|image|> inside <|begin_of_video|>...<|end_of_video|>
    placeholders = int((prefix["mm_token_type_ids"] == 2).sum())
    assert placeholders == consumed == int(grid.prod()) // 4 > 0


def test_the_frames_real_times_are_written_into_the_prompt(family, frames):
    facts, adapters = family
    adapter = adapters["likelihood"]
    prefix, *_ = _scored_calls(adapter, frames)
    shown = adapter.tokenizer.decode(prefix["input_ids"][0])
    patch_times = TIMESTAMPS[:: facts.frames_per_patch]
    written = "".join(facts.times(t) for t in patch_times)
    assert written in shown.replace("<|image|>", "").replace("<|begin_of_image|>", "")
    # the processor's 24 fps default would write other times
    assert facts.times(patch_times[1]) != facts.times(facts.frames_per_patch / 24)


def test_a_reversed_view_reverses_what_the_model_sees(family, frames):
    facts, adapters = family
    adapter = adapters["likelihood"]
    forward, *_ = _scored_calls(adapter, frames)
    backward, *_ = _scored_calls(adapter, frames.flip(0), timestamps=TIMESTAMPS[::-1])
    # the same frame times, increasing: a video playing backwards at the real rate
    assert forward["input_ids"].tolist() == backward["input_ids"].tolist()
    t, h, w = forward["video_grid_thw"][0].tolist()
    # a row of pixel_values_videos is one patch: channels x frames of its temporal patch x pixels
    before, after = (
        call["pixel_values_videos"].view(t, h * w, 3, facts.frames_per_patch, -1)
        for call in (forward, backward)
    )
    assert torch.equal(after, before.flip(0).flip(3)) and not torch.equal(after, before)


@pytest.mark.parametrize("mode", MODES)
def test_a_benchmark_scores_end_to_end(family, mode, tiny_model, benchmark_with_broken, tmp_path):
    facts, _ = family
    result = foilkit.score(
        tiny_model(facts.twin),
        benchmark_with_broken,
        mode=mode,
        out_dir=str(tmp_path / "run"),
        cache_dir=str(tmp_path / "cache"),
        num_workers=0,
        progress=False,
    )
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["adapter"]["adapter"] == "video-llm"
    assert run["adapter"].get("answer_lead_in", "") == facts.answer_opens
    rows = [row for row in result if not row["error"]]
    assert {row["id"] for row in result if row["error"]} == {"corrupt", "missing"}
    for row in rows:
        assert len(row["frame_indices"]) == FRAMES
        scores = [row["caption_score"], *row["foil_scores"]]
        assert all(map(math.isfinite, scores)) and scores[0] != scores[1]
        if mode == "choice":
            assert sum(scores) == pytest.approx(1.0, abs=1e-5)
