"""Which video files a dataset row may name: only files inside a video root the user named.

A dataset's ``video`` cells are data, and a dataset may be someone else's (a Hub id, a folder
of parquet): a path in it must not make foilkit open, decode, score or embed in ``report.html``
(the page ``push-results`` uploads) a file the user did not hand over. So every path, relative
or absolute, must resolve (symlinks followed) inside one of the *video roots*, and a path that
does not is refused before anything opens it, in words that do not depend on whether the file
exists (a row error is recorded in the scores, which may be published).

The roots (:func:`video_roots_for`) are the folders named as ``--video-root`` / ``video_root=``
(one or several); without one, the dataset's own folder when the user named a local folder
(a ``videofolder`` dataset stores absolute paths inside it); without either, none: such a
dataset's paths are all refused, with the fix. One case is left unconfined, and recorded so
(``video_roots: null`` in ``run.json``): a ``datasets.Dataset`` object handed to the Python API
without ``video_root``, whose paths are the caller's own; ``report.html`` still embeds frames
only of files inside a root.

>>> import os, tempfile
>>> root = tempfile.mkdtemp()
>>> resolve_video_path("clip.mp4", [root]) == Path(root) / "clip.mp4"
True
>>> resolve_video_path("/etc/passwd", [root])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
foilkit.video_paths.VideoPathError: '/etc/passwd' is not inside the video root ...
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from foilkit.errors import fix

#: A video root as given: one folder, several, or ``None`` (none named).
RootsGiven = str | os.PathLike | Sequence[str | os.PathLike] | None

#: Each video column of a foilkit dataset and the column holding its path relative to the video
#: root: ``video``, and the foil video of the pair shape (:mod:`foilkit.builders.schema`). A
#: build resolves each, an export makes each portable, ``attach_videos`` re-points each, and
#: the scorer confines each to the video roots.
VIDEO_COLUMNS = {"video": "video_path", "foil_video": "foil_video_path"}


def video_columns(column_names: Sequence[str]) -> dict[str, str]:
    """The video columns among ``column_names`` with their path columns (``video`` first)."""
    return {video: path for video, path in VIDEO_COLUMNS.items() if video in column_names}


#: The fix a refused path's message ends with.
FIX = (
    "a video must lie under a folder named as a video root (--video-root DIR; video_root= in "
    "Python)"
)


class VideoPathError(ValueError):
    """A video path leads out of every video root (``../``, an absolute path, a symlink)."""


def named_roots(video_root: RootsGiven) -> list[Path] | None:
    """The folders named as video roots (``~`` expanded), or ``None`` when none was named."""
    if video_root is None:
        return None
    given = [video_root] if isinstance(video_root, (str, os.PathLike)) else list(video_root)
    return list(dict.fromkeys(Path(os.fspath(root)).expanduser() for root in given))


def video_roots_for(video_root: RootsGiven, dataset: Any) -> list[Path] | None:
    """The roots ``dataset``'s video paths must resolve inside.

    ``video_root`` when named; else, for a ``dataset`` given as a local folder, that folder and
    its ``videos/`` when there is one (an exported dataset's layout); else ``[]`` for a Hub id or
    a dataset built by foilkit (``None``), so that any path is refused; ``None`` (unconfined)
    only for a dataset object handed over without a video root.
    """
    named = named_roots(video_root)
    if named is not None:
        return named
    if dataset is None:
        return []
    if isinstance(dataset, (str, os.PathLike)):
        folder = Path(os.fspath(dataset)).expanduser()
        if not folder.is_dir():
            return []
        return [folder, *([folder / "videos"] if (folder / "videos").is_dir() else [])]
    return None


def roots_text(roots: Sequence[Path]) -> str:
    """The roots for a message: ``the video root /a`` or ``the video roots /a, /b``."""
    shown = ", ".join(os.path.realpath(root) for root in roots)
    return f"the video root{'s' if len(roots) > 1 else ''} {shown}"


def resolve_video_path(video: str | os.PathLike, roots: Sequence[Path] | None) -> Path:
    """The file ``video`` names: under the first root holding it when relative, itself when
    absolute; it must lie inside one of ``roots`` (symlinks followed), else
    :class:`VideoPathError`. ``roots=None``: unconfined, ``video`` as it is.

    Whether a file outside the roots exists is never looked at: the error reads the same either
    way. A relative path found under no root is its place under the first root (decoding then
    says it is missing). A path holding a NUL byte names no file anywhere: refused as well
    (``os.path`` would raise "embedded null byte" for the whole run).
    """
    if "\x00" in os.fsdecode(video):
        raise VideoPathError(
            f"{os.fsdecode(video)!r} holds a NUL byte (\\x00), which no file name can: fix the "
            "row's path"
        )
    path = Path(os.fspath(video))
    if roots is None:
        return path
    candidates = [path] if path.is_absolute() else [Path(root) / path for root in roots]
    real_roots = [os.path.realpath(root) for root in roots]
    inside = [c for c in candidates if _within(os.path.realpath(c), real_roots)]
    if not inside:
        where = (
            f"is not inside {roots_text(roots)} (symlinks followed)"
            if roots
            else "cannot be read: no video root was named"
        )
        raise VideoPathError(f"{os.fspath(video)!r} {where}; {FIX}")
    return next((c for c in inside if c.is_file()), inside[0])


def _within(real: str, real_roots: Sequence[str]) -> bool:
    return any(os.path.commonpath([root, real]) == root for root in real_roots)


class VideoRootError(ValueError):
    """The video root cannot be the one the rows' paths are relative to: it does not exist, it
    is one level off, or none was named and no row's video is found (found before any model
    loads)."""


#: How many paths an error or a log line names.
SHOWN = 5
#: How many rows' paths are tried when looking for a video root one level off.
_PROBES = 20
#: How many subfolders of a root are looked into for the rows' paths.
_CHILDREN = 200


def _relative(paths: Sequence[str]) -> list[Path]:
    return [Path(p) for p in paths if not Path(p).is_absolute()][:_PROBES]


def _holds(folder: Path, relatives: Sequence[Path]) -> bool:
    return any((folder / relative).is_file() for relative in relatives)


def root_one_level_off(root: Path, paths: Sequence[str]) -> Path | None:
    """The folder one level above or below ``root`` that holds the rows' videos (``paths``,
    relative), when ``root`` holds none of them: the usual slip of naming ``MSRVTT/`` itself, or
    the folder above the one holding ``MSRVTT/``. ``None`` when neither does."""
    relatives = _relative(paths)
    if not relatives or not root.is_dir() or _holds(root, relatives):
        return None
    if _holds(root.parent, relatives):
        return root.parent
    children = sorted(child for child in root.iterdir() if child.is_dir())[:_CHILDREN]
    return next((child for child in children if _holds(child, relatives)), None)


def expected_prefix(paths: Sequence[str]) -> str:
    """What the rows expect under a video root, for a message: ``MSRVTT/...`` (their first
    path's first folder) or the first path itself."""
    relatives = _relative(paths)
    if not relatives:
        return repr(paths[0]) if paths else "no path"
    first = relatives[0]
    return f"{first.parts[0]}/..." if len(first.parts) > 1 else repr(str(first))


def check_video_root(paths: Sequence[str], roots: Sequence[Path], *, named: bool) -> list[str]:
    """Look at the rows' video files before anything heavy runs; the paths of those missing.

    Raises :class:`VideoRootError` when a named root does not exist, when no video is under the
    roots but one level above or below holds them, and when no root was named (``named``
    false: the defaults of :func:`video_roots_for`) and no video is found: each a mistake about
    the root, not a few missing files. Paths refused by :func:`resolve_video_path` are left to
    the scoring plan, which names their rows.
    """
    for root in roots if named else ():
        if not root.is_dir():
            what = "is not a folder" if root.exists() else "does not exist"
            raise VideoRootError(
                f"--video-root {root} {what}; pass the folder the rows' video paths are relative "
                f"to (they expect {expected_prefix(paths)} under it)"
            )
    expects = f"rows expect {expected_prefix(paths)} under the video root"
    if not roots and paths:
        raise VideoRootError(
            f"no video root was named and the dataset is no local folder ({expects}): pass "
            f"{fix('--video-root DIR', 'video_root=DIR')}, the folder holding them"
        )
    missing = []
    for video in paths:
        try:
            if not resolve_video_path(video, roots).is_file():
                missing.append(video)
        except VideoPathError:
            continue
    if not missing or len(missing) < len(paths):
        return missing
    for root in roots:
        nearby = root_one_level_off(root, paths)
        if nearby is not None:
            raise VideoRootError(
                f"none of the {len(paths)} videos is under {root}, but {nearby} holds them "
                f"({expects}): pass {fix(f'--video-root {nearby}', f'video_root={str(nearby)!r}')}"
            )
    if not named:
        where = roots_text(roots) if roots else "any folder (no video root was named)"
        raise VideoRootError(
            f"none of the {len(paths)} videos is under {where} ({expects}, e.g. "
            f"{', '.join(map(repr, paths[:SHOWN]))}): pass "
            f"{fix('--video-root DIR', 'video_root=DIR')}, the folder holding them"
        )
    return missing


def missing_summary(missing: Sequence[str], total: int, roots: Sequence[Path], listed: str) -> str:
    """One line for missing videos: how many, the first few, and where the full list is."""
    distinct = list(dict.fromkeys(missing))
    return (
        f"{len(missing)} of {total} rows' videos ({len(distinct)} files) are missing under "
        f"{roots_text(roots)}, e.g. {', '.join(distinct[:SHOWN])}; those rows fail "
        f"(--min-coverage decides the exit status); the full list: {listed}"
    )
