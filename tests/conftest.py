"""Test-wide settings: never touch the network, keep caches inside the test session."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

for _var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"):
    os.environ[_var] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real annotation files; tests using them skip cleanly when ../shared is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data (the published annotation files) is not present")
    return SHARED_DATA
