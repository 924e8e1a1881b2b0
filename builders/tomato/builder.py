"""Tomato's ``datasets`` builder: configs, features, rows (its spec: ``__init__.py``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import datasets

from foilkit.builders.annotations import (
    AnnotationError,
    AnnotationFile,
    fetch,
    read_keyed_json,
    relative_path,
    require,
    text,
    texts,
)
from foilkit.builders.base import FoilkitBuilder, FoilkitConfig, configs_per, one_test_split
from foilkit.builders.schema import (
    FLAG,
    QUESTION_FEATURES,
    TEXT,
    canonical_features,
    question_columns,
)
from foilkit.builders.tomato import BENCHMARK, DEMONSTRATION_TYPES, REASONING_TYPES
from foilkit.builders.tomato.answers import PROMPT, lettered, option_letter
from foilkit.builders.tomato.source import SOURCE
from foilkit.metrics import CITATIONS

#: The ``variation`` flags of a question's video (the paper's video edits).
VARIATIONS = ("counterfactual", "composite", "zoom", "first_person")

#: Frames the official prompt announces: ``get_categorized_score.py``'s ``NUM_FRAME`` (the main
#: table), also ``evaluate.py``'s default ``--total_frames``.
PROMPT_FRAMES = 16

FEATURES = canonical_features(
    **QUESTION_FEATURES,
    reasoning_type=TEXT,
    demonstration_type=TEXT,
    motion_type=TEXT,
    **{variation: FLAG for variation in VARIATIONS},
    question_id=TEXT,
    video_key=TEXT,
    video_source_url=TEXT,
    note=TEXT,
)


@dataclass
class TomatoConfig(FoilkitConfig):
    """One reasoning type of TOMATO, or all six (``reasoning_type=None``).

    Attributes:
        reasoning_type: one of :data:`REASONING_TYPES`, or ``None`` for every one.
    """

    reasoning_type: str | None = None
    CHOICES = {"reasoning_type": REASONING_TYPES}


class Tomato(FoilkitBuilder):
    """TOMATO: one config per reasoning type and ``all``; a single ``test`` split."""

    BUILDER_CONFIG_CLASS = TomatoConfig
    BUILDER_CONFIGS: ClassVar[list[TomatoConfig]] = configs_per(
        TomatoConfig,
        "reasoning_type",
        {name: f"TOMATO, reasoning type {label}" for name, label in REASONING_TYPES.items()},
        all_description="TOMATO, all six types",
    )
    DEFAULT_CONFIG_NAME = "all"
    SOURCE = SOURCE
    FEATURES = FEATURES
    PRETTY_NAME = "TOMATO"
    DESCRIPTION = (
        "TOMATO: assessing visual temporal reasoning capabilities in multimodal foundation "
        "models. 1,484 human-annotated multiple-choice questions on 1,417 videos (human-centric, "
        "real-world and simulated, many self-recorded with counterfactual, composite or zoomed "
        "edits) in six reasoning types: action count, direction, rotation, shape & trend, "
        "velocity & frequency and visual cues."
    )
    CITATION = CITATIONS["tomato"]
    VIDEO_LAYOUT = BENCHMARK.video_layout

    CARD_NOTES = (
        "### Questions, options and scoring\n\n"
        "One row per published question; `id` is `<reasoning type>-<question id>` (the "
        "question ids restart in every file). `options` keep the published order and "
        "`option_labels` are the letters the official prompt gives them; `prompt` is the "
        f"official prompt (`construct_prompt`) for {PROMPT_FRAMES} frames, the main table's "
        "setting. `reasoning_type` and `demonstration_type` are the groups of the official "
        "`get_categorized_score.py`; `motion_type` and the variation flags (`counterfactual`, "
        "`composite`, `zoom`, `first_person`) are kept as published. The options mean "
        "nothing without the question: foilkit scores TOMATO with models that ask it (video "
        "LLMs, by option-letter probability) and refuses those that score texts alone.\n"
    )

    def _split_generators(
        self, dl_manager: datasets.DownloadManager
    ) -> list[datasets.SplitGenerator]:
        chosen = self.config.reasoning_type
        names = tuple(REASONING_TYPES) if chosen is None else (chosen,)
        files = {
            name: AnnotationFile(
                f"data/{REASONING_TYPES[name]}.json", f"data/{REASONING_TYPES[name]}.json"
            )
            for name in names
        }
        paths = fetch(SOURCE, files, dl_manager, self.config.annotations)
        return one_test_split(files=paths)

    def _rows(self, files: Mapping[str, Path]) -> Iterator[dict[str, Any]]:
        for reasoning_type, path in files.items():
            for question_id, record in read_keyed_json(path):
                yield question_row(record, reasoning_type, question_id, file=path)


def question_prompt(question: str, options: Sequence[str], frames: int = PROMPT_FRAMES) -> str:
    """The official prompt (``construct_prompt``) asking ``question`` with ``options`` lettered
    A, B, ... in the order given, for a model shown ``frames`` frames."""
    return PROMPT.format(frames=frames, question=question, options=repr(lettered(options)))


def question_row(
    record: Mapping[str, Any], reasoning_type: str, question_id: str, *, file: Path
) -> dict[str, Any]:
    """The canonical row of one published question of ``reasoning_type``."""
    row = question_id
    require(
        record,
        ("question", "options", "answer", "key", "demonstration_type", "motion_type", "variation"),
        file=file,
        row=row,
        types={"answer": int, "variation": dict, "motion_type": str},
    )
    question = text(record["question"], file=file, row=row, field="question")
    options = texts(record["options"], file=file, row=row, field="options")
    labels = [option_letter(index) for index in range(len(options))]
    asked = question_columns(
        question,
        question_prompt(question, options),
        options,
        labels,
        record["answer"],
        needs_question=True,
        file=file,
        row=row,
    )
    demonstration = record["demonstration_type"]
    if demonstration not in DEMONSTRATION_TYPES:
        raise AnnotationError(
            file,
            row,
            f"field 'demonstration_type' is {demonstration!r}, not one of {DEMONSTRATION_TYPES}",
        )
    key = relative_path(
        text(record["key"], file=file, row=row, field="key"), file=file, row=row, field="key"
    )
    flags = {}
    for variation in VARIATIONS:
        value = record["variation"].get(variation)
        if value not in (0, 1) or isinstance(value, float):
            raise AnnotationError(
                file, row, f"field 'variation.{variation}' is {value!r}, not 0 or 1"
            )
        flags[variation] = bool(value)
    return {
        "id": f"{reasoning_type}-{question_id}",
        "video_path": f"{demonstration}/{key}.mp4",
        **asked,
        "reasoning_type": reasoning_type,
        "demonstration_type": demonstration,
        "motion_type": record["motion_type"],
        **flags,
        "question_id": question_id,
        "video_key": key,
        "video_source_url": str(record.get("video_source_url") or ""),
        "note": str(record.get("note") or ""),
    }
