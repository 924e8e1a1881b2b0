"""foilkit.files: atomic writes leave the old file or the new one, never half of one; JSON Lines
and UTF-8 errors name file and line, for every caller (builders, generation commands)."""

from __future__ import annotations

import doctest
import errno
import os
import threading
from pathlib import Path

import pytest

import foilkit.files
from foilkit.files import (
    DiskFullError,
    FileFormatError,
    atomic_open,
    atomic_write,
    naming_full_disk,
    numbered_jsonl,
    read_json,
    read_jsonl,
    read_text,
)


def test_doctests():
    assert doctest.testmod(foilkit.files).failed == 0


@pytest.mark.parametrize("data", [b"\x00bytes\n", "text, caf\u00e9\n"])
def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path, data):
    path = tmp_path / "out.json"
    path.write_text("old")
    assert atomic_write(path, data) == path
    assert path.read_bytes() == (data.encode() if isinstance(data, str) else data)
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_failed_write_keeps_the_old_file(tmp_path):
    path = tmp_path / "scores.jsonl"
    path.write_text("complete\n")
    with pytest.raises(RuntimeError), atomic_open(path) as handle:
        handle.write("half a ")
        raise RuntimeError("killed")
    assert path.read_text() == "complete\n"
    assert [p.name for p in tmp_path.iterdir()] == ["scores.jsonl"]


def test_concurrent_writers_of_one_path_never_mix(tmp_path):
    path = tmp_path / "entry"
    payloads = [bytes([index]) * 100_000 for index in range(8)]
    threads = [threading.Thread(target=atomic_write, args=(path, data)) for data in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert path.read_bytes() in payloads
    assert [p.name for p in tmp_path.iterdir()] == ["entry"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_names_the_file_its_folder_and_the_fix(tmp_path, monkeypatch):
    """A real ENOSPC: the temporary file is a link to /dev/full, which refuses every write with
    'No space left on device', a message that named neither file nor folder."""
    path = tmp_path / "run.json"
    path.write_text("old")
    monkeypatch.setattr(foilkit.files.secrets, "token_hex", lambda n: "full")
    os.symlink("/dev/full", tmp_path / ".run.json.full.tmp")
    with pytest.raises(DiskFullError) as raised:
        atomic_write(path, "new" * 10_000)
    message = str(raised.value)
    assert raised.value.errno == errno.ENOSPC and raised.value.path == path
    assert f"no space left on the device of {tmp_path} (writing run.json, " in message
    assert f"df -h {tmp_path}" in message and "--out" in message and "--resume" in message
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]


@pytest.mark.parametrize(
    "error",
    [
        OSError(errno.ENOSPC, "No space left on device"),
        OSError(errno.EDQUOT, "Disk quota exceeded"),
        OSError("Error writing bytes to file. Detail: [errno 28] No space left on device"),
    ],
    ids=["ENOSPC", "EDQUOT", "pyarrow-without-errno"],
)
def test_naming_full_disk_names_the_file_of_any_full_disk_error(tmp_path, error):
    with pytest.raises(DiskFullError, match="writing scores.parquet") as raised:
        with naming_full_disk(tmp_path / "scores.parquet"):
            raise error
    assert raised.value.__cause__ is error
    with pytest.raises(PermissionError):  # other errors pass through as they are
        with naming_full_disk(tmp_path / "x"):
            raise PermissionError(errno.EACCES, "Permission denied")


def test_atomic_open_takes_text_or_binary_only(tmp_path):
    with (
        pytest.raises(ValueError, match="mode must be 'w' or 'wb'"),
        atomic_open(tmp_path / "x", "a"),
    ):
        pass


def test_numbered_jsonl_skips_blank_lines_and_reads_any_line_ending(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"id": 1}\r\n\n  \n{"id": 2}\r{"id": 3}')
    assert list(numbered_jsonl(path)) == [(1, {"id": 1}), (4, {"id": 2}), (5, {"id": 3})]
    assert list(read_jsonl(path)) == [{"id": 1}, {"id": 2}, {"id": 3}]
    assert list(numbered_jsonl(tmp_path / "rows.jsonl", required=("id",)))[-1] == (5, {"id": 3})


@pytest.mark.parametrize(
    ("content", "required", "line", "problem"),
    [
        (
            b'{"id": 1}\n{"id": 2,',
            (),
            2,
            "malformed JSON (Expecting property name enclosed in double quotes): '{\"id\": 2,'",
        ),
        (b'{"id": 1}\n\n["a list"]\n', (), 3, "expected a JSON object, got list"),
        (
            b'{"id": 1, "caption": "x"}\n{"caption": "y"}\n',
            ("id", "caption"),
            2,
            "missing field(s) ['id']",
        ),
        (
            b'{"id": 1}\n{"caption": "caf\xe9"}\n',
            (),
            2,
            "invalid UTF-8 (byte 0xe9); save the file as UTF-8",
        ),
    ],
    ids=["malformed", "not-an-object", "missing-field", "latin-1"],
)
def test_a_bad_line_names_file_and_line(tmp_path, content, required, line, problem):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(FileFormatError) as caught:
        list(read_jsonl(path, required))
    error = caught.value
    assert (error.path, error.line, error.problem) == (str(path), line, problem)
    assert str(error) == f"{path}:{line}: {problem}"
    assert isinstance(error, ValueError)


def test_read_text_names_the_line_of_invalid_utf8(tmp_path):
    path = tmp_path / "captions.txt"
    path.write_bytes(b"one\ntwo\nthr\xffee\n")
    with pytest.raises(FileFormatError, match=r"captions\.txt:3: invalid UTF-8 \(byte 0xff\)"):
        read_text(path)


@pytest.mark.parametrize(
    "content, line, problem",
    [
        (b'{"a": 1,\n "b": }\n', 2, "malformed JSON (Expecting value)"),
        (b"", 1, "malformed JSON (Expecting value)"),
        (b'{"caption": "caf\xe9"}', 1, "invalid UTF-8 (byte 0xe9); save the file as UTF-8"),
    ],
)
def test_read_json_names_file_and_line(tmp_path, content, line, problem):
    path = tmp_path / "items.json"
    path.write_bytes(content)
    with pytest.raises(FileFormatError) as caught:
        read_json(path)
    error = caught.value
    assert (error.path, error.line, error.problem) == (str(path), line, problem)


def test_read_json_reads_any_json_value(tmp_path):
    path = tmp_path / "items.json"
    path.write_text('{"1": {"caption": "a man skips rope"}}', encoding="utf-8")
    assert read_json(path) == {"1": {"caption": "a man skips rope"}}


def test_the_generation_commands_read_with_the_same_reader():
    from foilkit.generation import cli_io

    assert cli_io.read_jsonl is read_jsonl and cli_io.numbered_jsonl is numbered_jsonl
