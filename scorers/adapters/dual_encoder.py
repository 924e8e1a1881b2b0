"""Image-text dual encoders (CLIP, SigLIP, SigLIP2, ...) applied to the frames of a view.

The "CLIP zero-shot" baseline of the papers: every frame is embedded by the image tower. With
``pooling="mean"`` (default) the view embedding is the re-normalised mean of the normalised
frame embeddings (CLIP4Clip's mean pooling); with ``pooling="mean-of-similarities"`` the
score is the mean over frames of each frame's cosine similarity to the text. Both are
invariant to frame order, so a view and its reversal tie by construction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from foilkit.scorers.adapters import register_adapter
from foilkit.scorers.adapters._features import distinct_frames, pooled, text_max_length
from foilkit.scorers.adapters.base import EmbeddingAdapter

POOLINGS = ("mean", "mean-of-similarities")
# Families whose ``AutoModel`` exposes ``get_image_features`` / ``get_text_features``.
MODEL_TYPES = ("clip", "siglip", "siglip2", "chinese_clip", "metaclip_2", "altclip")
# SigLIP towers were trained on texts padded to the full length; other families pad per batch.
MAX_LENGTH_PADDING = ("siglip", "siglip2")


@register_adapter("dual-encoder")
class DualEncoderAdapter(EmbeddingAdapter):
    """Frame-level image-text model; ``pooling`` is ``mean`` or ``mean-of-similarities``."""

    def __init__(self, model_id: str, *, pooling: str = "mean", **kwargs: Any):
        super().__init__(model_id, **kwargs)
        if pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {pooling!r}; choose from {list(POOLINGS)}")
        from transformers import AutoModel, AutoProcessor

        self.pooling = pooling
        self.model = self._load(AutoModel)
        processor = AutoProcessor.from_pretrained(model_id, **self._pretrained_kwargs())
        self.image_processor, self.tokenizer = processor.image_processor, processor.tokenizer
        model_type = self.model.config.model_type
        self._padding = "max_length" if model_type in MAX_LENGTH_PADDING else True
        self._max_length = text_max_length(self.model.config)

    @classmethod
    def matches(cls, config: Any) -> bool:
        return getattr(config, "model_type", None) in MODEL_TYPES

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "pooling": self.pooling}

    @torch.inference_mode()
    def encode_views(self, frames: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        # each distinct frame is embedded once: a view and its reversal share every frame, and a
        # frame's embedding must not depend on where in the batch it sat
        images, slots = distinct_frames(frames)
        # resized and normalised on the model's device: on a GPU the CPU stays free for decoding
        inputs = self.image_processor(images=images, return_tensors="pt", device=self.device).to(
            self.device
        )
        inputs["pixel_values"] = inputs["pixel_values"].to(self.dtype)
        embeddings = F.normalize(
            pooled(self.model.get_image_features(**inputs)).float(), dim=-1
        ).cpu()
        per_view = [embeddings[torch.tensor(slot)] for slot in slots]
        if self.pooling == "mean":
            per_view = [F.normalize(_order_free_mean(view, dim=0), dim=-1) for view in per_view]
        return per_view

    @torch.inference_mode()
    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        inputs = self.tokenizer(
            list(texts),
            padding=self._padding,
            truncation=True,
            max_length=self._max_length,
            return_tensors="pt",
        ).to(self.device)
        return F.normalize(pooled(self.model.get_text_features(**inputs)).float(), dim=-1).cpu()

    def similarity(self, view: torch.Tensor, texts: torch.Tensor) -> torch.Tensor:
        # elementwise products: each frame's similarity is computed alone, whatever the frame order
        return _order_free_mean((texts.double()[:, None, :] * view.double()[None]).sum(-1), dim=1)


def _order_free_mean(values: torch.Tensor, dim: int) -> torch.Tensor:
    """Mean over ``dim`` that does not depend on the order of the entries (sorted, in float64)."""
    ordered = torch.sort(values.double(), dim=dim).values
    return ordered.mean(dim=dim, keepdim=dim == 0).float()
