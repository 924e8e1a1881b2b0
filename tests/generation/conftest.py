"""Tiny models shared by the generation tests, loaded once per session."""

from __future__ import annotations

import pytest

from foilkit.testing.models import tiny_model_path


@pytest.fixture(scope="session")
def nli_model():
    from foilkit.generation.nli import load_nli_model

    return load_nli_model(str(tiny_model_path("nli")))
