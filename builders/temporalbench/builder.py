"""TemporalBench's ``datasets`` builder: configs, features, rows (its spec: ``__init__.py``)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import datasets

from foilkit.builders.annotations import (
    AnnotationError,
    HubSource,
    fetch_hub,
    relative_path,
    require,
)
from foilkit.builders.base import FoilkitBuilder, FoilkitConfig, one_test_split
from foilkit.builders.schema import TEXT, TEXTS, canonical_features
from foilkit.builders.temporalbench import BENCHMARK
from foilkit.files import FileFormatError, read_text
from foilkit.metrics import CITATIONS

SHORT_QA = "temporalbench_short_qa.json"

LETTERS = ("A", "B")

#: A question as published: a header line, "A. <caption>", "B. <caption>", the instruction.
QUESTION = re.compile(
    r"^(?P<head>.*?)\nA\. (?P<A>.*?)\s*\nB\. (?P<B>.*?)\s*\n(?P<tail>[^\n]*)$", re.S
)

SOURCE = HubSource(
    repo="microsoft/TemporalBench",
    commit="main",
    licence="other",
    licence_note="Conflicting statements: the mu-cai/TemporalBench README says MIT, the Hub "
    "dataset card's metadata apache-2.0, and the Hub gate's terms restrict it to academic "
    "research (no commercial use) and forbid unauthorised distribution, publication or "
    "modification in part or in whole. foilkit follows the strictest: this export must not be "
    "redistributed (foilkit refuses to push it) and holds no video bytes.",
    gated=True,
)

FEATURES = canonical_features(
    question=TEXT,
    options=TEXTS,
    label=TEXT,
    category=TEXT,
    source_dataset=TEXT,
    video_name=TEXT,
)


@dataclass
class TemporalBenchConfig(FoilkitConfig):
    """TemporalBench's short-video binary questions (``short_qa``)."""


class TemporalBench(FoilkitBuilder):
    """TemporalBench: the ``short_qa`` config; a single ``test`` split."""

    BUILDER_CONFIG_CLASS = TemporalBenchConfig
    BUILDER_CONFIGS: ClassVar[list[TemporalBenchConfig]] = [
        TemporalBenchConfig(
            name="short_qa",
            description="TemporalBench short-video QA: binary caption-vs-negative questions",
        )
    ]
    DEFAULT_CONFIG_NAME = "short_qa"
    SOURCE = SOURCE
    FEATURES = FEATURES
    PRETTY_NAME = "TemporalBench"
    DESCRIPTION = (
        "TemporalBench: fine-grained temporal understanding. Each row is one binary question on "
        "a short video: its human-written caption against a negative caption that changes one "
        "fine-grained temporal detail (action order, frequency, type, motion magnitude or "
        "direction, effector, event order, other). A video has several questions."
    )
    CITATION = CITATIONS["temporalbench"]
    VIDEO_LAYOUT = BENCHMARK.video_layout

    def _split_generators(
        self, dl_manager: datasets.DownloadManager | None
    ) -> list[datasets.SplitGenerator]:
        (path,) = fetch_hub(SOURCE, (SHORT_QA,), self.config.annotations)
        return one_test_split(path=path)

    def _rows(self, path: Path) -> Iterator[dict[str, Any]]:
        first_row: dict[str, int] = {}  # idx -> the row that has it
        for row, record in _questions(path):
            question = question_row(record, file=path, row=row)
            first = first_row.setdefault(question["id"], row)
            if first != row:
                raise AnnotationError(
                    path,
                    row,
                    f"field 'idx' is {question['id']!r}, as in row {first}: an idx names one "
                    "question (the row's id); remove or rename one of them",
                )
            yield question

    CARD_NOTES = (
        "### Licence and redistribution\n\n"
        f"{SOURCE.licence_note} This export is for the person who built it: `foilkit build "
        "--push-to-hub` and `foilkit.builders.push_to_hub` refuse it, and it never embeds "
        "the videos (`embed_videos=True` is refused).\n\n"
        "### Questions\n\n"
        "Each row is one binary question of `temporalbench_short_qa.json`: `options` are its "
        "captions A and B as published, `label` the true letter (`GT`), `caption` the true "
        "one and `foils` the negative. `question` is the published prompt. The multiple "
        "binary accuracy counts a video (`video_path`) right only when all its questions "
        "are.\n"
    )


def _questions(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(1-based position, question)`` of a JSON list of questions."""
    try:
        content = read_text(path)
    except FileFormatError as error:
        raise AnnotationError(error.path, error.line, error.problem) from None
    try:
        data = json.loads(content)
    except json.JSONDecodeError as error:
        raise AnnotationError(
            path, f"line {error.lineno}", f"malformed JSON ({error.msg})"
        ) from None
    if not isinstance(data, list) or not data:
        raise AnnotationError(path, None, "expected a non-empty JSON list of questions")
    for number, record in enumerate(data, start=1):
        if not isinstance(record, Mapping):
            raise AnnotationError(path, number, f"expected a JSON object, got {record!r}")
        yield number, dict(record)


def question_row(record: Mapping[str, Any], *, file: str | Path, row: int) -> dict[str, Any]:
    """A canonical row from one published question (see the module docstring)."""
    fields = ("idx", "video_name", "question", "GT", "category")
    require(record, fields, file=file, row=row, types={name: str for name in fields})
    # get_qa_acc.py reads "dataset"; the dataset card's example shows "source_dataset"
    source = record.get("dataset", record.get("source_dataset"))
    if not isinstance(source, str) or not source:
        raise AnnotationError(file, row, "missing field 'dataset' (the source dataset's name)")
    label = record["GT"].strip()
    if label not in LETTERS:
        raise AnnotationError(file, row, f"field 'GT' is {record['GT']!r}, not 'A' or 'B'")
    match = QUESTION.match(record["question"])
    if match is None or not match["A"].strip() or not match["B"].strip():
        raise AnnotationError(
            file,
            row,
            "field 'question' does not hold two options on lines starting 'A. ' and 'B. ' "
            f"between a header and an instruction line: {record['question'][:120]!r}",
        )
    options = [match["A"].strip(), match["B"].strip()]
    true = LETTERS.index(label)
    video_name = relative_path(record["video_name"], file=file, row=row, field="video_name")
    return {
        "id": record["idx"],
        "video_path": video_name,
        "caption": options[true],
        "foils": [options[1 - true]],
        "start": None,
        "end": None,
        "reversed": False,
        "question": record["question"],
        "options": options,
        "label": label,
        "category": record["category"],
        "source_dataset": source,
        "video_name": record["video_name"],
    }
