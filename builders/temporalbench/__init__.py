"""TemporalBench (Cai et al.): binary questions, each a caption against a negative caption.

Upstream: the gated Hub dataset ``microsoft/TemporalBench``; its ``temporalbench_short_qa.json``
is a JSON list of questions ``{idx, video_name, question, GT, dataset, category}`` (the fields
``get_qa_acc.py`` and lmms-eval's ``temporalbench`` task read). Each question is "Which caption
best describes this video?" over two options, ``A.`` and ``B.``, one true (``GT``); the other
is the negative caption. A row keeps the published options and letter (``options``, ``label``),
the caption (``options[label]``) and the negative as ``foils``. Several questions share a video:
TemporalBench's multiple binary accuracy counts a video right only when all its questions are.

Licence: the statements conflict (the GitHub README says MIT, the dataset card apache-2.0, the
gate research only, no redistribution), so foilkit keeps the strictest reading: an export stays
local (pushing it is refused, :attr:`foilkit.builders.spec.Benchmark.redistribution_forbidden`)
and never embeds the videos.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from foilkit.builders.spec import Benchmark, CardMetadata, HubTask, MetricSpec, pairwise_inputs
from foilkit.builders.temporalbench.answers import PROMPTS
from foilkit.builders.temporalbench.protocols import PROTOCOLS

REDISTRIBUTION = (
    "TemporalBench's licence statements conflict (GitHub README: MIT; dataset card: "
    "apache-2.0; the Hub gate: academic research only, no redistribution in part or in whole), "
    "so foilkit does not push its annotations or videos: keep the export local; every user gets "
    "the files from microsoft/TemporalBench after accepting its terms"
)


def _binary_questions(rows: Mapping[str, Any]) -> dict[str, Any]:
    """Each question's caption against its negative, with the video its question set is."""
    return {**pairwise_inputs(rows), "question_sets": list(rows["video_path"])}


#: ``get_qa_acc.py``: binary accuracy (a question is right when the answer is the true letter;
#: here when the caption outscores the negative, a tie counting wrong) and multiple binary
#: accuracy (a video is right when all its questions are), overall and per category.
BINARY_QA = MetricSpec(
    "pairwise_foil_accuracy",
    _binary_questions,
    {"binary accuracy": "accuracy", "multiple binary accuracy": "multiple_binary_accuracy"},
    {"ties": "strict"},
    chance={"binary accuracy": 0.5},
)

#: The documented leaderboard task ids (``foilkit.builders.hub``'s eval.yaml; values are
#: percentages, higher is better): changing one breaks every leaderboard.
HUB_TASKS = tuple(
    HubTask(
        task_id,
        "short_qa",
        f"TemporalBench short video QA: {label}",
        (("short_qa", None, key),),
    )
    for task_id, key, label in (
        ("binary_accuracy", "accuracy", "binary accuracy"),
        (
            "multiple_binary_accuracy",
            "multiple_binary_accuracy",
            "multiple binary accuracy (a video counts when all its questions are right)",
        ),
    )
)

#: The dataset card's Hub metadata: task categories, the datasets its videos come from, the paper.
CARD = CardMetadata(
    ("zero-shot-classification", "video-text-to-text"),
    (
        "extended|ActivityNet-Captions",
        "extended|Charades",
        "extended|COIN",
        "extended|EgoExo4D",
        "extended|FineGym",
        "extended|Oops",
    ),
    "https://arxiv.org/abs/2410.10818",
)

BENCHMARK = Benchmark.of_builder(
    "temporalbench",
    all_configs=("short_qa",),
    metrics=lambda config: (BINARY_QA,),
    group_column="category",
    group_label="category",
    paper_table="short video QA: binary and multiple binary accuracy (%) per category",
    redistribution_forbidden=REDISTRIBUTION,
    protocols=PROTOCOLS,
    prompts=PROMPTS,
    card=CARD,
    hub_tasks=HUB_TASKS,
    video_layout=(
        "As the Hub repository unpacks (`short_video.zip`): `<video_root>/<video_name>`, e.g. "
        "`short_video/Charades/EEVD3_start_11.4_end_16.9.mp4`; `video_path` is `video_name`. "
        "The video root is the folder the repository was cloned and unzipped into."
    ),
)
