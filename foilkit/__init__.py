"""foilkit: temporal video-language benchmarks as Hugging Face datasets, metrics and scorers.

Heavy dependencies (torch, datasets, transformers, evaluate) are imported lazily, so
``import foilkit`` and ``foilkit --help`` stay fast.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from foilkit._version import __version__
from foilkit.registry import Registry

#: The flat public API, imported on first use: ``foilkit.<name>`` -> where it is defined.
_LAZY: Registry[Callable[..., Any]] = Registry("foilkit attribute")
_LAZY.add_lazy("evaluate", "foilkit.evaluation:evaluate")
_LAZY.add_lazy("build", "foilkit.builders:build")
_LAZY.add_lazy("load_builder", "foilkit.builders:load_builder")
_LAZY.add_lazy("score", "foilkit.scorers.api:score")
_LAZY.add_lazy("score_matrix", "foilkit.scorers.api:score_matrix")
_LAZY.add_lazy("ScoreOptions", "foilkit.scorers.options:ScoreOptions")
_LAZY.add_lazy("EvaluateOptions", "foilkit.evaluation:EvaluateOptions")
_LAZY.add_lazy("RunResults", "foilkit.run:RunResults")
_LAZY.add_lazy("attach_videos", "foilkit.attach:attach_videos")
_LAZY.add_lazy("load_adapter", "foilkit.scorers.adapters:load_adapter")
_LAZY.add_lazy("list_benchmarks", "foilkit.builders:list_benchmarks")
_LAZY.add_lazy("get_benchmark", "foilkit.builders:get_benchmark")
_LAZY.add_lazy("list_adapters", "foilkit.scorers.adapters:list_adapters")
_LAZY.add_lazy("list_metrics", "foilkit.metrics:list_metrics")
_LAZY.add_lazy("list_protocols", "foilkit.scorers.protocols:list_protocols")
__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        return _LAZY.get(name)
    raise AttributeError(f"module 'foilkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
