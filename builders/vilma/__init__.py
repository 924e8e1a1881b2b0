"""ViLMA (Kesen et al.): main caption + foils and a proficiency caption + foils per video window.

Upstream: one JSON object per subtest keyed by example id (``data/<file>.json``), with the video
source (``dataset``, ``youtube_id``/``video_file``), the window (``start_time``, ``end_time``,
``time_unit``), the main test (``caption``, ``foils``), the proficiency test
(``proficiency.caption``, ``proficiency.foils``, ``proficiency.human`` votes) and the MTurk
validation votes of the main test (``mturk``: how many of three annotators chose the caption,
the foil, or neither).

Validity filter (paper, §3.7 and Table 5): a row is kept when at least two of three MTurk
annotators chose the caption (``mturk.caption >= 2``) and the proficiency item passed the
authors' manual check (``proficiency.human.caption == 1``). On by default
(``validity_filter=False`` keeps every row, with the ``valid`` column saying which pass).

Time units: the Action Counting Easy file (``counting-easy-spelled-pts``) gives its window in
``time_unit="pts"``, which is in fact a *frame index* of the QUVA videos normalised to 30 fps
(the authors' ``convert2seconds.py`` divides by 30; the ``-sec`` sibling holds the same ids with
``start/30`` rounded to 4 decimals). The builder converts it to seconds exactly (``frame / 30``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from foilkit.builders.spec import Benchmark, CardMetadata, HubTask, MetricSpec, pairwise_inputs
from foilkit.builders.vilma.perplexity import REDUCTIONS
from foilkit.builders.vilma.protocols import PROTOCOLS


class Subtest(NamedTuple):
    test: str
    file: str  # upstream file stem
    paper_name: str  # "Test / Subtest" as the paper's tables print it
    paper_instances: int  # Table 5 "#Inst."
    paper_valid: int  # Table 5 "#Both Valid." (main test and proficiency valid)


SUBTESTS: dict[str, Subtest] = {
    "action_counting_easy": Subtest(
        "action_counting", "counting-easy-spelled-pts", "Action Counting / Easy", 959, 757
    ),
    "action_counting_difficult": Subtest(
        "action_counting", "counting-hard-spelled-sec", "Action Counting / Difficult", 895, 675
    ),
    "situation_awareness_action_replacement": Subtest(
        "situation_awareness",
        "SRL_Action_Replacement_Top_1000",
        "Situation Awareness / Action Replacement",
        1000,
        704,
    ),
    "situation_awareness_actor_swapping": Subtest(
        "situation_awareness",
        "SRL_Actor_Swapping",
        "Situation Awareness / Actor Swapping",
        452,
        207,
    ),
    "change_of_state_action": Subtest(
        "change_of_state", "change-state-action", "Change of State / Action", 624, 314
    ),
    "change_of_state_pre_state": Subtest(
        "change_of_state", "change-state-prestate", "Change of State / Pre-State", 624, 194
    ),
    "change_of_state_post_state": Subtest(
        "change_of_state", "change-state-poststate", "Change of State / Post-State", 624, 254
    ),
    "change_of_state_reverse": Subtest(
        "change_of_state", "change-state-inverse", "Change of State / Reverse", 624, 236
    ),
    "rare_actions_action_replacement": Subtest(
        "rare_actions", "rare-actions-verb-foils", "Rare Actions / Action Replacement", 978, 751
    ),
    "rare_actions_object_replacement": Subtest(
        "rare_actions", "rare-actions-noun-foils", "Rare Actions / Object Replacement", 972, 692
    ),
    "spatial_relations_prepositions": Subtest(
        "spatial_relations", "relations", "Spatial Relations / Prepositions", 708, 393
    ),
}

TESTS: tuple[str, ...] = tuple(dict.fromkeys(subtest.test for subtest in SUBTESTS.values()))


def _proficiency(rows: Mapping[str, Any]) -> dict[str, Any]:
    """ViLMA's pairs, with each item's subtest (the ``macro_*`` results average the subtests)."""
    return {
        **pairwise_inputs(rows),
        "proficiency_caption_scores": list(rows["proficiency_caption_score"]),
        "proficiency_foil_scores": [list(f) for f in rows["proficiency_foil_scores"]],
        "groups": list(rows["subtest"]),
    }


#: ViLMA's tests whose Table 2 column is the mean of their subtests; the others pool their items
#: (random baseline, Situation Awareness T: 37.96 is the item-weighted mean of 34.42 over 704 items
#: and 50.00 over 207, not their mean 42.2; CLIP, Change of State T: 55.2 is the subtest mean).
SUBTEST_MEAN_TESTS = frozenset({"change_of_state"})

#: A random guess: 50% on the proficiency test and on the main test (one foil each), 25% on both.
VILMA_CHANCE = {"P": 0.5, "T": 0.5, "P+T": 0.25}

POOLED = MetricSpec(
    "proficiency_combined_accuracy",
    _proficiency,
    {"P": "proficiency_accuracy", "T": "main_accuracy", "P+T": "combined_accuracy"},
    {"ties": "first"},  # ViLMA's argmax over [caption, foils]
    chance=VILMA_CHANCE,
)

SUBTEST_MEAN = MetricSpec(
    "proficiency_combined_accuracy",
    _proficiency,
    {
        "P": "macro_proficiency_accuracy",
        "T": "macro_main_accuracy",
        "P+T": "macro_combined_accuracy",
    },
    {"ties": "first"},
    chance=VILMA_CHANCE,
)


#: The documented leaderboard task ids (``foilkit.builders.hub``'s eval.yaml; values are
#: percentages, higher is better): changing one breaks every leaderboard.
HUB_TASKS = (
    *(
        HubTask(
            test,
            test,
            f"ViLMA {test.replace('_', ' ')}: combined proficiency and main test accuracy (P+T)",
            (
                (
                    test,
                    None,
                    (SUBTEST_MEAN if test in SUBTEST_MEAN_TESTS else POOLED).columns["P+T"],
                ),
            ),
        )
        for test in TESTS
    ),
    HubTask(
        "average",
        "all",
        "ViLMA: mean P+T over the five tests (Table 2 Avg.)",
        mean_of=TESTS,
    ),
)

#: The dataset card's Hub metadata: task categories, the datasets its videos come from, the paper.
CARD = CardMetadata(
    ("zero-shot-classification", "video-text-to-text"),
    (
        "extended|VidSitu",
        "extended|COIN",
        "extended|YouCook2",
        "extended|RareAct",
        "extended|QUVA",
        "extended|STAR",
        "extended|Something-Something-v2",
    ),
    "https://arxiv.org/abs/2311.07022",
)

BENCHMARK = Benchmark.of_builder(
    "vilma",
    all_configs=TESTS,
    metrics=lambda config: (SUBTEST_MEAN if config in SUBTEST_MEAN_TESTS else POOLED,),
    group_column="subtest",
    group_label="subtest",
    paper_table="Table 2: proficiency (P), main test (T) and combined (P+T) accuracy per subtest",
    summary="Avg.",
    protocols=PROTOCOLS,
    reductions=REDUCTIONS,
    card=CARD,
    hub_tasks=HUB_TASKS,
    hub_repo="foilkit/vilma",
    video_layout=(
        "`<video_root>/<source_dataset>/<name>`, one folder per source dataset as "
        "`source_dataset` spells it. `<name>` is `<youtube_id>.mp4` when the row has a YouTube id "
        "(VidSitu, COIN, YouCook2, RareAct: the full YouTube video; the window is in its time "
        "line), otherwise `video_file` (QUVA: `video_file` as given, the 30 fps normalised "
        "videos; STAR: `<video_file>.mp4`; Something-Something v2: `<video_file>.webm`, as that "
        "dataset ships them). `video_path` holds the relative path of every row."
    ),
)
