"""Model adapters, registered by name and chosen from the model's ``transformers`` config.

``load_adapter(model_id)`` reads the config (``model_type`` and ``architectures``) and picks
the first registered adapter that claims it; ``adapter="name"`` overrides the choice.
:data:`ADAPTERS` (a :class:`foilkit.registry.Registry`) names them all; an adapter's module is
imported on first use, so ``import foilkit`` stays light.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import torch

from foilkit.progress import library_noise_dropped
from foilkit.registry import Lazy, Registry
from foilkit.scorers.adapters.base import (
    Adapter,
    EmbeddingAdapter,
    RequestAdapter,
    dtype_problem,
    resolve_dtype,
)

if TYPE_CHECKING:
    from foilkit.scorers.placement import Placement

#: Adapter name -> class. foilkit's own are declared here, in matching priority (specific
#: families before the catch-all video LLM and causal LM adapters), by a lazy reference to the
#: class, so ``import foilkit`` stays light; :func:`register_adapter` adds others.
ADAPTERS: Registry[type[Adapter]] = Registry("adapter")
ADAPTERS.add_lazy(
    "temporal-clip",
    "foilkit.scorers.adapters.temporal_clip:TemporalClipAdapter",
    "a CLIP/SigLIP with CLIP4Clip's temporal transformer over its frame embeddings",
)
ADAPTERS.add_lazy(
    "dual-encoder",
    "foilkit.scorers.adapters.dual_encoder:DualEncoderAdapter",
    "an image-text dual encoder (CLIP, SigLIP) with its frame embeddings pooled",
)
ADAPTERS.add_lazy(
    "xclip", "foilkit.scorers.adapters.xclip:XClipAdapter", "X-CLIP, a native video-text encoder"
)
ADAPTERS.add_lazy(
    "videoprism",
    "foilkit.scorers.adapters.video_text:VideoPrismAdapter",
    "VideoPrism, a native video-text dual encoder (the whole clip, its own frame count)",
)
ADAPTERS.add_lazy(
    "pe-video",
    "foilkit.scorers.adapters.video_text:PeVideoAdapter",
    "Perception Encoder video-text (PE-AV), a native video-text dual encoder",
)
ADAPTERS.add_lazy(
    "blip-itm",
    "foilkit.scorers.adapters.blip_itm:BlipItmAdapter",
    "BLIP's image-text matching head over a view's frames",
)
ADAPTERS.add_lazy(
    "video-llm",
    "foilkit.scorers.adapters.video_llm:VideoLLMAdapter",
    "a video LLM: the likelihood of each text, or its choice among them",
)
ADAPTERS.add_lazy(
    "text-lm",
    "foilkit.scorers.adapters.text_lm:TextLMAdapter",
    "a text-only causal LM (a benchmark's unimodal baseline): the likelihood of each text",
)
#: foilkit's own adapters, in matching priority.
BUILT_IN: tuple[str, ...] = ADAPTERS.names()
#: Model types that embed video and text but no adapter can score, and why (said in the error).
UNSUPPORTED: dict[str, str] = {
    "embedding_gemma2": "EmbeddingGemma2Model returns hidden states only; its embedding "
    "(pooling, dense layers, prompts) lives outside transformers",
}
#: The modules of foilkit's own adapters, in matching priority.
ADAPTER_MODULES: tuple[str, ...] = tuple(
    dict.fromkeys(ADAPTERS.entry(name).target.module for name in BUILT_IN)
)

A = TypeVar("A", bound=type[Adapter])


def register_adapter(name: str) -> Callable[[A], A]:
    """Class decorator: make an adapter available as ``name`` (foilkit's own adapters confirm
    the name :data:`ADAPTERS` declares for them)."""

    def decorator(cls: A) -> A:
        if name in ADAPTERS:
            target = ADAPTERS.entry(name).target
            path = f"{cls.__module__}:{cls.__qualname__}"
            declared = isinstance(target, Lazy) and target.path == path
            if not declared and target is not cls:
                taken = target.path if isinstance(target, Lazy) else target.__qualname__
                raise ValueError(f"adapter name {name!r} is already taken by {taken}")
        else:
            ADAPTERS.add(name, cls)
        cls.name = name
        return cls

    return decorator


def list_adapters() -> list[str]:
    """Names of all registered adapters."""
    return list(ADAPTERS.names())


def reads_hub_model(adapter: str | None) -> bool:
    """Whether the model id goes to transformers' ``from_pretrained`` (the Hub or its cache):
    when foilkit chooses the adapter from the model's config or one of foilkit's own is named
    (:data:`BUILT_IN`); an adapter registered outside foilkit reads its model id its own way."""
    return adapter is None or adapter in BUILT_IN


def matching_order() -> list[str]:
    """The order adapters are asked to claim a model: those registered outside foilkit first,
    then foilkit's own (:data:`BUILT_IN`)."""
    return [name for name in ADAPTERS if name not in BUILT_IN] + list(BUILT_IN)


def adapter_class(
    model_id: str,
    *,
    adapter: str | None = None,
    revision: str | None = None,
    trust_remote_code: bool = False,
) -> type[Adapter]:
    """The adapter class for a model: ``adapter`` by name, else the first that claims its config."""
    if adapter is not None:
        return ADAPTERS.get(adapter)
    from transformers import AutoConfig

    from foilkit.scorers.adapters._video_llm_support import naming_the_extra

    with naming_the_extra(model_id):  # a config that imports timm (Perception LM's vision tower)
        config = AutoConfig.from_pretrained(
            model_id, revision=revision, trust_remote_code=trust_remote_code
        )
    for name in matching_order():
        if ADAPTERS.get(name).matches(config):
            return ADAPTERS.get(name)
    model_type = getattr(config, "model_type", None)
    why = f": {UNSUPPORTED[model_type]}" if model_type in UNSUPPORTED else ""
    raise ValueError(
        f"no adapter handles {model_id!r} (model_type={model_type!r}, "
        f"architectures={getattr(config, 'architectures', None)}){why}; choose one with "
        f"--adapter NAME (adapter=NAME in Python), NAME one of {list(ADAPTERS)}"
    )


def accepted_settings(cls: type[Adapter]) -> tuple[str, ...]:
    """The protocol settings an adapter class takes: its ``options``, and ``mode`` when it has
    modes."""
    return (("mode",) if len(cls.modes) > 1 else ()) + tuple(cls.options)


def load_adapter(
    model_id: str,
    *,
    adapter: str | None = None,
    revision: str | None = None,
    dtype: str | torch.dtype | None = "auto",
    device: str | torch.device | None = None,
    trust_remote_code: bool = False,
    placement: Placement | None = None,
    **options: Any,
) -> Adapter:
    """Build the adapter for ``model_id`` (options such as ``mode`` or ``pooling`` go to it);
    ``placement`` spreads its model over devices (see :mod:`foilkit.scorers.placement`)."""
    device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    cls = adapter_class(
        model_id, adapter=adapter, revision=revision, trust_remote_code=trust_remote_code
    )
    with library_noise_dropped():  # notes about transformers' own code, not the model
        return cls(
            model_id,
            revision=revision,
            dtype=resolve_dtype(dtype, device),
            device=device,
            trust_remote_code=trust_remote_code,
            placement=placement,
            **options,
        )


__all__ = [
    "ADAPTERS",
    "BUILT_IN",
    "Adapter",
    "EmbeddingAdapter",
    "RequestAdapter",
    "accepted_settings",
    "adapter_class",
    "list_adapters",
    "load_adapter",
    "register_adapter",
    "dtype_problem",
    "resolve_dtype",
]
