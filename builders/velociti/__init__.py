"""VELOCITI (Saravanan et al., CVPR 2025): a VidSitu clip, a positive and a negative caption.

Upstream: the Hub dataset ``katha-ai-iiith/VELOCITI``, which the official code reads with
``load_dataset("katha-ai-iiith/VELOCITI")["test"]`` (``data.py``): one table of rows
``{test_name, video_id, event, pos, neg}``, the eight tests of ``clip_eval.py`` /
``vidllm_eval.py`` told apart by ``test_name``. This builder reads the repository's annotation
tables (parquet, JSON Lines or JSON; never the video archive) from a download or a local clone.
A row's ``id`` is ``<test_name>-<row number within its test>``, in file order.

The licence (CC BY-NC-SA 4.0 with an added clause) forbids tuning any model on VELOCITI:
``foilkit finetune`` refuses it (:attr:`foilkit.builders.spec.Benchmark.tuning_forbidden`).
"""

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
from foilkit.builders.spec import Benchmark, CardMetadata, HubTask, MetricSpec, pairwise_inputs
from foilkit.builders.velociti.answers import QUESTIONS
from foilkit.builders.velociti.protocols import PROTOCOLS
from foilkit.metrics import CITATIONS

#: The tests ``clip_eval.py`` and ``vidllm_eval.py`` evaluate, by their ``test_name``.
TESTS = (
    "agent_random",
    "agent_bind",
    "action_adv",
    "action_bind",
    "action_manner",
    "control",
    "coref",
    "chrono",
)
FIELDS = ("test_name", "video_id", "event", "pos", "neg")
#: The annotation tables of the Hub repository (its ``velociti_videos.zip`` is left out).
TABLE_PATTERNS = ("*.parquet", "*.jsonl", "*.json")
#: The licence's added clause, as the VELOCITI README states it.
NO_TUNING = (
    "VELOCITI's licence (CC BY-NC-SA 4.0 with an additional clause) says it 'may never be used "
    "to tune the parameters of any model, and is strictly a test set'"
)

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

    def validate(self) -> None:
        super().validate()
        self.check_choice("test", TESTS, optional=True)


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
    VIDEO_LAYOUT = (
        "As the official code reads them (`data.py`: `<frames_root>/<video_id>.mp4`): "
        "`<video_root>/<video_id>.mp4`, the clips of the repository's `velociti_videos.zip` "
        "unzipped into one folder (e.g. `v_-0Qs5OQb1Ew_seg_10_20.mp4`)."
    )

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


# --- what ``foilkit evaluate velociti`` computes --------------------------------------------------

#: ``metrics.py``: ClassicVLE ``pos > neg`` (a tie is wrong) for any score kind; StrictVLE
#: ``pos > 0.5 and neg < 0.5`` only for probabilities (an entailment probability).
VLE = MetricSpec(
    "pairwise_foil_accuracy",
    pairwise_inputs,
    {"ClassicVLE": "accuracy", "StrictVLE": "strict_entailment_accuracy"},
    {"ties": "strict"},
    chance={"ClassicVLE": 0.5},
    probability_options={"entailment_threshold": 0.5},
)

#: The documented leaderboard task ids (``foilkit.builders.hub``'s eval.yaml; values are
#: percentages, higher is better): changing one breaks every leaderboard.
HUB_TASKS = tuple(
    HubTask(
        f"{test}_{kind.lower()}",
        test,
        f"VELOCITI {test}: {kind}VLE ({what})",
        ((test, None, key), ("all", test, key)),
    )
    for test in TESTS
    for kind, key, what in (
        ("Classic", "accuracy", "positive caption scored above the negative"),
        (
            "Strict",
            "strict_entailment_accuracy",
            "entailment probability of the positive above 0.5 and of the negative below it",
        ),
    )
)
#: The dataset card's Hub metadata: task categories, the datasets its videos come from, the paper.
CARD = CardMetadata(
    ("zero-shot-classification", "video-text-to-text"),
    ("extended|VidSitu",),
    "https://arxiv.org/abs/2406.10889",
)

BENCHMARK = Benchmark.of_builder(
    "velociti",
    Velociti,
    all_configs=("all",),
    metrics=lambda config: (VLE,),
    group_column="test_name",
    group_label="test",
    paper_table="Table 2: ClassicVLE and StrictVLE (%) per test",
    tuning_forbidden=NO_TUNING,
    protocols=PROTOCOLS,
    questions=QUESTIONS,
    card=CARD,
    hub_tasks=HUB_TASKS,
    hub_repo="foilkit/velociti",
)
