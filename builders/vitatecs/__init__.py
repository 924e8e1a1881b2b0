"""VITATECS (Li et al.): video, caption and one counterfactual that differs in one temporal aspect.

Upstream: one JSON Lines file per aspect (``data/<Aspect>.jsonl``; the earlier OPT-175B
generation in ``data_opt/``), each line ``{src_dataset, video_name, caption, counterfactual,
aspect}``. A row's ``id`` is ``<aspect>-<line number>``, stable across versions of this builder.
"""

from __future__ import annotations

from foilkit.builders.spec import PAIRWISE_STRICT, Benchmark, CardMetadata, aspect_tasks
from foilkit.builders.vitatecs.answers import JUDGES, PARSERS, PROMPTS
from foilkit.builders.vitatecs.protocols import PROTOCOLS

ASPECTS = ("direction", "intensity", "sequence", "localization", "compositionality", "type")

#: What ``foilkit evaluate vitatecs`` computes: accuracy per aspect, a tie counting as wrong.
#: The documented leaderboard task ids (``foilkit.builders.hub``'s eval.yaml; values are
#: percentages, higher is better): changing one breaks every leaderboard.
HUB_TASKS = aspect_tasks(ASPECTS, "VITATECS")

#: The dataset card's Hub metadata: task categories, the datasets its videos come from, the paper.
CARD = CardMetadata(
    ("zero-shot-classification", "video-text-to-text"),
    ("extended|MSR-VTT", "extended|VATEX"),
    "https://arxiv.org/abs/2311.17404",
)

BENCHMARK = Benchmark.of_builder(
    "vitatecs",
    all_configs=("all",),
    metrics=lambda config: (PAIRWISE_STRICT,),
    group_column="aspect",
    group_label="aspect",
    paper_table="Table 3: accuracy (%) per temporal aspect",
    protocols=PROTOCOLS,
    prompts=PROMPTS,
    parsers=PARSERS,
    judges=JUDGES,
    card=CARD,
    hub_tasks=HUB_TASKS,
    hub_repo="foilkit/vitatecs",
    video_layout=(
        "As the VITATECS README lays it out: `<video_root>/MSRVTT/<video_name>` for MSR-VTT "
        "videos (e.g. `MSRVTT/video9770.mp4`) and `<video_root>/VATEX/<video_name>` for VATEX "
        "clips (e.g. `VATEX/i0ccSYMl0vo_000027_000037.mp4`, the 10-second clip cut from the "
        "YouTube video). `video_path` holds that relative path."
    ),
)
