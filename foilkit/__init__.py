"""foilkit: temporal video-language benchmarks as Hugging Face datasets, metrics and scorers.

Heavy dependencies (torch, datasets, transformers, evaluate) are imported lazily, so
``import foilkit`` and ``foilkit --help`` stay fast.
"""
from __future__ import annotations

from foilkit._version import __version__

# The flat public API, imported on first use: name -> module that defines it.
_LAZY = {
    "evaluate": "foilkit.evaluation",
    "build": "foilkit.builders",
    "load_builder": "foilkit.builders",
    "score": "foilkit.scorers.api",
    "score_matrix": "foilkit.scorers.api",
    "attach_videos": "foilkit.attach",
    "load_adapter": "foilkit.scorers.adapters",
    "list_benchmarks": "foilkit.benchmarks",
    "list_adapters": "foilkit.scorers.adapters",
    "list_metrics": "foilkit.metrics",
    "list_protocols": "foilkit.scorers.protocols",
}
__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'foilkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
