"""Image-text dual encoders (CLIP, SigLIP, SigLIP2, ...) applied to the frames of a view.

The "CLIP zero-shot" baseline of the papers: every frame is embedded by the image tower, and
``pooling`` says how the frames' scores become the view's:

``mean`` (default)
    The view embedding is the re-normalised mean of the normalised frame embeddings (CLIP4Clip's
    mean pooling); the score is its cosine similarity to the text.
``mean-of-similarities``
    The mean over frames of each frame's cosine similarity to the text.
``softmax-mean``
    ViLMA's ``models/image/run_clip.py`` (its protocols' commit, lines 144-155): per frame,
    the model's logits ``logit_scale * cosine`` over the item's texts [caption, *foils],
    softmax over those texts, then the mean over frames. The score is a probability
    (``score_kind="probability"``) that depends on the other texts of its group. SigLIP's
    logits add ``logit_bias`` and the model itself reads them through a sigmoid; here they go
    through the same softmax over texts, so the bias cancels and the score is the share of the
    frame's belief among the candidates, as for CLIP (ViLMA ran only CLIP).

All three are invariant to frame order, so a view and its reversal tie by construction.

The families are those whose ``AutoModel`` has ``get_image_features`` / ``get_text_features``
(:data:`MODEL_TYPES`; ALIGN and TIPSv2 scale their logits by ``1 / temperature`` instead of
``exp(logit_scale)``). BLIP's image-text contrastive (ITC) score is a dual encoder too:
``--adapter dual-encoder`` on a ``BlipForImageTextRetrieval`` checkpoint (which the ``blip-itm``
adapter claims by default) embeds frames and texts as its ``use_itm_head=False`` forward does,
through the checkpoint's own ``vision_proj`` / ``text_proj`` (``AutoModel`` would load a
``BlipModel`` whose projections the checkpoint does not hold). BLIP has no learned logit scale
in transformers, so ``softmax-mean`` is refused for it.

``score_scale="logit"`` reports ``mean`` and ``mean-of-similarities`` scores as the model's
logits, ``logit_scale * cosine`` (CLIP4Clip's ``retrieve_logits``, the unit VITATECS' script
compares); ``cosine`` (default) reports the cosine. ``preprocess="pil"`` resizes and crops with
the checkpoint's image processor on its PIL backend (PIL bicubic for CLIP), as VITATECS'
torchvision-on-PIL transform does (``X-CLIP/dataloaders/rawvideo_util.py``); the default is the
processor's torch backend, whose resize differs by up to 0.03 in normalised pixels.
``max_text_tokens`` truncates texts to that many tokens, special tokens included, keeping the
end-of-text token as CLIP4Clip (``max_words``) and ``clip.tokenize`` do; ``None`` is the text
tower's own limit (77 for CLIP).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F

from foilkit.scorers.adapters import register_adapter
from foilkit.scorers.adapters._features import distinct_frames, pooled, text_max_length
from foilkit.scorers.adapters.base import EmbeddingAdapter, checked_choice

POOLINGS = ("mean", "mean-of-similarities", "softmax-mean")
#: ``default``: the checkpoint's image processor as AutoProcessor loads it (torch backend);
#: ``pil``: the same processor on its PIL backend (VITATECS' pixels).
PREPROCESSES = ("default", "pil")
SCORE_SCALES = ("cosine", "logit")
# Families whose ``AutoModel`` exposes ``get_image_features`` / ``get_text_features``.
MODEL_TYPES = (
    "clip",
    "siglip",
    "siglip2",
    "chinese_clip",
    "metaclip_2",
    "altclip",
    "align",
    "tipsv2",
)
#: BLIP's retrieval checkpoints: their ITC towers, taken only when the adapter is named
BLIP_RETRIEVAL = "BlipForImageTextRetrieval"
# SigLIP towers were trained on texts padded to the full length; other families pad per batch.
MAX_LENGTH_PADDING = ("siglip", "siglip2")


def truncation_length(
    max_text_tokens: int | None, model_limit: int | None, model_id: str
) -> int | None:
    """The text length to truncate at: ``max_text_tokens`` if given (checked against the model's
    position limit), else the model's limit."""
    if max_text_tokens is None:
        return model_limit
    if not isinstance(max_text_tokens, int) or max_text_tokens < 2:
        raise ValueError(
            "max_text_tokens must be an integer >= 2 (room for the start and end tokens), "
            f"got {max_text_tokens!r}"
        )
    if model_limit is not None and max_text_tokens > model_limit:
        raise ValueError(
            f"max_text_tokens={max_text_tokens} exceeds {model_id}'s {model_limit} text positions"
        )
    return max_text_tokens


@register_adapter("dual-encoder")
class DualEncoderAdapter(EmbeddingAdapter):
    """Frame-level image-text model; ``pooling`` is one of :data:`POOLINGS`."""

    options = ("pooling", "max_text_tokens", "preprocess", "score_scale")

    def __init__(
        self,
        model_id: str,
        *,
        pooling: str | None = None,
        max_text_tokens: int | None = None,
        preprocess: str | None = None,
        score_scale: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(model_id, **kwargs)
        pooling = checked_choice("pooling", pooling, POOLINGS)
        self.preprocess = checked_choice("preprocess", preprocess, PREPROCESSES)
        self.score_scale = checked_choice("score_scale", score_scale, SCORE_SCALES)
        if pooling == "softmax-mean" and self.score_scale != "cosine":
            raise ValueError(
                "pooling 'softmax-mean' scores probabilities; score_scale "
                f"{self.score_scale!r} applies to the 'mean' and 'mean-of-similarities' poolings"
            )
        from transformers import AutoConfig, AutoImageProcessor, AutoModel, AutoProcessor

        self.pooling = pooling
        self.score_kind = "probability" if pooling == "softmax-mean" else "similarity"
        config = AutoConfig.from_pretrained(model_id, **self._pretrained_kwargs())
        self._blip_itc = BLIP_RETRIEVAL in (getattr(config, "architectures", None) or [])
        if self._blip_itc:
            from transformers import BlipForImageTextRetrieval

            self.model = self._load(BlipForImageTextRetrieval)
        else:
            self.model = self._load(AutoModel)
            check_towers(self.model, model_id)
        processor = self._pretrained(AutoProcessor)
        self.image_processor, self.tokenizer = processor.image_processor, processor.tokenizer
        self._processor_device = {"device": self.device}
        if self.preprocess == "pil":
            self.image_processor = self._pretrained(AutoImageProcessor, backend="pil")
            self._processor_device = {}  # PIL works on the CPU
        model_type = self.model.config.model_type
        self._pad_to_limit = model_type in MAX_LENGTH_PADDING
        self._model_max_length = text_max_length(self.model.config)
        self.max_text_tokens = max_text_tokens
        self._max_length = truncation_length(max_text_tokens, self._model_max_length, model_id)
        # the model's logit = logit_scale * cosine (+ logit_bias, SigLIP): softmax-mean's input
        self.logit_scale = logit_scale(self.model)
        if pooling == "softmax-mean" and self.logit_scale is None:
            raise ValueError(
                f"{model_id} ({model_type}) has no learned logit scale, which pooling "
                "'softmax-mean' needs; use pooling 'mean' or 'mean-of-similarities'"
            )

    @classmethod
    def matches(cls, config: Any) -> bool:
        return getattr(config, "model_type", None) in MODEL_TYPES

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "pooling": self.pooling,
            "max_text_tokens": self.max_text_tokens,
            "preprocess": self.preprocess,
            "score_scale": self.score_scale,
            "text_truncation": self._max_length,
        }

    @torch.inference_mode()
    def encode_views(self, frames: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        # each distinct frame is embedded once: a view and its reversal share every frame, and a
        # frame's embedding must not depend on where in the batch it sat
        images, slots = distinct_frames(frames)
        # resized and normalised on the model's device: on a GPU the CPU stays free for decoding
        inputs = self.image_processor(
            images=images, return_tensors="pt", **self._processor_device
        ).to(self.device)
        inputs["pixel_values"] = inputs["pixel_values"].to(self.dtype)
        embeddings = F.normalize(self._image_features(inputs).float(), dim=-1).cpu()
        per_view = [embeddings[torch.tensor(slot)] for slot in slots]
        if self.pooling == "mean":
            per_view = [F.normalize(_order_free_mean(view, dim=0), dim=-1) for view in per_view]
        return per_view

    @torch.inference_mode()
    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        inputs = tokenize(self.tokenizer, texts, self._max_length, self._pad_to_limit)
        if self._pad_to_limit and self._max_length != self._model_max_length:
            # SigLIP pools the last position: truncate at max_text_tokens, pad to the full length
            inputs = self.tokenizer.pad(
                inputs, padding="max_length", max_length=self._model_max_length, return_tensors="pt"
            )
        inputs = inputs.to(self.device)
        return F.normalize(self._text_features(inputs).float(), dim=-1).cpu()

    def _image_features(self, inputs: Any) -> torch.Tensor:
        """Unnormalised embeddings of ``N`` processed frames."""
        if self._blip_itc:  # BlipForImageTextRetrieval with use_itm_head=False
            hidden = self.model.vision_model(pixel_values=inputs["pixel_values"]).last_hidden_state
            return self.model.vision_proj(hidden[:, 0, :])
        return pooled(self.model.get_image_features(**inputs))

    def _text_features(self, inputs: Any) -> torch.Tensor:
        """Unnormalised embeddings of tokenized texts."""
        if self._blip_itc:
            hidden = self.model.text_encoder(
                input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"]
            ).last_hidden_state
            return self.model.text_proj(hidden[:, 0, :])
        return pooled(self.model.get_text_features(**inputs))

    def similarity(self, view: torch.Tensor, texts: torch.Tensor) -> torch.Tensor:
        """One score per text of a group (caption and its foils) for a ``K x D`` view."""
        # elementwise products: each frame's similarity is computed alone, whatever the frame order
        cosine = (texts.double()[:, None, :] * view.double()[None]).sum(-1)  # texts x frames
        if self.pooling == "softmax-mean":  # per frame over the group's texts, then over frames
            return _order_free_mean(torch.softmax(self.logit_scale * cosine, dim=0), dim=1)
        scores = _order_free_mean(cosine, dim=1)
        return self.logit_scale * scores if self.score_scale == "logit" else scores


def check_towers(model: Any, model_id: str) -> None:
    """Raise ``ValueError`` unless ``model`` embeds images and texts apart (``get_image_features``
    and ``get_text_features``), naming the adapter that claims it instead."""
    if callable(getattr(model, "get_image_features", None)) and callable(
        getattr(model, "get_text_features", None)
    ):
        return
    from foilkit.scorers.adapters import adapter_class

    model_type = getattr(model.config, "model_type", None)
    try:
        own = f"its own adapter is {adapter_class(model_id).name!r} (leave --adapter out)"
    except ValueError:
        own = "no adapter handles it"
    raise ValueError(
        f"{model_id} ({model_type}) has no image tower (get_image_features) and text tower "
        f"(get_text_features) to embed frames and texts apart, which the dual-encoder adapter "
        f"needs; {own}"
    )


def tokenize(tokenizer: Any, texts: Sequence[str], max_length: int | None, pad_to_limit: bool):
    """Texts as the base model's text tower expects them (SigLIP: padded to its full length)."""
    return tokenizer(
        list(texts),
        padding="max_length" if pad_to_limit else True,
        truncation=True,
        max_length=max_length,
        return_tensors="pt",
    )


def logit_scale(model: Any) -> float | None:
    """The factor from cosine to the model's logit: ``exp(logit_scale)`` (CLIP, SigLIP), or
    ``1 / temperature`` (ALIGN, TIPSv2); ``None`` when the model has neither (BLIP ITC)."""
    scale = getattr(model, "logit_scale", None)
    if isinstance(scale, torch.Tensor):
        return float(scale.detach().float().exp())
    temperature = getattr(model, "temperature", None)
    if isinstance(temperature, torch.Tensor):
        return float(1.0 / temperature.detach().float())
    return None


def _order_free_mean(values: torch.Tensor, dim: int) -> torch.Tensor:
    """Mean over ``dim`` that does not depend on the order of the entries (sorted, in float64)."""
    ordered = torch.sort(values.double(), dim=dim).values
    return ordered.mean(dim=dim, keepdim=dim == 0).float()
