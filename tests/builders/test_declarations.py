"""The benchmark folders' declarations, written once: configs per option value
(:func:`foilkit.builders.base.configs_per`), their checks (``FoilkitConfig.check_choice``), the one
test split, the paper-protocol tables (:func:`foilkit.protocol.paper_protocols`) and the GPT-3.5
judges' settings (:data:`foilkit.answers.GPT35_JUDGE`) give every builder the configs, messages,
protocols and judges it declared by hand before."""

from __future__ import annotations

import pytest

from foilkit.answers import GPT35_JUDGE
from foilkit.builders import builder_class, get_benchmark
from foilkit.builders.base import FoilkitConfig, configs_per, one_test_split
from foilkit.builders.contrast_sets.builder import ContrastSetConfig
from foilkit.builders.rtime.builder import RTimeConfig
from foilkit.builders.tempcompass.answers import CORRECTNESS
from foilkit.builders.tempcompass.answers import JUDGES as TEMPCOMPASS_JUDGES
from foilkit.builders.tempcompass.builder import TempCompassConfig
from foilkit.builders.tomato.builder import TomatoConfig
from foilkit.builders.velociti import TESTS
from foilkit.builders.velociti.builder import VelocitiConfig
from foilkit.builders.vitatecs import ASPECTS
from foilkit.builders.vitatecs.answers import JUDGES as VITATECS_JUDGES
from foilkit.builders.vitatecs.builder import VitatecsConfig
from foilkit.protocol import (
    NATIVE_VIDEO_ENCODERS,
    PAPER_FAMILIES,
    UNIFORM,
    Protocol,
    paper_protocols,
)

#: Each builder's configs as they were declared one by one: (name, description), in order.
CONFIGS = {
    "contrast_sets": [
        ("verb_lm", "Verb-LM MC: verb foils by a language model"),
        ("verb_human", "Verb-H MC: verb foils by people"),
        ("gender", "Gender MC: one negative is a gender swap"),
        ("random", "Random MC: four random negatives"),
    ],
    "rtime": [
        ("origin", "RTime-Origin: forward videos and their captions"),
        ("hard", "RTime-Hard: forward and reversed videos in one pool"),
        ("binary", "RTime-Binary: each view against its reversal"),
    ],
    "tempcompass": [
        (task, f"TempCompass, {task.replace('_', ' ')}")
        for task in ("multi_choice", "yes_no", "caption_matching", "captioning")
    ],
    "tomato": [
        ("count", "TOMATO, reasoning type count"),
        ("direction", "TOMATO, reasoning type direction"),
        ("rotation", "TOMATO, reasoning type rotation"),
        ("shape_trend", "TOMATO, reasoning type shape&trend"),
        ("velocity_frequency", "TOMATO, reasoning type velocity&frequency"),
        ("visual_cues", "TOMATO, reasoning type visual_cues"),
        ("all", "TOMATO, all six types"),
    ],
    "velociti": [
        *((test, f"VELOCITI, test {test}") for test in TESTS),
        ("all", "VELOCITI, all eight tests"),
    ],
    "vitatecs": [
        *((aspect, f"VITATECS, aspect {aspect}") for aspect in ASPECTS),
        ("all", "VITATECS, all six aspects"),
    ],
}
#: The option each of those configs sets to its own name (``None`` in ``all``).
FIELDS = {
    "contrast_sets": "foil_type",
    "rtime": "task",
    "tempcompass": "task_type",
    "tomato": "reasoning_type",
    "velociti": "test",
    "vitatecs": "aspect",
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_each_builder_declares_the_configs_it_declared_by_hand(name):
    configs = builder_class(name).BUILDER_CONFIGS
    assert [(config.name, config.description) for config in configs] == CONFIGS[name]
    field = FIELDS[name]
    assert [getattr(config, field) for config in configs] == [
        None if config.name == "all" else config.name for config in configs
    ]


def test_configs_per_names_each_config_by_its_value_and_adds_all_when_described():
    configs = configs_per(
        VelocitiConfig, "test", {"coref": "one", "chrono": "two"}, all_description="both"
    )
    assert [(c.name, c.test, c.description) for c in configs] == [
        ("coref", "coref", "one"),
        ("chrono", "chrono", "two"),
        ("all", None, "both"),
    ]
    assert all(type(config) is VelocitiConfig for config in configs)
    assert [c.name for c in configs_per(VelocitiConfig, "test", {"coref": "one"})] == ["coref"]


@pytest.mark.parametrize(
    ("config", "options", "message"),
    [
        (
            VitatecsConfig,
            {"aspect": "speed"},
            f"aspect must be one of {ASPECTS} or None, got 'speed'",
        ),
        (
            VitatecsConfig,
            {"annotation_version": "gpt4"},
            "annotation_version must be one of ('chatgpt', 'opt'), got 'gpt4'",
        ),
        (VelocitiConfig, {"test": "agent"}, f"test must be one of {TESTS} or None, got 'agent'"),
        (
            TomatoConfig,
            {"reasoning_type": "shape&trend"},
            "reasoning_type must be one of ('count', 'direction', 'rotation', 'shape_trend', "
            "'velocity_frequency', 'visual_cues') or None, got 'shape&trend'",
        ),
        (
            TempCompassConfig,
            {"task_type": None},
            "task_type must be one of ('multi_choice', 'yes_no', 'caption_matching', "
            "'captioning'), got None",
        ),
        (
            RTimeConfig,
            {"task": "all"},
            "task must be one of ('origin', 'hard', 'binary'), got 'all'",
        ),
        (
            ContrastSetConfig,
            {"foil_type": "verb"},
            "foil_type must be one of ('verb_lm', 'verb_human', 'gender', 'random'), got 'verb'",
        ),
    ],
)
def test_a_config_option_outside_its_choices_names_them(config, options, message):
    with pytest.raises(ValueError) as raised:
        config(name="x", **options)
    assert str(raised.value) == message


def test_check_choice_takes_none_only_where_optional():
    config = FoilkitConfig(name="x")
    config.check_choice("annotations", ("a",), optional=True)  # None: every choice
    with pytest.raises(ValueError, match=r"annotations must be one of \('a',\), got None"):
        config.check_choice("annotations", ("a",))


def test_one_test_split_reads_its_rows_with_the_arguments_given():
    (split,) = one_test_split(path="a.json", files={"x": "b"})
    assert split.name == "test"
    assert split.gen_kwargs == {"split": "test", "path": "a.json", "files": {"x": "b"}}


def test_paper_protocols_keep_the_published_order_then_the_other_families_then_native():
    published = Protocol(num_frames=3, reference="r", notes="n")
    table = paper_protocols(
        "bench", {"video-llm": published, "xclip": "not X-CLIP"}, others="data only", native=True
    )
    assert list(table) == [
        "video-llm",
        "xclip",
        *(f for f in PAPER_FAMILIES if f not in ("video-llm", "xclip")),
        *NATIVE_VIDEO_ENCODERS,
    ]
    assert table["video-llm"] is published
    assert table["xclip"].notes == (
        "bench published no scoring code for xclip models; the uniform protocol's values "
        "(not X-CLIP)"
    )
    assert table["text-lm"].reduction == UNIFORM["text-lm"].reduction
    assert table["text-lm"].notes.endswith("(data only)") and table["text-lm"].reference == ""
    assert "bench published no scoring code for VideoPrism" in table["videoprism"].notes
    assert "videoprism" not in paper_protocols("bench")


@pytest.mark.parametrize(
    ("name", "families"),
    [
        ("contrast_sets", PAPER_FAMILIES),
        ("rtime", (*PAPER_FAMILIES, *NATIVE_VIDEO_ENCODERS)),
        ("tempcompass", ("video-llm", "dual-encoder", "xclip", "blip-itm", "text-lm")),
        ("temporalbench", ("video-llm", "dual-encoder", "xclip", "blip-itm", "text-lm")),
        ("tomato", ("video-llm", "dual-encoder", "xclip", "blip-itm", "text-lm")),
        ("velociti", ("dual-encoder", "video-llm", "xclip", "blip-itm", "text-lm")),
        ("vilma", PAPER_FAMILIES),
        ("vinoground", ("dual-encoder", "video-llm", "xclip", "blip-itm", "text-lm")),
        ("vitatecs", (*PAPER_FAMILIES, *NATIVE_VIDEO_ENCODERS)),
    ],
)
def test_each_benchmark_lists_its_paper_protocols_in_the_order_it_declared_them(name, families):
    assert tuple(get_benchmark(name).protocols) == tuple(families)


@pytest.mark.parametrize(
    ("judges", "name"),
    [
        *((TEMPCOMPASS_JUDGES, f"tempcompass_{task}") for task in CORRECTNESS),
        (TEMPCOMPASS_JUDGES, "tempcompass_captioning"),
        (VITATECS_JUDGES, "vitatecs"),
    ],
)
def test_the_gpt35_judges_ask_one_model_with_one_system_prompt_and_decoding(judges, name):
    judge = judges[name]
    assert (judge.model, judge.system, judge.decoding) == (
        "gpt-3.5-turbo-1106",
        "You are an AI assistant for question answering.",
        {"max_tokens": 128, "temperature": 1.0, "top_p": 1, "presence_penalty": 1},
    )
    assert {"model": judge.model, "system": judge.system, "decoding": judge.decoding} == GPT35_JUDGE
