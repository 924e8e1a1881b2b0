"""Build a folder once, atomically: what tiny models, benchmark corpora and models share."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path


def build_once(final: str | os.PathLike, build: Callable[[Path], None]) -> Path:
    """``final``, built by ``build(staging)`` in a temporary folder beside it and renamed into
    place, unless it exists. A process that loses a race keeps the winner's folder."""
    final = Path(final)
    if final.is_dir():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=final.parent))
    try:
        build(staging)
        os.rename(staging, final)
    except OSError:
        if not final.is_dir():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final
