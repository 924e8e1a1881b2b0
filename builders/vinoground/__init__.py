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

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import datasets

from foilkit.builders.annotations import (
    AnnotationError,
    AnnotationFile,
    HubSource,
    fetch,
    read_csv,
    text,
)
from foilkit.builders.base import FoilkitBuilder, FoilkitConfig, one_test_split
from foilkit.builders.schema import TEXT, TEXTS, video_foil_features
from foilkit.builders.spec import Benchmark, HubTask, MetricSpec
from foilkit.builders.vinoground.answers import PARSERS, PROMPTS, QUESTIONS
from foilkit.builders.vinoground.protocols import PROTOCOLS
from foilkit.metrics import CITATIONS

#: The major categories (each pair has one) and the minor ones (none, one or several).
MAJOR_CATEGORIES = ("action", "object", "viewpoint")
MINOR_CATEGORIES = ("interaction", "cyclical", "spatial", "contextual")
#: The columns the official code reads.
COLUMNS = ("index", "major", "minor", "pos_cap", "neg_cap")

SOURCE = HubSource(
    repo="HanSolo9682/Vinoground",
    # no commit of the Hub repository could be read offline: the branch, not pinned (the card
    # says so)
    commit="main",
    licence="unknown",
    licence_note=(
        "none stated in the GitHub repository Vinoground/Vinoground (its last commit removed "
        "the licence file); see the Hub dataset card. The videos come from YouTube and are "
        "distributed by the authors in vinoground_videos.zip."
    ),
)
ANNOTATIONS = {"pairs": AnnotationFile("vinoground.csv", "vinoground.csv")}

FEATURES = video_foil_features(major=TEXT, minor=TEXTS, categories=TEXTS)


@dataclass
class VinogroundConfig(FoilkitConfig):
    """Vinoground's 500 pairs (one config: the paper reports each category from the whole set)."""


class Vinoground(FoilkitBuilder):
    """Vinoground: config ``all``; a single ``test`` split of 500 pair rows."""

    BUILDER_CONFIG_CLASS = VinogroundConfig
    BUILDER_CONFIGS: ClassVar[list[VinogroundConfig]] = [
        VinogroundConfig(name="all", description="Vinoground, all 500 pairs"),
    ]
    DEFAULT_CONFIG_NAME = "all"
    SOURCE = SOURCE
    FEATURES = FEATURES
    PRETTY_NAME = "Vinoground"
    DESCRIPTION = (
        "Vinoground: 500 pairs of short natural videos and captions whose captions hold the same "
        "events in swapped order (a temporal counterfactual). Each row is a pair: the positive "
        "video and caption (video, caption), the negative video and caption (foil_video, "
        "foils[0]); a model is scored on the 2x2 matrix of the two videos against the two "
        "captions (text, video and group scores)."
    )
    CITATION = CITATIONS["vinoground"]
    VIDEO_LAYOUT = (
        "As `vinoground_videos.zip` unpacks (the Hub repository `HanSolo9682/Vinoground`): "
        "`<video_root>/vinoground_videos/<index>_pos.mp4` (the positive video, `video_path`) and "
        "`<video_root>/vinoground_videos/<index>_neg.mp4` (the negative one, `foil_video_path`). "
        "The concatenated videos of `vinoground_videos_concated.zip` are not needed: a video "
        "LLM's video-score question is asked about a joined video foilkit builds from the two "
        "clips (the first, 2 s of black frames, the second)."
    )

    @classmethod
    def card_notes(cls, builders: Sequence[FoilkitBuilder]) -> str:
        return (
            "Each row is a **pair**: besides the canonical columns it has `foil_video` and "
            "`foil_video_path` (the negative video, stored and attached like `video`) and its "
            "window `foil_start`/`foil_end`; `caption` belongs to `video`, `foils[0]` to "
            "`foil_video`. `major`, `minor` and `categories` (`[major, *minor]`) are the pair's "
            "categories. The annotation revision is the Hub repository's `main` branch at the time "
            "of the export."
        )

    def _split_generators(
        self, dl_manager: datasets.DownloadManager
    ) -> list[datasets.SplitGenerator]:
        paths = fetch(SOURCE, ANNOTATIONS, dl_manager, self.config.annotations)
        return one_test_split(path=paths["pairs"])

    def _rows(self, path: Path) -> Iterator[dict[str, Any]]:
        for position, (line, record) in enumerate(read_csv(path, COLUMNS)):
            yield _row(record, position, file=path, line=line)


def _row(record: Mapping[str, str], position: int, *, file: Path, line: int) -> dict[str, Any]:
    """One pair row from a CSV record; ``position`` is its place among the rows (from 0), which
    names its videos and must equal its ``index``, as the official scorers assume."""
    index = record["index"].strip()
    if index != str(position):
        raise AnnotationError(
            file,
            line,
            f"field 'index' is {record['index']!r}, but this is pair {position}: the official "
            "code names the videos and pairs the scores by position, so the rows must be "
            "numbered 0, 1, 2, ... in order",
        )
    major = record["major"].strip()
    if major not in MAJOR_CATEGORIES:
        raise AnnotationError(
            file, line, f"field 'major' is {record['major']!r}, not one of {MAJOR_CATEGORIES}"
        )
    # get_score_all.py: minor.split(';') without a trailing empty name
    minor = [name.strip() for name in record["minor"].split(";") if name.strip()]
    unknown = [name for name in minor if name not in MINOR_CATEGORIES]
    if unknown:
        raise AnnotationError(
            file,
            line,
            f"field 'minor' is {record['minor']!r}: {unknown[0]!r} is not one of "
            f"{MINOR_CATEGORIES} (several are joined by ';')",
        )
    return {
        "id": index,
        "video_path": f"vinoground_videos/{index}_pos.mp4",
        "caption": text(record["pos_cap"], file=file, row=line, field="pos_cap"),
        "foils": [text(record["neg_cap"], file=file, row=line, field="neg_cap")],
        "start": None,
        "end": None,
        "reversed": False,
        "foil_video_path": f"vinoground_videos/{index}_neg.mp4",
        "foil_start": None,
        "foil_end": None,
        "major": major,
        "minor": minor,
        "categories": [major, *minor],
    }


# --- what ``foilkit evaluate vinoground`` computes --------------------------------------------


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
    Vinoground,
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
)
