"""foilkit: temporal video-language benchmarks as Hugging Face datasets, metrics and scorers.

Heavy dependencies (torch, datasets, transformers, evaluate) are imported lazily, so
``import foilkit`` and ``foilkit --help`` stay fast.
"""
from __future__ import annotations

from foilkit._version import __version__

__all__ = ["__version__"]
