"""Re-attach a foilkit dataset to a local copy of its videos (``foilkit.attach_videos``).

Benchmark videos may not be redistributed, so an exported or Hub dataset stores, per row, the
video's path relative to a video root (``video_path``). ``attach_videos`` resolves those paths
under the caller's folder and applies the same missing-video policy as the builders.
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import datasets


def attach_videos(
    dataset: datasets.Dataset | datasets.DatasetDict,
    root: str | os.PathLike,
    *,
    on_missing: str = "error",
) -> datasets.Dataset | datasets.DatasetDict:
    """Point every row's ``video`` at ``root / video_path``.

    Args:
        dataset: a foilkit dataset (or dict of splits) with a ``video_path`` column.
        root: the folder holding the videos in the benchmark's layout (see its dataset card).
        on_missing: ``"error"`` (default) raises naming the missing videos, ``"skip"`` drops
            their rows, ``"keep"`` keeps them with ``video=None``.

    Returns:
        A new dataset of the same kind whose ``video`` column decodes (an export without video
        bytes stores it undecoded: its relative paths cannot be opened); the ``Video`` feature's
        other settings are kept. Every row's video is re-pointed, so bytes embedded in an export
        are replaced by the local file.
    """
    import datasets

    if isinstance(dataset, datasets.DatasetDict):
        return datasets.DatasetDict(
            {split: _attach(part, root, on_missing, split=split) for split, part in dataset.items()}
        )
    return _attach(dataset, root, on_missing, split=str(dataset.split or "dataset"))


def _attach(
    dataset: datasets.Dataset, root: str | os.PathLike, on_missing: str, *, split: str
) -> datasets.Dataset:
    import datasets

    from foilkit.builders.videos import resolve_videos

    if "video_path" not in dataset.column_names:
        raise ValueError(
            f"split {split!r} has no 'video_path' column (columns: {dataset.column_names}); "
            "attach_videos needs a dataset built or exported by foilkit"
        )
    ids = list(dataset["id"]) if "id" in dataset.column_names else None
    pairs = "foil_video_path" in dataset.column_names  # the pair shape: a foil video per row
    resolution = resolve_videos(
        list(dataset["video_path"]),
        root,
        on_missing,
        split=split,
        ids=ids,
        foil_video_paths=list(dataset["foil_video_path"]) if pairs else None,
    )
    attached, columns = dataset, list(dataset.column_names)
    resolved = {"video": resolution.videos}
    if pairs:
        resolved["foil_video"] = resolution.foil_videos
    for name, paths in resolved.items():
        # the files are local now: decodable, whatever an export stored (paths undecoded)
        feature = replace(dataset.features.get(name, datasets.Video()), decode=True)
        if name not in columns:
            columns = [name, *columns] if name == "video" else [*columns, name]
        attached = attached.remove_columns([c for c in (name,) if c in attached.column_names])
        encoded = [None if path is None else feature.encode_example(path) for path in paths]
        attached = attached.add_column(name, encoded, feature=feature)
    attached = attached.select_columns(columns)
    if len(resolution.kept) < dataset.num_rows:
        attached = attached.select(resolution.kept)
    return attached
