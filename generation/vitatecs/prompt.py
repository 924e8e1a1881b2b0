"""The in-context generation prompt (VITATECS appendix E, Tab. 15) and the six aspects, as data.

The template and the aspect texts live in ``data/prompt.yaml`` and ``data/aspects.yaml`` (or
files the user points to); this module only reads and renders them. A prompt is the template
with the aspect's generation instruction, the demonstrations (positive pairs and N/A captions,
whose answer is ``NA``) and the query caption filled in. Texts are inserted without their final
full stop because the template adds one after each (``Original Description: {caption}.``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from foilkit.builders.vitatecs import ASPECTS
from foilkit.generation.vitatecs.data_files import package_data, read_data

PROMPT_FORMAT = "foilkit.vitatecs.prompt/1"
ASPECTS_FORMAT = "foilkit.vitatecs.aspects/1"


@dataclass(frozen=True)
class Demonstration:
    """One in-context example: a caption and its counterfactual, or ``None`` for an N/A one."""

    caption: str
    counterfactual: str | None


@dataclass(frozen=True)
class AspectSpec:
    """What the pipeline says about one aspect: to the LLM (``instruction``) and to annotators."""

    key: str
    name: str
    question: str
    instruction: str
    definition: str
    positive_patterns: str
    negative_patterns: str

    def annotator_text(self) -> str:
        """The aspect's instructions for annotators, laid out like Tab. 17-18."""
        return (
            f"Aspect: {self.name}\n{self.definition}\n"
            f"Typical positive examples include: {self.positive_patterns}\n"
            f"Typical negative examples include: {self.negative_patterns}"
        )


def _sentence_body(text: str) -> str:
    """A text without surrounding spaces and final full stop, for the template's ``{x}.``."""
    return text.strip().rstrip(".").rstrip()


@dataclass(frozen=True)
class PromptTemplate:
    """The generation prompt of Tab. 15.

    Attributes:
        template: the prompt with ``{instruction}``, ``{examples}`` and ``{caption}`` fields.
        example: a positive demonstration, with ``{caption}`` and ``{counterfactual}`` fields.
        na_example: an N/A demonstration, with ``{caption}`` and ``{na_answer}`` fields.
        example_separator: what joins rendered demonstrations.
        na_answer: the answer that means "this caption has no such aspect" (``NA``).
        role: the chat role the prompt is sent with.
        version, source: recorded with every generated candidate.
    """

    template: str
    example: str
    na_example: str
    example_separator: str
    na_answer: str
    role: str = "user"
    version: int = 1
    source: str = ""

    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> PromptTemplate:
        """The template in ``path``, or the one shipped with foilkit (``data/prompt.yaml``)."""
        path = path or package_data("prompt.yaml")
        data = read_data(path, format=PROMPT_FORMAT)
        fields = ("template", "example", "na_example", "example_separator", "na_answer")
        missing = [name for name in fields if not isinstance(data.get(name), str)]
        if missing:
            raise ValueError(f"{path}: missing or non-text field(s) {missing}")
        template = cls(
            **{name: data[name] for name in fields},
            role=str(data.get("role", "user")),
            version=int(data.get("version", 1)),
            source=str(data.get("source", "")),
        )
        for name, needed in (
            ("template", ("{instruction}", "{examples}", "{caption}")),
            ("example", ("{caption}", "{counterfactual}")),
            ("na_example", ("{caption}", "{na_answer}")),
        ):
            absent = [field for field in needed if field not in getattr(template, name)]
            if absent:
                raise ValueError(f"{path}: field {name!r} lacks {absent}")
        return template

    def render(
        self, instruction: str, demonstrations: Sequence[Demonstration], caption: str
    ) -> str:
        """The full prompt for one query."""
        examples = self.example_separator.join(
            self.na_example.format(caption=_sentence_body(demo.caption), na_answer=self.na_answer)
            if demo.counterfactual is None
            else self.example.format(
                caption=_sentence_body(demo.caption),
                counterfactual=_sentence_body(demo.counterfactual),
            )
            for demo in demonstrations
        )
        return self.template.format(
            instruction=instruction.strip(), examples=examples, caption=_sentence_body(caption)
        )

    def messages(self, prompt: str) -> list[dict[str, str]]:
        """The chat messages that carry ``prompt``."""
        return [{"role": self.role, "content": prompt}]


def prompt_hash(prompt: str) -> str:
    """SHA-256 of a rendered prompt (the text only: model and sampling are not in it)."""
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


def load_aspects(path: str | os.PathLike | None = None) -> dict[str, AspectSpec]:
    """The six aspects' texts from ``path`` or ``data/aspects.yaml``, in the paper's order."""
    path = path or package_data("aspects.yaml")
    data = read_data(path, format=ASPECTS_FORMAT)
    entries = data.get("aspects")
    if not isinstance(entries, Mapping):
        raise ValueError(f"{path}: 'aspects' must map aspect names to their texts")
    unknown = sorted(set(entries) - set(ASPECTS))
    missing = [aspect for aspect in ASPECTS if aspect not in entries]
    if unknown or missing:
        raise ValueError(f"{path}: unknown aspect(s) {unknown}, missing aspect(s) {missing}")
    fields = (
        "name",
        "question",
        "instruction",
        "definition",
        "positive_patterns",
        "negative_patterns",
    )
    specs = {}
    for aspect in ASPECTS:
        entry = entries[aspect]
        absent = [f for f in fields if not isinstance(entry.get(f), str) or not entry[f].strip()]
        if absent:
            raise ValueError(f"{path}: aspect {aspect!r} lacks text field(s) {absent}")
        specs[aspect] = AspectSpec(key=aspect, **{f: entry[f].strip() for f in fields})
    return specs
