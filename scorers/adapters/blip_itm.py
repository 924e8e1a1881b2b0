"""BLIP image-text matching: a cross-encoder whose ITM head says whether a text fits an image.

A view's score for a text is the ITM "match" probability averaged over its frames. The
vision tower runs once per distinct frame of a ``score`` call (a view's text groups and its
reversal share them); only the text encoder (which cross-attends to the frame features) runs
per text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from foilkit.scorers.adapters import register_adapter
from foilkit.scorers.adapters._features import distinct_frames, text_max_length
from foilkit.scorers.adapters.base import RequestAdapter
from foilkit.scorers.requests import TextScores, TextsRequest


@register_adapter("blip-itm")
class BlipItmAdapter(RequestAdapter):
    """BLIP ITM probability, averaged over frames."""

    score_kind = "probability"

    def __init__(self, model_id: str, **kwargs: Any):
        super().__init__(model_id, **kwargs)
        from transformers import AutoProcessor, BlipForImageTextRetrieval

        self.model = self._load(BlipForImageTextRetrieval)
        processor = AutoProcessor.from_pretrained(model_id, **self._pretrained_kwargs())
        self.image_processor, self.tokenizer = processor.image_processor, processor.tokenizer
        self._max_length = text_max_length(self.model.config)

    @classmethod
    def matches(cls, config: Any) -> bool:
        return "BlipForImageTextRetrieval" in (getattr(config, "architectures", None) or [])

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
        """ITM match probability of each text, averaged over the view's frame features."""
        text = self.tokenizer(
            list(texts),
            padding=True,
            truncation=True,
            max_length=self._max_length,
            return_tensors="pt",
        ).to(self.device)
        num_frames, num_texts = len(frames), len(texts)
        # every (text, frame) pair in one batch: texts repeat over frames, frames tile over texts
        hidden = self.model.text_encoder(
            input_ids=text["input_ids"].repeat_interleave(num_frames, 0),
            attention_mask=text["attention_mask"].repeat_interleave(num_frames, 0),
            encoder_hidden_states=frames.repeat(num_texts, 1, 1),
            encoder_attention_mask=torch.ones(
                frames.shape[:2], dtype=torch.long, device=self.device
            ).repeat(num_texts, 1),
        ).last_hidden_state
        match = self.model.itm_head(hidden[:, 0, :]).float().softmax(-1)[:, 1]
        return TextScores(tuple(match.view(num_texts, num_frames).mean(1).cpu().tolist()))
