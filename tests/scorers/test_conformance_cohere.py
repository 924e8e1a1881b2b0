"""Conformance of Cohere Compass (``cohere_compass``, Cohere's North Micro Vision): refused on
video, in every mode of the video-llm adapter that claims it.

transformers gives ``CohereCompassProcessor`` a video processor (its processing is Qwen3-VL's,
inherited), but the checkpoints read images only (``_video_llm_support.IMAGE_ONLY`` names the
sources). So foilkit refuses the family in one line, the families table's reason, before any
weight loads, whether the tiny twin ``"cohere-compass"`` is loaded through the adapter in mode
``"likelihood"``, ``"choice"``, ``"entail"`` or ``"generate"``, or scored from the CLI.
"""

from __future__ import annotations

import pytest
from launch import score_argv

from foilkit.scorers.adapters import ADAPTERS, load_adapter

MODES = ("likelihood", "choice", "entail", "generate")


@pytest.fixture(scope="module")
def twin(tiny_model) -> str:
    return tiny_model("cohere-compass")


def _reason() -> str:
    from foilkit.synthetic.models.families import family

    row = family("cohere_compass")
    assert row.status == "refused" and row.adapter == "video-llm"
    return row.reason


def test_the_modes_are_the_adapters():
    assert tuple(ADAPTERS.get("video-llm").modes) == MODES


@pytest.mark.parametrize("mode", MODES)
def test_cohere_compass_is_refused_in_one_line_before_its_weights_load(twin, mode, monkeypatch):
    from transformers import PreTrainedModel

    def no_weights(*args, **kwargs):
        raise AssertionError("the weights were loaded before the refusal")

    monkeypatch.setattr(PreTrainedModel, "from_pretrained", classmethod(no_weights))
    with pytest.raises(ValueError) as error:
        load_adapter(twin, mode=mode, device="cpu")
    reason = str(error.value)
    assert reason == f"{twin}: {_reason()}" and "\n" not in reason
    assert reason.startswith(f"{twin}: model_type 'cohere_compass' takes no video: ")


def test_the_refusal_is_the_familys_not_a_missing_video_processor(twin):
    """The processor has a video processor and writes Qwen3-VL's timestamped segment per
    temporal patch, so neither the generic refusal (no video processor) nor transformers stops
    a video from reaching this model: foilkit's declaration does, and it rests on what
    transformers declares of the vision tower, unlike that of the Qwen3-VL it derives from."""
    from transformers import (
        AutoProcessor,
        CohereCompassVisionModel,
        Qwen3VLVisionModel,
    )

    from foilkit.scorers.adapters._video_llm_support import IMAGE_ONLY, takes_video, video_refusal

    processor = AutoProcessor.from_pretrained(twin)
    assert takes_video(type(processor)) and processor.video_processor is not None
    written = f"{processor.video_token}Describe the video."
    assert video_refusal(processor, "cohere_compass", written) is None
    assert "video" not in CohereCompassVisionModel.input_modalities
    assert "video" in Qwen3VLVisionModel.input_modalities
    assert IMAGE_ONLY["cohere_compass"].reason in _reason()


def test_the_cli_says_why_in_one_line(twin, saved_benchmark, tmp_path, capsys):
    from foilkit.cli import main

    argv = score_argv(twin, saved_benchmark, tmp_path / "run", "--mode", "choice")
    assert main([*argv, "--no-progress", "--no-cache", "--num-workers", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"foilkit score: error: {twin}: {_reason()}"
