"""Vitatecs's ``datasets`` builder: configs, features, rows (its spec: ``__init__.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import datasets

from foilkit.builders.annotations import (
    AnnotationError,
    AnnotationFile,
    fetch,
    numbered_jsonl,
    relative_path,
    require,
    text,
)
from foilkit.builders.base import FoilkitBuilder, FoilkitConfig, configs_per, one_test_split
from foilkit.builders.schema import TEXT, canonical_features
from foilkit.builders.vitatecs import ASPECTS, BENCHMARK
from foilkit.builders.vitatecs.source import SOURCE
from foilkit.metrics import CITATIONS

VERSIONS = {
    "chatgpt": ("data", ""),
    "opt": ("data_opt", "opt/"),
}  # version -> (upstream folder, local folder)

SOURCE_DATASETS = ("MSRVTT", "VATEX")

FEATURES = canonical_features(aspect=TEXT, source_dataset=TEXT, video_name=TEXT)


@dataclass
class VitatecsConfig(FoilkitConfig):
    """One aspect of VITATECS, or all six (``aspect=None``).

    Attributes:
        aspect: one of :data:`ASPECTS`, or ``None`` for every aspect.
        annotation_version: ``"chatgpt"`` (the released files, counterfactuals generated with
            gpt-3.5-turbo) or ``"opt"`` (the earlier OPT-175B generation). Not called
            ``version``: that field of ``datasets.BuilderConfig`` is the dataset's semantic version.
    """

    aspect: str | None = None
    annotation_version: str = "chatgpt"
    CHOICES = {"aspect": ASPECTS, "annotation_version": VERSIONS}


class Vitatecs(FoilkitBuilder):
    """VITATECS: one config per temporal aspect and ``all``; a single ``test`` split."""

    BUILDER_CONFIG_CLASS = VitatecsConfig
    BUILDER_CONFIGS: ClassVar[list[VitatecsConfig]] = configs_per(
        VitatecsConfig,
        "aspect",
        {aspect: f"VITATECS, aspect {aspect}" for aspect in ASPECTS},
        all_description="VITATECS, all six aspects",
    )
    DEFAULT_CONFIG_NAME = "all"
    SOURCE = SOURCE
    FEATURES = FEATURES
    PRETTY_NAME = "VITATECS"
    DESCRIPTION = (
        "VITATECS: a diagnostic video-text dataset for temporal concept understanding. Each row "
        "pairs a video with its caption and one counterfactual description that differs only in "
        "one temporal aspect (direction, intensity, sequence, localization, compositionality, "
        "type)."
    )
    CITATION = CITATIONS["vitatecs"]
    VIDEO_LAYOUT = BENCHMARK.video_layout

    def _split_generators(
        self, dl_manager: datasets.DownloadManager
    ) -> list[datasets.SplitGenerator]:
        upstream, local = VERSIONS[self.config.annotation_version]
        aspects = ASPECTS if self.config.aspect is None else (self.config.aspect,)
        files = {
            aspect: AnnotationFile(
                f"{upstream}/{aspect.capitalize()}.jsonl", f"{local}{aspect.capitalize()}.jsonl"
            )
            for aspect in aspects
        }
        paths = fetch(SOURCE, files, dl_manager, self.config.annotations)
        return one_test_split(files=paths)

    def _rows(self, files: dict[str, Path]) -> Iterator[dict[str, Any]]:
        for aspect, path in files.items():
            for number, record in numbered_jsonl(path):
                yield _row(record, aspect, file=path, row=number)


def _row(record: dict[str, Any], aspect: str, *, file: Path, row: int) -> dict[str, Any]:
    require(
        record,
        ("src_dataset", "video_name", "caption", "counterfactual", "aspect"),
        file=file,
        row=row,
        types={
            name: str
            for name in ("src_dataset", "video_name", "caption", "counterfactual", "aspect")
        },
    )
    if record["src_dataset"] not in SOURCE_DATASETS:
        raise AnnotationError(
            file,
            row,
            f"field 'src_dataset' is {record['src_dataset']!r}, not one of {SOURCE_DATASETS}",
        )
    if record["aspect"].lower() != aspect:
        raise AnnotationError(
            file, row, f"field 'aspect' is {record['aspect']!r} in the file of aspect {aspect!r}"
        )
    video_name = relative_path(record["video_name"], file=file, row=row, field="video_name")
    return {
        "id": f"{aspect}-{row}",
        "video_path": f"{record['src_dataset']}/{video_name}",
        "caption": text(record["caption"], file=file, row=row, field="caption"),
        "foils": [text(record["counterfactual"], file=file, row=row, field="counterfactual")],
        "start": None,
        "end": None,
        "reversed": False,
        "aspect": aspect,
        "source_dataset": record["src_dataset"],
        "video_name": record["video_name"],
    }
