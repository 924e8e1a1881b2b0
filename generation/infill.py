"""Candidate fillers for a masked span: T5 span infilling and fill-mask MLMs.

Both papers make foils by masking part of a caption and asking a language model what fits:
the contrast sets with T5 (multi-word verb phrases, beam search, appendix A.3), ViLMA with
RoBERTa's fill-mask top-k and with T5 for compound verbs (appendix C). The functions here only
propose fillers with their model scores; the steps decide what to mask and what to keep.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

T5_MASK = "<extra_id_0>"
_SENTINEL = re.compile(r"<extra_id_\d+>")

# Paper 001 appendix A.3: beam size 50, K = 50 candidates.
NUM_BEAMS = 50
NUM_CANDIDATES = 50
# ViLMA appendix C: "the top 32 most probable tokens from RoBERTa".
FILL_MASK_TOP_K = 32


@dataclass(frozen=True)
class Filler:
    """A proposed text for the masked span and the model's score for it (log-probability for
    T5's beam sequences, probability for fill-mask)."""

    text: str
    score: float
    model_id: str


def _span_from_t5_output(decoded: str, tokenizer: Any) -> str:
    """The text T5 wrote for ``<extra_id_0>``: after that sentinel, up to the next one or EOS."""
    for token in (tokenizer.pad_token, tokenizer.eos_token):
        if token:
            decoded = decoded.replace(token, " ")
    decoded = decoded.strip()
    decoded = decoded.removeprefix(T5_MASK)
    return " ".join(_SENTINEL.split(decoded, maxsplit=1)[0].split())


def t5_span_fillers(
    model: Any,
    tokenizer: Any,
    masked_texts: Sequence[str],
    *,
    num_beams: int = NUM_BEAMS,
    num_candidates: int = NUM_CANDIDATES,
    max_new_tokens: int = 8,
    model_id: str | None = None,
) -> list[list[Filler]]:
    """For each text with one ``<extra_id_0>``, up to ``num_candidates`` distinct non-empty
    fillers from beam search, best first."""
    import torch

    for index, text in enumerate(masked_texts):
        if text.count(T5_MASK) != 1:
            raise ValueError(f"masked text {index} must contain {T5_MASK} once: {text!r}")
    if num_candidates > num_beams:
        raise ValueError(f"num_candidates ({num_candidates}) cannot exceed num_beams ({num_beams})")
    model_id = model_id or str(model.config.name_or_path)
    encoded = tokenizer(list(masked_texts), return_tensors="pt", padding=True).to(model.device)
    with torch.inference_mode():
        out = model.generate(
            **encoded,
            num_beams=num_beams,
            num_return_sequences=num_candidates,
            max_new_tokens=max_new_tokens,
            output_scores=True,
            return_dict_in_generate=True,
        )
    decoded = tokenizer.batch_decode(out.sequences, skip_special_tokens=False)
    scores = out.sequences_scores.tolist()
    result = []
    for i in range(len(masked_texts)):
        fillers, seen = [], set()
        for j in range(i * num_candidates, (i + 1) * num_candidates):
            span = _span_from_t5_output(decoded[j], tokenizer)
            if span and span.lower() not in seen:
                seen.add(span.lower())
                fillers.append(Filler(span, float(scores[j]), model_id))
        result.append(fillers)
    return result


def fill_mask_fillers(
    model: Any,
    tokenizer: Any,
    masked_texts: Sequence[str],
    *,
    top_k: int = FILL_MASK_TOP_K,
    model_id: str | None = None,
) -> list[list[Filler]]:
    """For each text with one ``tokenizer.mask_token``, the ``top_k`` most probable whole-word
    tokens, best first (sub-word pieces and punctuation are skipped)."""
    import torch

    mask = tokenizer.mask_token
    for index, text in enumerate(masked_texts):
        if text.count(mask) != 1:
            raise ValueError(f"masked text {index} must contain {mask} once: {text!r}")
    model_id = model_id or str(model.config.name_or_path)
    encoded = tokenizer(list(masked_texts), return_tensors="pt", padding=True).to(model.device)
    with torch.inference_mode():
        logits = model(**encoded).logits
    rows, columns = (encoded["input_ids"] == tokenizer.mask_token_id).nonzero(as_tuple=True)
    probabilities = logits[rows, columns].softmax(-1)
    word_start = _word_start_marker(tokenizer)
    result = []
    for row in range(len(masked_texts)):
        order = probabilities[row].argsort(descending=True).tolist()
        fillers, seen = [], set()
        for token_id in order:
            piece = tokenizer.convert_ids_to_tokens(token_id)
            if piece.startswith("##") or (word_start and not piece.startswith(word_start)):
                continue  # a word continuation, not a word
            word = tokenizer.decode([token_id]).strip()
            if word.isalpha() and word.lower() not in seen:
                seen.add(word.lower())
                fillers.append(Filler(word, float(probabilities[row, token_id]), model_id))
                if len(fillers) == top_k:
                    break
        result.append(fillers)
    return result


def _word_start_marker(tokenizer: Any) -> str | None:
    """The prefix that marks a word-initial token (``Ġ`` byte-level BPE, ``▁`` SentencePiece),
    or ``None`` for WordPiece vocabularies, where continuations start with ``##`` instead."""
    ids = tokenizer(" the", add_special_tokens=False)["input_ids"]
    first = tokenizer.convert_ids_to_tokens(ids[0])
    return first[0] if first[:1] in ("Ġ", "▁") else None
