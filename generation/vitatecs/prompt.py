"""The in-context generation prompt (VITATECS appendix E, Tab. 15) and the six aspects, as data.

The prompt and the aspect texts live in ``data/prompt.yaml`` and ``data/aspects.yaml`` (or
files the user points to); this module only reads and renders them. The prompt file is a
:class:`~foilkit.generation.prompts.PromptTemplate` file (one user message with
``{instruction}``, ``{examples}`` and ``{caption}``) with a ``demonstrations`` section. A prompt
is the template with the aspect's generation instruction, the demonstrations (positive pairs and
N/A captions, whose answer is ``NA``) and the query caption filled in. Texts are inserted
without their final full stop because the template adds one after each
(``Original Description: {caption}.``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from foilkit.builders.vitatecs import ASPECTS
from foilkit.generation.prompts import PromptTemplate, read_prompt_file
from foilkit.generation.vitatecs.data_files import package_data, read_data

ASPECTS_FORMAT = "foilkit.vitatecs.aspects/1"
TEMPLATE_FIELDS = ("instruction", "examples", "caption")
DEMONSTRATION_FIELDS = ("example", "na_example", "separator", "na_answer")


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
class DemonstrationFormat:
    """How one in-context demonstration is written into the prompt's ``{examples}``.

    Attributes:
        example: a positive demonstration, with ``{caption}`` and ``{counterfactual}`` fields.
        na_example: an N/A demonstration, with ``{caption}`` and ``{na_answer}`` fields.
        separator: what joins rendered demonstrations.
        na_answer: the answer that means "this caption has no such aspect" (``NA``).
    """

    example: str
    na_example: str
    separator: str
    na_answer: str

    def render(self, demonstrations: Sequence[Demonstration]) -> str:
        return self.separator.join(
            self.na_example.format(caption=_sentence_body(demo.caption), na_answer=self.na_answer)
            if demo.counterfactual is None
            else self.example.format(
                caption=_sentence_body(demo.caption),
                counterfactual=_sentence_body(demo.counterfactual),
            )
            for demo in demonstrations
        )


@dataclass(frozen=True)
class CounterfactualPrompt:
    """The generation prompt of Tab. 15: a :class:`~foilkit.generation.prompts.PromptTemplate`
    whose messages take ``{instruction}``, ``{examples}`` and ``{caption}``, and the
    ``demonstrations`` section of the same file saying how each example is written."""

    template: PromptTemplate
    demonstrations: DemonstrationFormat

    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> CounterfactualPrompt:
        """The prompt in ``path``, or the one shipped with foilkit (``data/prompt.yaml``)."""
        data, path = read_prompt_file(path or package_data("prompt.yaml"))
        template = PromptTemplate.from_data(data, path, sections=("demonstrations",))
        absent = [name for name in TEMPLATE_FIELDS if name not in template.fields]
        extra = sorted(set(template.fields) - set(TEMPLATE_FIELDS))
        if absent or extra:
            raise ValueError(
                f"{path}: the messages take {['{' + name + '}' for name in TEMPLATE_FIELDS]}; "
                f"they lack {['{' + name + '}' for name in absent]}, have no use for {extra}"
            )
        section = data.get("demonstrations")
        if not isinstance(section, Mapping):
            raise ValueError(f"{path}: no 'demonstrations' section ({DEMONSTRATION_FIELDS})")
        missing = [name for name in DEMONSTRATION_FIELDS if not isinstance(section.get(name), str)]
        if missing:
            raise ValueError(f"{path}: demonstrations: missing or non-text field(s) {missing}")
        demonstrations = DemonstrationFormat(
            **{name: section[name] for name in DEMONSTRATION_FIELDS}
        )
        for name, needed in (
            ("example", ("{caption}", "{counterfactual}")),
            ("na_example", ("{caption}", "{na_answer}")),
        ):
            absent = [field for field in needed if field not in getattr(demonstrations, name)]
            if absent:
                raise ValueError(f"{path}: demonstrations: field {name!r} lacks {absent}")
        return cls(template, demonstrations)

    @property
    def na_answer(self) -> str:
        return self.demonstrations.na_answer

    def render(
        self, instruction: str, demonstrations: Sequence[Demonstration], caption: str
    ) -> list[dict[str, str]]:
        """The chat messages for one query."""
        return self.template.render(
            instruction=instruction.strip(),
            examples=self.demonstrations.render(demonstrations),
            caption=_sentence_body(caption),
        )


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
    fields = tuple(
        "name question instruction definition positive_patterns negative_patterns".split()
    )
    specs = {}
    for aspect in ASPECTS:
        entry = entries[aspect]
        absent = [f for f in fields if not isinstance(entry.get(f), str) or not entry[f].strip()]
        if absent:
            raise ValueError(f"{path}: aspect {aspect!r} lacks text field(s) {absent}")
        specs[aspect] = AspectSpec(key=aspect, **{f: entry[f].strip() for f in fields})
    return specs
