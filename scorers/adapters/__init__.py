"""Model adapters, registered by name and chosen from the model's ``transformers`` config.

``load_adapter(model_id)`` reads the config (``model_type`` and ``architectures``) and picks
the first registered adapter that claims it; ``adapter="name"`` overrides the choice.
Adapter modules are imported on first use, so ``import foilkit`` stays light.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeVar

import torch
from foilkit.scorers.adapters.base import Adapter, EmbeddingAdapter, RequestAdapter, resolve_dtype

# Modules that register adapters, in matching priority: specific families before the
# catch-all video LLM and causal LM adapters.
ADAPTER_MODULES = (
    "foilkit.scorers.adapters.temporal_clip",
    "foilkit.scorers.adapters.dual_encoder",
    "foilkit.scorers.adapters.xclip",
    "foilkit.scorers.adapters.blip_itm",
    "foilkit.scorers.adapters.video_llm",
    "foilkit.scorers.adapters.text_lm",
)
ADAPTERS: dict[str, type[Adapter]] = {}

A = TypeVar("A", bound=type[Adapter])


def register_adapter(name: str) -> Callable[[A], A]:
    """Class decorator: make an adapter available as ``name``."""

    def decorator(cls: A) -> A:
        if name in ADAPTERS and ADAPTERS[name] is not cls:
            raise ValueError(
                f"adapter name {name!r} is already taken by {ADAPTERS[name].__qualname__}"
            )
        cls.name = name
        ADAPTERS[name] = cls
        return cls

    return decorator


def list_adapters() -> list[str]:
    """Names of all registered adapters."""
    _import_all()
    return list(ADAPTERS)


def _priority(cls: type[Adapter]) -> int:
    """Matching order: adapters registered outside foilkit first, then ``ADAPTER_MODULES`` order."""
    return ADAPTER_MODULES.index(cls.__module__) + 1 if cls.__module__ in ADAPTER_MODULES else 0


def _import_all() -> None:
    for module in ADAPTER_MODULES:
        importlib.import_module(module)


def adapter_class(
    model_id: str,
    *,
    adapter: str | None = None,
    revision: str | None = None,
    trust_remote_code: bool = False,
) -> type[Adapter]:
    """The adapter class for a model: ``adapter`` by name, else the first that claims its config."""
    _import_all()
    if adapter is not None:
        if adapter not in ADAPTERS:
            raise ValueError(f"unknown adapter {adapter!r}; choose from {sorted(ADAPTERS)}")
        return ADAPTERS[adapter]
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(
        model_id, revision=revision, trust_remote_code=trust_remote_code
    )
    for cls in sorted(ADAPTERS.values(), key=_priority):
        if cls.matches(config):
            return cls
    raise ValueError(
        f"no adapter handles {model_id!r} (model_type={getattr(config, 'model_type', None)!r}, "
        f"architectures={getattr(config, 'architectures', None)}); pass adapter= one of {sorted(ADAPTERS)}"
    )


def accepted_settings(cls: type[Adapter]) -> tuple[str, ...]:
    """The protocol settings an adapter class takes: its ``options``, and ``mode`` when it has modes."""
    return (("mode",) if len(cls.modes) > 1 else ()) + tuple(cls.options)


def load_adapter(
    model_id: str,
    *,
    adapter: str | None = None,
    revision: str | None = None,
    dtype: str | torch.dtype | None = "auto",
    device: str | torch.device | None = None,
    trust_remote_code: bool = False,
    **options: Any,
) -> Adapter:
    """Build the adapter for ``model_id`` (options such as ``mode`` or ``pooling`` go to it)."""
    device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    cls = adapter_class(
        model_id, adapter=adapter, revision=revision, trust_remote_code=trust_remote_code
    )
    return cls(
        model_id,
        revision=revision,
        dtype=resolve_dtype(dtype, device),
        device=device,
        trust_remote_code=trust_remote_code,
        **options,
    )


__all__ = [
    "ADAPTERS",
    "Adapter",
    "EmbeddingAdapter",
    "RequestAdapter",
    "accepted_settings",
    "adapter_class",
    "list_adapters",
    "load_adapter",
    "register_adapter",
    "resolve_dtype",
]
