"""RTime (Du et al.): videos and their time-reversed counterparts, each with its own caption.

Upstream: ``test.json`` (1000 source videos) and ``valid.json`` (500), objects keyed by source
video id with one human-written ``forward_captions``/``reverse_captions`` caption, nine GPT-4
rewrites of each, the source ``url`` and the annotators' ``temporal``/``reverse`` flags.

Each source video gives a forward row and a reversed row: the reversed view is the *same file*
with ``reversed=True`` (no second file, no re-encoding); its caption is the reverse caption and
each row's foil is the other direction's caption. Configs follow the paper's three tasks:
``origin`` (forward views only: the standard retrieval pool), ``hard`` (forward and reversed
views in one pool) and ``binary`` (the same rows as ``hard``; the metric pairs them by
``source_id``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import datasets
from foilkit.builders.annotations import (
    AnnotationError,
    AnnotationFile,
    GitHubSource,
    fetch,
    read_keyed_json,
    relative_path,
    require,
    text,
    texts,
)
from foilkit.builders.base import FoilkitBuilder, FoilkitConfig
from foilkit.builders.schema import FLAG, TEXT, TEXTS, canonical_features

TASKS = ("origin", "hard", "binary")
SPLITS = {"test": "test.json", "validation": "valid.json"}
DIRECTIONS = ("forward", "reverse")

SOURCE = GitHubSource(
    repo="qyr0403/Reversed-in-Time",
    commit="a5134b6c4211f610ee410f613b9d48968c23cd1a",
    licence="unknown",
    licence_note="No licence is stated in the RTime repository; the videos come from stock-footage sites "
    "(see `url`) under their own terms.",
)

FEATURES = canonical_features(
    source_id=TEXT,
    direction=TEXT,
    rewrites=TEXTS,
    foil_rewrites=TEXTS,
    url=TEXT,
    temporal=FLAG,
    reversible=FLAG,
)

_CITATION = """\
@inproceedings{du2024rtime,
  title     = {Reversed in Time: A Novel Temporal-Emphasized Benchmark for Cross-Modal Video-Text Retrieval},
  author    = {Du, Yang and Liu, Yuqi and Jin, Qin},
  booktitle = {Proceedings of the 32nd ACM International Conference on Multimedia},
  year      = {2024}
}"""

_FIELDS = (
    "forward_captions",
    "reverse_captions",
    "forward_rewrites",
    "reverse_rewrites",
    "url",
    "temporal",
    "reverse",
)
_TYPES = {
    "forward_captions": list, "reverse_captions": list, "forward_rewrites": list, "reverse_rewrites": list,
    "url": str, "temporal": bool, "reverse": bool,
}  # fmt: skip


@dataclass
class RTimeConfig(FoilkitConfig):
    """One of the paper's three retrieval tasks.

    Attributes:
        task: ``"origin"`` (forward views only), ``"hard"`` or ``"binary"`` (forward and reversed views).
    """

    task: str = "hard"

    def validate(self) -> None:
        super().validate()
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")


class RTime(FoilkitBuilder):
    """RTime: configs ``origin``, ``hard``, ``binary``; splits ``test`` and ``validation``."""

    BUILDER_CONFIG_CLASS = RTimeConfig
    BUILDER_CONFIGS: ClassVar[list[RTimeConfig]] = [
        RTimeConfig(
            name="origin",
            task="origin",
            description="RTime-Origin: forward videos and their captions",
        ),
        RTimeConfig(
            name="hard",
            task="hard",
            description="RTime-Hard: forward and reversed videos in one pool",
        ),
        RTimeConfig(
            name="binary", task="binary", description="RTime-Binary: each view against its reversal"
        ),
    ]
    DEFAULT_CONFIG_NAME = "hard"
    SOURCE = SOURCE
    FEATURES = FEATURES
    PRETTY_NAME = "RTime"
    DESCRIPTION = (
        "RTime (Reversed in Time): a temporal-emphasized video-text retrieval benchmark. Every source video "
        "appears forward and time-reversed, each view with its own human-written caption; the reversed "
        "view is the same file played backwards (reversed=True)."
    )
    CITATION = _CITATION
    VIDEO_LAYOUT = (
        "`<video_root>/<source_id>.mp4`, the video downloaded from its `url` and named by its RTime id. "
        "The reversed view reads the same file (`reversed=True`): no reversed copy is needed."
    )

    def _split_generators(
        self, dl_manager: datasets.DownloadManager
    ) -> list[datasets.SplitGenerator]:
        files = {split: AnnotationFile(name, name) for split, name in SPLITS.items()}
        paths = fetch(SOURCE, files, dl_manager, self.config.annotations)
        return [
            datasets.SplitGenerator(name=split, gen_kwargs={"split": split, "path": paths[split]})
            for split in SPLITS
        ]

    def _rows(self, path: Path) -> Iterator[dict[str, Any]]:
        directions = ("forward",) if self.config.task == "origin" else DIRECTIONS
        for source_id, record in read_keyed_json(path):
            require(record, _FIELDS, file=path, row=source_id, types=_TYPES)
            for direction in directions:
                yield _row(record, source_id, direction, file=path)

    @classmethod
    def card_notes(cls, builders: Sequence[FoilkitBuilder]) -> str:
        return (
            "### Views\n\n"
            'Each source video gives a forward row (`direction="forward"`, `reversed=False`) and, in the '
            '`hard` and `binary` configs, a reversed row (`direction="reverse"`, `reversed=True`) that reads '
            "the same file backwards. A row's `caption` is the human-written caption of its direction, its "
            "`foils` the other direction's caption; `rewrites`/`foil_rewrites` are the nine GPT-4 rewrites of "
            "each. `origin` holds only forward rows (the paper's RTime-Origin pool: 1000 test videos); `hard` "
            "and `binary` hold both (2000 test views, 1000 validation views).\n"
        )


def _caption(record: dict[str, Any], field: str, *, file: Path, key: str) -> str:
    captions = record[field]
    if len(captions) != 1:
        raise AnnotationError(
            file, key, f"field {field!r} should hold one human-written caption, got {captions!r}"
        )
    return text(captions[0], file=file, row=key, field=f"{field}[0]")


def _row(record: dict[str, Any], source_id: str, direction: str, *, file: Path) -> dict[str, Any]:
    other = "reverse" if direction == "forward" else "forward"
    return {
        "id": f"{source_id}-{direction}",
        # the object's key names the video file
        "video_path": f"{relative_path(source_id, file=file, row=source_id, field='key')}.mp4",
        "caption": _caption(record, f"{direction}_captions", file=file, key=source_id),
        "foils": [_caption(record, f"{other}_captions", file=file, key=source_id)],
        "start": None,
        "end": None,
        "reversed": direction == "reverse",
        "source_id": source_id,
        "direction": direction,
        "rewrites": texts(
            record[f"{direction}_rewrites"], file=file, row=source_id, field=f"{direction}_rewrites"
        ),
        "foil_rewrites": texts(
            record[f"{other}_rewrites"], file=file, row=source_id, field=f"{other}_rewrites"
        ),
        "url": record["url"],
        "temporal": record["temporal"],
        "reversible": record["reverse"],
    }
