"""Where a benchmark's annotation files come from, and reading them with errors that say where.

By default a builder downloads the files its authors published, from raw GitHub URLs pinned
to one commit, through the ``datasets`` download manager (cached, checksummed by the hub
client, honouring ``HF_DATASETS_OFFLINE``). A local folder holding the same file names
(``annotations=...``; the tests use ``../shared/data/<benchmark>``) replaces the download.

Readers yield ``(row, record)`` where ``row`` names the record in messages: a 1-based line
number for JSONL/TSV, the example id for keyed JSON. :func:`require` checks a record's fields.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets


class AnnotationError(ValueError):
    """An annotation file is not what its builder expects; the message names file, row, field."""

    def __init__(self, file: str | os.PathLike, row: int | str | None, message: str) -> None:
        where = f"{file}" if row is None else f"{file}, row {row}"
        super().__init__(f"{where}: {message}")
        self.file, self.row = str(file), row


@dataclass(frozen=True)
class GitHubSource:
    """Files published in a GitHub repository, pinned to one commit."""

    repo: str  # "owner/name"
    commit: str
    licence: str  # Hub licence identifier ("cc-by-4.0", "mit", "unknown")
    licence_note: str

    def url(self, path: str) -> str:
        return f"https://raw.githubusercontent.com/{self.repo}/{self.commit}/{path}"

    @property
    def homepage(self) -> str:
        return f"https://github.com/{self.repo}/tree/{self.commit}"


@dataclass(frozen=True)
class AnnotationFile:
    """One annotation file: its path in the upstream repository and in a local copy.

    The local layout is the one ``../shared/data`` uses (the upstream folder dropped; VITATECS'
    OPT-generated files under ``opt/``).
    """

    upstream: str
    local: str


def fetch(
    source: GitHubSource,
    files: Mapping[str, AnnotationFile],
    dl_manager: datasets.DownloadManager,
    local: str | os.PathLike | None,
) -> dict[str, Path]:
    """``key -> local path`` of each annotation file: downloaded from ``source`` at its pinned
    commit, or, when ``local`` names a folder, that folder's copy (nothing downloaded)."""
    if local is None:
        downloaded = dl_manager.download(
            {key: source.url(file.upstream) for key, file in files.items()}
        )
        return {key: Path(path) for key, path in downloaded.items()}
    folder = Path(local).expanduser()
    if not folder.is_dir():
        raise FileNotFoundError(f"annotations folder {folder} does not exist")
    paths = {key: folder / file.local for key, file in files.items()}
    absent = [str(path) for path in paths.values() if not path.is_file()]
    if absent:
        raise FileNotFoundError(
            f"annotations folder {folder} lacks {len(absent)} file(s) the builder needs: {absent}"
        )
    return paths


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSON Lines file."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise AnnotationError(
                    path, number, f"malformed JSON ({error.msg}): {line.strip()[:80]!r}"
                ) from None
            if not isinstance(record, dict):
                raise AnnotationError(
                    path, number, f"expected a JSON object, got {type(record).__name__}"
                )
            yield number, record


def read_keyed_json(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(example id, object)`` for a JSON file holding one object keyed by example id."""
    with open(path, encoding="utf-8") as handle:
        try:
            data = json.load(handle)
        except json.JSONDecodeError as error:
            raise AnnotationError(
                path, f"line {error.lineno}", f"malformed JSON ({error.msg})"
            ) from None
    if not isinstance(data, dict):
        raise AnnotationError(
            path, None, f"expected a JSON object keyed by example id, got {type(data).__name__}"
        )
    for key, record in data.items():
        if not isinstance(record, dict):
            raise AnnotationError(path, key, f"expected a JSON object, got {type(record).__name__}")
        yield key, record


def read_tsv(path: Path, columns: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line number, row)`` for a tab-separated file whose header holds ``columns``."""
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        missing = [column for column in columns if column not in (reader.fieldnames or ())]
        if missing:
            raise AnnotationError(
                path, 1, f"header lacks column(s) {missing}; it has {reader.fieldnames}"
            )
        for row in reader:
            number = reader.line_num
            if None in row or any(row[column] is None for column in columns):
                raise AnnotationError(
                    path, number, f"expected {len(reader.fieldnames)} tab-separated fields"
                )
            yield number, row


def require(
    record: Mapping[str, Any],
    fields: Iterable[str],
    *,
    file: str | os.PathLike,
    row: int | str,
    types: Mapping[str, type | tuple[type, ...]] | None = None,
) -> None:
    """Raise :class:`AnnotationError` naming the first absent field, or one of the wrong type.

    A dotted name (``"proficiency.caption"``) reaches into nested objects.
    """
    types = types or {}
    for name in fields:
        value: Any = record
        for part in name.split("."):
            if not isinstance(value, Mapping) or part not in value:
                raise AnnotationError(file, row, f"missing field {name!r}")
            value = value[part]
        expected = types.get(name)
        if expected is not None and not isinstance(value, expected):
            raise AnnotationError(file, row, f"field {name!r} has the wrong type: {value!r}")
