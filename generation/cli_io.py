"""File input/output shared by the generation command lines: JSONL in; out, a foils output
folder (:func:`foilkit.generation.foil.write_foils`) or an intermediate file, each with the
run's :class:`~foilkit.generation.provenance.RunRecord`.

A stage writes only what is new or its own, as every foilkit command (:mod:`foilkit.folders`),
and checks it when it starts, before any model loads or request is sent: a foils output folder
is claimed (:func:`foilkit.folders.claim_folder` with
:data:`~foilkit.folders.FOILS`), a stage's file by :func:`claim_output_file`. Every file is
written to a temporary file and renamed over the old one (:func:`foilkit.files.atomic_open`),
the run record last: a full disk or a killed write leaves the previous output and its record
as they were.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The commands' JSONL readers (a bad line names file and line): foilkit's one implementation.
from foilkit.files import atomic_open, numbered_jsonl, read_jsonl  # noqa: F401
from foilkit.folders import ForeignFolderError, is_generation_record
from foilkit.generation.provenance import RunRecord, record_path

if TYPE_CHECKING:
    from foilkit.generation.llm import ChatClient

#: Options that are the record's own fields rather than parameters.
_NOT_PARAMETERS = ("seed", "stage")


def read_lines(path: str | os.PathLike) -> list[str]:
    """The non-empty lines of a text file (e.g. training captions, one per line)."""
    return [
        line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def run_record(
    args: argparse.Namespace,
    pipeline: str,
    *,
    inputs: Mapping[str, str | os.PathLike | None] | None = None,
    models: Mapping[str, Any] | None = None,
    prompts: Mapping[str, Any] | None = None,
    results: Mapping[str, Any] | None = None,
) -> RunRecord:
    """The record of a command-line stage: ``args.stage`` (else the pipeline's name) and
    ``args.seed``; every other option is a parameter (see :meth:`RunRecord.create`)."""
    return RunRecord.create(
        pipeline,
        getattr(args, "stage", None) or pipeline,
        seed=getattr(args, "seed", None),
        inputs=inputs,
        models=models,
        prompts=prompts,
        parameters=parameters(args),
        results=results,
    )


def parameters(args: argparse.Namespace) -> dict[str, Any]:
    """A command's options as a record's parameters.

    Not the stage and the seed: they are fields of their own.
    """
    return {k: v for k, v in vars(args).items() if k not in _NOT_PARAMETERS and not callable(v)}


def write_rows(
    rows: Iterable[Mapping[str, Any]], path: str | os.PathLike, record: RunRecord
) -> int:
    """Write an intermediate stage file of JSONL rows and its record (``<path>.run.json``, with
    ``rows_written``); returns the row count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with atomic_open(path) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    record.with_results(rows_written=count).write(record_path(path))
    return count


class ForeignFileError(ForeignFolderError):
    """A stage's output file (or the record beside it) exists and foilkit did not write it."""


def _refuse_file(path: Path, why: str, flag: str) -> ForeignFileError:
    return ForeignFileError(
        f"{path} {why}; a stage writes a file only where none is or over one it wrote, and "
        f"touched nothing: choose another {flag}"
    )


def claim_output_file(
    path: str | os.PathLike, others: Mapping[str, str | os.PathLike | None] | None = None
) -> Path:
    """Check, when a stage starts, that it may write its file ``path`` (``--output``) and its
    ``others`` (option name -> file, e.g. ``{"plot": ...}``), each with the run's record beside
    it (``<file>.run.json``); returns ``path``.

    The rule of :mod:`foilkit.folders`, for files: a file that does not exist is written; one
    that exists is foilkit's only when the record beside it is a foilkit generation record (a
    stage wrote both). Anything else (a user's file, a record that is not foilkit's, a folder)
    is refused with :class:`ForeignFileError`, one line naming the file and the flag to change,
    before anything is read or written.
    """
    files = {"output": path, **(others or {})}
    for option, file in files.items():
        if file is not None:
            _check_output_file(Path(file), "--" + option.replace("_", "-"))
    return Path(path)


def _check_output_file(path: Path, flag: str) -> None:
    record = record_path(path)
    ours = is_generation_record(record)
    if path.is_dir():
        raise _refuse_file(path, "is a folder, not a file", flag)
    if record.exists() and not ours:
        raise _refuse_file(record, "is not a foilkit run record", flag)
    if path.exists() and not ours:
        why = f"exists and was not written by foilkit (no foilkit record {record.name} beside it)"
        raise _refuse_file(path, why, flag)


def add_output(parser: argparse.ArgumentParser, *, folder: bool = False) -> None:
    """``--output``/``-o`` (a foils output folder, or the stage's file) and ``--seed``."""
    parser.add_argument(
        "--output",
        "-o",
        required=True,
        type=Path,
        help="output folder: foils.parquet + run.json" if folder else "file to write",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (recorded)")


def add_failed_requests_option(parser: argparse.ArgumentParser) -> None:
    """``--allow-failed-requests``: whether LLM requests parked as failed make the exit 1."""
    parser.add_argument(
        "--allow-failed-requests",
        action="store_true",
        help="exit 0 even when LLM requests failed after their retries (they are parked: "
        "recorded with key and reply in the run record, asked again on a rerun); by default "
        "the stage finishes with the rest and exits 1",
    )


def failed_requests_status(
    args: argparse.Namespace, failures: Sequence[Mapping[str, Any]], *, rerun: str
) -> int:
    """Report the LLM requests a stage parked as failed; 1 if any, unless
    ``--allow-failed-requests``. ``rerun`` is the command that asks them again."""
    if not failures:
        return 0
    print(
        f"{len(failures)} LLM requests failed after their retries and were parked (keys and "
        f"replies in the run record); `{rerun}` asks them again, the answered ones from the cache"
    )
    return 0 if args.allow_failed_requests else 1


@contextlib.contextmanager
def recorded_on_failure(
    write_record: Callable[[dict[str, Any]], None], client: ChatClient
) -> Iterator[None]:
    """Run an LLM stage; if it fails, ``write_record({"failed": <the error, one line>})``
    writes its run record anyway (the caller adds the requests, retries and failures so far)
    before the error goes on. A stage that refused to start (a :class:`UserError` before any
    request, e.g. candidates that exist) ran nothing: its last record is left as it is."""
    from foilkit.errors import UserError, one_line

    try:
        yield
    except Exception as error:
        usage = client.usage
        asked = usage.requests or usage.cache_hits or usage.retries or usage.failures
        if asked or not isinstance(error, UserError):
            write_record({"failed": one_line(error)})
        raise
