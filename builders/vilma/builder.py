"""Vilma's ``datasets`` builder: configs, features, rows (its spec: ``__init__.py``)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
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
from foilkit.builders.base import FoilkitBuilder, FoilkitConfig, one_test_split
from foilkit.builders.schema import COUNT, FLAG, TEXT, TEXTS, canonical_features
from foilkit.builders.vilma import BENCHMARK, SUBTESTS, TESTS
from foilkit.builders.vilma.source import SOURCE
from foilkit.metrics import CITATIONS

PTS_FPS = 30.0  # frame rate of the normalised QUVA videos the "pts" windows index

FEATURES = canonical_features(
    proficiency_caption=TEXT,
    proficiency_foils=TEXTS,
    test=TEXT,
    subtest=TEXT,
    source_dataset=TEXT,
    youtube_id=TEXT,
    video_file=TEXT,
    time_unit=TEXT,
    mturk_caption=COUNT,
    mturk_foil=COUNT,
    mturk_other=COUNT,
    proficiency_human_caption=COUNT,
    proficiency_human_foil=COUNT,
    proficiency_human_other=COUNT,
    valid=FLAG,
)

_REQUIRED = tuple(
    "dataset youtube_id video_file start_time end_time time_unit caption foils mturk mturk.caption "
    "mturk.foil mturk.other proficiency.caption proficiency.foils proficiency.human.caption "
    "proficiency.human.foil proficiency.human.other".split()
)

_TYPES = {
    "caption": str,
    "foils": list,
    "proficiency.caption": str,
    "proficiency.foils": list,
    "time_unit": str,
    "mturk.caption": int,
    "mturk.foil": int,
    "mturk.other": int,
    "proficiency.human.caption": int,
    "proficiency.human.foil": int,
    "proficiency.human.other": int,
}


@dataclass
class VilmaConfig(FoilkitConfig):
    """A ViLMA subtest, or a whole test (all its subtests).

    Attributes:
        subtests: the subtests this config holds (keys of :data:`SUBTESTS`).
        validity_filter: keep only rows that pass the paper's human validation (default ``True``).
    """

    subtests: tuple[str, ...] = ()
    validity_filter: bool = True

    def validate(self) -> None:
        super().validate()
        unknown = [name for name in self.subtests if name not in SUBTESTS]
        if unknown or not self.subtests:
            raise ValueError(
                f"subtests must be a non-empty selection of {tuple(SUBTESTS)}, got "
                f"{self.subtests!r}"
            )


def is_valid(record: dict[str, Any]) -> bool:
    """The paper's validity filter: >= 2 of 3 MTurk votes for the caption and a valid proficiency
    item."""
    return record["mturk"]["caption"] >= 2 and record["proficiency"]["human"]["caption"] == 1


class Vilma(FoilkitBuilder):
    """ViLMA: one config per subtest and one per test; a single ``test`` split."""

    BUILDER_CONFIG_CLASS = VilmaConfig
    BUILDER_CONFIGS: ClassVar[list[VilmaConfig]] = [
        *(
            VilmaConfig(name=name, subtests=(name,), description=f"ViLMA {s.paper_name}")
            for name, s in SUBTESTS.items()
        ),
        *(
            VilmaConfig(
                name=test,
                subtests=tuple(name for name, s in SUBTESTS.items() if s.test == test),
                description=f"ViLMA test {test}, all its subtests",
            )
            for test in TESTS
        ),
    ]
    DEFAULT_CONFIG_NAME = "action_counting"
    SOURCE = SOURCE
    FEATURES = FEATURES
    PRETTY_NAME = "ViLMA"
    DESCRIPTION = (
        "ViLMA: a zero-shot benchmark for linguistic and temporal grounding in video-language "
        "models. Each row pairs a video window with a caption and its foils (main test) and with "
        "a simpler proficiency caption and foils that probe a prerequisite skill."
    )
    CITATION = CITATIONS["vilma"]
    VIDEO_LAYOUT = BENCHMARK.video_layout

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: subtest -> (rows in the file, rows passing the validity filter)
        self.validity_counts: dict[str, tuple[int, int]] = {}

    def _split_generators(
        self, dl_manager: datasets.DownloadManager
    ) -> list[datasets.SplitGenerator]:
        files = {
            name: AnnotationFile(f"data/{SUBTESTS[name].file}.json", f"{SUBTESTS[name].file}.json")
            for name in self.config.subtests
        }
        paths = fetch(SOURCE, files, dl_manager, self.config.annotations)
        return one_test_split(files=paths)

    def _rows(self, files: dict[str, Path]) -> Iterator[dict[str, Any]]:
        for subtest, path in files.items():
            rows = [
                _row(record, subtest, file=path, key=key) for key, record in read_keyed_json(path)
            ]
            valid = [row for row in rows if row["valid"]]
            self.validity_counts[subtest] = (len(rows), len(valid))
            yield from valid if self.config.validity_filter else rows

    def build_summary(self) -> list[str]:
        verb = (
            "removed"
            if self.config.validity_filter
            else "would remove (validity_filter=False keeps them)"
        )
        return [
            *(
                f"{name}: the validity filter {verb} {total - valid} of {total} rows ({valid} "
                "valid)."
                for name, (total, valid) in self.validity_counts.items()
            ),
            *super().build_summary(),
        ]

    @classmethod
    def card_notes(cls, builders: Sequence[FoilkitBuilder]) -> str:
        counts = {
            name: count for builder in builders for name, count in builder.validity_counts.items()
        }
        filtered = all(builder.config.validity_filter for builder in builders)
        kept = (
            "keeps only valid rows"
            if filtered
            else "keeps every row (validity_filter=False); the `valid` column marks the valid ones"
        )
        lines = [
            "### Validity filter",
            "",
            (
                "A row is valid when at least two of the three MTurk annotators chose the caption "
                "(`mturk_caption >= 2`) and its proficiency item passed the authors' manual "
                "validation (`proficiency_human_caption == 1`), as in the paper's Table 5. This "
                f"export {kept}."
            ),
            "",
            (
                "| subtest | rows in the file | valid rows | paper Table 5 #Inst. "
                "| paper Table 5 #Both valid | removed by the filter |"
            ),
            "|---|---|---|---|---|---|",
        ]
        for name, (total, valid) in counts.items():
            paper = SUBTESTS[name]
            lines.append(
                f"| {paper.paper_name} | {total} | {valid} | {paper.paper_instances} "
                f"| {paper.paper_valid} | {total - valid if filtered else 0} |"
            )
        differing = [
            SUBTESTS[name].paper_name
            for name, (total, valid) in counts.items()
            if (total, valid) != (SUBTESTS[name].paper_instances, SUBTESTS[name].paper_valid)
        ]
        comparison = (
            "These counts match Table 5 for every subtest built here."
            if not differing
            else (
                f"These counts differ from Table 5 for {', '.join(differing)}: the annotation "
                "files are not the ones the paper counted (check `annotations` and the pinned "
                "commit)."
            )
        )
        lines += [
            "",
            comparison,
            (
                'The paper\'s wording ("judged only the caption as true") matches these votes '
                "because each annotator picks one of caption, foil or neither. In the pinned "
                "files one Spatial Relations item (id `127`) has no MTurk votes and is therefore "
                "invalid, and the four Change of State subtests share one proficiency item per "
                "video (Table 4 counts it once: 412 valid)."
            ),
            "",
            "### Time windows",
            "",
            (
                "`start`/`end` are seconds in the video's time line (`None`: from the start / to "
                "the end; the Spatial Relations rows use the whole Something-Something clip). "
                "Action Counting Easy comes from `counting-easy-spelled-pts.json`, whose "
                '`time_unit` "pts" is '
                f"a frame index of the QUVA videos normalised to {PTS_FPS:g} fps: the builder "
                f"converts it to seconds as `frame / {PTS_FPS:g}` (the authors' `-sec` file holds "
                "the same ids with that value rounded to 4 decimals). `time_unit` keeps the unit "
                "of the source file."
            ),
            "",
            (
                "Situation Awareness / Action Replacement has two foils for most items (MLM "
                "candidates); all are kept in `foils`."
            ),
        ]
        return "\n".join(lines)


def _seconds(value: Any, unit: str, field: str, *, file: Path, key: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AnnotationError(file, key, f"field {field!r} is not a number: {value!r}")
    if not (math.isfinite(value) and value >= 0):
        raise AnnotationError(file, key, f"field {field!r} is {value!r}; a window bound is >= 0")
    if unit == "sec":
        return float(value)
    if unit == "pts":
        return value / PTS_FPS
    raise AnnotationError(file, key, f"field 'time_unit' is {unit!r}; expected 'sec' or 'pts'")


def video_path(record: dict[str, Any], *, file: Path, key: str) -> str:
    """The row's video relative to the video root (layout in :attr:`Vilma.VIDEO_LAYOUT`)."""
    dataset = relative_path(str(record["dataset"]), file=file, row=key, field="dataset")
    youtube_id, video_file = record["youtube_id"], record["video_file"]
    if youtube_id:
        name = relative_path(str(youtube_id), file=file, row=key, field="youtube_id")
        return f"{dataset}/{name}.mp4"
    if not video_file:
        raise AnnotationError(
            file, key, "fields 'youtube_id' and 'video_file' are both empty: no video to find"
        )
    video_file = relative_path(str(video_file), file=file, row=key, field="video_file")
    if Path(video_file).suffix:
        return f"{dataset}/{video_file}"
    extension = ".webm" if dataset == "something-something-v2" else ".mp4"
    return f"{dataset}/{video_file}{extension}"


def _row(record: dict[str, Any], subtest: str, *, file: Path, key: str) -> dict[str, Any]:
    require(record, _REQUIRED, file=file, row=key, types=_TYPES)
    unit = record["time_unit"]
    proficiency = record["proficiency"]
    start = _seconds(record["start_time"], unit, "start_time", file=file, key=key)
    end = _seconds(record["end_time"], unit, "end_time", file=file, key=key)
    if start is not None and end is not None and end <= start:
        raise AnnotationError(
            file,
            key,
            f"field 'end_time' ({record['end_time']!r}) is not after field 'start_time' "
            f"({record['start_time']!r}): the window is empty",
        )
    return {
        "id": key,
        "video_path": video_path(record, file=file, key=key),
        "caption": text(record["caption"], file=file, row=key, field="caption"),
        "foils": texts(record["foils"], file=file, row=key, field="foils"),
        "start": start,
        "end": end,
        "reversed": False,
        "proficiency_caption": text(
            proficiency["caption"], file=file, row=key, field="proficiency.caption"
        ),
        "proficiency_foils": texts(
            proficiency["foils"], file=file, row=key, field="proficiency.foils"
        ),
        "test": SUBTESTS[subtest].test,
        "subtest": subtest,
        "source_dataset": record["dataset"],
        "youtube_id": record["youtube_id"],
        "video_file": None if record["video_file"] is None else str(record["video_file"]),
        "time_unit": unit,
        "mturk_caption": record["mturk"]["caption"],
        "mturk_foil": record["mturk"]["foil"],
        "mturk_other": record["mturk"]["other"],
        "proficiency_human_caption": proficiency["human"]["caption"],
        "proficiency_human_foil": proficiency["human"]["foil"],
        "proficiency_human_other": proficiency["human"]["other"],
        "valid": is_valid(record),
    }
