"""Every processor setting a model receives is recorded (issue 29): a Qwen-VL video processor's
pixel budget and frame settings, each call's keywords, a dual encoder's image processor."""

from __future__ import annotations

import json
import types

from foilkit.scorers.adapters.base import processor_settings
from foilkit.scorers.adapters.video_llm import VideoLLMAdapter


def test_a_bundled_processors_parts_are_recorded_each_once():
    from transformers import AutoProcessor

    from foilkit.synthetic.models import tiny_model_path

    processor = AutoProcessor.from_pretrained(str(tiny_model_path("qwen2-vl")))
    owner = types.SimpleNamespace(processor=processor, tokenizer=processor.tokenizer)
    settings = processor_settings(owner)
    assert set(settings) == {"image_processor", "video_processor", "tokenizer"}
    video = settings["video_processor"]
    assert video["class"] == "Qwen2VLVideoProcessor"
    # transformers keeps Qwen-VL's max_pixels / min_pixels as size's longest / shortest edge
    assert video["size"] == processor.video_processor.size
    assert video["patch_size"] == processor.video_processor.patch_size
    assert video["temporal_patch_size"] == processor.video_processor.temporal_patch_size
    assert settings["tokenizer"]["class"] == type(processor.tokenizer).__name__
    json.dumps(settings)  # a run.json value


def test_a_video_llm_records_the_keywords_of_each_processor_call():
    adapter = object.__new__(VideoLLMAdapter)  # no model: what the record holds, nothing loaded
    adapter.processor = types.SimpleNamespace()
    settings = adapter.processor_settings()
    assert settings["call"]["do_sample_frames"] is False
    assert "timestamps" in settings["call"]["video_metadata"]
