"""BLIP image-text matching: a cross-encoder whose ITM head says whether a text fits an image.

The text encoder cross-attends to the vision tower's features and the ITM head reads the
first text position, giving two logits (no match, match). Four options say how a view and a
text become one number; their defaults are foilkit's original definition.

``pooling``
    ``frame-mean`` (default): each frame is matched with the text on its own, and the frames'
    scores are averaged. ``joined-frames``: salesforce/BLIP ``eval_retrieval_video.py``
    (``evaluation()``, lines 65-73 and 92-100): every frame goes through the vision tower, the
    frames' feature sequences (class token and patches each) are joined in frame order into
    one sequence, and the text encoder cross-attends to all of it at once; one ITM per text.
    Neither can see frame order: the vision features carry no frame position and
    cross-attention is indifferent to the order of what it attends to, so a view and its
    reversal score the same up to rounding.
``itm_output``
    ``probability`` (default): softmax over the two ITM logits, the match column.
    ``logit``: the raw match logit, as BLIP's video evaluation (``itm_head(...)[:, 1]``, line
    100) and ALPRO's VITATECS evaluation (lscpku/VITATECS ``alpro/eval_alpro.py``, line 161)
    use it. The two can order a caption and a foil differently: the probability follows the
    difference of the two logits, the logit only the match one. BLIP ranks retrieval
    candidates by this logit plus the ITC cosine similarity (line 101); that sum is not
    offered here.
``max_text_tokens``
    Truncation length in tokens, ``[CLS]`` and ``[SEP]`` included; BLIP's video evaluation uses
    35 (line 49). ``None``: the text tower's position limit.
``first_token``
    ``cls`` (default): the processor's ``[CLS]``, which is what ``BlipForImageTextRetrieval``
    feeds the text encoder (it leaves ``input_ids`` as given). ``enc``: BLIP's ``[ENC]`` in
    its place, as BLIP's retrieval training and video evaluation do (``text_ids[:, 0] =
    enc_token_id``, line 59; ``models/blip.py`` lines 186-191 add ``[ENC]`` right after
    ``[DEC]``). The Hub's ``Salesforce/blip-itm-*`` tokenizers do not list ``[ENC]``, but their
    text embeddings keep its row (30524 rows: bert-base-uncased's 30522, ``[DEC]`` = the text
    config's ``bos_token_id`` 30522, ``[ENC]`` 30523), so the id is the tokenizer's own
    ``[ENC]`` when it has one, else the row after ``[DEC]``.

The vision tower runs once per distinct frame of a ``score`` call (a view's text groups and its
reversal share them); only the text encoder runs per text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from foilkit.scorers.adapters import register_adapter
from foilkit.scorers.adapters._features import distinct_frames, text_max_length
from foilkit.scorers.adapters.base import RequestAdapter, checked_choice
from foilkit.scorers.adapters.dual_encoder import truncation_length
from foilkit.scorers.requests import TextScores, TextsRequest

POOLINGS = ("frame-mean", "joined-frames")
ITM_OUTPUTS = ("probability", "logit")
FIRST_TOKENS = ("cls", "enc")
ENC_TOKEN = "[ENC]"


def enc_token_id(tokenizer: Any, text_config: Any, model_id: str) -> int:
    """The id of BLIP's ``[ENC]``: the tokenizer's own, else the embedding row after ``[DEC]``.

    BLIP's tokenizer is bert-base-uncased plus ``[DEC]`` then ``[ENC]``; Hub conversions keep
    the 30524 embedding rows and ``[DEC]`` as ``bos_token_id`` but drop both from the tokenizer.
    The row after ``[DEC]`` is taken only when no text the tokenizer makes can reach it.
    """
    vocab = tokenizer.get_vocab()
    if ENC_TOKEN in vocab:
        return vocab[ENC_TOKEN]
    dec = getattr(text_config, "bos_token_id", None)
    size = text_config.vocab_size
    if dec is not None and len(tokenizer) <= dec + 1 < size:
        return dec + 1
    raise ValueError(
        f"first_token='enc' needs BLIP's {ENC_TOKEN} token, but {model_id}'s tokenizer has none "
        f"and its text embeddings have no row after [DEC] (bos_token_id={dec}, "
        f"vocab_size={size}, tokenizer size={len(tokenizer)}); use first_token='cls'"
    )


@register_adapter("blip-itm")
class BlipItmAdapter(RequestAdapter):
    """BLIP ITM score of each text against a view's frames (see the module docstring)."""

    score_kind = "probability"
    options = ("pooling", "itm_output", "max_text_tokens", "first_token")

    def __init__(
        self,
        model_id: str,
        *,
        pooling: str | None = None,
        itm_output: str | None = None,
        max_text_tokens: int | None = None,
        first_token: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(model_id, **kwargs)
        self.pooling = checked_choice("pooling", pooling, POOLINGS)
        self.itm_output = checked_choice("itm_output", itm_output, ITM_OUTPUTS)
        self.first_token = checked_choice("first_token", first_token, FIRST_TOKENS)
        self.score_kind = self.itm_output
        from transformers import AutoProcessor, BlipForImageTextRetrieval

        self.model = self._load(BlipForImageTextRetrieval)
        processor = self._pretrained(AutoProcessor)
        self.image_processor, self.tokenizer = processor.image_processor, processor.tokenizer
        self.max_text_tokens = max_text_tokens
        self._max_length = truncation_length(
            max_text_tokens, text_max_length(self.model.config), model_id
        )
        self._first_token_id = (
            enc_token_id(self.tokenizer, self.model.config.text_config, model_id)
            if self.first_token == "enc"
            else None
        )

    @classmethod
    def matches(cls, config: Any) -> bool:
        return "BlipForImageTextRetrieval" in (getattr(config, "architectures", None) or [])

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "pooling": self.pooling,
            "itm_output": self.itm_output,
            "max_text_tokens": self.max_text_tokens,
            "text_truncation": self._max_length,
            "first_token": self.first_token,
            "first_token_id": self._first_token_id,
        }

    @torch.inference_mode()
    def score(self, requests: Sequence[TextsRequest]) -> list[TextScores]:
        # the vision tower runs once per distinct frame of the whole call: requests on one view
        # (caption and proficiency groups) and on its reversal share their frame features
        images, slots = distinct_frames([request.frames for request in requests])
        pixel_values = self.image_processor(images, return_tensors="pt", device=self.device)[
            "pixel_values"
        ]
        features = self.model.vision_model(
            pixel_values=pixel_values.to(self.device, self.dtype)
        ).last_hidden_state
        return [
            self._match(features[torch.tensor(slot, device=self.device)], request.texts)
            for request, slot in zip(requests, slots)
        ]

    def _match(self, frames: torch.Tensor, texts: Sequence[str]) -> TextScores:
        """Each text's ITM score against one view's ``frames x positions x width`` features."""
        text = self.tokenizer(
            list(texts),
            padding=True,
            truncation=True,
            max_length=self._max_length,
            return_tensors="pt",
        ).to(self.device)
        input_ids, attention_mask = text["input_ids"], text["attention_mask"]
        if self._first_token_id is not None:
            input_ids = input_ids.clone()
            input_ids[:, 0] = self._first_token_id
        num_frames, num_texts = len(frames), len(texts)
        if self.pooling == "joined-frames":
            # one sequence of every frame's positions, in frame order, for every text
            encoder = frames.reshape(1, -1, frames.shape[-1]).expand(num_texts, -1, -1)
            per_view = 1
        else:
            # every (text, frame) pair in one batch: texts repeat over frames, frames tile
            encoder = frames.repeat(num_texts, 1, 1)
            input_ids = input_ids.repeat_interleave(num_frames, 0)
            attention_mask = attention_mask.repeat_interleave(num_frames, 0)
            per_view = num_frames
        hidden = self.model.text_encoder(
            input_ids=input_ids,
            attention_mask=attention_mask,
            encoder_hidden_states=encoder,
            encoder_attention_mask=torch.ones(
                encoder.shape[:2], dtype=torch.long, device=self.device
            ),
        ).last_hidden_state
        logits = self.model.itm_head(hidden[:, 0, :]).float()
        scores = logits[:, 1] if self.itm_output == "logit" else logits.softmax(-1)[:, 1]
        return TextScores(tuple(scores.view(num_texts, per_view).mean(1).cpu().tolist()))
