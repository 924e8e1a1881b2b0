"""What is scored is what a dataset's files say now.

``datasets`` keys the cache of a local folder with a dataset card (``configs:`` in its README,
the Hub layout ``foilkit build --out`` writes) by the folder's *name* and config, not by its
files: a folder rewritten in place, or another folder of the same name elsewhere, is served the
rows of the first one prepared, without a word. :func:`load_parquet_folder` reads such a folder
as its card declares it (each config's splits and data files, its features), but through the
packaged ``parquet`` builder with the files named, whose cache is keyed by each file's path
and modification time.

:func:`dataset_fingerprint` is the content of the rows a run scores, recorded in ``run.json``
(its identity) so that ``--resume`` refuses a run whose dataset changed since it started
(:func:`fingerprint_change` names what changed) instead of mixing two datasets in one result.

:func:`load_scoring_dataset` is how the scorer loads what it is given (a dataset object, a saved
or exported folder, a Hub id), and :func:`hub_revision` the Hub commit it was read at.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from foilkit.errors import UserError, check_local_path, one_line
from foilkit.video_paths import video_columns

#: The card of a dataset folder in the Hub layout (its YAML block declares the configs).
CARD = "README.md"
#: How many rows of a column :func:`dataset_fingerprint` reads at a time.
ROWS_AT_ONCE = 1000


def card_configs(folder: Path) -> dict[str, dict[str, Any]]:
    """The configs the dataset card of ``folder`` declares (``configs:``; name -> its entry),
    empty when it has no card or the card declares none."""
    if not (folder / CARD).is_file():
        return {}
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard

    return dict(MetadataConfigs.from_dataset_card_data(DatasetCard.load(folder / CARD).data))


def load_parquet_folder(folder: Path, config: str | None, split: str | None) -> Any | None:
    """The rows of a local folder whose card declares parquet configs, read from its files now
    (see the module docstring): a ``Dataset`` (``split`` given) or a ``DatasetDict`` whose
    ``info.config_name`` is the config read. ``None`` when the card declares no configs, or
    the config's files are not parquet: ``datasets.load_dataset(folder)`` then reads it
    (a folder without ``configs:`` is keyed by its files already)."""
    import datasets
    from datasets.data_files import DataFilesDict, get_data_patterns, sanitize_patterns
    from datasets.info import DatasetInfosDict
    from huggingface_hub import DatasetCard

    configs = card_configs(folder)
    if not configs:
        return None
    name = _config_name(folder, configs, config)
    entry = configs[name]
    base = folder / entry["data_dir"] if entry.get("data_dir") else folder
    patterns = (
        sanitize_patterns(entry["data_files"])
        if entry.get("data_files") is not None
        else get_data_patterns(str(base))
    )
    files = DataFilesDict.from_patterns(patterns, base_path=str(base))
    if not all(Path(path).suffix == ".parquet" for paths in files.values() for path in paths):
        return None
    if split is not None:
        if split not in files:
            raise ValueError(
                f"{folder} config {name!r} has no split {split!r}; it has {sorted(files)}: pass "
                "one of them (--split NAME; split= in Python)"
            )
        files = {split: files[split]}
    info = DatasetInfosDict.from_dataset_card_data(DatasetCard.load(folder / CARD).data).get(name)
    loaded = datasets.load_dataset(
        "parquet",
        data_files={key: list(paths) for key, paths in files.items()},
        split=split,
        features=info.features if info is not None else None,
    )
    parts = loaded.values() if isinstance(loaded, datasets.DatasetDict) else [loaded]
    for part in parts:  # the config read, as load_dataset(folder, config) names it
        part.info.config_name = name
    return loaded


def _config_name(folder: Path, configs: Mapping[str, Any], config: str | None) -> str:
    """The config to read: ``config``, else the card's default one (the only one, ``default``,
    or the one marked ``default: true``), as ``datasets.load_dataset`` picks it."""
    if config is not None:
        if config not in configs:
            raise ValueError(
                f"{folder} has no config {config!r}; its dataset card declares "
                f"{', '.join(configs)}: pass one of them (--config NAME; config= in Python)"
            )
        return config
    defaults = [
        name
        for name, entry in configs.items()
        if len(configs) == 1 or name == "default" or entry.get("default")
    ]
    if len(defaults) != 1:
        raise ValueError(
            f"{folder} holds several configs ({', '.join(configs)}): pass the one to read "
            "(--config NAME; config= in Python)"
        )
    return defaults[0]


def dataset_fingerprint(data: Any) -> dict[str, Any]:
    """The content of ``data`` (a ``datasets.Dataset``): its row count and a SHA-256 of each
    column's values as stored (a video as its path, or a digest of its bytes, never decoded),
    and of all of them together (``sha256``).

    A video column beside its path column (``video`` and ``video_path``, as a build writes
    them) is left out: it holds where that path was found under the video root, ``None`` while
    the video is missing, so it changes as videos arrive, which fixes an input (its rows are
    retried on resume) rather than changing the dataset; the path column stands for it."""
    table = data.with_format("arrow")[:]
    found = {
        video
        for video, path in video_columns(table.column_names).items()
        if path in table.column_names
    }
    columns = {
        name: _column_digest(table.column(name)) for name in table.column_names if name not in found
    }
    whole = hashlib.sha256(json.dumps([table.num_rows, columns], sort_keys=True).encode())
    return {"rows": table.num_rows, "sha256": whole.hexdigest(), "columns": columns}


def _column_digest(column: Any) -> str:
    """A SHA-256 of a column's values, read :data:`ROWS_AT_ONCE` rows at a time (embedded
    videos are never all in memory at once)."""
    digest = hashlib.sha256()
    for start in range(0, len(column), ROWS_AT_ONCE):
        values = column.slice(start, ROWS_AT_ONCE).to_pylist()
        digest.update(json.dumps(values, default=_stored, sort_keys=True).encode())
    return digest.hexdigest()


def _stored(value: Any) -> str:
    """A value JSON cannot hold, as the fingerprint hashes it: bytes (an embedded video) by
    their SHA-256, anything else (a date, a decimal) as text."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "sha256:" + hashlib.sha256(value).hexdigest()
    return str(value)


def fingerprint_change(before: Mapping[str, Any], now: Mapping[str, Any]) -> str | None:
    """What differs between two :func:`dataset_fingerprint` records, in words (``None``: the
    same content): the row count, the columns added, removed or holding other values."""
    if before.get("sha256") == now.get("sha256"):
        return None
    parts = []
    if before.get("rows") != now.get("rows"):
        parts.append(f"{now.get('rows')} rows, was {before.get('rows')}")
    old, new = before.get("columns") or {}, now.get("columns") or {}
    for label, names in (
        ("other values in", [name for name in new if name in old and new[name] != old[name]]),
        ("new column(s)", [name for name in new if name not in old]),
        ("column(s) gone", [name for name in old if name not in new]),
    ):
        if names:
            parts.append(f"{label} {', '.join(map(repr, names))}")
    return "; ".join(parts) or "other content"


def load_scoring_dataset(dataset: Any, config: str | None = None, split: str | None = None) -> Any:
    """A ``datasets.Dataset`` from a Dataset/DatasetDict, a ``save_to_disk`` folder, a parquet
    folder or a Hub id."""
    import datasets

    if isinstance(dataset, (str, os.PathLike)):
        path = Path(dataset)
        if path.is_dir() and (
            (path / "dataset_dict.json").is_file() or (path / "state.json").is_file()
        ):
            if config is not None:
                raise ValueError(
                    f"{path} is a saved dataset; config={config!r} applies to parquet folders and "
                    "Hub ids"
                )
            dataset = datasets.load_from_disk(str(path))
        else:
            dataset = _load_hub_or_folder(str(dataset), config, split)
    elif config is not None:
        raise ValueError(
            f"config={config!r} applies to a dataset folder or Hub id, not to a loaded dataset"
        )
    if isinstance(dataset, datasets.DatasetDict):
        if split is None:
            if len(dataset) != 1:
                raise ValueError(f"the dataset has splits {sorted(dataset)}; pass split=")
            split = next(iter(dataset))
        if split not in dataset:
            raise ValueError(f"no split {split!r}; the dataset has {sorted(dataset)}")
        dataset = dataset[split]
    return dataset


#: What to pass as a dataset, for an error that refuses one.
_DATASET_INSTEAD = (
    "an exported folder (foilkit build --out DIR) or a Hub dataset id such as 'owner/name'"
)


def _load_hub_or_folder(name: str, config: str | None, split: str | None) -> Any:
    """``datasets.load_dataset`` of a parquet folder or Hub id (a local folder's declared
    parquet configs read from its files now: :func:`load_parquet_folder`); a value that is
    neither an existing folder nor a Hub id that can be reached is one user error
    (``--dataset``)."""
    import datasets

    check_local_path(name, "--dataset", _DATASET_INSTEAD)
    if Path(name).is_dir():  # its configs read from its files now, not from datasets' cache
        loaded = load_parquet_folder(Path(name), config, split)
        if loaded is not None:
            return loaded
    try:
        return datasets.load_dataset(name, config, split=split)
    except (ConnectionError, datasets.exceptions.DatasetNotFoundError) as error:
        raise UserError(
            f"--dataset {name!r} is neither a local folder nor a Hub dataset id that can be "
            f"reached ({one_line(error)}): pass {_DATASET_INSTEAD}; offline "
            "(HF_DATASETS_OFFLINE=1), a Hub dataset must already be in the cache"
        ) from error


#: A Hub commit: the last folder of a Hub dataset's ``datasets`` cache files.
_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def hub_revision(dataset: Any) -> str | None:
    """The Hub commit a dataset loaded by Hub id was read at, else ``None``.

    ``datasets`` caches a Hub dataset under ``<owner>___<name>/<config>/<version>/<commit>/``
    (the builder's hash is the commit it resolved); a local folder's hash is no 40-hex commit.
    Recorded with the run, it becomes ``dataset.revision`` of the Hub results.
    """
    files = getattr(dataset, "cache_files", None) or []
    folders = {Path(entry["filename"]).parent.name for entry in files if "filename" in entry}
    if len(folders) == 1 and _COMMIT.match(commit := folders.pop()):
        return commit
    return None
