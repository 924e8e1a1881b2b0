"""TempCompass's ``datasets`` builder: configs, features, rows (its spec: ``__init__.py``)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
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
)
from foilkit.builders.base import FoilkitBuilder, FoilkitConfig, configs_per, one_test_split
from foilkit.builders.schema import (
    QUESTION_FEATURES,
    TEXT,
    canonical_features,
    question_columns,
)
from foilkit.builders.tempcompass import ASPECTS, BENCHMARK
from foilkit.builders.tempcompass.source import SOURCE
from foilkit.metrics import CITATIONS

#: Task type (config name) -> the upstream file's stem.
TASK_FILES = {
    "multi_choice": "multi-choice",
    "yes_no": "yes_no",
    "caption_matching": "caption_matching",
    "captioning": "captioning",
}

#: What the official inference appends to each task type's question (``answer_prompt``).
ANSWER_PROMPTS = {
    "multi_choice": "\nPlease directly give the best option:",
    "yes_no": "\nPlease answer yes or no:",
    "caption_matching": "\nPlease directly give the best option:",
    "captioning": "",  # the question already ends with "Generated Caption:"
}

#: Fine-grained dimension as ``meta_info.json`` names it -> the ``dimension`` column's value
#: (a result key's suffix), in the official statistics' order.
DIMENSIONS = {
    "fine-grained action": "fine_grained_action",
    "coarse-grained action": "coarse_grained_action",
    "object motion": "object_motion",
    "camera motion": "camera_motion",
    "absolute speed": "absolute_speed",
    "relative speed": "relative_speed",
    "order": "order",
    "color & light change": "color_light_change",
    "size & shape change": "size_shape_change",
    "combined change": "combined_change",
    "other change": "other_change",
}

#: The questions the captioning judge answers from a caption (``eval_captioning.py``).
MC_QUESTIONS = "questions/multi-choice.json"

META_INFO = "meta_info.json"

FEATURES = canonical_features(
    **QUESTION_FEATURES,
    answer=TEXT,
    judge_question=TEXT,
    judge_answer=TEXT,
    task_type=TEXT,
    aspect=TEXT,
    dimension=TEXT,
    video_id=TEXT,
)


@dataclass
class TempCompassConfig(FoilkitConfig):
    """One task type of TempCompass (all five aspects).

    Attributes:
        task_type: one of :data:`TASK_FILES`.
    """

    task_type: str = "multi_choice"
    CHOICES = {"task_type": TASK_FILES}


class TempCompass(FoilkitBuilder):
    """TempCompass: one config per task type; a single ``test`` split."""

    BUILDER_CONFIG_CLASS = TempCompassConfig
    BUILDER_CONFIGS: ClassVar[list[TempCompassConfig]] = configs_per(
        TempCompassConfig,
        "task_type",
        {task: f"TempCompass, {task.replace('_', ' ')}" for task in TASK_FILES},
    )
    DEFAULT_CONFIG_NAME = "multi_choice"
    SOURCE = SOURCE
    FEATURES = FEATURES
    PRETTY_NAME = "TempCompass"
    DESCRIPTION = (
        "TempCompass: do video LLMs really understand videos? 410 videos (raw clips and their "
        "reversed, speed-changed or concatenated 'conflicting' copies), questioned on five "
        "temporal aspects (action, speed, direction, order, attribute change) in four task "
        "types: multi-choice QA, yes/no QA, caption matching and caption generation."
    )
    CITATION = CITATIONS["tempcompass"]
    VIDEO_LAYOUT = BENCHMARK.video_layout

    CARD_NOTES = (
        "### Questions, options and scoring\n\n"
        "One row per published question. `options` and `option_labels` keep the published "
        "order; `prompt` is the question with the answer prompt the official inference "
        "appends for its task type. `aspect` and `dimension` (from `meta_info.json`) are the "
        "groups of the official statistics. `judge_question` / `judge_answer` are what the "
        "official LLM judge is shown: the row's question and answer, and for captioning the "
        "video's first multi-choice question of the same aspect, which the judge "
        "(gpt-3.5-turbo-1106 in `eval_captioning.py`) answers from the generated caption. "
        "Captioning is evaluated only with such a judge configured (`--mode generate "
        "--judge-model NAME`).\n"
    )

    def _split_generators(
        self, dl_manager: datasets.DownloadManager
    ) -> list[datasets.SplitGenerator]:
        stem = TASK_FILES[self.config.task_type]
        files = {
            "questions": AnnotationFile(f"questions/{stem}.json", f"questions/{stem}.json"),
            "meta_info": AnnotationFile(META_INFO, META_INFO),
        }
        if self.config.task_type == "captioning":
            files["mc_questions"] = AnnotationFile(MC_QUESTIONS, MC_QUESTIONS)
        paths = fetch(SOURCE, files, dl_manager, self.config.annotations)
        return one_test_split(**paths)

    def _rows(
        self, questions: Path, meta_info: Path, mc_questions: Path | None = None
    ) -> Iterator[dict[str, Any]]:
        dimensions = read_dimensions(meta_info)
        task = self.config.task_type
        judged = None if mc_questions is None else dict(read_keyed_json(mc_questions))
        for video_id, by_aspect in read_keyed_json(questions):
            video_path = relative_path(
                f"{video_id}.mp4", file=questions, row=video_id, field="video id"
            )
            for aspect, items in by_aspect.items():
                row = f"{video_id}.{aspect}"
                if aspect not in ASPECTS:
                    raise AnnotationError(
                        questions, video_id, f"unknown aspect {aspect!r}; expected {ASPECTS}"
                    )
                if not isinstance(items, list):
                    raise AnnotationError(questions, row, "expected a list of questions")
                dimension = dimension_of(dimensions, video_id, aspect, file=meta_info)
                for position, item in enumerate(items):
                    where = f"{row}[{position}]"
                    row_id = f"{video_id}-{aspect}-{position}"
                    shown = question_row(item, task, file=questions, row=where, row_id=row_id)
                    if judged is not None:
                        shown |= captioning_judge(judged, video_id, aspect, file=mc_questions)
                    yield shown | {
                        "video_path": video_path,
                        "aspect": aspect,
                        "dimension": dimension,
                        "video_id": video_id,
                    }


def captioning_judge(
    mc_questions: Mapping[str, Any], video_id: str, aspect: str, *, file: Path | None
) -> dict[str, str]:
    """What ``eval_captioning.py``'s judge answers from a caption of ``video_id``'s ``aspect``:
    the first multi-choice question of that video and aspect, and its answer."""
    row = f"{video_id}.{aspect}[0]"
    items = (mc_questions.get(video_id) or {}).get(aspect) if file is not None else None
    if not isinstance(items, list) or not items or not isinstance(items[0], dict):
        raise AnnotationError(
            file or Path(MC_QUESTIONS),
            row,
            "no multi-choice question for this captioning row: the captioning judge answers "
            "the video's first multi-choice question of the same aspect",
        )
    require(items[0], ("question", "answer"), file=file, row=row)
    return {
        "judge_question": text(items[0]["question"], file=file, row=row, field="question"),
        "judge_answer": text(items[0]["answer"], file=file, row=row, field="answer"),
    }


def read_dimensions(path: Path) -> dict[str, Mapping[str, Any]]:
    """``meta_info.json``: video id -> its ``eval_dim`` (aspect -> ``{type, ...}`` or ``None``)."""
    out = {}
    for video_id, record in read_keyed_json(path):
        require(record, ("eval_dim",), file=path, row=video_id, types={"eval_dim": dict})
        out[video_id] = record["eval_dim"]
    return out


def dimension_of(
    dimensions: Mapping[str, Mapping[str, Any]], video_id: str, aspect: str, *, file: Path
) -> str:
    """The fine-grained dimension of ``video_id``'s ``aspect`` question, as the official
    statistics (``utils/eval_utils.py`` ``print_result``) find it: ``order`` for the order
    aspect, else ``meta_info[video]["eval_dim"][aspect]["type"]``."""
    if aspect == "order":
        return DIMENSIONS["order"]
    if video_id not in dimensions:
        raise AnnotationError(file, video_id, "the video has questions but no meta information")
    entry = dimensions[video_id].get(aspect)
    kind = entry.get("type") if isinstance(entry, Mapping) else None
    if kind not in DIMENSIONS:
        raise AnnotationError(
            file,
            video_id,
            f"field 'eval_dim.{aspect}.type' is {kind!r}, not one of {tuple(DIMENSIONS)}",
        )
    return DIMENSIONS[kind]


_CAPTION_LABEL = re.compile(r"^(Caption [A-Z]|Sentence [A-Z]|Option \d+): (.+)$")

_LETTERED = {
    # two published lines deviate: " D. away from the screen", "C.Both events happen ..."
    "multi_choice": re.compile(r"^\s*([A-Z])\.\s*(.+)$"),
    "captioning": re.compile(r"^Information ([A-Z]): (.+)$"),
}


def question_row(item: Any, task: str, *, file: Path, row: str, row_id: str) -> dict[str, Any]:
    """The canonical columns (``row_id`` as ``id``) of one published question of task type
    ``task``, without the video's."""
    if not isinstance(item, dict):
        raise AnnotationError(file, row, f"expected a JSON object, got {type(item).__name__}")
    require(item, ("question", "answer"), file=file, row=row)
    question = text(item["question"], file=file, row=row, field="question")
    answer = text(item["answer"], file=file, row=row, field="answer")
    if task == "yes_no":
        options, labels = ["yes", "no"], ["yes", "no"]
        if answer not in options:
            raise AnnotationError(file, row, f"field 'answer' is {answer!r}, not 'yes' or 'no'")
        label = options.index(answer)
    else:
        options, labels, label = _listed_options(question, answer, task, file=file, row=row)
    asked = question_columns(
        question,
        question + ANSWER_PROMPTS[task],
        options,
        labels,
        label,
        needs_question=task == "yes_no",
        file=file,
        row=row,
        options_field="question",  # the options are the question's lines
    )
    return {
        "id": row_id,
        **asked,
        "answer": answer,
        "judge_question": question,  # captioning: replaced by its multi-choice question
        "judge_answer": answer,
        "task_type": task,
    }


def _listed_options(
    question: str, answer: str, task: str, *, file: Path, row: str
) -> tuple[list[str], list[str], int]:
    """(option texts, their answer labels, the true one's index) of a question whose options
    follow its first line, one a line."""
    lines = question.split("\n")[1:]
    if task == "captioning":  # "... Information C: {...}\nGenerated Caption:"
        lines = [line for line in lines if line.startswith("Information ")]
    pattern = _CAPTION_LABEL if task == "caption_matching" else _LETTERED[task]
    options, labels = [], []
    for line in lines:
        match = pattern.match(line)
        if match is None:
            raise AnnotationError(
                file, row, f"field 'question' has an option line {line!r} of no known form"
            )
        labels.append(match.group(1))
        options.append(match.group(2))
    if task == "caption_matching":  # the answer is a whole option line (the official check_ans)
        matching = [i for i, line in enumerate(lines) if line == answer]
    else:  # "B. dunking a basketball": the letter names the option
        letter = answer.split(". ", 1)[0]
        matching = [i for i, name in enumerate(labels) if name == letter]
        if task == "multi_choice" and matching and lines[matching[0]] != answer:
            matching = []
    if len(matching) != 1:
        raise AnnotationError(
            file, row, f"field 'answer' {answer!r} names none of the options {labels}"
        )
    return options, labels, matching[0]
