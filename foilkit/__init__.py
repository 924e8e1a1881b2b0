"""foilkit: temporal video-language benchmarks as Hugging Face datasets, metrics and scorers.

Heavy dependencies (torch, datasets, transformers, evaluate) are imported lazily, so
``import foilkit`` and ``foilkit --help`` stay fast.
"""
from __future__ import annotations

from foilkit._version import __version__

__all__ = ["__version__"]

# Public functions imported on first use: name -> module that defines it.
_LAZY = {
    "score": "foilkit.scorers.api",
    "score_matrix": "foilkit.scorers.api",
    "attach_videos": "foilkit.attach",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'foilkit' has no attribute {name!r}")
