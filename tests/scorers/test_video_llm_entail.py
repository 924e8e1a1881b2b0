"""The video LLM's ``entail`` mode gives VELOCITI's entailment probability: its own scoring
(``vidllm_eval.py`` ``inference`` + ``entail_score``), ported, on the same tiny model and frames."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from foilkit.builders.velociti.answers import ENTAIL_QUESTION
from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.requests import TextsRequest
from foilkit.synthetic.videos import SyntheticScene, render_frames

TEXTS = ("a red square moves to the left", "a red square moves to the right")


def _velociti_entail_scores(model, processor, frames: torch.Tensor, captions) -> list[float]:
    """katha-ai/VELOCITI@8d66ddb ``vidllm_eval.py``: ``inference(..., type='entail')`` over
    ``get_prompt()``'s prompt, then ``entail_score`` (float32 on CPU, frames as given)."""
    conversations = [
        [
            {
                "role": "user",
                "content": [
                    {"type": "video"},
                    {"type": "text", "text": ENTAIL_QUESTION.format(caption=caption)},
                ],
            }
        ]
        for caption in captions
    ]
    prompts = [processor.apply_chat_template(c, add_generation_prompt=True) for c in conversations]
    scores = []
    for prompt in prompts:  # batch_size 1, as the README runs it
        inputs = processor(
            text=[prompt],
            videos=[frames],
            padding=True,
            return_tensors="pt",
            do_sample_frames=False,
        )
        with torch.inference_mode():
            output = model.generate(
                **inputs,
                max_new_tokens=1,
                do_sample=False,
                output_scores=True,
                return_dict_in_generate=True,
            )
        logits = F.softmax(output["scores"][0], dim=-1)
        yes = processor.tokenizer.encode("Yes", add_special_tokens=False)[0]
        no = processor.tokenizer.encode("No", add_special_tokens=False)[0]
        scores.append(float((logits[:, yes] / (logits[:, yes] + logits[:, no]))[0]))
    return scores


def test_entail_mode_equals_velociti_entail_score(tiny_model):
    frames = (
        torch.from_numpy(render_frames(SyntheticScene(direction="left"), num_frames=8))
        .permute(0, 3, 1, 2)
        .contiguous()
    )
    adapter = load_adapter(tiny_model("llava-next-video"), mode="entail", device="cpu")
    assert adapter.score_kind == "probability"
    scored = adapter.score([TextsRequest(TEXTS, frames)])[0]
    expected = _velociti_entail_scores(adapter.model, adapter.processor, frames, TEXTS)
    assert scored.scores == pytest.approx(expected, abs=1e-5)
    assert all(0.0 < score < 1.0 for score in scored.scores)
    assert scored.scores[0] != scored.scores[1]  # each caption is asked on its own
    assert adapter.describe()["prompt"] == ENTAIL_QUESTION


def test_entail_mode_takes_no_choice_or_likelihood_options(tiny_model):
    with pytest.raises(ValueError, match="prompt='vitatecs' applies to choice mode only"):
        load_adapter(tiny_model("llava-next-video"), mode="entail", prompt="vitatecs")
    with pytest.raises(ValueError, match="reduction='sum' applies to likelihood mode only"):
        load_adapter(tiny_model("llava-next-video"), mode="entail", reduction="sum")
