"""The dataset card (README.md) of an exported benchmark: YAML metadata and what a user must know.

The YAML block holds what the Hub and ``datasets.load_dataset`` read: ``configs`` (one entry per
config with its parquet ``data_files`` per split), ``dataset_info`` (the features of each config),
the licence and the pretty name. The body says where the annotations came from, the counts, how
videos are resolved (layout, missing videos, embedded bytes or not), the benchmark's own notes
and the citation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import datasets
from huggingface_hub import DatasetCardData

from foilkit.builders.base import FoilkitBuilder


@dataclass(frozen=True)
class ExportedConfig:
    """One exported config: its builder (after building), rows and parquet files per split."""

    builder: FoilkitBuilder
    rows: dict[str, int]  # split -> rows written
    distinct_videos: dict[str, int]  # split -> distinct video_path values
    files: dict[str, list[str]]  # split -> parquet paths relative to the export folder

    @property
    def name(self) -> str:
        return self.builder.config.name


def card_configs(
    files: Mapping[str, Mapping[str, str | Sequence[str]]], default: str | None = None
) -> list[dict[str, Any]]:
    """The dataset card's YAML ``configs:`` list, which ``datasets.load_dataset(folder_or_repo,
    config)`` reads: per config (``files``: config -> split -> parquet path, glob or list of
    them, relative to the card) its ``data_files`` per split, ``default`` marked as the default.

    >>> card_configs({"a": {"test": "a.parquet"}}, default="a")
    [{'config_name': 'a', 'data_files': [{'split': 'test', 'path': 'a.parquet'}], 'default': True}]
    """
    return [
        {
            "config_name": config,
            "data_files": [
                {"split": split, "path": path if isinstance(path, str) else list(path)}
                for split, path in splits.items()
            ],
            **({"default": True} if config == default else {}),
        }
        for config, splits in files.items()
    ]


def card_text(benchmark: str, exported: Sequence[ExportedConfig], *, embed_videos: bool) -> str:
    """The full README.md of an export of ``benchmark`` holding ``exported`` configs."""
    first = exported[0].builder
    default = type(first).DEFAULT_CONFIG_NAME
    card_data = DatasetCardData(
        pretty_name=first.PRETTY_NAME,
        license=first.SOURCE.licence,
        language=["en"],
        tags=["video", "video-text", "temporal-reasoning", "foils", "foilkit"],
        configs=card_configs({config.name: config.files for config in exported}, default),
    )
    infos = {
        config.name: datasets.DatasetInfo(
            features=config.builder.info.features, config_name=config.name
        )
        for config in exported
    }
    datasets.info.DatasetInfosDict(infos).to_dataset_card_data(card_data)
    body = _body(benchmark, exported, embed_videos=embed_videos)
    return f"---\n{card_data.to_yaml()}\n---\n\n{body}"


def _body(benchmark: str, exported: Sequence[ExportedConfig], *, embed_videos: bool) -> str:
    builder = exported[0].builder
    source = builder.SOURCE
    config = builder.config
    counts = "\n".join(
        f"| `{item.name}` | {split} | {rows} | {item.distinct_videos[split]} |"
        for item in exported
        for split, rows in item.rows.items()
    )
    reports = "\n".join(
        f"- `{item.name}` {line}" for item in exported for line in item.builder.build_summary()
    )
    videos = (
        "The parquet files **embed the video bytes** (the exporter opted in with "
        "`embed_videos=True`): check the video licences before sharing them."
        if embed_videos
        else "The parquet files hold **no video bytes**: the `video` column stores each path "
        "*relative to the video root* (the same value as `video_path`), or `None` where the video "
        "was absent when "
        "exporting. Download the videos from their original sources, lay them out as above and "
        "attach them:\n\n"
        "```python\nimport datasets, foilkit\n\n"
        f'ds = datasets.load_dataset("<this repo or folder>", "{exported[0].name}")\n'
        'ds = foilkit.attach_videos(ds, "/path/to/videos")'
        '  # on_missing="error" | "skip" | "keep"\n```'
    )
    notes = type(builder).card_notes([item.builder for item in exported])
    return f"""# {builder.PRETTY_NAME}

{builder.DESCRIPTION}

Exported with foilkit (`foilkit.builders.export("{benchmark}", ...)`; \
builder `{type(builder).__name__}`).

## Source

- Annotations: [{source.repo}]({source.homepage}) at commit `{source.commit}` \
(unchanged; parsed and normalised).
- Licence: {source.licence_note}
- Videos are not part of the annotations; users obtain them from the original sources.

## Configs and counts

| config | split | rows | distinct videos |
|---|---|---|---|
{counts}

## Columns

Every row has `id`, `video` (a `datasets.Video`), `video_path` (the video relative to the video \
root),
`caption` (the true text), `foils` (the false texts), `start`/`end` (the window in seconds; `None` =
from the beginning / to the end), `reversed` (play the window backwards), and the benchmark's \
metadata
columns listed in the YAML `dataset_info`.

## Videos

Layout under the video root: {builder.VIDEO_LAYOUT}

{videos}

What the build did (missing-video policy `on_missing="{config.on_missing}"`):

{reports}

{notes}

## Citation

```bibtex
{builder.CITATION}
```
"""
