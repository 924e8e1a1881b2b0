"""File input/output shared by the generation command lines: JSONL in, rows + run record out."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from foilkit._version import __version__


def read_jsonl(path: str | os.PathLike, required: Sequence[str] = ()) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSONL file; a bad line or a missing field names file and line."""
    for _, record in numbered_jsonl(path, required):
        yield record


def numbered_jsonl(
    path: str | os.PathLike, required: Sequence[str] = ()
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each JSON object of a JSONL file (blank lines skipped); a bad
    line or a missing field names file and line."""
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not valid JSON ({error.msg})") from None
            if not isinstance(record, dict):
                raise ValueError(
                    f"{path}:{number}: expected a JSON object, got {type(record).__name__}"
                )
            missing = [name for name in required if name not in record]
            if missing:
                raise ValueError(f"{path}:{number}: missing field(s) {missing}")
            yield number, record


def read_lines(path: str | os.PathLike) -> list[str]:
    """The non-empty lines of a text file (e.g. training captions, one per line)."""
    return [
        line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def write_rows(
    rows: Iterable[Mapping[str, Any]], path: str | os.PathLike, args: argparse.Namespace
) -> int:
    """Write rows as JSONL and the run's configuration to ``<path>.run.json``; returns the count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    write_run_record(path, args, rows_written=count)
    return count


def write_run_record(path: str | os.PathLike, args: argparse.Namespace, **facts: Any) -> Path:
    """``<path>.run.json``: the command, every parameter (seed included) and the version."""
    record = {
        "foilkit_version": __version__,
        "parameters": {k: (str(v) if isinstance(v, os.PathLike) else v)
                       for k, v in vars(args).items() if not callable(v)},
        **facts,
    }  # fmt: skip
    out = Path(f"{path}.run.json")
    out.write_text(
        json.dumps(record, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8"
    )
    return out


def add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", "-o", required=True, type=Path, help="file to write")
    parser.add_argument("--seed", type=int, default=0, help="random seed (recorded)")
