"""The run record (``run.json``): everything needed to know where a set of scores came from."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import os
import platform
from typing import Any

PACKAGES = (
    "foilkit",
    "torch",
    "torchvision",
    "torchcodec",
    "av",
    "transformers",
    "datasets",
    "accelerate",
    "evaluate",
    "numpy",
    "huggingface_hub",
)


def package_versions() -> dict[str, str | None]:
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def hardware(num_processes: int) -> dict[str, Any]:
    import torch

    gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "gpus": gpus,
        "num_processes": num_processes,
    }


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
