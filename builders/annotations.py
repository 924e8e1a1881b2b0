"""Where a benchmark's annotation files come from, and reading them with errors that say where.

By default a builder downloads the files its authors published, from raw GitHub URLs pinned
to one commit (:class:`GitHubSource`) or from a Hugging Face Hub dataset repository at one
revision, a commit or, where none is pinned, a branch (:class:`HubSource`, fetched by
huggingface_hub through ``hf://`` paths), through the ``datasets`` download manager (cached,
checksummed by the hub client, honouring ``HF_DATASETS_OFFLINE``). A local folder holding the
same file names (``annotations=...``; the tests use ``../shared/data/<benchmark>``) replaces the
download.

Readers yield ``(row, record)`` where ``row`` names the record in messages: a 1-based line
number for JSONL/TSV, the example id for keyed JSON. They refuse a file that is empty or not
UTF-8, naming the line. :func:`require` checks a record's fields; :func:`text`, :func:`texts`
and :func:`relative_path` check a caption, a list of foils and a video's path under the root.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any

import foilkit.files
from foilkit.files import FileFormatError, read_text

if TYPE_CHECKING:
    import datasets


class AnnotationError(ValueError):
    """An annotation file is not what its builder expects; the message names file, row, field."""

    def __init__(self, file: str | os.PathLike, row: int | str | None, message: str) -> None:
        shown = repr(row) if isinstance(row, str) and not row.isprintable() else row  # a NUL
        where = f"{file}" if row is None else f"{file}, row {shown}"
        super().__init__(f"{where}: {message}")
        self.file, self.row = str(file), row


class AnnotationsUnavailableError(FileNotFoundError):
    """The annotation files could not be downloaded (offline, no network): pass a local folder."""


def revision_text(commit: str, *, local: bool = False) -> str:
    """A source's revision as a card states it: a commit sha as the commit it pins; anything
    else as the branch it is, not pinned (the files as it held them when downloaded, or, for a
    ``local`` copy, when the copy was made)."""
    if len(commit) == 40 and all(c in "0123456789abcdef" for c in commit):
        return f"commit `{commit}`"
    when = "the copy was made" if local else "downloaded"
    return f"branch `{commit}` (not pinned to a commit: the files as it held them when {when})"


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

    @property
    def pin(self) -> str:
        """``owner/name@commit`` with the commit short, as references cite it."""
        return f"{self.repo}@{self.commit[:7]}"


@dataclass(frozen=True)
class HubSource:
    """Files published in a Hugging Face dataset repository, at one revision.

    The same face as :class:`GitHubSource` (``repo``, ``commit``, ``licence``, ``homepage``,
    ``url``), so the card and :func:`fetch` read either. ``gated``: the repository asks users to
    accept its terms and log in before it serves files.
    """

    repo: str  # "owner/name" of the dataset repository
    commit: str  # the revision downloaded: a commit sha, or a branch where none is pinned
    licence: str
    licence_note: str
    gated: bool = False

    def url(self, path: str) -> str:
        """The ``hf://`` path ``datasets`` downloads with huggingface_hub (``hf_hub_download``)."""
        return f"hf://datasets/{self.repo}@{self.commit}/{path}"

    @property
    def homepage(self) -> str:
        return f"https://huggingface.co/datasets/{self.repo}/tree/{self.commit}"


def source_text(source: GitHubSource | HubSource, local: bool) -> str:
    """Where a build's annotation files came from, as its card states it: downloaded from the
    builder's pinned ``source``, or (``local``: an ``annotations`` folder was given) a local copy,
    which foilkit reads as given and cannot check against the revision it should be a copy of."""
    link = f"[{source.repo}]({source.homepage})"
    if not local:
        return f"{link} at {revision_text(source.commit)} (unchanged; parsed and normalised)"
    return (
        "a local copy (the `annotations` folder given to the build, not downloaded), which "
        f"should be a copy of the files of {link} at {revision_text(source.commit, local=True)}; "
        "parsed and normalised as found, not checked against that revision"
    )


def fetch_hub(
    source: HubSource,
    patterns: Sequence[str],
    local: str | os.PathLike | None,
    *,
    cache_dir: str | os.PathLike | None = None,
) -> list[Path]:
    """The annotation files of ``source`` whose path in the repository matches one of the
    ``fnmatch`` ``patterns`` (``snapshot_download``'s ``allow_patterns``), sorted: downloaded
    from the Hub at ``source.commit`` (a gated repository needs its terms accepted and a login),
    or, when ``local`` names a folder (a clone of the repository), the matching files under it.
    Videos are never downloaded here."""
    if local is None:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import GatedRepoError, HfHubHTTPError, LocalEntryNotFoundError

        try:
            folder = Path(
                snapshot_download(
                    source.repo,
                    repo_type="dataset",
                    revision=source.commit,
                    allow_patterns=list(patterns),
                    cache_dir=None if cache_dir is None else os.fspath(cache_dir),
                )
            )
        except GatedRepoError as error:
            raise AnnotationsUnavailableError(
                f"{source.repo} is gated: accept its terms at "
                f"https://huggingface.co/datasets/{source.repo} and log in (hf auth login, or "
                "HF_TOKEN), or pass a local clone: --annotations <folder>"
            ) from error
        except (OSError, HfHubHTTPError, LocalEntryNotFoundError) as error:
            raise AnnotationsUnavailableError(
                f"could not download the annotation files from {source.homepage} "
                f"({type(error).__name__}: {error}). Without network access or with "
                "HF_HUB_OFFLINE=1, pass a local copy: --annotations <folder> (annotations=<folder> "
                f"in Python) holding {', '.join(patterns)}"
            ) from error
    else:
        folder = Path(local).expanduser()
        if not folder.is_dir():
            raise FileNotFoundError(f"annotations folder {folder} does not exist")
    found = sorted(
        path
        for path in folder.rglob("*")
        if path.is_file()
        and ".cache" not in path.relative_to(folder).parts  # huggingface_hub's download state
        and any(fnmatch.fnmatch(path.relative_to(folder).as_posix(), p) for p in patterns)
    )
    if not found:
        raise FileNotFoundError(
            f"annotations folder {folder} holds no file matching {list(patterns)}: it should be a "
            f"copy of {source.homepage}"
        )
    return found


@dataclass(frozen=True)
class AnnotationFile:
    """One annotation file: its path in the upstream repository and in a local copy.

    The local layout is the one ``../shared/data`` uses (the upstream folder dropped; VITATECS'
    OPT-generated files under ``opt/``).
    """

    upstream: str
    local: str


def fetch(
    source: GitHubSource | HubSource,
    files: Mapping[str, AnnotationFile],
    dl_manager: datasets.DownloadManager,
    local: str | os.PathLike | None,
) -> dict[str, Path]:
    """``key -> local path`` of each annotation file: downloaded from ``source`` at its pinned
    commit, or, when ``local`` names a folder, that folder's copy (nothing downloaded)."""
    if local is None:
        urls = {key: source.url(file.upstream) for key, file in files.items()}
        try:
            downloaded = dl_manager.download(urls)
        except OSError as error:  # offline mode, no network, a proxy: all end here
            names = ", ".join(file.local for file in files.values())
            raise AnnotationsUnavailableError(
                f"could not download the annotation files from {source.homepage} "
                f"({type(error).__name__}: {error}). Without network access or with "
                "HF_DATASETS_OFFLINE=1, pass a local copy: --annotations <folder> "
                f"(annotations=<folder> in Python) holding {names}"
            ) from error
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


def _decoded(path: Path, *, rows_are_lines: bool = True) -> str:
    """The file's text; invalid UTF-8 is an :class:`AnnotationError` naming its line (as the
    row itself, or as ``"line N"`` where rows are named by example id)."""
    try:
        return read_text(path)
    except FileFormatError as error:
        raise _annotation_error(error, rows_are_lines=rows_are_lines) from None


def _annotation_error(error: FileFormatError, *, rows_are_lines: bool = True) -> AnnotationError:
    """``error`` (file, line, problem) as the builders' :class:`AnnotationError`."""
    row = error.line if rows_are_lines or error.line is None else f"line {error.line}"
    return AnnotationError(error.path, row, error.problem)


def numbered_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSON Lines file, as
    :func:`foilkit.files.numbered_jsonl` reads it, with its errors as :class:`AnnotationError`;
    an empty file is an error too."""
    rows = 0
    try:
        for number, record in foilkit.files.numbered_jsonl(path):
            rows += 1
            yield number, record
    except FileFormatError as error:
        raise _annotation_error(error) from None
    if not rows:
        raise AnnotationError(path, None, "the file is empty: it holds no JSON line")


def read_keyed_json(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(example id, object)`` for a JSON file holding one object keyed by example id.

    A key repeated in an object (an example id twice, an entry's field twice) is an error naming
    it and, for an example id, the lines of both copies: ``json`` would keep the last copy and
    drop the other's content without a word.
    """
    content = _decoded(path, rows_are_lines=False)
    if not content.strip():
        raise AnnotationError(path, None, "the file is empty: expected a JSON object")
    repeated: list[str] = []
    try:
        data = json.loads(content, object_pairs_hook=_noting_repeats(repeated))
    except json.JSONDecodeError as error:
        raise AnnotationError(
            path, f"line {error.lineno}", f"malformed JSON ({error.msg})"
        ) from None
    if repeated and isinstance(data, dict):
        raise _repeated_key_error(path, content)
    if not isinstance(data, dict):
        raise AnnotationError(
            path, None, f"expected a JSON object keyed by example id, got {type(data).__name__}"
        )
    if not data:
        raise AnnotationError(path, None, "the JSON object is empty: it holds no example")
    for key, record in data.items():
        if not isinstance(record, dict):
            raise AnnotationError(path, key, f"expected a JSON object, got {type(record).__name__}")
        yield key, record


def _noting_repeats(repeated: list[str]) -> Any:
    """An ``object_pairs_hook`` building plain dicts that appends to ``repeated`` each key an
    object holds twice."""

    def build(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        built: dict[str, Any] = {}
        for key, value in pairs:
            if key in built:
                repeated.append(key)
            built[key] = value
        return built

    return build


def _repeated_key_error(path: Path, content: str) -> AnnotationError:
    """The error for a keyed JSON object with a key repeated somewhere (``content`` parses):
    an example id repeated names the lines of its copies; else the entry holding a field twice."""
    entries = list(_top_level_entries(content))
    lines: dict[str, list[int]] = {}
    for key, start, _, _ in entries:
        lines.setdefault(key, []).append(content.count("\n", 0, start) + 1)
    for key, where in lines.items():
        if len(where) > 1:
            shown = ", ".join(map(str, where[:-1])) + f" and {where[-1]}"
            return AnnotationError(
                path,
                key,
                f"the example id appears {len(where)} times (lines {shown}): JSON keeps only the "
                "last copy and drops the others' content; merge them into one entry or remove "
                "the copies",
            )
    for key, _, value_start, value_end in entries:
        repeated: list[str] = []
        json.loads(content[value_start:value_end], object_pairs_hook=_noting_repeats(repeated))
        if repeated:
            return AnnotationError(
                path,
                key,
                f"the entry holds the key {repeated[0]!r} twice: JSON keeps only the last copy "
                "and drops the other's content; merge them or remove one",
            )
    return AnnotationError(path, None, "a JSON object holds a key twice: JSON keeps only the last")


def _top_level_entries(content: str) -> Iterator[tuple[str, int, int, int]]:
    """``(key, key offset, value offset, value end)`` of each entry of the JSON object
    ``content`` (which parses), in file order, repeated keys included."""
    decoder, space = json.JSONDecoder(), re.compile(r"\s*")
    index = space.match(content, content.index("{") + 1).end()
    while content[index] != "}":
        key, after = json.decoder.scanstring(content, index + 1)
        value_start = space.match(content, space.match(content, after).end() + 1).end()
        _, value_end = decoder.raw_decode(content, value_start)
        yield key, index, value_start, value_end
        index = space.match(content, value_end).end()
        if content[index] == ",":
            index = space.match(content, index + 1).end()


def read_tsv(path: Path, columns: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line number, row)`` for a tab-separated file whose header holds ``columns``."""
    return _read_table(path, columns, delimiter="\t", quoting=csv.QUOTE_NONE)


def read_csv(path: Path, columns: Sequence[str]) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line number, row)`` for a comma-separated file (quoted fields may hold commas and line
    breaks, as ``pandas.read_csv`` reads them) whose header holds ``columns``; a row's number is
    the line it ends on."""
    return _read_table(path, columns, delimiter=",", quoting=csv.QUOTE_MINIMAL)


def _read_table(
    path: Path, columns: Sequence[str], *, delimiter: str, quoting: int
) -> Iterator[tuple[int, dict[str, str]]]:
    content = _decoded(path)
    if not content.strip():
        raise AnnotationError(
            path, None, f"the file is empty: expected a header with {list(columns)}"
        )
    reader = csv.DictReader(io.StringIO(content, newline=""), delimiter=delimiter, quoting=quoting)
    separated = "tab-separated" if delimiter == "\t" else "comma-separated"
    missing = [column for column in columns if column not in (reader.fieldnames or ())]
    if missing:
        raise AnnotationError(
            path, 1, f"header lacks column(s) {missing}; it has {reader.fieldnames}"
        )
    rows = 0
    for row in reader:
        number = reader.line_num
        if None in row or any(row[column] is None for column in columns):
            raise AnnotationError(
                path, number, f"expected {len(reader.fieldnames)} {separated} fields"
            )
        rows += 1
        yield number, row
    if not rows:
        raise AnnotationError(path, None, "the file holds a header but no rows")


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


def text(value: Any, *, file: str | os.PathLike, row: int | str, field: str) -> str:
    """``value`` as a caption or foil: a string with something in it, or an
    :class:`AnnotationError`.

    Nothing is cast: a number where a text belongs is an error in the file, not a caption.
    """
    if not isinstance(value, str):
        raise AnnotationError(file, row, f"field {field!r} is not a text: {value!r}")
    if not value.strip():
        raise AnnotationError(file, row, f"field {field!r} is empty")
    return value


def texts(values: Any, *, file: str | os.PathLike, row: int | str, field: str) -> list[str]:
    """``values`` as a list of captions or foils, each checked by :func:`text` (named by
    position)."""
    if not isinstance(values, list):
        raise AnnotationError(file, row, f"field {field!r} is not a list of texts: {values!r}")
    return [
        text(value, file=file, row=row, field=f"{field}[{position}]")
        for position, value in enumerate(values)
    ]


def relative_path(value: str, *, file: str | os.PathLike, row: int | str, field: str) -> str:
    """``value`` as (part of) a video's path under the video root: relative, with no ``..``
    and no NUL byte (which no file name holds: ``os.path`` would fail the whole build on it).

    A name that climbs out of the root would make a build read, and ``--embed-videos`` copy
    into the export, a file the user never handed over.
    """
    if "\x00" in value:
        raise AnnotationError(
            file,
            row,
            f"field {field!r} is {value!r}: a NUL byte (\\x00) cannot be in a file name",
        )
    path = PurePosixPath(value.replace("\\", "/"))
    if not value or path.is_absolute() or PureWindowsPath(value).drive or ".." in path.parts:
        raise AnnotationError(
            file,
            row,
            f"field {field!r} is {value!r}: a video must be a relative path under the video root",
        )
    return value
