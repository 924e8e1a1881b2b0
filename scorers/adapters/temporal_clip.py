"""CLIP / SigLIP with a CLIP4Clip temporal module: the models ``foilkit finetune`` writes.

The temporal module is CLIP4Clip's ``seqTransf`` (Luo et al. 2022, ``modules/modeling.py``,
``_mean_pooling_for_similarity_visual`` with ``sim_header="seqTransf"``): the projected frame
embeddings of a view plus learned frame-position embeddings go through a small transformer,
the result is added back to the frame embeddings (the residual), each frame is normalised and
their mean, normalised again, is the view's embedding. Unlike mean pooling it sees the order
of the frames, so a view and its reversal no longer tie.

A saved model is a plain Hub folder, loadable without ``trust_remote_code``:

``config.json``
    the base model's config (``model_type`` ``clip``, ``siglip``, ...) with
    ``architectures = ["TemporalClipModel"]`` (what :class:`TemporalClipAdapter` matches) and
    the temporal module's settings under ``foilkit_temporal``;
``model.safetensors``
    the fine-tuned base model (``AutoModel.from_pretrained`` loads it as the plain dual encoder);
``temporal.safetensors``
    the temporal module's weights;
the processor files of the base model.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from foilkit.scorers.adapters import register_adapter
from foilkit.scorers.adapters._features import distinct_frames, pooled, text_max_length
from foilkit.scorers.adapters.base import EmbeddingAdapter
from foilkit.scorers.adapters.dual_encoder import MAX_LENGTH_PADDING, tokenize

#: ``architectures`` entry of a saved model; :class:`TemporalClipAdapter` matches it.
ARCHITECTURE = "TemporalClipModel"
#: config.json key holding :class:`TemporalConfig`.
CONFIG_KEY = "foilkit_temporal"
TEMPORAL_WEIGHTS = "temporal.safetensors"
#: Base families the temporal module wraps: ``AutoModel`` gives ``get_image_features`` and
#: ``get_text_features`` returning projected embeddings, and a ``logit_scale``.
WRAPPABLE_MODEL_TYPES = ("clip", "siglip", "siglip2", "metaclip_2")


@dataclass(frozen=True)
class TemporalConfig:
    """Settings of the sequence transformer (CLIP4Clip's ``cross_config`` for ``seqTransf``).

    ``width`` is the base model's projection size; ``heads`` defaults to ``width // 64`` as in
    CLIP4Clip (at least 1); ``layers`` is CLIP4Clip's ``cross_num_hidden_layers`` (4);
    ``max_frames`` the number of frame-position embeddings.
    """

    width: int
    layers: int = 4
    heads: int = 0
    max_frames: int = 64

    def __post_init__(self) -> None:
        if self.heads == 0:
            object.__setattr__(self, "heads", max(1, self.width // 64))
        if self.width % self.heads:
            raise ValueError(f"temporal width {self.width} is not divisible by {self.heads} heads")
        if self.layers < 1 or self.max_frames < 1:
            raise ValueError(f"temporal layers and max_frames must be >= 1, got {self}")


class SequenceTransformer(torch.nn.Module):
    """CLIP4Clip ``seqTransf``: frames ``B x T x D`` -> one normalised view embedding ``B x D``."""

    def __init__(self, config: TemporalConfig, position_init_std: float = 0.02):
        super().__init__()
        self.config = config
        self.frame_position_embeddings = torch.nn.Embedding(config.max_frames, config.width)
        layer = torch.nn.TransformerEncoderLayer(
            config.width,
            config.heads,
            dim_feedforward=4 * config.width,
            dropout=0.0,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.transformer = torch.nn.TransformerEncoder(
            layer, config.layers, enable_nested_tensor=False
        )
        torch.nn.init.normal_(self.frame_position_embeddings.weight, std=position_init_std)

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        length = frames.shape[1]
        if length > self.config.max_frames:
            raise ValueError(
                f"{length} frames per view, but the temporal module has {self.config.max_frames} "
                "frame positions"
            )
        positions = self.frame_position_embeddings.weight[:length].to(frames.dtype)
        hidden = self.transformer(frames + positions[None]) + frames  # CLIP4Clip's residual
        hidden = F.normalize(hidden, dim=-1)
        return F.normalize(hidden.mean(dim=1), dim=-1)


def check_wrappable(config: Any, model_id: str) -> None:
    """Raise ``ValueError`` unless the temporal module can wrap a model with this config."""
    model_type = getattr(config, "model_type", None)
    if model_type not in WRAPPABLE_MODEL_TYPES:
        raise ValueError(
            f"{model_id} is a {model_type!r} model; the temporal module wraps image-text dual "
            f"encoders of the families {list(WRAPPABLE_MODEL_TYPES)} (CLIP, SigLIP, ...)"
        )


class TemporalClip(torch.nn.Module):
    """A CLIP-family dual encoder whose frame embeddings pass through
    :class:`SequenceTransformer`."""

    def __init__(self, base: torch.nn.Module, temporal: SequenceTransformer):
        super().__init__()
        self.base, self.temporal = base, temporal

    @classmethod
    def from_base(
        cls, base: torch.nn.Module, *, position_init_std: float = 0.02, **temporal: Any
    ) -> TemporalClip:
        """A new temporal module (random init; position embeddings drawn with
        ``position_init_std``) on top of ``base``."""
        width = projection_width(base.config)
        config = TemporalConfig(width=width, **temporal)
        return cls(base, SequenceTransformer(config, position_init_std))

    def frame_features(self, pixel_values: torch.Tensor) -> torch.Tensor:
        """Projected (unnormalised) embeddings of ``N x C x H x W`` frames: ``N x D``."""
        return pooled(self.base.get_image_features(pixel_values=pixel_values))

    def encode_frames(self, frames: torch.Tensor) -> torch.Tensor:
        """Normalised view embeddings of ``B x T x D`` frame embeddings."""
        return self.temporal(frames)

    def encode_texts(self, **inputs: torch.Tensor) -> torch.Tensor:
        return F.normalize(pooled(self.base.get_text_features(**inputs)), dim=-1)

    def forward(
        self,
        pixel_values: torch.Tensor,
        rows: torch.Tensor | None = None,
        flips: torch.Tensor | None = None,
        **text_inputs: torch.Tensor,
    ):
        """Views and texts -> (view embeddings ``B x D``, text embeddings ``N x D``).

        ``pixel_values``: ``U x T x C x H x W`` frames of ``U`` decoded windows; view ``b`` is
        window ``rows[b]`` (default: view ``b`` is window ``b``), its frames in reverse order
        where ``flips[b]``: a view and its reversal share one embedding of each frame.
        """
        count, length = pixel_values.shape[:2]
        frames = self.frame_features(pixel_values.flatten(0, 1)).view(count, length, -1)
        if rows is not None:
            frames = frames[rows.to(frames.device)]
        if flips is not None:
            flips = flips.to(frames.device)[:, None, None]
            frames = torch.where(flips, frames.flip(1), frames)
        return self.encode_frames(frames), self.encode_texts(**text_inputs)

    def save_pretrained(self, out_dir: str | os.PathLike, processor: Any = None) -> Path:
        """Write the Hub folder described in the module docstring."""
        from safetensors.torch import save_file

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        self.base.save_pretrained(out)
        # save_pretrained writes the base class as the architecture: name ours instead
        config = json.loads((out / "config.json").read_text(encoding="utf-8"))
        config["architectures"] = [ARCHITECTURE]
        config[CONFIG_KEY] = asdict(self.temporal.config)
        (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        state = {k: v.detach().contiguous().cpu() for k, v in self.temporal.state_dict().items()}
        save_file(state, str(out / TEMPORAL_WEIGHTS), metadata={"format": "pt"})
        if processor is not None:
            processor.save_pretrained(out)
        return out

    @classmethod
    def from_pretrained(
        cls, model_id: str, *, dtype: torch.dtype = torch.float32, **pretrained: Any
    ) -> TemporalClip:
        """Load a folder (or Hub repo) written by :meth:`save_pretrained`."""
        from safetensors.torch import load_file
        from transformers import AutoModel
        from transformers.utils import cached_file

        base = AutoModel.from_pretrained(model_id, dtype=dtype, **pretrained)
        settings = getattr(base.config, CONFIG_KEY, None) or {}
        if "width" not in settings:
            raise ValueError(f"{model_id}: config.json has no {CONFIG_KEY!r} entry with a width")
        temporal = SequenceTransformer(TemporalConfig(**settings))
        weights = cached_file(
            model_id, TEMPORAL_WEIGHTS, **{k: v for k, v in pretrained.items() if k == "revision"}
        )
        temporal.load_state_dict(load_file(weights))
        return cls(base, temporal.to(dtype))


def projection_width(config: Any) -> int:
    """The size of the base model's joint embedding space."""
    width = getattr(config, "projection_dim", None)
    if width is None:  # SigLIP: no projection, the towers' hidden size
        width = config.text_config.hidden_size
    return int(width)


@register_adapter("temporal-clip")
class TemporalClipAdapter(EmbeddingAdapter):
    """A fine-tuned CLIP / SigLIP with CLIP4Clip's sequence transformer over its frames.

    ``encode_views`` returns one ``1 x D`` normalised embedding per view (the frames in their
    order, through the temporal module), so a view and its reversal score differently.
    """

    options = ()

    def __init__(self, model_id: str, **kwargs: Any):
        super().__init__(model_id, **kwargs)
        from transformers import AutoProcessor

        self.model = self._load(TemporalClip)
        processor = self._pretrained(AutoProcessor)
        self.image_processor, self.tokenizer = processor.image_processor, processor.tokenizer
        config = self.model.base.config
        self._pad_to_limit = config.model_type in MAX_LENGTH_PADDING
        self._max_length = text_max_length(config)

    @classmethod
    def matches(cls, config: Any) -> bool:
        return ARCHITECTURE in (getattr(config, "architectures", None) or [])

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "pooling": "seqTransf",
            "temporal": asdict(self.model.temporal.config),
        }

    @torch.inference_mode()
    def encode_views(self, frames: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        # each distinct frame is embedded once (a view and its reversal share every frame)
        images, slots = distinct_frames(frames)
        inputs = self.image_processor(images=images, return_tensors="pt", device=self.device)
        pixel_values = inputs["pixel_values"].to(self.device, self.dtype)
        embeddings = self.model.frame_features(pixel_values)
        return [
            self.model.encode_frames(embeddings[torch.tensor(slot)][None]).float().cpu()
            for slot in slots
        ]

    @torch.inference_mode()
    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        inputs = tokenize(self.tokenizer, texts, self._max_length, self._pad_to_limit)
        return self.model.encode_texts(**inputs.to(self.device)).float().cpu()

    def similarity(self, view: torch.Tensor, texts: torch.Tensor) -> torch.Tensor:
        """Cosine similarity of the view's ``1 x D`` embedding to each of ``N x D`` texts."""
        return (texts.double() @ view.double()[0]).float()
