"""Finding each row's video under the user's video root, and what to do when it is not there.

The benchmark videos may not be redistributed, so every builder stores, per row, the video's
path *relative to a video root* (``video_path``, by the benchmark's documented layout) and
resolves it against the root the user passes. A missing video is never silently dropped; the
``on_missing`` policy decides:

``"error"`` (default)
    one :class:`MissingVideosError` saying how many are missing and naming the first few;
``"skip"``
    the rows are dropped; the count is logged and recorded (:class:`VideoReport`, which the
    builders put in the dataset info and the dataset card);
``"keep"``
    the rows stay with ``video=None``: text-only work (the unimodal baselines) needs no video.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from foilkit.errors import fix
from foilkit.video_paths import VideoPathError, check_video_root, resolve_video_path

ON_MISSING: tuple[str, ...] = ("error", "skip", "keep")
_SHOWN = 5  # how many missing names an error or a log line lists
#: The policies as a fix names them, for command-line and Python users alike.
_SKIP = fix("--on-missing skip", "on_missing='skip'")
_KEEP = fix("--on-missing keep", "on_missing='keep'")

logger = logging.getLogger(__name__)


class MissingVideosError(FileNotFoundError):
    """Videos a dataset needs are not under the video root (policy ``on_missing="error"``)."""


def check_policy(on_missing: str) -> str:
    if on_missing not in ON_MISSING:
        raise ValueError(f"on_missing must be one of {ON_MISSING}, got {on_missing!r}")
    return on_missing


@dataclass(frozen=True)
class VideoReport:
    """What resolving one split's videos found, and what the policy did about it."""

    split: str
    policy: str
    video_root: str | None
    rows: int  # rows before the policy was applied
    missing: tuple[str, ...] = field(default=())  # relative path of every row whose video is absent

    @property
    def missing_videos(self) -> int:
        """Distinct missing files (several rows may share one video)."""
        return len(set(self.missing))

    @property
    def dropped(self) -> int:
        return len(self.missing) if self.policy == "skip" else 0

    def summary(self) -> str:
        """One sentence for logs, the dataset info and the dataset card."""
        if not self.missing:
            return f"{self.split}: all {self.rows} rows have their video under {self.video_root}."
        where = f"under {self.video_root}" if self.video_root else "(no video root given)"
        head = (
            f"{self.split}: {len(self.missing)} of {self.rows} rows ({self.missing_videos} "
            f"distinct videos) have no video {where}"
        )
        if self.policy == "skip":
            return f"{head}; {_SKIP} dropped them, {self.rows - self.dropped} rows remain."
        return f"{head}; {_KEEP} kept them with video=None (text-only use)."


@dataclass(frozen=True)
class Resolution:
    """Resolved videos, aligned with the input paths, and the indices of the rows kept;
    ``foil_videos``: the rows' resolved foil videos, when foil video paths were given."""

    videos: list[str | None]
    kept: list[int]
    report: VideoReport
    foil_videos: list[str | None] | None = None


def resolve_videos(
    video_paths: Sequence[str],
    video_root: str | os.PathLike | None,
    on_missing: str,
    *,
    split: str,
    ids: Sequence[str] | None = None,
    foil_video_paths: Sequence[str] | None = None,
    selected_from: int | None = None,
) -> Resolution:
    """Resolve relative ``video_paths`` against ``video_root`` and apply the ``on_missing`` policy.

    ``foil_video_paths`` (the pair shape's second video of each row) are resolved alike; a row
    needs both its videos, and the report names its first missing one (a row counts once).

    Without a video root every video counts as missing, so text-only users pass
    ``on_missing="keep"``. A path that resolves outside the root, symlinks followed, is a
    :class:`VideoPathError` naming the row (and its id from ``ids``): a dataset from the Hub
    or a hand-edited annotation must not make a build read, or embed, any other file.
    ``selected_from``: the split's rows when the paths are those of the rows a limit selected
    (``--limit``), which the errors then say.
    """
    check_policy(on_missing)
    root = Path(video_root).expanduser().resolve() if video_root is not None else None
    if root is not None:  # a root that does not exist or is one level off: one line, the fix
        check_video_root(video_paths, [root], named=True)
    if root is not None and foil_video_paths is not None:
        check_video_root(foil_video_paths, [root], named=True)
    columns = {"video_path": video_paths}
    if foil_video_paths is not None:
        columns["foil_video_path"] = foil_video_paths
    resolved: dict[str, list[str | None]] = {column: [] for column in columns}
    kept: list[int] = []
    missing: list[str] = []
    for index in range(len(video_paths)):
        absent = []
        for column, paths in columns.items():
            path = None
            if root is not None:
                try:
                    path = resolve_video_path(paths[index], [root])
                except VideoPathError as error:
                    named = f"row {index}" if ids is None else f"row {index} (id={ids[index]!r})"
                    raise VideoPathError(
                        f"split {split!r}, {named}, field {column!r}: {error}"
                    ) from None
            found = path is not None and path.is_file()
            resolved[column].append(str(path) if found else None)
            if not found:
                absent.append(paths[index])
        if not absent:
            kept.append(index)
            continue
        missing.append(absent[0])
        for paths in resolved.values():
            paths[-1] = None
        if on_missing == "keep":
            kept.append(index)
    videos = resolved["video_path"]
    report = VideoReport(
        split, on_missing, str(root) if root else None, len(video_paths), tuple(missing)
    )
    shown = ", ".join(sorted(set(missing))[:_SHOWN])
    where = f"under {root}" if root else "because no video root was given (--video-root DIR)"
    rows = f"{len(video_paths)} rows"
    if selected_from is not None:
        rows = f"the {len(video_paths)} rows --limit selected (of {selected_from})"
    if missing and not kept and on_missing == "skip":
        selected = "" if selected_from is None else f" ({rows})"
        raise MissingVideosError(
            f"none of the {report.missing_videos} video(s) of split {split!r}{selected} is "
            f"present {where} "
            f"(e.g. {shown}), so {_SKIP} would leave no rows. Check the video root "
            f"against the layout in the dataset card, or pass {_KEEP} for text-only rows."
        )
    if missing and on_missing == "error":
        raise MissingVideosError(
            f"{report.missing_videos} video(s) used by {len(missing)} of {rows} "
            f"of split {split!r} are missing {where}, e.g. {shown}. Put them there (see the "
            f"dataset card for the layout), or pass {_SKIP} to drop those rows or "
            f"{_KEEP} to keep them with video=None for text-only use."
        )
    if missing:
        logger.warning(report.summary())
    return Resolution(videos, kept, report, resolved.get("foil_video_path"))
