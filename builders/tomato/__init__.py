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
main table's setting (``builder.PROMPT_FRAMES``). Options such as ``"2"`` or ``"Left."`` mean
nothing without the question (``needs_question``): only a model that asks questions scores them.
"""

from __future__ import annotations

from foilkit.builders.spec import Benchmark, HubTask, MetricSpec, grouped_option_inputs
from foilkit.builders.tomato.answers import JUDGES, PARSERS
from foilkit.builders.tomato.protocols import PROTOCOLS

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
    video_layout=(
        "`<video_root>/<demonstration_type>/<key>.mp4`, the official `videos/` folder (e.g. "
        "`human/0209-03.mp4`, `object/0731-00.mp4`, `simulated/0000-00.mp4`): unzip the videos "
        "the TOMATO README links (Google Drive) and point the video root at the `videos` folder "
        "holding `human/`, `object/` and `simulated/`."
    ),
)
