"""The naive baseline: a per-item loop written the way the published evaluation scripts work.

For every item (dataset row), in order, in one process: decode its video (a reversed item
decodes the file again and flips the frames), encode it, and score each text on its own
(the caption, then each foil). Nothing is planned, batched across items, reused between
items or cached. It runs the same adapter objects as the engine, so the two compute the
same numbers and differ only in how the work is organised:

- dual encoders: one ``encode_views`` call per item, one ``encode_texts`` call per text;
- cross-encoders (BLIP ITM): one ``score`` request per (item, text), so the vision tower runs
  again for every text, as in per-pair ITM scripts;
- video LLMs in ``choice`` mode: one ``score`` request per (item, text group); the texts of a
  group are the options of one question and cannot be scored apart. (The adapter itself
  shares the video prefix between the option orders of that request.)
- video LLMs in ``generate`` mode (``generate_speed.py``): one ``model.generate`` per question
  on its whole prompt (:func:`generate_answer`), as lmms-eval's model wrappers call it.

ViLMA's proficiency texts are scored from the same decode as the item's main texts, which
favours the baseline: the published scripts run the proficiency test as a pass of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from foilkit.scorers.generate import generate_requests
from foilkit.scorers.plan import TEXT_GROUPS
from foilkit.scorers.requests import TextsRequest
from foilkit.scorers.video import DecodedFrames, SamplingPolicy, VideoView, decode_view

Scores = dict[str, dict[str, list[float]]]  # row id -> text group -> one score per text


def text_groups(row: Mapping[str, Any]) -> dict[str, list[str]]:
    """A row's texts by group (``main``; ``proficiency`` where present): true text first."""
    groups = {}
    for name, (true_column, foils_column) in TEXT_GROUPS.items():
        if row.get(true_column):
            groups[name] = [row[true_column], *(row.get(foils_column) or [])]
    return groups


def decode_item(row: Mapping[str, Any], policy: SamplingPolicy, decoder: str) -> DecodedFrames:
    """Decode one item's video from scratch (its window, its direction)."""
    view = VideoView(row["video"], row.get("start"), row.get("end"), bool(row.get("reversed")))
    return decode_view(view, policy, decoder)


def dual_encoder_item(adapter: Any, frames: torch.Tensor, groups: dict[str, list[str]]) -> dict:
    view = adapter.encode_views([frames])[0]
    return {
        group: adapter.similarity(
            view, torch.cat([adapter.encode_texts([text]) for text in texts])
        ).tolist()
        for group, texts in groups.items()
    }


def cross_encoder_item(adapter: Any, frames: torch.Tensor, groups: dict[str, list[str]]) -> dict:
    return {
        group: [adapter.score([TextsRequest((text,), frames)])[0].scores[0] for text in texts]
        for group, texts in groups.items()
    }


def video_llm_item(adapter: Any, frames: torch.Tensor, groups: dict[str, list[str]]) -> dict:
    return {
        group: list(adapter.score([TextsRequest(tuple(texts), frames)])[0].scores)
        for group, texts in groups.items()
    }


# How each model family scores one decoded item; keyed like ``models.ModelSpec.family``.
ITEM_SCORERS: dict[str, Callable[[Any, torch.Tensor, dict[str, list[str]]], dict]] = {
    "dual-encoder": dual_encoder_item,
    "cross-encoder": cross_encoder_item,
    "video-llm": video_llm_item,
}


def naive_scores(
    adapter: Any,
    family: str,
    rows: Sequence[Mapping[str, Any]],
    policy: SamplingPolicy,
    decoder: str,
) -> Scores:
    """Score every row the naive way; returns scores by row id."""
    score_item = ITEM_SCORERS[family]
    with torch.inference_mode():
        return {
            row["id"]: score_item(
                adapter, decode_item(row, policy, decoder).frames, text_groups(row)
            )
            for row in rows
        }


def generate_answer(adapter: Any, request: TextsRequest) -> str:
    """One question's answer as TempCompass' inference scripts and lmms-eval's model wrappers
    produce it: the whole prompt (chat template, video, question) through the processor, one
    greedy ``model.generate`` on it, the new tokens decoded without special tokens, stripped."""
    (asked,) = generate_requests(request, adapter.prompt, adapter.decoding)
    inputs = adapter.model_inputs(asked, adapter.chat_prompt(asked.messages))
    output = adapter.model.generate(
        **inputs,
        do_sample=False,
        num_beams=1,
        max_new_tokens=adapter.decoding.max_new_tokens,
        pad_token_id=adapter.tokenizer.pad_token_id,
    )
    new = output[0, inputs["input_ids"].shape[1] :].tolist()
    ends = adapter._end_ids()
    kept = next((new[:at] for at, token in enumerate(new) if token in ends), new)
    return adapter.tokenizer.decode(kept, skip_special_tokens=True).strip()
