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

#: A video root as given: one folder, several, or ``None`` (none named).
RootsGiven = str | os.PathLike | Sequence[str | os.PathLike] | None


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
    its ``videos/`` (an exported dataset's layout); else ``[]`` for a Hub id or a dataset built
    by foilkit (``None``), so that any path is refused; ``None`` (unconfined) only for a dataset
    object handed over without a video root.
    """
    named = named_roots(video_root)
    if named is not None:
        return named
    if dataset is None:
        return []
    if isinstance(dataset, (str, os.PathLike)):
        folder = Path(os.fspath(dataset)).expanduser()
        return [folder, folder / "videos"] if folder.is_dir() else []
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
    says it is missing).
    """
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
