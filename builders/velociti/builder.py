"""Velociti's ``datasets`` builder: configs, features, rows (its spec: ``__init__.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import datasets

from foilkit.builders.annotations import (
    AnnotationError,
    HubSource,
    fetch_hub,
    numbered_jsonl,
    relative_path,
    require,
    text,
)
from foilkit.builders.base import FoilkitBuilder, FoilkitConfig, configs_per, one_test_split
from foilkit.builders.schema import TEXT, canonical_features
from foilkit.builders.velociti import BENCHMARK, TESTS
from foilkit.metrics import CITATIONS

FIELDS = ("test_name", "video_id", "event", "pos", "neg")

#: The annotation tables of the Hub repository (its ``velociti_videos.zip`` is left out).
TABLE_PATTERNS = ("*.parquet", "*.jsonl", "*.json")

SOURCE = HubSource(
    repo="katha-ai-iiith/VELOCITI",
    commit="main",
    licence="cc-by-nc-sa-4.0",
    licence_note="CC BY-NC-SA 4.0 with an additional clause (katha-ai/VELOCITI README): "
    "VELOCITI may never be used to tune the parameters of any model and is strictly a test set. "
    "Non-commercial use only.",
)

FEATURES = canonical_features(test_name=TEXT, video_id=TEXT, event=TEXT)


@dataclass
class VelocitiConfig(FoilkitConfig):
    """One VELOCITI test, or all eight (``test=None``).

    Attributes:
        test: one of :data:`TESTS`, or ``None`` for every test.
    """

    test: str | None = None
    CHOICES = {"test": TESTS}


class Velociti(FoilkitBuilder):
    """VELOCITI: one config per test and ``all``; a single ``test`` split."""

    BUILDER_CONFIG_CLASS = VelocitiConfig
    BUILDER_CONFIGS: ClassVar[list[VelocitiConfig]] = configs_per(
        VelocitiConfig,
        "test",
        {test: f"VELOCITI, test {test}" for test in TESTS},
        all_description="VELOCITI, all eight tests",
    )
    DEFAULT_CONFIG_NAME = "all"
    SOURCE = SOURCE
    FEATURES = FEATURES
    PRETTY_NAME = "VELOCITI"
    DESCRIPTION = (
        "VELOCITI: video-language compositional reasoning with strict entailment. Each row pairs "
        "a 10-second VidSitu clip with a positive caption and a negative one that changes an "
        "agent, an action, a binding, a coreference or the order of events (the eight tests)."
    )
    CITATION = CITATIONS["velociti"]
    VIDEO_LAYOUT = BENCHMARK.video_layout

    def _split_generators(
        self, dl_manager: datasets.DownloadManager | None
    ) -> list[datasets.SplitGenerator]:
        paths = fetch_hub(SOURCE, TABLE_PATTERNS, self.config.annotations)
        return one_test_split(files=paths)

    def _rows(self, files: list[Path]) -> Iterator[dict[str, Any]]:
        numbers: dict[str, int] = {}
        found = False
        for path in files:
            for row, record in read_table(path):
                found = True
                test = record.get("test_name")
                if self.config.test is not None and test != self.config.test:
                    continue
                numbers[test] = numbers.get(test, 0) + 1
                yield _row(record, numbers[test], file=path, row=row)
        if not found:
            raise AnnotationError(files[0], None, f"no rows with the fields {list(FIELDS)}")
        if self.config.test is not None and not numbers:
            raise AnnotationError(
                files[0],
                None,
                f"no row has test_name {self.config.test!r}: the annotation tables are not "
                f"VELOCITI's whole test split ({len(files)} file(s) read)",
            )


def read_table(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(row number, record)`` of an annotation table as ``datasets`` would load it: parquet,
    JSON Lines, or a JSON list of records (1-based rows)."""
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        try:
            records = pq.read_table(path).to_pylist()
        except Exception as error:  # noqa: BLE001 (pyarrow raises several types for a bad file)
            raise AnnotationError(path, None, f"not a readable parquet file ({error})") from None
        yield from enumerate(records, start=1)
    elif path.suffix == ".jsonl":
        yield from numbered_jsonl(path)
    else:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise AnnotationError(path, None, f"not a JSON file ({error})") from None
        if not isinstance(data, list):
            return  # not an annotation table (e.g. a metadata file of the repository)
        for number, record in enumerate(data, start=1):
            if not isinstance(record, Mapping):
                raise AnnotationError(path, number, f"expected a JSON object, got {record!r}")
            yield number, dict(record)


def _row(record: Mapping[str, Any], number: int, *, file: Path, row: int) -> dict[str, Any]:
    # the event is a label ("Ev1", or its number): kept as text
    types = {name: (str, int) if name == "event" else str for name in FIELDS}
    require(record, FIELDS, file=file, row=row, types=types)
    test = record["test_name"]
    if test not in TESTS:
        raise AnnotationError(file, row, f"field 'test_name' is {test!r}, not one of {TESTS}")
    # data.py: video_id.split('.')[0] names <frames_root>/<that>.mp4
    video_id = relative_path(record["video_id"], file=file, row=row, field="video_id")
    stem = video_id.split(".")[0]
    if not stem:
        raise AnnotationError(file, row, f"field 'video_id' is {video_id!r}: no video name")
    return {
        "id": f"{test}-{number}",
        "video_path": f"{stem}.mp4",
        "caption": text(record["pos"], file=file, row=row, field="pos"),
        "foils": [text(record["neg"], file=file, row=row, field="neg")],
        "start": None,
        "end": None,
        "reversed": False,
        "test_name": test,
        "video_id": record["video_id"],
        "event": str(record["event"]),
    }
