"""Export a benchmark in the Hub layout, and push that layout to the Hub.

The layout: ``<config>/<split>-NNNNN-of-NNNNN.parquet`` for every config and split, plus a
README.md dataset card whose YAML ``configs:`` maps each config to its files, so
``datasets.load_dataset(folder_or_repo, "<config>")`` reads it back offline with the same
features (``Video``, lists). Videos stay out unless the caller opts in (``embed_videos=True``):
the ``video`` column then stores paths relative to the video root, re-attachable with
``foilkit.attach_videos``.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import datasets
from foilkit.builders import builder_class, load_builder, prepare
from foilkit.builders.card import ExportedConfig, card_text

logger = logging.getLogger(__name__)

#: Rows per parquet row group (small: a row may carry a whole video's bytes).
ROW_GROUP_SIZE = 100
#: Target size of one parquet shard when video bytes are embedded.
MAX_SHARD_BYTES = 500 * 2**20


def export(
    name: str,
    out_dir: str | os.PathLike,
    configs: Sequence[str] | None = None,
    *,
    video_root: str | os.PathLike | None = None,
    on_missing: str = "error",
    annotations: str | os.PathLike | None = None,
    embed_videos: bool = False,
    cache_dir: str | os.PathLike | None = None,
    **config_options: Any,
) -> Path:
    """Build ``configs`` of benchmark ``name`` and write the Hub layout.

    ``configs`` defaults to the builder's ``export_configs()``: every config, except the contrast
    sets that need a user-supplied file.

    ``video_root``/``on_missing``/``annotations`` and ``config_options`` (e.g. ``validity_filter``)
    go to every config (see :func:`foilkit.builders.load_builder`). With ``embed_videos=True`` the
    parquet files carry the video bytes (mind the video licences); otherwise only relative paths.
    Returns the output folder.
    """
    if embed_videos and video_root is None:
        raise ValueError("embed_videos=True needs a video_root to read the videos from")
    names = list(configs) if configs else builder_class(name).export_configs()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    exported = []
    for config in names:
        builder = load_builder(
            name, config, video_root=video_root, on_missing=on_missing, annotations=annotations,
            cache_dir=None if cache_dir is None else os.fspath(cache_dir), **config_options,
        )  # fmt: skip
        splits = prepare(builder)
        files, rows, videos = {}, {}, {}
        for split, dataset in splits.items():
            files[split] = _write_split(dataset, out, config, split, embed_videos=embed_videos)
            rows[split] = dataset.num_rows
            videos[split] = len(set(dataset["video_path"]))
        exported.append(ExportedConfig(builder, rows, videos, files))
        for line in builder.build_summary():
            logger.info("%s: %s", config, line)
    (out / "README.md").write_text(
        card_text(name, exported, embed_videos=embed_videos), encoding="utf-8"
    )
    return out


def _write_split(
    dataset: datasets.Dataset, out: Path, config: str, split: str, *, embed_videos: bool
) -> list[str]:
    """Write one split as parquet shards with relative video paths (and bytes if asked)."""
    features = dataset.features
    portable = dataset.cast_column("video", datasets.Video(decode=False)).map(
        _portable_videos,
        batched=True,
        fn_kwargs={"embed": embed_videos},
        features=datasets.Features({**features, "video": datasets.Video(decode=False)}),
        desc=f"{config}/{split}: relative video paths" + (" + bytes" if embed_videos else ""),
    )
    portable = portable.cast_column("video", features["video"])
    shards = _num_shards(dataset, embed_videos)
    for stale in (out / config).glob(f"{split}-*-of-*.parquet"):  # shards of an earlier export
        stale.unlink()
    paths = []
    for index in range(shards):
        relative = f"{config}/{split}-{index:05d}-of-{shards:05d}.parquet"
        (out / relative).parent.mkdir(parents=True, exist_ok=True)
        # An explicit batch size: the default estimate would stat the (relative) video paths.
        portable.shard(shards, index, contiguous=True).to_parquet(
            out / relative, batch_size=ROW_GROUP_SIZE
        )
        paths.append(relative)
    return paths


def _portable_videos(batch: dict[str, list], *, embed: bool) -> dict[str, list]:
    """``video`` -> ``{"path": video_path, "bytes": file bytes or None}``; absent videos stay ``None``."""
    videos = []
    for video, relative in zip(batch["video"], batch["video_path"], strict=True):
        if video is None:
            videos.append(None)
            continue
        data = None
        if embed:
            data = (
                video["bytes"] if video["bytes"] is not None else Path(video["path"]).read_bytes()
            )
        videos.append({"path": relative, "bytes": data})
    return {"video": videos}


def _num_shards(dataset: datasets.Dataset, embed_videos: bool) -> int:
    if not embed_videos or dataset.num_rows == 0:
        return 1
    videos = dataset.cast_column("video", datasets.Video(decode=False))["video"]
    total = sum(os.path.getsize(path) for path in {video["path"] for video in videos if video})
    return max(1, min(dataset.num_rows, math.ceil(total / MAX_SHARD_BYTES)))


def push_to_hub(
    folder: str | os.PathLike,
    repo_id: str,
    *,
    token: str | None = None,
    private: bool | None = None,
    revision: str | None = None,
    commit_message: str = "Upload foilkit export",
) -> str:
    """Upload an :func:`export` folder as dataset repository ``repo_id``; returns the commit URL.

    The token defaults to the environment (``HF_TOKEN`` or the cached login). Exactly the
    exported layout is uploaded: README.md and the parquet files its ``configs`` list.
    """
    from huggingface_hub import DatasetCard, HfApi

    folder = Path(folder)
    readme = folder / "README.md"
    if not readme.is_file():
        raise FileNotFoundError(
            f"{folder} has no README.md: export the benchmark there first (foilkit.builders.export)"
        )
    files = [
        path
        for config in DatasetCard.load(readme).data.get("configs", [])
        for data_files in config["data_files"]
        for path in data_files["path"]
    ]
    absent = [path for path in files if not (folder / path).is_file()]
    if not files or absent:
        raise FileNotFoundError(
            f"{readme} lists data files that are not in {folder}: {absent or 'none'}"
        )
    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    commit = api.upload_folder(
        folder_path=folder,
        repo_id=repo_id,
        repo_type="dataset",
        revision=revision,
        commit_message=commit_message,
        allow_patterns=["README.md", *files],
    )
    return str(commit)
