"""TOMATO (Shangguan et al., 2024): multiple-choice questions on visual temporal reasoning.

Upstream (``yale-nlp/TOMATO``): ``data/<reasoning type>.json`` for six reasoning types
(``count``, ``direction``, ``rotation``, ``shape&trend``, ``velocity&frequency``,
``visual_cues``), each keyed by question id (``"0"``, ``"1"``, ... per file) with ``question``,
``options`` (texts), ``answer`` (the true option's index), ``key`` (the video, found at
``videos/<demonstration_type>/<key>.mp4``), ``demonstration_type`` (``human``, ``object``,
``simulated``), ``motion_type``, ``variation`` (``counterfactual``, ``composite``, ``zoom``,
``first_person`` flags), ``video_source_url`` and ``note``.

A row is one question: ``id`` = ``<reasoning type>-<question id>`` (the ids restart in every
file); ``options`` in the published order, ``option_labels`` the letters the official prompt
gives them (``A``, ``B``, ...), ``label`` the true one, ``caption = options[label]`` and ``foils``
the others (``caption_answer`` / ``foil_answers`` their letters); ``prompt`` is what the official
``construct_prompt`` (``src/generate_lib/construct_prompt.py``) asks a model with 16 frames, the
main table's setting (:data:`PROMPT_FRAMES`). Options such as ``"2"`` or ``"Left."`` mean nothing
without the question (``needs_question``): only a model that asks questions scores them.
"""

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
from foilkit.builders.spec import Benchmark, HubTask, MetricSpec, grouped_option_inputs
from foilkit.builders.tomato.answers import JUDGES, PARSERS
from foilkit.builders.tomato.protocols import PROTOCOLS
from foilkit.builders.tomato.source import SOURCE
from foilkit.metrics import CITATIONS

#: Reasoning type (config name and ``reasoning_type`` value) -> the upstream file's stem, in the
#: official ``config.json`` order. Names without ``&`` (as the authors' Hub copy names its splits)
#: so that they work as config names, result keys and Hub task ids.
REASONING_TYPES = {
    "count": "count",
    "direction": "direction",
    "rotation": "rotation",
    "shape_trend": "shape&trend",
    "velocity_frequency": "velocity&frequency",
    "visual_cues": "visual_cues",
}
#: Where each video was made (the official ``demonstration_types``; the videos' sub-folder).
DEMONSTRATION_TYPES = ("human", "object", "simulated")
#: The ``variation`` flags of a question's video (the paper's video edits).
VARIATIONS = ("counterfactual", "composite", "zoom", "first_person")
#: Frames the official prompt announces: ``get_categorized_score.py``'s ``NUM_FRAME`` (the main
#: table), also ``evaluate.py``'s default ``--total_frames``.
PROMPT_FRAMES = 16
#: The official prompt (``construct_prompt``), trailing spaces included; ``{options}`` is the
#: Python ``repr`` of the letter -> option dict (``index2ans``), as the f-string writes it.
PROMPT = (
    "You will be provided with {frames} separate frames uniformly sampled from a video, the "
    "frames are provided in chronological order of the video. Analyze these frames and provide "
    "the answer to the question about the video content. Answer the multiple-choice question "
    "about the video content. \n\n"
    "You must use these frames to answer the multiple-choice question; do not rely on any "
    "externel knowledge or commonsense. \n\n"
    "<question> \n{question} \n</question>\n\n"
    "<options> \n{options} \n</options>\n\n"
    "Even if the information in these separate frames is not enough to answer the question, "
    "PLEASE TRY YOUR BEST TO GUESS AN ANSWER WHICH YOU THINK WOULD BE THE MOST POSSIBLE ONE "
    "BASED ON THE QUESTION. \n\n"
    "DO NOT GENERATE ANSWER SUCH AS 'NOT POSSIBLE TO DETERMINE.' \n"
)

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

    def validate(self) -> None:
        super().validate()
        self.check_choice("reasoning_type", REASONING_TYPES, optional=True)


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
    VIDEO_LAYOUT = (
        "`<video_root>/<demonstration_type>/<key>.mp4`, the official `videos/` folder (e.g. "
        "`human/0209-03.mp4`, `object/0731-00.mp4`, `simulated/0000-00.mp4`): unzip the videos "
        "the TOMATO README links (Google Drive) and point the video root at the `videos` folder "
        "holding `human/`, `object/` and `simulated/`."
    )

    @classmethod
    def card_notes(cls, builders: Sequence[FoilkitBuilder]) -> str:
        return (
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
    lettered = {option_letter(index): option for index, option in enumerate(options)}
    return PROMPT.format(frames=frames, question=question, options=repr(lettered))


def option_letter(index: int) -> str:
    """The official letter of option ``index`` (``chr(65 + index)``)."""
    return chr(65 + index)


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


# --- what ``foilkit evaluate tomato`` computes ---------------------------------------------------


#: Option scores in published order, the true option, and each question's reasoning type and
#: demonstration type (the official categorized scores).
_choice_inputs = grouped_option_inputs("reasoning_type", "demonstration_type")


#: ``get_categorized_score.py``: accuracy over all questions (per model), per reasoning type and
#: per demonstration type, each the questions answered right over those asked: the report's rows
#: are the reasoning types and ``all``, its columns the accuracy and each demonstration type's
#: (on ``all``: the script's per-demonstration-type scores). A tie between the top options
#: counts as wrong: no single letter is the answer.
ACCURACY = MetricSpec(
    "multiple_choice_accuracy",
    _choice_inputs,
    {"accuracy": "accuracy", **{name: f"accuracy_{name}" for name in DEMONSTRATION_TYPES}},
    {"ties": "strict"},
    chance={},  # three to seven options: the result's ``chance`` is their mean 1/k
)

#: The documented leaderboard task ids (``foilkit.builders.hub``'s eval.yaml; values are
#: percentages, higher is better): changing one breaks every leaderboard.
#: per reasoning type (its own config, or its group of ``all``) and over all questions
HUB_TASKS = (
    *(
        HubTask(
            name,
            name,
            f"TOMATO {REASONING_TYPES[name]}: multiple-choice accuracy (a tie counts as wrong)",
            ((name, None, "accuracy"), ("all", name, "accuracy")),
        )
        for name in REASONING_TYPES
    ),
    HubTask(
        "overall",
        "all",
        "TOMATO: multiple-choice accuracy over all 1,484 questions",
        (("all", None, "accuracy"),),
    ),
)

BENCHMARK = Benchmark.of_builder(
    "tomato",
    Tomato,
    all_configs=("all",),
    metrics=lambda config: (ACCURACY,),
    group_column="reasoning_type",
    group_label="reasoning type",
    paper_table="main results: accuracy (%) per reasoning type and over all questions",
    questions_only=("TOMATO's counts and directions",),
    protocols=PROTOCOLS,
    parsers=PARSERS,
    judges=JUDGES,
    answer_parsers={None: "tomato"},  # parse_result.py pre_parser
    hub_tasks=HUB_TASKS,
    hub_repo="foilkit/tomato",
)
