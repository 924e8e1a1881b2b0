"""The captions to rewrite, from JSONL rows or from an RTime annotation file, and back.

Two inputs are read:

* JSONL rows with ``id`` and ``caption`` and a ``split`` (rows exported from a foilkit
  dataset, or written by hand); other fields travel through to the output;
* an RTime annotation file (the authors' format: an object keyed by video id with
  ``forward_captions``/``reverse_captions``, one human caption each), giving one row per
  direction with the RTime builder's ids (``<video id>-forward``/``-reverse``). One file is one
  split, named by ``split`` or by its file name (``train.json``, ``valid.json``, ``test.json``).

:func:`write_rtime_annotations` writes an annotation file back with the accepted rewrites as
its ``forward_rewrites``/``reverse_rewrites``, so the RTime builder reads it like the published
files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foilkit.files import atomic_write
from foilkit.generation.cli_io import read_jsonl

DIRECTIONS = ("forward", "reverse")  # as the RTime builder names its views
SPLIT_OF_FILE = {
    "train": "train",
    "valid": "validation",
    "val": "validation",
    "validation": "validation",
    "test": "test",
}


@dataclass(frozen=True)
class CaptionRow:
    """One caption to rewrite: its id, text, split and whatever else its row carried."""

    id: str
    caption: str
    split: str
    fields: Mapping[str, Any] = field(default_factory=dict)  # the input row, as read


def _split_of(path: Path, split: str | None) -> str:
    if split:
        return split
    try:
        return SPLIT_OF_FILE[path.stem.lower()]
    except KeyError:
        raise ValueError(
            f"{path}: cannot tell the split from the file name; name it with --input-split"
        ) from None


def read_caption_rows(path: str | os.PathLike, *, split: str | None = None) -> list[CaptionRow]:
    """Caption rows of a ``.jsonl`` file or an RTime ``.json`` annotation file.

    ``split`` names the split of rows without a ``split`` field (and of a ``.json`` file); a
    JSONL row with neither is an error naming it.
    """
    path = Path(path)
    if path.suffix.lower() == ".json":
        return _rtime_rows(path, _split_of(path, split))
    rows = []
    for number, record in enumerate(read_jsonl(path, required=("id", "caption")), 1):
        row_split = record.get("split", split)
        if not row_split:
            raise ValueError(
                f"{path}: row {number} (id {record['id']!r}) has no 'split'; add one, or name "
                "the split of such rows with --input-split"
            )
        if not isinstance(record["caption"], str) or not record["caption"].strip():
            raise ValueError(f"{path}: row {number} (id {record['id']!r}) has an empty caption")
        rows.append(CaptionRow(str(record["id"]), record["caption"], str(row_split), record))
    return rows


def _rtime_rows(path: Path, split: str) -> list[CaptionRow]:
    from foilkit.builders.annotations import AnnotationError, read_keyed_json, require

    rows = []
    for video_id, record in read_keyed_json(path):
        fields = [f"{direction}_captions" for direction in DIRECTIONS]
        require(record, fields, file=path, row=video_id, types=dict.fromkeys(fields, list))
        for direction in DIRECTIONS:
            captions = record[f"{direction}_captions"]
            if len(captions) != 1 or not isinstance(captions[0], str) or not captions[0].strip():
                raise AnnotationError(
                    path, video_id, f"{direction}_captions should hold one caption: {captions!r}"
                )
            rows.append(
                CaptionRow(
                    f"{video_id}-{direction}",
                    captions[0],
                    split,
                    {
                        "id": f"{video_id}-{direction}",
                        "caption": captions[0],
                        "split": split,
                        "source_id": video_id,
                        "direction": direction,
                    },
                )
            )
    return rows


def write_rtime_annotations(
    source: str | os.PathLike,
    rewrites: Mapping[str, list[str]],
    path: str | os.PathLike,
) -> int:
    """Copy the RTime annotation file ``source`` to ``path`` with rewrites filled in.

    ``rewrites`` maps a row id (``<video id>-<direction>``) to its accepted rewrites; they
    replace that direction's ``<direction>_rewrites``. Returns the number of directions set.
    """
    data = json.loads(Path(source).read_text(encoding="utf-8"))
    written = 0
    for video_id, record in data.items():
        for direction in DIRECTIONS:
            row_id = f"{video_id}-{direction}"
            if row_id in rewrites:
                record[f"{direction}_rewrites"] = list(rewrites[row_id])
                written += 1
            else:
                record.setdefault(f"{direction}_rewrites", [])
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    return written
