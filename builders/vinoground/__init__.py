"""Vinoground (Zhang et al. 2024): 500 pairs of short videos whose captions swap two events.

Upstream: ``vinoground.csv`` in the Hub dataset repository ``HanSolo9682/Vinoground``, one row
per pair, read by the official scorers (``get_score_all.py``, ``eval/videoclip.py``) through the
columns ``index``, ``major`` (the pair's major category), ``minor`` (its minor categories, joined
by ``;``, possibly none), ``pos_cap`` and ``neg_cap``; other columns (the source clips) are not
read. Row ``i`` pairs video ``vinoground_videos/{i}_pos.mp4`` with ``pos_cap`` and
``vinoground_videos/{i}_neg.mp4`` with ``neg_cap`` (the layout of ``vinoground_videos.zip``), so a
row of the pair shape (:func:`foilkit.builders.schema.video_foil_features`) holds the positive
video and caption as ``video`` / ``caption``, the negative ones as ``foil_video`` / ``foils[0]``.
A row's ``id`` is its ``index``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from foilkit.builders.spec import Benchmark, HubTask, MetricSpec
from foilkit.builders.vinoground.answers import PARSERS, PROMPTS, QUESTIONS
from foilkit.builders.vinoground.protocols import PROTOCOLS


def _blocks(rows: Mapping[str, Any], video: str, foil_video: str) -> list[list[list[float]]]:
    """Each pair's 2x2 block ``[[s(v0, c0), s(v0, c1)], [s(v1, c0), s(v1, c1)]]`` from the
    scores of the columns prefixed ``video`` (v0) and ``foil_video`` (v1)."""
    return [
        [[caption, foils[0]], [foil_video_caption, foil_video_foils[0]]]
        for caption, foils, foil_video_caption, foil_video_foils in zip(
            rows[f"{video}caption_score"],
            rows[f"{video}foil_scores"],
            rows[f"{foil_video}caption_score"],
            rows[f"{foil_video}foil_scores"],
            strict=True,
        )
    ]


def pair_inputs(rows: Mapping[str, Any]) -> dict[str, Any]:
    """Each pair's 2x2 block from the scorer's columns: the positive video's caption and foil
    scores, the negative video's. A video LLM asked Vinoground's video-score question adds its
    own block for the video score (``video_question_*``: each caption's answer naming the
    positive video, ``foil_video_question_*``: naming the negative one)."""
    inputs = {"pair_scores": _blocks(rows, "", "foil_video_")}
    if "video_question_caption_score" in rows:
        inputs["video_pair_scores"] = _blocks(rows, "video_question_", "foil_video_question_")
    return inputs


#: Vinoground's text, video and group scores, a tie counting as wrong (the official code's `>`).
WINOGROUND_SCORE = MetricSpec(
    "winoground_score",
    pair_inputs,
    {"text": "text_score", "video": "video_score", "group": "group_score"},
    {"ties": "strict"},
    # random scores: each of the two comparisons of a score holds half the time (1/4); all four
    # hold in 4 of the 24 orders of the four scores (1/6, Winoground's chance group score)
    chance={"text": 0.25, "video": 0.25, "group": 1 / 6},
)

#: The documented leaderboard task ids (``foilkit.builders.hub``'s eval.yaml; values are
#: percentages, higher is better): changing one breaks every leaderboard.
HUB_TASKS = tuple(
    HubTask(
        f"{score}_score",
        "all",
        f"Vinoground {score} score over the 500 pairs (a tie counts as wrong)",
        (("all", None, WINOGROUND_SCORE.columns[score]),),
    )
    for score in ("text", "video", "group")
)

BENCHMARK = Benchmark.of_builder(
    "vinoground",
    all_configs=("all",),
    metrics=lambda config: (WINOGROUND_SCORE,),
    group_column="categories",
    group_label="category",
    paper_table="text, video and group scores (%), overall and per major and minor category",
    protocols=PROTOCOLS,
    parsers=PARSERS,
    answer_parsers={None: "vinoground"},  # get_score_all.py: the answer's first letter
    prompts=PROMPTS,
    questions=QUESTIONS,
    hub_tasks=HUB_TASKS,
    hub_repo="foilkit/vinoground",
    video_layout=(
        "As `vinoground_videos.zip` unpacks (the Hub repository `HanSolo9682/Vinoground`): "
        "`<video_root>/vinoground_videos/<index>_pos.mp4` (the positive video, `video_path`) and "
        "`<video_root>/vinoground_videos/<index>_neg.mp4` (the negative one, `foil_video_path`). "
        "The concatenated videos of `vinoground_videos_concated.zip` are not needed: a video "
        "LLM's video-score question is asked about a joined video foilkit builds from the two "
        "clips (the first, 2 s of black frames, the second)."
    ),
)
