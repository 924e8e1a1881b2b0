"""The video LLM adapter: the reused video prefix gives what a full forward gives; choice cancels order."""

from __future__ import annotations

import pytest
import torch
from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.adapters._features import token_logprobs
from foilkit.scorers.adapters.video_llm import LIKELIHOOD_QUESTION, choice_question
from foilkit.scorers.requests import TextsRequest

from foilkit.testing.videos import SyntheticScene, render_frames

MODELS = ["llava-next-video", "qwen2-vl"]
TEXTS = ("a red square moves to the left", "a red square moves to the right")


@pytest.fixture(scope="module")
def frames() -> torch.Tensor:
    return (
        torch.from_numpy(render_frames(SyntheticScene(direction="left"), num_frames=8))
        .permute(0, 3, 1, 2)
        .contiguous()
    )


@pytest.fixture(scope="module", params=MODELS)
def adapter(request, tiny_model):
    return {
        mode: load_adapter(tiny_model(request.param), mode=mode, device="cpu")
        for mode in ("likelihood", "choice")
    }


def _full_forward_logprobs(adapter, frames: torch.Tensor, prefix: str, text: str) -> torch.Tensor:
    """Log-probabilities of ``text`` from one forward over prefix + text, no cache."""
    inputs = adapter.processor(text=[prefix], videos=[frames], return_tensors="pt")
    text_ids = adapter._ids(text)
    length = inputs["input_ids"].shape[1]
    for key, value in inputs.items():  # per-token inputs (ids, mask, token types) grow by the text
        if value.ndim == 2 and value.shape[1] == length:
            extra = (
                text_ids
                if key == "input_ids"
                else torch.full_like(text_ids, int(key == "attention_mask"))
            )
            inputs[key] = torch.cat([value, extra], dim=1)
    with torch.inference_mode():
        logits = adapter.model(**inputs).logits[0]
    return token_logprobs(logits[-text_ids.shape[1] - 1 : -1], text_ids[0])


def test_likelihood_with_the_cached_prefix_equals_a_full_forward(adapter, frames):
    likelihood = adapter["likelihood"]
    scored = likelihood.score([TextsRequest(TEXTS, frames)])[0]
    head, tail = likelihood._prompt(None)
    for position, text in enumerate(TEXTS):
        expected = _full_forward_logprobs(
            likelihood, frames, head + LIKELIHOOD_QUESTION + tail, text
        )
        assert scored.details["logprob_sum"][position] == pytest.approx(
            float(expected.sum()), abs=1e-4
        )
        assert scored.details["num_tokens"][position] == len(expected)


def test_choice_with_the_cached_prefix_equals_a_full_forward(adapter, frames):
    choice = adapter["choice"]
    head, tail = choice._prompt(2)
    probabilities = []
    for order in (TEXTS, TEXTS[::-1]):
        inputs = choice.processor(
            text=[head + choice_question(order) + tail], videos=[frames], return_tensors="pt"
        )
        with torch.inference_mode():
            logits = choice.model(**inputs).logits[0, -1]
        letters = torch.stack(
            [torch.logsumexp(logits[ids], 0) for ids in choice._letter_ids[:2]]
        ).softmax(0)
        probabilities.append(letters if order == TEXTS else letters.flip(0))
    expected = torch.stack(probabilities).mean(0)
    scored = choice.score([TextsRequest(TEXTS, frames)])[0].scores
    # the question is tokenized apart from the video prefix, so allow for a different join
    assert scored == pytest.approx(expected.tolist(), abs=1e-3)


def test_choice_is_independent_of_option_order(adapter, frames):
    choice = adapter["choice"]
    forward = choice.score([TextsRequest(TEXTS, frames)])[0].scores
    swapped = choice.score([TextsRequest(TEXTS[::-1], frames)])[0].scores
    assert forward == pytest.approx(swapped[::-1], abs=1e-6)
    assert sum(forward) == pytest.approx(1.0)


def test_choice_question_is_vitatecs_prompt():
    assert choice_question(["x", "y"]) == (
        "Which of the following best describes the content of the video: (A) x (B) y "
        "Respond with a single letter (A or B)."
    )
