"""TempCompass (Liu et al., 2024): temporal questions on videos and their conflicting copies.

Upstream (``llyx97/TempCompass``): ``questions/<task>.json`` per task type (``multi-choice``,
``yes_no``, ``caption_matching``, ``captioning``), each keyed by video id, then by temporal aspect
(``action``, ``speed``, ``direction``, ``order``, ``attribute_change``), each a list of
``{question, answer}``; ``meta_info.json`` gives each video's fine-grained dimension per aspect
(``eval_dim.<aspect>.type``; ``order`` has none, the official statistics call it ``order``).

A row is one question: ``id`` = ``<video id>-<aspect>-<position in the list>``; ``question`` and
``answer`` as published; ``options`` the option texts in the published order, ``option_labels``
how an answer names each (``A``; ``Caption A`` / ``Sentence A`` / ``Option 1``; ``yes`` /
``no``), ``label`` the true one, ``caption = options[label]`` and ``foils`` the others
(``caption_answer`` / ``foil_answers`` their labels); ``prompt`` is what the official inference
(``run_video_llava/inference_dataset.py``) sends a video LLM: the question and its task type's
answer prompt (``builder.ANSWER_PROMPTS``). ``judge_question`` / ``judge_answer`` are what the
official LLM judge is shown (:mod:`foilkit.scorers.judge`): the row's own question and answer,
and for captioning the multi-choice question the judge answers from the generated caption
(``eval_captioning.py``: ``mc_questions[video][aspect][0]``, the video's first multi-choice
question of the same aspect) with its answer. A video LLM asked ``prompt`` scores each option by its
label as the answer (:mod:`foilkit.scorers.adapters.video_llm`); a dual encoder compares the
option texts with the video. Yes/no options mean nothing without their question
(``needs_question``): only a model that asks questions scores them.
"""

from __future__ import annotations

from foilkit.builders.spec import Benchmark, HubTask, MetricSpec, grouped_option_inputs
from foilkit.builders.tempcompass.answers import JUDGES, PARSERS
from foilkit.builders.tempcompass.protocols import PROTOCOLS

ASPECTS = ("action", "speed", "direction", "order", "attribute_change")

#: Task types ``foilkit evaluate`` scores without an LLM judge; captioning needs one.
JUDGE_FREE = ("multi_choice", "yes_no", "caption_matching")

#: Option scores in published order, the true option, each question's aspect and fine-grained
#: dimension (the official per-aspect and per-dimension statistics).
_choice_inputs = grouped_option_inputs("aspect", "dimension")


def accuracy(config: str) -> MetricSpec:
    """The official statistics (``print_result``) of task type ``config``: accuracy over all
    questions (``avg``), per aspect and per fine-grained dimension; a tie between the top options
    counts as wrong, as an answer the rules cannot match does under ``--disable_llm``."""
    return MetricSpec(
        "multiple_choice_accuracy",
        _choice_inputs,
        {"accuracy": "accuracy"},
        {"ties": "strict"},
        # two options each; multi-choice and captioning mix three and four (no one ``chance``)
        chance={} if config in ("multi_choice", "captioning") else {"accuracy": 0.5},
    )


#: The documented leaderboard task ids (``foilkit.builders.hub``'s eval.yaml; values are
#: percentages, higher is better): changing one breaks every leaderboard.
#: per judge-free task type: its accuracy over all questions (the official "avg") and per aspect
HUB_TASKS = tuple(
    task
    for config in JUDGE_FREE
    for task in (
        HubTask(
            config,
            config,
            f"TempCompass {config.replace('_', ' ')}: accuracy over all questions",
            ((config, None, "accuracy"),),
        ),
        *(
            HubTask(
                f"{config}_{aspect}",
                config,
                f"TempCompass {config.replace('_', ' ')}: accuracy on the "
                f"{aspect.replace('_', ' ')} aspect",
                ((config, aspect, "accuracy"),),
            )
            for aspect in ASPECTS
        ),
    )
)

BENCHMARK = Benchmark.of_builder(
    "tempcompass",
    all_configs=JUDGE_FREE,
    metrics=lambda config: (accuracy(config),),
    group_column="aspect",
    group_label="aspect",
    paper_table="Tables 2-4: accuracy (%) per temporal aspect, per task type",
    judged={
        "captioning": "TempCompass captioning is scored by an LLM judge (eval_captioning.py: "
        "gpt-3.5-turbo-1106 answers the video's multi-choice question from the generated "
        "caption): generate captions with --mode generate and configure the judge with "
        "--judge-model NAME (--judge-base-url URL, --judge-api-key-env VAR); or choose "
        "multi_choice, yes_no or caption_matching (--config all evaluates those three)"
    },
    questions_only=("TempCompass' yes/no", "--config caption_matching"),
    protocols=PROTOCOLS,
    parsers=PARSERS,
    judges=JUDGES,
    answer_parsers={
        "multi_choice": "tempcompass_multi_choice",  # eval_multi-choice.py
        "yes_no": "tempcompass_yes_no",  # eval_yes_no.py
        "caption_matching": "tempcompass_caption_matching",  # eval_caption_matching.py
        "captioning": "tempcompass_captioning",  # eval_captioning.py: its LLM judge alone
    },
    hub_tasks=HUB_TASKS,
    hub_repo="foilkit/tempcompass",
    video_layout=(
        "`<video_root>/<video_id>.mp4`, the official `videos/` folder (e.g. `1034419625.mp4`, "
        "`1034419625_reverse.mp4`, `1021488277_concat_0.mp4`): unzip the videos of the Hub "
        "dataset `lmms-lab/TempCompass` (or the Google Drive copy the TempCompass README links) "
        "so that the mp4 files lie directly under the root."
    ),
)
