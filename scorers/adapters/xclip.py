"""X-CLIP: a native video-text model (frames -> cross-frame transformer -> video embedding).

X-CLIP's text embedding is conditioned on the video (its video-specific prompt generator),
so it does not factorise into separately cached embeddings: each request is one forward of
the model on the view and its texts, and the score is the cosine similarity behind its
``logits_per_video`` (the logit divided by the learned temperature), or with
``score_scale="logit"`` the logit itself, as ViLMA's script reports it.

ViLMA's ``models/video/run_xclip.py`` (its protocols' commit, lines 131-140) scores with
``logits_per_video`` itself, no softmax: ``logit_scale`` times this cosine, one positive
constant per model, so every decision and every ranking is the same; ViLMA's paper protocol
reports the logit (``score_scale="logit"``) so that the numbers are the reference's too.
The text embedding is the hidden state at the highest token id (HF's ``input_ids.argmax(-1)``),
which is ``<|endoftext|>`` (49407) in CLIP's vocabulary, the end of the text. Texts are
truncated to ``max_text_tokens`` tokens, the end-of-text token kept (``None``: the text tower's
77 positions); ViLMA's collate function (``vl_bench/data.py``, lines 206-211) does not truncate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from foilkit.scorers.adapters import register_adapter
from foilkit.scorers.adapters._features import text_max_length
from foilkit.scorers.adapters.base import RequestAdapter, checked_choice, frame_count_error
from foilkit.scorers.adapters.dual_encoder import SCORE_SCALES, truncation_length
from foilkit.scorers.requests import TextScores, TextsRequest


def fit_frames(frames: torch.Tensor, num_frames: int, model_id: str) -> torch.Tensor:
    """Frames for a model trained on exactly ``num_frames``: a single frame is repeated (a still
    video)."""
    if len(frames) == num_frames:
        return frames
    if len(frames) == 1:
        return frames.expand(num_frames, *frames.shape[1:])
    raise frame_count_error(model_id, num_frames, len(frames))


@register_adapter("xclip")
class XClipAdapter(RequestAdapter):
    """X-CLIP video-text similarity."""

    score_kind = "similarity"
    options = ("max_text_tokens", "score_scale")

    def __init__(
        self,
        model_id: str,
        *,
        max_text_tokens: int | None = None,
        score_scale: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(model_id, **kwargs)
        self.score_scale = checked_choice("score_scale", score_scale, SCORE_SCALES)
        from transformers import AutoModel, AutoProcessor

        self.model = self._load(AutoModel)
        processor = self._pretrained(AutoProcessor)
        self.image_processor, self.tokenizer = processor.image_processor, processor.tokenizer
        self.num_frames = self.model.config.vision_config.num_frames
        self.max_text_tokens = max_text_tokens
        self._max_length = truncation_length(
            max_text_tokens, text_max_length(self.model.config), model_id
        )

    @classmethod
    def matches(cls, config: Any) -> bool:
        return getattr(config, "model_type", None) == "xclip"

    @classmethod
    def check_frames(
        cls,
        model_id: str,
        num_frames: int,
        *,
        revision: str | None = None,
        trust_remote_code: bool = False,
    ) -> None:
        """X-CLIP's temporal layers take exactly its config's ``num_frames`` (8 for the base
        checkpoints); one frame is repeated as a still video, any other count is refused."""
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(
            model_id, revision=revision, trust_remote_code=trust_remote_code
        )
        native = config.vision_config.num_frames
        if num_frames not in (1, native):
            raise frame_count_error(model_id, native, num_frames)

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "max_text_tokens": self.max_text_tokens,
            "text_truncation": self._max_length,
            "score_scale": self.score_scale,
        }

    @torch.inference_mode()
    def score(self, requests: Sequence[TextsRequest]) -> list[TextScores]:
        texts = list(dict.fromkeys(text for request in requests for text in request.texts))
        videos = [
            list(fit_frames(request.frames, self.num_frames, self.model_id)) for request in requests
        ]
        pixel_values = self.image_processor(videos, return_tensors="pt")["pixel_values"]
        text_inputs = self.tokenizer(
            texts, padding=True, truncation=True, max_length=self._max_length, return_tensors="pt"
        )
        output = self.model(
            pixel_values=pixel_values.to(self.device, self.dtype), **text_inputs.to(self.device)
        )
        scores = output.logits_per_video.float().cpu()
        if self.score_scale == "cosine":
            scores = scores / self.model.logit_scale.exp().float().cpu()
        column = {text: j for j, text in enumerate(texts)}
        return [
            TextScores(tuple(scores[i, [column[t] for t in request.texts]].tolist()))
            for i, request in enumerate(requests)
        ]
