"""Adapters are chosen from the model's config, whatever was imported first, and can be named."""

from __future__ import annotations

import importlib

import pytest

from foilkit.scorers.adapters import ADAPTER_MODULES, adapter_class, list_adapters

CHOSEN = {
    "clip": "dual-encoder",
    "siglip": "dual-encoder",
    "align": "dual-encoder",
    "tipsv2": "dual-encoder",
    "videoprism": "videoprism",
    "xclip": "xclip",
    "blip-itm": "blip-itm",
    "llava-next-video": "video-llm",
    "qwen2-vl": "video-llm",
    "qwen3.5": "video-llm",
    "gemma4": "video-llm",
    "instructblip-video": "video-llm",
    "instructblip": "video-llm",
    "gpt2": "text-lm",
}


@pytest.mark.parametrize("model", list(CHOSEN))
def test_the_config_chooses_the_adapter(model, tiny_model):
    for module in reversed(ADAPTER_MODULES):  # import order must not change the choice
        importlib.import_module(module)
    assert adapter_class(tiny_model(model)).name == CHOSEN[model]


def test_a_named_adapter_overrides_the_config(tiny_model):
    assert adapter_class(tiny_model("clip"), adapter="blip-itm").name == "blip-itm"
    with pytest.raises(ValueError, match="unknown adapter 'nope'"):
        adapter_class(tiny_model("clip"), adapter="nope")
    assert set(CHOSEN.values()) <= set(list_adapters())


def test_a_model_no_adapter_handles_is_named(tiny_model):
    with pytest.raises(ValueError, match="no adapter handles .*model_type='t5'") as error:
        adapter_class(tiny_model("t5"))
    # the hint is the CLI's flag first, the Python keyword beside it
    assert "--adapter NAME (adapter=NAME in Python)" in str(error.value)
    assert "'video-llm'" in str(error.value)
