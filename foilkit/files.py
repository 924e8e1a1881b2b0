"""Files foilkit writes and reads everywhere: atomic writes, UTF-8 text and JSON Lines that name
file and line when they are wrong.

A file is written atomically (:func:`atomic_write`, :func:`atomic_open`): into a temporary file
beside it, then renamed over it, so a reader, a concurrent process or a killed run never sees
half a file. A disk that fills up while foilkit writes is a :class:`DiskFullError` naming the
file, its folder and the fix (:func:`naming_full_disk`), not a bare ``No space left on device``;
a file that grows past the largest one allowed there (``File too large``: the file system's
limit, ``ulimit -f``) is a :class:`FileTooLargeError` naming them the same way.
A file that is read (:func:`read_text`, :func:`numbered_jsonl`, :func:`read_jsonl`)
and is not what it should be raises :class:`FileFormatError`, a ``ValueError`` that carries the
path and the 1-based line, so callers with their own error type (the builders'
``AnnotationError``) re-raise it with the same facts.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
>>> _ = atomic_write(path, '{"id": "a"}\\n\\n[1]\\n')
>>> rows = numbered_jsonl(path)
>>> next(rows)
(1, {'id': 'a'})
>>> next(rows)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
foilkit.files.FileFormatError: ...rows.jsonl:3: expected a JSON object, got list
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import secrets
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any


class FileFormatError(ValueError):
    """A file's content is not what its reader expects: ``path``, ``line`` (1-based, or ``None``
    for the whole file) and ``problem`` are kept apart for callers that word it their own way."""

    def __init__(self, path: str | os.PathLike, line: int | None, problem: str) -> None:
        self.path, self.line, self.problem = str(path), line, problem
        super().__init__(
            f"{self.path}: {problem}" if line is None else f"{self.path}:{line}: {problem}"
        )


# --- writing --------------------------------------------------------------------------------------

#: The errors of a full disk: no space left, or the user's quota used up.
_FULL_DISK = frozenset({errno.ENOSPC, errno.EDQUOT})


class DiskFullError(OSError):
    """The disk filled up while foilkit wrote ``path``: the message names the file, its folder,
    the space left there and the fix. An ``OSError``, so the command line reports it as a user
    error in one line."""

    def __init__(self, path: str | os.PathLike, code: int = errno.ENOSPC) -> None:
        path = Path(path)
        folder = path.parent.absolute()
        try:
            free = f", {_size(shutil.disk_usage(folder).free)} free"
        except OSError:
            free = ""
        super().__init__(
            code,
            f"no space left on the device of {folder} (writing {path.name}{free}): free space "
            f"there (df -h {folder}), or write to a folder on another disk (--out for a run, "
            "--cache-dir for the embedding cache); a scoring or fine-tuning run then continues "
            "with --resume",
        )
        self.path = path


class FileTooLargeError(OSError):
    """A file foilkit wrote grew past the largest file allowed where it is written (the file
    system's limit, e.g. FAT32's 4 GiB, or the process's ``ulimit -f``): the message names the
    file, its folder and the fix, as :class:`DiskFullError` does."""

    def __init__(self, path: str | os.PathLike) -> None:
        path = Path(path)
        folder = path.parent.absolute()
        super().__init__(
            errno.EFBIG,
            f"file too large: {path.name} grew past the largest file allowed in {folder} (the "
            "file system's limit, or ulimit -f): write to a folder on another file system (--out "
            "or --output), or raise the limit",
        )
        self.path = path


def _size(size: int) -> str:
    """A byte count for people: ``"0 B"``, ``"12.0 MiB"``."""
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024:
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"


def is_full_disk(error: BaseException) -> bool:
    """Whether ``error`` says the disk (or quota) is full: by errno, or, for libraries that
    raise an ``OSError`` without one (pyarrow), by the system's wording."""
    return isinstance(error, OSError) and (
        error.errno in _FULL_DISK or "No space left on device" in str(error)
    )


def is_file_too_large(error: BaseException) -> bool:
    """Whether ``error`` says a file grew past the largest allowed (``EFBIG``), by errno or, for
    libraries that raise an ``OSError`` without one (pyarrow), by the system's wording."""
    return isinstance(error, OSError) and (
        error.errno == errno.EFBIG or "File too large" in str(error)
    )


@contextlib.contextmanager
def naming_full_disk(path: str | os.PathLike) -> Iterator[None]:
    """Turn a full disk while the block writes ``path`` into a :class:`DiskFullError` naming it
    (the system's error names neither the file nor the folder), and a file grown too large into
    a :class:`FileTooLargeError` naming it."""
    try:
        yield
    except OSError as error:
        if isinstance(error, (DiskFullError, FileTooLargeError)):
            raise
        if is_file_too_large(error):
            raise FileTooLargeError(path) from error
        if not is_full_disk(error):
            raise
        code = error.errno if error.errno in _FULL_DISK else errno.ENOSPC
        raise DiskFullError(path, code) from error


@contextlib.contextmanager
def atomic_open(
    path: str | os.PathLike, mode: str = "w", *, encoding: str = "utf-8", newline: str | None = None
) -> Iterator[IO[Any]]:
    """A handle (``mode`` ``"w"`` or ``"wb"``; text with ``encoding`` and ``newline`` as
    :func:`open`'s) whose content replaces ``path`` when the block ends without an error; on an
    error ``path`` is left as it was and the temporary file removed.

    The temporary file is ``.<name>.<random>.tmp`` in the same folder (one rename, on the same
    file system), unique per writer, so concurrent writers of one path never share it; the
    last rename wins. The folder must exist.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    try:
        with naming_full_disk(path):
            text_options = {} if mode == "wb" else {"encoding": encoding, "newline": newline}
            with open(temporary, mode, **text_options) as handle:
                yield handle
            os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def atomic_write(path: str | os.PathLike, data: bytes | str, *, encoding: str = "utf-8") -> Path:
    """Write ``data`` (bytes, or text in ``encoding``) to ``path`` atomically; returns the path."""
    with atomic_open(path, "wb") as handle:
        handle.write(data.encode(encoding) if isinstance(data, str) else data)
    return Path(path)


# --- reading --------------------------------------------------------------------------------------


def read_text(path: str | os.PathLike) -> str:
    """The UTF-8 text of ``path``; bytes that are not UTF-8 are a :class:`FileFormatError` naming
    their line and the first bad byte."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise FileFormatError(
            path, line, f"invalid UTF-8 (byte 0x{data[error.start]:02x}); save the file as UTF-8"
        ) from None


def read_json(path: str | os.PathLike) -> Any:
    """The JSON value in ``path`` (UTF-8); malformed JSON is a :class:`FileFormatError` naming
    the line."""
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as error:
        raise FileFormatError(path, error.lineno, f"malformed JSON ({error.msg})") from None


def numbered_jsonl(
    path: str | os.PathLike, required: Sequence[str] = ()
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each JSON object of a JSON Lines file, blank lines skipped.

    A line that is not JSON, not an object, or lacks one of the ``required`` fields is a
    :class:`FileFormatError` naming file and line. Any line ending (``\\n``, ``\\r\\n``, ``\\r``)
    ends a line.
    """
    for number, line in enumerate(io.StringIO(read_text(path), newline=None), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise FileFormatError(
                path, number, f"malformed JSON ({error.msg}): {line.strip()[:80]!r}"
            ) from None
        if not isinstance(record, dict):
            raise FileFormatError(
                path, number, f"expected a JSON object, got {type(record).__name__}"
            )
        missing = [name for name in required if name not in record]
        if missing:
            raise FileFormatError(path, number, f"missing field(s) {missing}")
        yield number, record


def read_jsonl(path: str | os.PathLike, required: Sequence[str] = ()) -> Iterator[dict[str, Any]]:
    """The JSON objects of a JSON Lines file (see :func:`numbered_jsonl`)."""
    for _, record in numbered_jsonl(path, required):
        yield record
