"""The run record (``run.json``): everything needed to know where a set of scores came from."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import os
import platform
from collections.abc import Iterable
from typing import Any

#: The distributions a run's numbers depend on (foilkit and its default install, what ``pip install
#: foilkit`` brings), each with its import name: recorded in every ``run.json`` and checked by
#: ``foilkit doctor``. The generation extra's are recorded by generation runs
#: (:mod:`foilkit.generation.provenance`).
PACKAGES: dict[str, str] = {
    "foilkit": "foilkit",
    "torch": "torch",
    "torchvision": "torchvision",
    "torchcodec": "torchcodec",
    "av": "av",
    "pillow": "PIL",
    "numpy": "numpy",
    "datasets": "datasets",
    "evaluate": "evaluate",
    "huggingface_hub": "huggingface_hub",
    "transformers": "transformers",
    "accelerate": "accelerate",
    "matplotlib": "matplotlib",
    "tqdm": "tqdm",
    "pyyaml": "yaml",
}


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    """Installed version of each distribution in ``names`` (default: :data:`PACKAGES`; ``None``
    when one is missing). Generation records use it with their own list."""
    versions: dict[str, str | None] = {}
    for name in names:
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


def foilkit_source() -> dict[str, Any]:
    """foilkit's version and, when it runs from a git checkout (an editable install), the
    checkout's commit and whether it had uncommitted changes (``None``: not a checkout, or git
    is missing): which code made a result, beyond a version that many commits share."""
    import subprocess
    from pathlib import Path

    from foilkit._version import __version__

    root = Path(__file__).resolve().parent.parent  # the checkout holding the foilkit package
    commit = dirty = None
    if (root / ".git").exists() and (root / "pyproject.toml").is_file():
        try:

            def git(*args: str) -> str:
                return subprocess.run(
                    ["git", "-C", str(root), *args],
                    capture_output=True,
                    text=True,
                    check=True,
                    timeout=10,
                ).stdout.strip()

            commit = git("rev-parse", "HEAD")
            dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
        except (OSError, subprocess.SubprocessError):
            commit = dirty = None
    return {"version": __version__, "git_commit": commit, "git_dirty": dirty}
