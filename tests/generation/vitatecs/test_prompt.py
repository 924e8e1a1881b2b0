"""The prompt template (Tab. 15) and aspect texts (Tab. 16-18) as data, rendered."""

from __future__ import annotations

import random
import re

import pytest
import yaml

from foilkit.builders.vitatecs import ASPECTS
from foilkit.generation.prompts import prompt_hash
from foilkit.generation.vitatecs.exemplars import ExemplarSets
from foilkit.generation.vitatecs.prompt import (
    CounterfactualPrompt,
    Demonstration,
    load_aspects,
)

# Tab. 15 of the VITATECS paper as printed (000_b636b19e7a47213e.txt); "..." = more examples.
PAPER_TAB_15 = """You will be given a video description. Your task is to [instruction] in the \
description, while keeping the static information and other aspects of temporal information \
unchanged.

Ensure the modified description meets the following criteria:

1. The modified description should be grammatically correct and semantically plausible.

2. The modified description should NOT contain an entailment relationship with the original \
description.

3. The modification should be minimal and should not make unnecessary changes to the information \
in the original description.

4. The modified description should contain roughly the same amount of information as the \
original description. Do not simply negate the sentence.

If the specified aspect of temporal information of the original description cannot be modified \
without violating these criteria, please respond with "NA".

Here are some examples: Original Description: [exemplar caption]. Modified Description: \
[exemplar counterfactual].

...

Now [instruction] in the following description without violating the aforementioned criteria. \
Original Description: [query caption]. Modified Description:"""

# Tab. 17 and 18, the aspect definitions for annotators, as printed.
PAPER_DEFINITIONS = {
    "direction": "This aspect focuses on the model's ability to understand the direction of a "
    "single action temporally. The two actions differ only in the direction of the action.",
    "compositionality": "This aspect focuses on the model's ability to understand the "
    "relationship between people, objects, and actions in a video. The two descriptions feature "
    "the same actions and people, and only differ in the actor or recipient of the action.",
}


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_rendered_prompt_is_the_papers_template():
    template, aspects = CounterfactualPrompt.load(), load_aspects()
    instruction = aspects["direction"].instruction
    positive = Demonstration("a toy egg is being unboxed", "a toy egg is being put in a box")
    na = Demonstration("a woman is singing on a stage.", None)
    messages = template.render(instruction, [positive, na], "a man enters a movie theater")
    (message,) = messages  # the whole prompt is one user message
    assert message["role"] == "user"
    prompt = message["content"]

    expected = (
        PAPER_TAB_15.replace("[instruction]", instruction)
        .replace("[exemplar caption]", positive.caption)
        .replace("[exemplar counterfactual]", positive.counterfactual)
        .replace(
            "...", "Original Description: a woman is singing on a stage. Modified Description: NA"
        )
        .replace("[query caption]", "a man enters a movie theater")
    )
    assert _words(prompt) == _words(expected)
    # The demonstrations and the query each sit on their own lines, as a chat prompt should.
    assert "\nOriginal Description: a man enters a movie theater.\nModified Description:" in prompt
    again = template.render(instruction, [positive, na], "a man enters a movie theater")
    changed = [{"role": "user", "content": prompt + " "}]
    assert prompt_hash(messages) == prompt_hash(again) != prompt_hash(changed)
    assert template.template.version == 1 and len(template.template.template_hash) == 64


def test_full_prompt_from_the_shipped_exemplars_has_six_positive_and_two_na():
    template, aspects, exemplars = CounterfactualPrompt.load(), load_aspects(), ExemplarSets.load()
    demos = exemplars.demonstrations("type", random.Random(0), positives=6, na=2)
    (message,) = template.render(aspects["type"].instruction, demos, "a man cooks burgers")
    prompt = message["content"]
    assert prompt.count("Original Description:") == 9  # 8 demonstrations + the query
    assert prompt.count("Modified Description: NA") == 2
    assert prompt.count(f"Your task is to {aspects['type'].instruction} in the description") == 1
    assert "..." not in prompt and "[" not in prompt


def test_aspect_texts_cover_the_six_aspects_with_the_papers_definitions():
    aspects = load_aspects()
    assert tuple(aspects) == ASPECTS
    for aspect, definition in PAPER_DEFINITIONS.items():
        assert aspects[aspect].definition == definition
    assert (
        aspects["sequence"].question
        == "How many events are depicted in the video and in what order?"
    )
    assert (
        "Typical negative examples include: simple negation"
        in aspects["direction"].annotator_text()
    )


def _prompt_file(path, content: str, na_example: str = "{caption} -> {na_answer}"):
    path.write_text(
        yaml.safe_dump(
            {
                "format": "foilkit.prompt/1",
                "fields": sorted(set(re.findall(r"\{(\w+)\}", content))),
                "messages": [{"role": "user", "content": content}],
                "demonstrations": {
                    "example": "{caption} -> {counterfactual}",
                    "na_example": na_example,
                    "separator": " ",
                    "na_answer": "NA",
                },
            }
        )
    )
    return path


def test_edited_template_missing_a_field_is_named(tmp_path):
    path = _prompt_file(tmp_path / "prompt.yaml", "Do {instruction} to {caption}")
    with pytest.raises(ValueError, match=r"prompt.yaml: the messages .* lack \['\{examples\}'\]"):
        CounterfactualPrompt.load(path)
    _prompt_file(path, "Do {instruction}: {examples} {caption}", na_example="{caption} -> ")
    with pytest.raises(ValueError, match=r"'na_example' lacks \['\{na_answer\}'\]"):
        CounterfactualPrompt.load(path)
    _prompt_file(path, "Do {instruction}: {examples} {caption}")
    assert CounterfactualPrompt.load(path).render("x", [], "y") == [
        {"role": "user", "content": "Do x:  y"}
    ]


def test_a_prompt_in_the_earlier_vitatecs_layout_is_named(tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text("format: foilkit.vitatecs.prompt/1\ntemplate: '{instruction}'\n")
    with pytest.raises(ValueError, match=r"old.yaml: 'format' is 'foilkit.vitatecs.prompt/1'"):
        CounterfactualPrompt.load(path)
    path.write_text("template: '{instruction}'\n")
    with pytest.raises(ValueError, match=r"old.yaml: unknown key\(s\) \['template'\]"):
        CounterfactualPrompt.load(path)


def test_wrong_kind_of_file_is_named(tmp_path):
    path = tmp_path / "aspects.json"
    path.write_text('{"format": "foilkit.vitatecs.prompt/1"}')
    with pytest.raises(ValueError, match="aspects.json: 'format' is"):
        load_aspects(path)
