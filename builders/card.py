"""The dataset card (README.md) of an exported benchmark: YAML metadata and what a user must know.

The YAML block holds what the Hub and ``datasets.load_dataset`` read: ``configs`` (one entry per
config with its parquet ``data_files`` per split), ``dataset_info`` (the features of each config),
the licence and the pretty name. The body says where the annotations came from, the counts, how
videos are resolved (layout, missing videos, embedded bytes or not), the benchmark's own notes
and the citation. The card is published: the paths of the machine that built it (video root,
annotation folder, input files) are written as ``<video_root>``, ``<annotations>``, ... and an
export that dropped rows for missing videos says so in its title.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import datasets
from huggingface_hub import DatasetCardData

from foilkit.builders.annotations import source_text
from foilkit.builders.base import FoilkitBuilder
from foilkit.builders.build_key import FILE_OPTIONS
from foilkit.video_paths import video_columns


@dataclass(frozen=True)
class ExportedConfig:
    """One exported config: its builder (after building), rows and parquet files per split."""

    builder: FoilkitBuilder
    rows: dict[str, int]  # split -> rows written
    distinct_videos: dict[str, int]  # split -> distinct video files (video_path, foil_video_path)
    files: dict[str, list[str]]  # split -> parquet paths relative to the export folder

    @property
    def name(self) -> str:
        return self.builder.config.name

    @property
    def benchmark_rows(self) -> int:
        """Rows of the benchmark's config before rows were dropped for missing videos."""
        reports = self.builder.video_reports
        return sum(
            reports[split].rows if split in reports else rows for split, rows in self.rows.items()
        )


#: Config options that hold a path of the building machine; the card names them instead.
PATH_OPTIONS = ("video_root", *FILE_OPTIONS)
#: The card metadata key naming the benchmark an export holds, which ``foilkit evaluate
#: --dataset <export>`` reads when ``--benchmark`` is not given.
BENCHMARK_KEY = "foilkit_benchmark"


def exported_benchmark(folder: str | os.PathLike) -> str | None:
    """The benchmark a local export's card names (its YAML ``foilkit_benchmark``); ``None`` for a
    folder without such a card (not a folder, no README.md, an export from before the key)."""
    import yaml

    card = Path(folder) / "README.md"
    if not card.is_file():
        return None
    text = card.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---\n") or "\n---" not in text[4:]:
        return None
    try:
        header = yaml.safe_load(text[4 : text.index("\n---", 4)])
    except yaml.YAMLError:
        return None
    name = header.get(BENCHMARK_KEY) if isinstance(header, dict) else None
    return name if isinstance(name, str) else None


def without_local_paths(text: str, builders: Sequence[FoilkitBuilder]) -> str:
    """``text`` with every path option of ``builders`` (as given, expanded, resolved) written as
    ``<option>``: a published card must not carry the builder's folders."""
    found: dict[str, str] = {}
    for builder in builders:
        for option in PATH_OPTIONS:
            value = getattr(builder.config, option, None)
            if not value:
                continue
            value = os.fspath(value)
            expanded = os.path.expanduser(value)
            for form in (value, expanded, os.path.abspath(expanded), os.path.realpath(expanded)):
                if form.rstrip("/"):
                    found[form.rstrip("/")] = f"<{option}>"
    for path in sorted(found, key=len, reverse=True):
        text = text.replace(path, found[path])
    return text


def partial_export(exported: Sequence[ExportedConfig]) -> str | None:
    """``None`` for a complete export; else what is missing, e.g. ``479 of 3,800 rows of
    `direction`, videos missing``, for the config missing the most rows (``on_missing="skip"``)."""
    short = [item for item in exported if sum(item.rows.values()) < item.benchmark_rows]
    if not short:
        return None
    item = max(short, key=lambda item: item.benchmark_rows - sum(item.rows.values()))
    return (
        f"{sum(item.rows.values()):,} of {item.benchmark_rows:,} rows of `{item.name}`, "
        "videos missing"
    )


def _union_files(
    exported: Sequence[ExportedConfig], unions: Mapping[str, Sequence[str]]
) -> dict[str, dict[str, list[str]]]:
    """Per union config and split (those all its parts have), the parts' parquet files."""
    files = {item.name: item.files for item in exported}
    return {
        name: {
            split: [path for part in parts for path in files[part][split]]
            for split in files[parts[0]]
            if all(split in files[part] for part in parts)
        }
        for name, parts in unions.items()
    }


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


def exported_features(features: datasets.Features, *, embed_videos: bool) -> datasets.Features:
    """The features an export stores: without the video bytes, the ``video`` column holds paths
    relative to a video root nobody has named yet, so it is stored undecoded
    (``Video(decode=False)``): ``ds["test"][0]`` reads ``{"path": ..., "bytes": None}`` instead
    of a decoder's crash on a relative path; :func:`foilkit.attach_videos` makes it decodable.
    So is a pair's ``foil_video``."""
    if embed_videos:
        return features
    stored = {
        name: replace(features[name], decode=False)
        for name in video_columns(list(features))
        if isinstance(features[name], datasets.Video)
    }
    return datasets.Features({**features, **stored}) if stored else features


def card_text(
    benchmark: str,
    exported: Sequence[ExportedConfig],
    *,
    embed_videos: bool,
    unions: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The full README.md of an export of ``benchmark`` holding ``exported`` configs, plus the
    ``unions``: configs listing the files of others (name -> the exported configs it unites)."""
    first = exported[0].builder
    default = type(first).DEFAULT_CONFIG_NAME
    unions = dict(unions or {})
    partial = partial_export(exported)
    title = first.PRETTY_NAME + (f" (partial export: {partial})" if partial else "")
    card_data = DatasetCardData(
        pretty_name=title.replace("`", ""),
        license=first.SOURCE.licence,
        language=["en"],
        tags=["video", "video-text", "temporal-reasoning", "foils", "foilkit"],
        **{BENCHMARK_KEY: benchmark},
        configs=card_configs(
            {config.name: config.files for config in exported} | _union_files(exported, unions),
            default,
        ),
    )

    def stored(features: datasets.Features) -> datasets.Features:
        return exported_features(features, embed_videos=embed_videos)

    infos = {
        config.name: datasets.DatasetInfo(
            features=stored(config.builder.info.features), config_name=config.name
        )
        for config in exported
    } | {
        name: datasets.DatasetInfo(features=stored(first.info.features), config_name=name)
        for name in unions
    }
    datasets.info.DatasetInfosDict(infos).to_dataset_card_data(card_data)
    body = _body(benchmark, exported, embed_videos=embed_videos, title=title, unions=unions)
    text = f"---\n{card_data.to_yaml()}\n---\n\n{body}"
    return without_local_paths(text, [item.builder for item in exported])


def _body(
    benchmark: str,
    exported: Sequence[ExportedConfig],
    *,
    embed_videos: bool,
    title: str,
    unions: Mapping[str, Sequence[str]],
) -> str:
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
    partial = partial_export(exported)
    if partial:
        notes = (
            f"**Partial export**: {partial}. Rows whose video was missing were dropped "
            '(`on_missing="skip"`), so scores on it are not the benchmark\'s: it carries no '
            "`eval.yaml` and registers no leaderboard task.\n\n" + notes
        )
    if unions:
        united = "; ".join(
            f"`{name}` = the files of {', '.join(f'`{p}`' for p in parts)}"
            for name, parts in unions.items()
        )
        notes = f"Union configs (no rows of their own): {united}.\n\n" + notes
    return f"""# {title}

{builder.DESCRIPTION}

Exported with foilkit (`foilkit.builders.export("{benchmark}", ...)`; \
builder `{type(builder).__name__}`).

## Source

- Annotations: {source_text(source, local=config.annotations is not None)}.
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
