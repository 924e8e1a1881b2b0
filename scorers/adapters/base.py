"""What every model adapter is: built from a Hub id or a local path, knows one model family.

Two shapes, as in the papers: ``EmbeddingAdapter`` for models that factorise (a view and a
text are encoded apart, every score is a dot product, so the engine can encode each once and
cache view embeddings), and ``RequestAdapter`` for models that must see a view and a text
together (cross-encoders, video LLMs, text-only LMs), scored through ``TextsRequest``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import torch

from foilkit.scorers.requests import TextScores, TextsRequest


class Adapter:
    """Base of all adapters.

    Args:
        model_id: Hub id or local path, passed to ``from_pretrained``.
        revision: Hub revision (branch, tag or commit); recorded with every result.
        dtype: parameter and activation dtype.
        device: where the model runs.
        trust_remote_code: passed to ``from_pretrained``; off unless the user turns it on.
        mode: one of the class's ``modes``; ``None`` picks the first.
    """

    name: ClassVar[str]
    #: the kind of number ``score`` returns (a class default; an option may change it per instance)
    score_kind: str
    modes: ClassVar[tuple[str, ...]] = ("default",)
    #: the protocol settings (``foilkit.scorers.protocols.MODEL_SETTINGS``) this adapter takes as
    #: constructor options, besides ``mode``
    options: ClassVar[tuple[str, ...]] = ()
    needs_video: ClassVar[bool] = True

    def __init__(
        self,
        model_id: str,
        *,
        revision: str | None = None,
        dtype: torch.dtype = torch.float32,
        device: str | torch.device = "cpu",
        trust_remote_code: bool = False,
        mode: str | None = None,
    ):
        mode = mode or self.modes[0]
        if mode not in self.modes:
            raise ValueError(
                f"adapter {self.name!r} has no mode {mode!r}; choose from {list(self.modes)}"
            )
        self.model_id, self.revision, self.dtype = model_id, revision, dtype
        self.device, self.trust_remote_code, self.mode = (
            torch.device(device),
            trust_remote_code,
            mode,
        )

    @classmethod
    def matches(cls, config: Any) -> bool:
        """Whether this adapter handles a model with this ``transformers`` config."""
        return False

    def _pretrained_kwargs(self) -> dict[str, Any]:
        return {"revision": self.revision, "trust_remote_code": self.trust_remote_code}

    def _load(self, auto_class: Any) -> torch.nn.Module:
        model = auto_class.from_pretrained(
            self.model_id, dtype=self.dtype, **self._pretrained_kwargs()
        )
        return model.to(self.device).eval()

    def describe(self) -> dict[str, Any]:
        """What determines this adapter's numbers (recorded in ``run.json``, part of cache keys)."""
        return {"adapter": self.name, "mode": self.mode, "score_kind": self.score_kind}


class EmbeddingAdapter(Adapter):
    """A dual encoder: views and texts are embedded apart and compared by dot products."""

    score_kind = "similarity"

    def encode_views(self, frames: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """One ``K x D`` float tensor of L2-normalised embeddings per view (``K`` = 1 or frames)."""
        raise NotImplementedError

    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        """An ``N x D`` float tensor of L2-normalised text embeddings."""
        raise NotImplementedError

    def similarity(self, view: torch.Tensor, texts: torch.Tensor) -> torch.Tensor:
        """Scores of one view's ``K x D`` embedding against ``N x D`` texts: ``N`` floats."""
        raise NotImplementedError


class RequestAdapter(Adapter):
    """A model that sees a view and its texts together."""

    def score(self, requests: Sequence[TextsRequest]) -> list[TextScores]:
        """One ``TextScores`` per request, in order."""
        raise NotImplementedError


def dtype_problem(dtype: torch.dtype, device: torch.device) -> str | None:
    """Why ``device`` cannot run a model in ``dtype`` (``None`` when it can).

    A tiny probe of what the encoders and language models run (matmul, convolution, layer norm,
    softmax): torch 2.14 runs float16 on CPU (slowly), older builds and some accelerators do
    not, and a paper protocol must say so rather than score in another precision silently.
    """
    try:
        with torch.inference_mode():
            x = torch.ones(2, 3, 4, 4, dtype=dtype, device=device)
            conv = torch.nn.functional.conv2d(x, torch.ones(4, 3, 2, 2, dtype=dtype, device=device))
            flat = conv.flatten(1)
            hidden = torch.nn.functional.layer_norm(flat @ flat.T, (2,))
            torch.softmax(hidden, dim=-1).sum().item()
    except (RuntimeError, NotImplementedError, TypeError) as error:
        return f"{device.type} cannot run {str(dtype).removeprefix('torch.')}: {error}"
    return None


def resolve_dtype(dtype: str | torch.dtype | None, device: torch.device) -> torch.dtype:
    """``auto``: bfloat16 on a GPU that supports it, float16 on other GPUs, float32 on CPU."""
    if isinstance(dtype, torch.dtype):
        return dtype
    if dtype in (None, "auto"):
        if device.type == "cuda":
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    names = {
        "float32": torch.float32,
        "fp32": torch.float32,
        "bfloat16": torch.bfloat16,
        "bf16": torch.bfloat16,
        "float16": torch.float16,
        "fp16": torch.float16,
    }
    if dtype not in names:
        raise ValueError(f"unknown dtype {dtype!r}; choose from 'auto', {sorted(names)}")
    return names[dtype]
