"""RTime's ``datasets`` builder: configs, features, rows (its spec: ``__init__.py``)."""

from __future__ import annotations

from collections.abc import Iterator
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
from foilkit.builders.base import FoilkitBuilder, FoilkitConfig, configs_per
from foilkit.builders.rtime import BENCHMARK, TASKS
from foilkit.builders.schema import FLAG, TEXT, TEXTS, canonical_features
from foilkit.metrics import CITATIONS

SPLITS = {"test": "test.json", "validation": "valid.json"}

#: The train annotations at the pinned commit (``RTimeConfig.train_split``).
TRAIN_SPLITS = {"train": "train.json"}

DIRECTIONS = ("forward", "reverse")

SOURCE = GitHubSource(
    repo="qyr0403/Reversed-in-Time",
    commit="a5134b6c4211f610ee410f613b9d48968c23cd1a",
    licence="unknown",
    licence_note="No licence is stated in the RTime repository; the videos come from "
    "stock-footage sites (see `url`) under their own terms.",
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

_FIELDS = tuple(
    "forward_captions reverse_captions forward_rewrites reverse_rewrites url temporal "
    "reverse".split()
)

#: What a source video without a usable reversal (``reverse: false``) must still have.
_FORWARD_FIELDS = ("forward_captions", "forward_rewrites", "url", "temporal", "reverse")

_TYPES = {
    "forward_captions": list,
    "reverse_captions": list,
    "forward_rewrites": list,
    "reverse_rewrites": list,
    "url": str,
    "temporal": bool,
    "reverse": bool,
}


@dataclass
class RTimeConfig(FoilkitConfig):
    """One of the paper's three retrieval tasks.

    Attributes:
        task: ``"origin"`` (forward views only), ``"hard"`` or ``"binary"`` (forward and reversed
        views).
        train_split: also build the ``train`` split from upstream ``train.json`` (for
            ``foilkit finetune``); off by default, since the test and validation splits are
            what the benchmark scores.
    """

    task: str = "hard"
    train_split: bool = False
    CHOICES = {"task": TASKS}


class RTime(FoilkitBuilder):
    """RTime: configs ``origin``, ``hard``, ``binary``; splits ``test`` and ``validation``."""

    BUILDER_CONFIG_CLASS = RTimeConfig
    BUILDER_CONFIGS: ClassVar[list[RTimeConfig]] = configs_per(
        RTimeConfig,
        "task",
        {
            "origin": "RTime-Origin: forward videos and their captions",
            "hard": "RTime-Hard: forward and reversed videos in one pool",
            "binary": "RTime-Binary: each view against its reversal",
        },
    )
    DEFAULT_CONFIG_NAME = "hard"
    SOURCE = SOURCE
    FEATURES = FEATURES
    PRETTY_NAME = "RTime"
    DESCRIPTION = (
        "RTime (Reversed in Time): a temporal-emphasized video-text retrieval benchmark. Every "
        "source video appears forward and time-reversed, each view with its own human-written "
        "caption; the reversed view is the same file played backwards (reversed=True)."
    )
    CITATION = CITATIONS["rtime"]
    VIDEO_LAYOUT = BENCHMARK.video_layout

    def _split_generators(
        self, dl_manager: datasets.DownloadManager
    ) -> list[datasets.SplitGenerator]:
        splits = self.wanted_splits({**(TRAIN_SPLITS if self.config.train_split else {}), **SPLITS})
        local = self.config.annotations
        if "train" in splits and local is not None:
            train = Path(local).expanduser() / TRAIN_SPLITS["train"]
            if Path(local).expanduser().is_dir() and not train.is_file():
                raise FileNotFoundError(
                    f"annotations folder {local} has no {TRAIN_SPLITS['train']}: the train split "
                    f"(train_split=True) reads RTime's train annotations, published at "
                    f"{SOURCE.url(TRAIN_SPLITS['train'])}; copy that file into the folder, or "
                    "build without train_split"
                )
        files = {split: AnnotationFile(name, name) for split, name in splits.items()}
        paths = fetch(SOURCE, files, dl_manager, local)
        return [
            datasets.SplitGenerator(name=split, gen_kwargs={"split": split, "path": paths[split]})
            for split in splits
        ]

    def _rows(self, path: Path) -> Iterator[dict[str, Any]]:
        directions = ("forward",) if self.config.task == "origin" else DIRECTIONS
        for source_id, record in read_keyed_json(path):
            require(record, _FORWARD_FIELDS, file=path, row=source_id, types=_TYPES)
            if record["reverse"]:
                require(record, _FIELDS, file=path, row=source_id, types=_TYPES)
            for direction in directions:
                if direction == "forward" or record["reverse"]:
                    yield _row(record, source_id, direction, file=path)

    CARD_NOTES = (
        "### Views\n\n"
        'Each source video gives a forward row (`direction="forward"`, `reversed=False`) and, '
        'in the `hard` and `binary` configs, a reversed row (`direction="reverse"`, '
        "`reversed=True`) that reads the same file backwards. A row's `caption` is the "
        "human-written caption of its direction, its `foils` the other direction's caption; "
        "`rewrites`/`foil_rewrites` are the nine GPT-4 rewrites of each. `origin` holds only "
        "forward rows (the paper's RTime-Origin pool: 1000 test videos); `hard` and `binary` "
        "hold both (2000 test views, 1000 validation views). Built with `train_split=True`, "
        "the `train` split comes from upstream `train.json` in the same layout; a video whose "
        "reversal the annotators rejected (`reversible=False`) has a forward row only, with "
        "no foil.\n"
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
    reversible = record["reverse"]  # else a forward view alone: no reversal, so no foil
    return {
        "id": f"{source_id}-{direction}",
        # the object's key names the video file
        "video_path": f"{relative_path(source_id, file=file, row=source_id, field='key')}.mp4",
        "caption": _caption(record, f"{direction}_captions", file=file, key=source_id),
        "foils": [_caption(record, f"{other}_captions", file=file, key=source_id)]
        if reversible
        else [],
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
        )
        if reversible
        else [],
        "url": record["url"],
        "temporal": record["temporal"],
        "reversible": reversible,
    }
