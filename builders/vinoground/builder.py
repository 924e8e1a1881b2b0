"""Vinoground's ``datasets`` builder: configs, features, rows (its spec: ``__init__.py``)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
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
from foilkit.builders.vinoground import BENCHMARK
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
    VIDEO_LAYOUT = BENCHMARK.video_layout

    CARD_NOTES = (
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
