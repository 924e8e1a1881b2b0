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

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

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
from foilkit.builders.spec import Benchmark, CardMetadata, HubTask, MetricSpec, pairwise_inputs
from foilkit.builders.vilma.perplexity import REDUCTIONS
from foilkit.builders.vilma.protocols import PROTOCOLS
from foilkit.builders.vilma.source import SOURCE
from foilkit.metrics import CITATIONS

PTS_FPS = 30.0  # frame rate of the normalised QUVA videos the "pts" windows index


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


_REQUIRED = (
    "dataset",
    "youtube_id",
    "video_file",
    "start_time",
    "end_time",
    "time_unit",
    "caption",
    "foils",
    "mturk",
    "mturk.caption",
    "mturk.foil",
    "mturk.other",
    "proficiency.caption",
    "proficiency.foils",
    "proficiency.human.caption",
    "proficiency.human.foil",
    "proficiency.human.other",
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
    VIDEO_LAYOUT = (
        "`<video_root>/<source_dataset>/<name>`, one folder per source dataset as "
        "`source_dataset` spells it. `<name>` is `<youtube_id>.mp4` when the row has a YouTube id "
        "(VidSitu, COIN, YouCook2, RareAct: the full YouTube video; the window is in its time "
        "line), otherwise `video_file` (QUVA: `video_file` as given, the 30 fps normalised "
        "videos; STAR: `<video_file>.mp4`; Something-Something v2: `<video_file>.webm`, as that "
        "dataset ships them). `video_path` holds the relative path of every row."
    )

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


# --- what ``foilkit evaluate vilma`` computes -----------------------------------------------------


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


def _combined_column(test: str) -> str:
    """The result key of ``test``'s P+T column (its subtests' mean, or pooled)."""
    return (SUBTEST_MEAN if test in SUBTEST_MEAN_TESTS else POOLED).columns["P+T"]


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
    Vilma,
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
)
