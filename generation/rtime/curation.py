"""Human curation files: what the LLM proposed, with a ``keep`` column a person fills in.

RTime puts people in the loop after each LLM step (supplementary §7): they drop activity pairs
that are illogical, not visible on video, mismatched or rare, and verb-noun phrases that are
rare or unreasonable. :func:`write_curation` writes the candidates as a CSV (for a spreadsheet),
TSV or JSONL file whose first column is ``keep``; seeds arrive decided (``yes``), new
candidates undecided (empty). A curator writes ``yes`` or ``no`` (also y/n, keep/drop,
true/false, 1/0, x), may edit any text and add rows (with ``origin`` ``human``; an empty
``origin`` reads as ``seed``), and :func:`read_curation` reads the file
back: it tells the kind of candidates from the columns, validates every kept row, refuses
duplicates created by editing, and by default refuses undecided rows, naming their lines.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foilkit.files import atomic_open
from foilkit.generation.cli_io import numbered_jsonl
from foilkit.generation.rtime.activities import ActivityPair
from foilkit.generation.rtime.enrichment import ActivityPhrase

KEEP = "keep"
_DECISIONS: dict[str, bool] = {
    **dict.fromkeys(("yes", "y", "keep", "true", "1", "x"), True),
    **dict.fromkeys(("no", "n", "drop", "false", "0"), False),
}
UNDECIDED_POLICIES = ("error", "drop", "keep")


@dataclass(frozen=True)
class CurationKind:
    """A kind of candidate: its record class and the columns that identify it."""

    name: str
    record_class: Any  # has from_record(record, where=), to_record(), .key
    columns: tuple[str, ...]


KINDS: dict[str, CurationKind] = {
    "activity_pairs": CurationKind("activity_pairs", ActivityPair, ("activity", "opposite")),
    "activity_phrases": CurationKind(
        "activity_phrases", ActivityPhrase, ("activity", "opposite", "object", "phrase")
    ),
}


def _kind_of_record(record: Any) -> CurationKind:
    for kind in KINDS.values():
        if isinstance(record, kind.record_class):
            return kind
    raise TypeError(f"no curation kind for {type(record).__name__}")


def _kind_of_columns(columns: Sequence[str], path: Path) -> CurationKind:
    matching = [kind for kind in KINDS.values() if set(kind.columns) <= set(columns)]
    if not matching:
        expected = {name: list(kind.columns) for name, kind in KINDS.items()}
        raise ValueError(f"{path}: columns {list(columns)} fit no curation kind {expected}")
    return max(matching, key=lambda kind: len(kind.columns))


def _decision_text(keep: bool | None) -> str:
    return "" if keep is None else ("yes" if keep else "no")


# -- formats: suffix -> (write rows, read (line, row) pairs) ------------------------------------


def _write_delimited(
    rows: Sequence[dict[str, Any]], columns: list[str], path: Path, *, delimiter: str
) -> None:
    with atomic_open(path, newline="") as handle:  # a temporary file renamed over the old one
        writer = csv.DictWriter(handle, fieldnames=columns, delimiter=delimiter)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else v for k, v in row.items()})


def _read_delimited(path: Path, *, delimiter: str) -> tuple[list[str], list[tuple[int, dict]]]:
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter=delimiter)
        columns = list(reader.fieldnames or ())
        rows = []
        for row in reader:
            if None in row:
                raise ValueError(f"{path}:{reader.line_num}: more cells than columns")
            if any((value or "").strip() for value in row.values()):
                rows.append((reader.line_num, {k: (v or "").strip() for k, v in row.items()}))
    return columns, rows


def _write_jsonl(rows: Sequence[dict[str, Any]], columns: list[str], path: Path) -> None:
    with atomic_open(path) as handle:  # a temporary file renamed over the old one
        handle.writelines(
            json.dumps({c: row.get(c) for c in columns}, ensure_ascii=False) + "\n" for row in rows
        )


def _read_jsonl(path: Path) -> tuple[list[str], list[tuple[int, dict]]]:
    records = list(numbered_jsonl(path))
    columns = list(dict.fromkeys(key for _, record in records for key in record))
    return columns, records


_Reader = Callable[[Path], tuple[list[str], list[tuple[int, dict]]]]
_FORMATS: dict[str, tuple[Callable[..., None], _Reader]] = {
    ".csv": (
        functools.partial(_write_delimited, delimiter=","),
        functools.partial(_read_delimited, delimiter=","),
    ),
    ".tsv": (
        functools.partial(_write_delimited, delimiter="\t"),
        functools.partial(_read_delimited, delimiter="\t"),
    ),
    ".jsonl": (_write_jsonl, _read_jsonl),
}


def _format(path: Path) -> tuple[Callable[..., None], _Reader]:
    try:
        return _FORMATS[path.suffix.lower()]
    except KeyError:
        raise ValueError(
            f"{path}: a curation file ends in one of {sorted(_FORMATS)}, not {path.suffix!r}"
        ) from None


# -- writing and reading -----------------------------------------------------------------------


def write_curation(candidates: Sequence[tuple[bool | None, Any]], path: str | os.PathLike) -> Path:
    """Write ``(keep, record)`` candidates (one kind) for a person to decide on.

    ``keep`` is ``True`` for rows that arrive decided (seeds), ``None`` for undecided ones.
    """
    path = Path(path)
    write, _ = _format(path)
    if not candidates:
        raise ValueError(f"{path}: nothing to curate")
    kinds = {_kind_of_record(record).name for _, record in candidates}
    if len(kinds) > 1:
        raise ValueError(f"{path}: one curation file holds one kind, got {sorted(kinds)}")
    kind = KINDS[kinds.pop()]
    fields = [field.name for field in dataclasses.fields(kind.record_class)]
    columns = [KEEP, *kind.columns, *(name for name in fields if name not in kind.columns)]
    rows = [{KEEP: _decision_text(keep), **record.to_record()} for keep, record in candidates]
    path.parent.mkdir(parents=True, exist_ok=True)
    write(rows, columns, path)
    return path


@dataclass(frozen=True)
class Curated:
    """A curation file read back: the kept records and the counts of the others."""

    kind: str
    kept: tuple[Any, ...]
    dropped: int
    undecided: int


def _decision(value: Any, where: str) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if not text:
        return None
    if text not in _DECISIONS:
        raise ValueError(f"{where}: keep must be yes or no, got {value!r}")
    return _DECISIONS[text]


def read_curation(path: str | os.PathLike, *, undecided: str = "error") -> Curated:
    """The kept records of a curated file; see the module docstring for the rules.

    ``undecided`` says what a row with an empty ``keep`` means: ``"error"`` (refuse the file,
    listing the lines), ``"drop"`` or ``"keep"``.
    """
    if undecided not in UNDECIDED_POLICIES:
        raise ValueError(f"undecided must be one of {UNDECIDED_POLICIES}, got {undecided!r}")
    path = Path(path)
    _, read = _format(path)
    columns, rows = read(path)
    if KEEP not in columns:
        raise ValueError(f"{path}: no {KEEP!r} column (columns: {columns})")
    kind = _kind_of_columns(columns, path)
    kept: list[Any] = []
    first_line: dict[Any, int] = {}
    dropped = 0
    undecided_lines: list[int] = []
    for line, row in rows:
        where = f"{path}:{line}"
        keep = _decision(row.get(KEEP), where)
        if keep is None:
            undecided_lines.append(line)
            keep = undecided == "keep"
        if not keep:
            dropped += 1
            continue
        record = kind.record_class.from_record(row, where=f"{where}: ")
        if record.key in first_line:
            raise ValueError(f"{where}: repeats the kept row on line {first_line[record.key]}")
        first_line[record.key] = line
        kept.append(record)
    if undecided_lines and undecided == "error":
        shown = ", ".join(map(str, undecided_lines[:20]))
        more = f" and {len(undecided_lines) - 20} more" if len(undecided_lines) > 20 else ""
        raise ValueError(
            f"{path}: {len(undecided_lines)} row(s) have no keep decision (lines {shown}{more}); "
            "write yes or no in their keep column, or import with undecided='drop' or 'keep'"
        )
    if undecided == "drop":
        dropped -= len(undecided_lines)
    return Curated(kind.name, tuple(kept), dropped, len(undecided_lines))
