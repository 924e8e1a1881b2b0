"""The key of a build in ``datasets``' cache: everything the build reads.

``datasets`` keeps a prepared build under ``<cache>/<benchmark>/<config>/<version>/`` with the
split sizes it recorded, and checks every later build of that name against them: after videos
arrive (``on_missing="skip"`` keeps more rows) the next build, even into a fresh ``--out``,
fails with ``NonMatchingSplitsSizesError``. :func:`build_key` names one more level of that
folder by what the build reads, so a build of other inputs is another folder:

- the builder and foilkit's builder code (a fixed parser builds other rows);
- the upstream source and the revision its annotations are pinned to;
- every config option (video root, missing-video policy, splits, the benchmark's own);
- the content of the local files named by options (``annotations``, ``multiple_choice_file``);
- the listing of the video root (which videos are present decides which rows are kept).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import fields
from functools import cache
from pathlib import Path
from typing import Any

from foilkit._version import __version__

#: Config options that name local files a build reads (the video root is read as a listing).
FILE_OPTIONS = ("annotations", "multiple_choice_file")
#: How many hex digits of the SHA-256 name the folder.
KEY_LENGTH = 16


def build_key(builder: type, config: Any) -> str:
    """The key of building ``config`` (a ``FoilkitConfig``) with ``builder`` (its class)."""
    digest = hashlib.sha256()
    described = {
        "builder": f"{builder.__module__}.{builder.__qualname__}",
        "foilkit": __version__,
        "code": _builders_code(),
        "source": repr(getattr(builder, "SOURCE", None)),
        "config": {field.name: getattr(config, field.name) for field in fields(config)},
    }
    digest.update(json.dumps(described, sort_keys=True, default=str).encode())
    for option in FILE_OPTIONS:
        _add_files(digest, getattr(config, option, None))
    _add_listing(digest, getattr(config, "video_root", None))
    return digest.hexdigest()[:KEY_LENGTH]


@cache
def _builders_code() -> str:
    """A SHA-256 of foilkit's builder modules (this folder's ``.py`` files)."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _add_files(digest: Any, path: str | None) -> None:
    """``path``'s content (a file, or every file under a folder, with its relative name) added
    to ``digest``; an option left unset or naming nothing adds that."""
    if path is None:
        digest.update(b"\0unset")
        return
    root = Path(path).expanduser()
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    digest.update(b"\0files:" + str(len(files)).encode())
    for file in files:
        name = "" if file == root else file.relative_to(root).as_posix()
        digest.update(f"\0{name}\0".encode())
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)


def _add_listing(digest: Any, video_root: str | None) -> None:
    """The relative path of every file under ``video_root`` added to ``digest`` (symlinks to
    folders not followed: a video path must resolve inside the root, see
    :func:`foilkit.video_paths.resolve_video_path`)."""
    if video_root is None:
        digest.update(b"\0no video root")
        return
    root = Path(video_root).expanduser()
    digest.update(b"\0videos:")
    for folder, _, names in sorted(os.walk(root)):
        relative = Path(folder).relative_to(root).as_posix()
        for name in sorted(names):
            digest.update(f"{relative}/{name}\0".encode())
