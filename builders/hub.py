"""Export a benchmark in the Hub layout, and push that layout to the Hub.

The layout: ``<config>/<split>-NNNNN-of-NNNNN.parquet`` for every config and split, a README.md
dataset card whose YAML ``configs:`` maps each config to its files (so
``datasets.load_dataset(folder_or_repo, "<config>")`` reads it back offline with the same
features: ``Video``, lists) and whose ``dataset_info`` gives every split's size (``datasets``
keys a local folder's cache on that YAML: without the sizes a re-export into the same folder
would load the earlier rows), and ``eval.yaml``, which registers the benchmark's tasks with the
Hub's leaderboards (each benchmark's spec's ``hub_tasks``, :func:`hub_tasks`). Videos stay out
unless the caller opts in (``embed_videos=True``): the ``video`` column then stores paths
relative to the video root, re-attachable with ``foilkit.attach_videos``.
"""

from __future__ import annotations

import functools
import json
import logging
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import datasets

from foilkit.benchmark_registry import BENCHMARKS, BUILDERS
from foilkit.builders.card import (
    ExportedConfig,
    card_text,
    exported_benchmark,
    exported_features,
    partial_export,
)
from foilkit.builders.loading import load_builder, prepare
from foilkit.builders.spec import HubTask
from foilkit.errors import UserError
from foilkit.folders import EXPORT, claim_folder
from foilkit.progress import library_progress_bars
from foilkit.video_paths import video_columns

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
    evaluation_framework: str | None = None,
    **config_options: Any,
) -> Path:
    """Build ``configs`` of benchmark ``name`` and write the Hub layout.

    ``configs`` defaults to the builder's ``export_configs()``: every config, except the contrast
    sets that need a user-supplied file. ``evaluation_framework`` is ``eval.yaml``'s (one the Hub
    accepts, :func:`check_evaluation_framework`; default :func:`default_evaluation_framework`).
    A partial export (rows dropped for missing videos) gets no ``eval.yaml``: it is no benchmark.

    ``video_root``/``on_missing``/``annotations`` and ``config_options`` (e.g. ``validity_filter``)
    go to every config (see :func:`foilkit.builders.load_builder`). With ``embed_videos=True`` the
    parquet files carry the video bytes (mind the video licences); otherwise only relative paths.
    Returns the output folder.
    """
    if embed_videos and video_root is None:
        raise ValueError("embed_videos=True needs a video_root to read the videos from")
    if embed_videos:
        check_redistributable(name, "embed its videos in an export (embed_videos=True)")
    names = list(configs) if configs else BUILDERS.get(name).export_configs()
    framework = check_evaluation_framework(evaluation_framework)
    out = claim_folder(out_dir, EXPORT)  # new, empty or an earlier export: foilkit.folders
    options = {
        "video_root": video_root,
        "on_missing": on_missing,
        "annotations": annotations,
        "cache_dir": None if cache_dir is None else os.fspath(cache_dir),
        **config_options,
    }
    with library_progress_bars(enabled=False):
        return _export(name, out, names, options, embed_videos, framework)


def _export(
    name: str,
    out: Path,
    names: Sequence[str],
    options: Mapping[str, Any],
    embed_videos: bool,
    framework: str,
) -> Path:
    """:func:`export`'s work: build each config of ``names`` with the builder ``options``."""
    exported, sizes = [], {}
    for config in names:
        builder = load_builder(name, config, **options)
        splits = prepare(builder)
        files, rows, videos = {}, {}, {}
        for split, dataset in splits.items():
            files[split] = _write_split(dataset, out, config, split, embed_videos=embed_videos)
            rows[split] = dataset.num_rows
            videos[split] = len(
                {
                    path
                    for column in video_columns(dataset.column_names).values()
                    for path in dataset[column]
                }
            )  # a pair's foil videos count too
            sizes[config, split] = (dataset.num_rows, dataset.data.nbytes)
        exported.append(ExportedConfig(builder, rows, videos, files))
        for line in builder.build_summary():
            logger.info("%s: %s", config, line)
    unions = union_configs(name, [item.name for item in exported])
    rows_of = {item.name: item.rows for item in exported}
    for union, parts in unions.items():
        for split in rows_of[parts[0]]:
            if all((part, split) in sizes for part in parts):
                rows, nbytes = zip(*(sizes[part, split] for part in parts), strict=True)
                sizes[union, split] = (sum(rows), sum(nbytes))
    card = card_text(name, exported, embed_videos=embed_videos, unions=unions)
    (out / "README.md").write_text(complete_card(card, name, out, sizes), encoding="utf-8")
    partial = partial_export(exported)
    write_eval_yaml(
        out,
        name,
        {config: list(splits) for config in names},
        evaluation_framework=framework,
        partial=partial,
    )
    return out


# --- what the Hub reads beyond the features -------------------------------------------------------


def size_category(rows: int) -> str:
    """The Hub's ``size_categories`` value for ``rows`` rows."""
    for bound, label in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
    ):
        if rows < bound:
            return label
    return "1M<n<10M"


def complete_card(
    card: str, name: str, folder: Path, sizes: Mapping[tuple[str, str], tuple[int, int]]
) -> str:
    """``card`` with split sizes in ``dataset_info``, task/size categories, sources and paper link.

    ``sizes``: (config, split) -> (rows, in-memory bytes). The split sizes are what makes
    ``datasets`` see a re-export into the same folder as a new dataset.
    """
    from huggingface_hub import DatasetCard

    parsed = DatasetCard(card)
    data = parsed.data
    infos = data.get("dataset_info") or []
    data_files = {
        entry["config_name"]: [
            path
            for files in entry["data_files"]
            for path in ([files["path"]] if isinstance(files["path"], str) else files["path"])
        ]
        for entry in data.get("configs") or []
    }
    for info in [infos] if isinstance(infos, dict) else infos:
        config = info.get("config_name", "default")
        splits = [
            (split, rows, nbytes) for (c, split), (rows, nbytes) in sizes.items() if c == config
        ]
        info["splits"] = [
            {"name": split, "num_bytes": nbytes, "num_examples": rows}
            for split, rows, nbytes in splits
        ]
        info["download_size"] = sum(
            (folder / path).stat().st_size for path in data_files.get(config, ())
        )
        info["dataset_size"] = sum(nbytes for _, _, nbytes in splits)
    metadata = BENCHMARKS.get(name).card if name in BENCHMARKS else None
    largest = max((rows for rows, _ in sizes.values()), default=0)
    data.size_categories = [size_category(largest)]
    if metadata is not None:
        data.task_categories = list(metadata.task_categories)
        data.source_datasets = list(metadata.source_datasets)
    text = f"---\n{data.to_yaml()}\n---\n{parsed.text}"
    if metadata is not None and metadata.paper:
        title, _, rest = text.partition("\n# ")
        heading, _, body = rest.partition("\n")
        text = f"{title}\n# {heading}\n\nPaper: {metadata.paper}\n{body}"
    return text


# --- eval.yaml: the benchmark's tasks on the Hub -------------------------------------------------


#: The temporal controls a run's frames can be put under (``foilkit.scorers.controls.CONTROLS``;
#: builders may not import the scorers, a test keeps the two equal). Each gets its own tasks.
CONTROLS = ("reversed", "shuffled", "single")


def hub_repo(name: str | None) -> str | None:
    """The Hub dataset repository holding benchmark ``name``'s canonical export (its spec's
    ``hub_repo``); ``None`` for a name the registry does not know, or a benchmark without one."""
    if name is None or name not in BENCHMARKS:
        return None
    return BENCHMARKS.get(name).hub_repo or None


def canonical_benchmarks() -> list[str]:
    """The benchmarks that have a canonical Hub repository, in registry order."""
    return [name for name in BENCHMARKS.names() if hub_repo(name)]


def control_task(task: HubTask, control: str) -> HubTask:
    """``task`` measured under the temporal ``control``: id ``<task>_<control>`` (e.g.
    ``direction_reversed``), its own leaderboard, never the paper's task."""
    if control not in CONTROLS:
        raise ValueError(f"unknown temporal control {control!r}; choose from {list(CONTROLS)}")
    return HubTask(
        f"{task.id}_{control}",
        task.config,
        f"{task.description}; control: frames {control} (a check of temporal use, not the "
        "paper's task)",
        task.sources,
        tuple(f"{part}_{control}" for part in task.mean_of),
        control,
    )


def hub_tasks(name: str, control: str | None = None) -> tuple[HubTask, ...]:
    """The leaderboard tasks of benchmark ``name`` a run under ``control`` (``None``: no
    control, the paper's tasks) reports."""
    tasks = BENCHMARKS.get(name).hub_tasks if name in BENCHMARKS else ()
    return tasks if control is None else tuple(control_task(task, control) for task in tasks)


def union_configs(name: str, configs: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Configs an export of ``configs`` adds as the union of others: a mean task's config that is
    not exported itself (ViLMA's ``all``) when every part's config is, mapped to those parts.

    The card lists the parts' parquet files under the union's name, so ``eval.yaml`` can point
    the mean task at the items it averages without storing them twice.
    """
    exported = set(configs)
    tasks = hub_tasks(name)
    config_of = {task.id: task.config for task in tasks}
    unions = {}
    for task in tasks:
        parts = tuple(dict.fromkeys(config_of[part] for part in task.mean_of))
        if parts and task.config not in exported and set(parts) <= exported:
            unions[task.config] = parts
    return unions


#: What the Hub accepts as a task id (letters, digits, ``_``, ``-``, ``.``; no spaces).
TASK_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
EVAL_YAML = "eval.yaml"
EVAL_YAML_KEYS = ("name", "description", "evaluation_framework", "tasks")
#: The Hub's list of accepted ``evaluation_framework`` values, vendored with its source commit.
FRAMEWORKS_FILE = Path(__file__).with_name("hub_frameworks.json")
#: The framework name foilkit asks the Hub to list (README: "Registering a benchmark").
FOILKIT_FRAMEWORK = "foilkit"
#: Until the Hub lists foilkit: the listed framework nearest to what foilkit does (it scores
#: embedding similarity and retrieval, MTEB's subject). The Hub requires one listed name.
FALLBACK_FRAMEWORK = "mteb"


@functools.cache
def hub_frameworks() -> dict[str, Any]:
    """The vendored list: ``frameworks`` (accepted names) and the ``repository``, ``path`` and
    ``commit`` it was read from."""
    return json.loads(FRAMEWORKS_FILE.read_text(encoding="utf-8"))


def default_evaluation_framework() -> str:
    """``foilkit`` once the Hub lists it (in the vendored list), else :data:`FALLBACK_FRAMEWORK`."""
    accepted = hub_frameworks()["frameworks"]
    return FOILKIT_FRAMEWORK if FOILKIT_FRAMEWORK in accepted else FALLBACK_FRAMEWORK


def check_evaluation_framework(value: str | None) -> str:
    """``value`` (``None``: the default) if the Hub accepts it, else ``ValueError`` naming the list
    and how a name gets on it."""
    if value is None:
        return default_evaluation_framework()
    source = hub_frameworks()
    if value not in source["frameworks"]:
        raise ValueError(
            f"evaluation_framework {value!r} is not one the Hub accepts (the Hub shows a YAML "
            f"Metadata Error for it): choose one of {', '.join(source['frameworks'])} (list of "
            f"{source['repository']} {source['path']} at {source['commit'][:12]}), or get it "
            "listed by a pull request to that file and refresh foilkit/builders/"
            f"{FRAMEWORKS_FILE.name} (README: Registering a benchmark)"
        )
    return value


def eval_yaml(
    name: str,
    splits: Mapping[str, Sequence[str]],
    *,
    evaluation_framework: str | None = None,
) -> dict[str, Any]:
    """``eval.yaml`` of an export of benchmark ``name`` whose configs have ``splits``.

    Lists the tasks of :func:`hub_tasks` whose values the exported configs can give (a task
    averaging others needs all of them; its config may be their union, :func:`union_configs`),
    each with its config and the split it is scored on, then the same tasks under each temporal
    control (:func:`control_task`). ``evaluation_framework``: see
    :func:`check_evaluation_framework`.
    """
    benchmark = BENCHMARKS.get(name)
    split = benchmark.split
    splits = dict(splits)
    for union, parts in union_configs(name, splits).items():
        splits[union] = [s for s in splits[parts[0]] if all(s in splits[p] for p in parts)]
    listed = {
        task.id: task
        for task in hub_tasks(name)
        if task.config in splits and split in splits[task.config] and not task.mean_of
    }
    for task in hub_tasks(name):
        if task.mean_of and task.config in splits and all(p in listed for p in task.mean_of):
            listed[task.id] = task
    ordered = [task for task in hub_tasks(name) if task.id in listed]
    tasks = [*ordered, *(control_task(task, control) for control in CONTROLS for task in ordered)]
    document = {
        "name": benchmark.title,
        "description": f"{benchmark.title} ({benchmark.paper_table}), exported and scored with "
        "foilkit. Task values are percentages; higher is "
        "better. Tasks ending in _reversed, _shuffled or _single are controls: the same items "
        "with the frames reversed, shuffled or cut to one, a check of whether a model uses "
        "temporal order, not results of the paper's tasks.",
        "evaluation_framework": check_evaluation_framework(evaluation_framework),
        "tasks": [{"id": task.id, "config": task.config, "split": split} for task in tasks],
    }
    validate_eval_yaml(document, splits)
    return document


def validate_eval_yaml(document: Mapping[str, Any], splits: Mapping[str, Sequence[str]]) -> None:
    """Raise ``ValueError`` where ``document`` breaks the Hub's ``eval.yaml`` rules.

    The rules (hub-docs ``eval-results.md``, "Eval.yaml specification"): the keys ``name``,
    ``description``, ``evaluation_framework`` (non-empty strings; the framework one of the Hub's
    closed list, :func:`check_evaluation_framework`) and ``tasks``, a non-empty list of
    ``{id, config, split}`` with unique ids of the allowed characters, each naming a config and
    split the dataset has.
    """
    for key in EVAL_YAML_KEYS[:3]:
        if not isinstance(document.get(key), str) or not document[key]:
            raise ValueError(
                f"eval.yaml: {key!r} must be a non-empty string, got {document.get(key)!r}"
            )
    check_evaluation_framework(document["evaluation_framework"])
    tasks = document.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise ValueError(f"eval.yaml: 'tasks' must be a non-empty list, got {tasks!r}")
    seen = set()
    for index, task in enumerate(tasks):
        if not isinstance(task, Mapping) or set(task) != {"id", "config", "split"}:
            raise ValueError(f"eval.yaml: tasks[{index}] = {task!r} is not {{id, config, split}}")
        if not isinstance(task["id"], str) or not TASK_ID.match(task["id"]) or task["id"] in seen:
            raise ValueError(
                f"eval.yaml: tasks[{index}].id = {task['id']!r} is invalid or repeated"
            )
        seen.add(task["id"])
        if task["config"] not in splits or task["split"] not in splits[task["config"]]:
            raise ValueError(
                f"eval.yaml: tasks[{index}] names config {task['config']!r} split "
                f"{task['split']!r}, which the dataset does not have ({dict(splits)})"
            )


def write_eval_yaml(
    folder: str | os.PathLike,
    name: str,
    splits: Mapping[str, Sequence[str]],
    *,
    evaluation_framework: str | None = None,
    partial: str | None = None,
) -> Path | None:
    """Write ``folder/eval.yaml`` for benchmark ``name`` (see :func:`eval_yaml`).

    An export holding no task's config (e.g. one ViLMA subtest) gets none (and loses an
    earlier export's), and so does a partial export (``partial`` says what is missing): its
    numbers are not the benchmark's. Returns ``None`` then.
    """
    import yaml

    path = Path(folder) / EVAL_YAML
    path.unlink(missing_ok=True)
    if partial is not None:
        logger.warning("partial export (%s): no %s, it is no benchmark", partial, EVAL_YAML)
        return None
    if not any(task.config in splits for task in hub_tasks(name) if not task.mean_of):
        logger.info("no leaderboard task among the configs %s: no %s", sorted(splits), EVAL_YAML)
        return None
    document = eval_yaml(name, splits, evaluation_framework=evaluation_framework)
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def _write_split(
    dataset: datasets.Dataset, out: Path, config: str, split: str, *, embed_videos: bool
) -> list[str]:
    """Write one split as parquet shards with relative video paths (and bytes if asked)."""
    features = dataset.features
    columns = video_columns(dataset.column_names)  # the video, and a pair's foil video
    portable = dataset
    for name in columns:
        portable = portable.cast_column(name, datasets.Video(decode=False))
    portable = portable.map(
        _portable_videos,
        batched=True,
        fn_kwargs={"embed": embed_videos, "columns": columns},
        features=datasets.Features(
            {**features, **{name: datasets.Video(decode=False) for name in columns}}
        ),
        desc=f"{config}/{split}: relative video paths" + (" + bytes" if embed_videos else ""),
    )
    stored = exported_features(features, embed_videos=embed_videos)
    for name in columns:
        portable = portable.cast_column(name, stored[name])
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


def _portable_videos(
    batch: dict[str, list], *, embed: bool, columns: Mapping[str, str]
) -> dict[str, list]:
    """Each video column (``columns``: video -> path column) -> ``{"path": its relative path,
    "bytes": file bytes or None}``; absent videos stay ``None``."""
    out = {}
    for name, path_column in columns.items():
        videos = []
        for video, relative in zip(batch[name], batch[path_column], strict=True):
            if video is None:
                videos.append(None)
                continue
            data = None
            if embed:
                data = (
                    video["bytes"]
                    if video["bytes"] is not None
                    else Path(video["path"]).read_bytes()
                )
            videos.append({"path": relative, "bytes": data})
        out[name] = videos
    return out


def _num_shards(dataset: datasets.Dataset, embed_videos: bool) -> int:
    if not embed_videos or dataset.num_rows == 0:
        return 1
    paths = {
        video["path"]
        for name in video_columns(dataset.column_names)  # a pair's foil videos weigh too
        for video in dataset.cast_column(name, datasets.Video(decode=False))[name]
        if video
    }
    total = sum(os.path.getsize(path) for path in paths)
    return max(1, min(dataset.num_rows, math.ceil(total / MAX_SHARD_BYTES)))


def benchmark_of_dataset(dataset: Any) -> str | None:
    """The benchmark a dataset given by folder or Hub id holds: a local export's (its card's
    ``foilkit_benchmark``), or the one whose canonical repository (:func:`hub_repo`) or
    upstream Hub repository (its builder's ``SOURCE``) the id names; ``None`` when unknown."""
    if not isinstance(dataset, (str, os.PathLike)):
        return None
    value = os.fspath(dataset)
    if Path(value).expanduser().is_dir():
        return exported_benchmark(Path(value).expanduser())
    for name in BENCHMARKS.names():
        spec = BENCHMARKS.get(name)
        repos = {spec.hub_repo}
        if spec.builder is not None:
            repos.add(BUILDERS.get(spec.builder).SOURCE.repo)
        if value.lower() in {repo.lower() for repo in repos if repo}:
            return name
    return None


class RedistributionError(UserError):
    """The benchmark's terms forbid what was asked: pushing it, or embedding its videos."""


def check_redistributable(name: str | None, action: str = "push it to the Hub") -> None:
    """Raise :class:`RedistributionError` when benchmark ``name``'s spec forbids redistribution
    (:attr:`foilkit.builders.spec.Benchmark.redistribution_forbidden`: TemporalBench)."""
    if name is None or name not in BENCHMARKS.names():
        return
    why = BENCHMARKS.get(name).redistribution_forbidden
    if why:
        raise RedistributionError(f"foilkit will not {action} for {name}: {why}")


def upload_files(folder: str | os.PathLike, repo_id: str, *, register: bool = False) -> list[str]:
    """The files :func:`push_to_hub` uploads from export ``folder`` to ``repo_id``: README.md, the
    parquet files the card's ``configs`` list, and ``eval.yaml`` when ``repo_id`` is its
    benchmark's canonical repository (:func:`hub_repo`) or ``register`` asks for it (a copy
    registered as a benchmark of its own would split the benchmark's leaderboard)."""
    import yaml
    from huggingface_hub import DatasetCard

    folder = Path(folder)
    readme = folder / "README.md"
    if not readme.is_file():
        raise FileNotFoundError(
            f"{folder} has no README.md: export the benchmark there first (foilkit.builders.export)"
        )
    patterns = [
        path
        for config in DatasetCard.load(readme).data.get("configs", [])
        for data_files in config["data_files"]
        for path in (
            [data_files["path"]] if isinstance(data_files["path"], str) else data_files["path"]
        )
    ]
    files, absent = [], []
    for pattern in dict.fromkeys(patterns):  # a union config lists its parts' files again
        found = sorted(p.relative_to(folder).as_posix() for p in folder.glob(pattern))
        files += [path for path in found if path not in files]
        absent += [] if found else [pattern]
    if not files or absent:
        raise FileNotFoundError(
            f"{readme} lists data files that are not in {folder}: {absent or 'none'}"
        )
    eval_file = folder / EVAL_YAML
    if eval_file.is_file():
        title = yaml.safe_load(eval_file.read_text(encoding="utf-8")).get("name")
        benchmark = next(
            (name for name in canonical_benchmarks() if BENCHMARKS.get(name).title == title), None
        )
        canonical = hub_repo(benchmark)
        if register or repo_id == canonical:
            files.insert(0, EVAL_YAML)
        else:
            logger.warning(
                "%s is not the canonical repository of %s (%s): %s stays local, so this copy does "
                "not become a second benchmark (pass --register to upload it anyway)",
                repo_id,
                benchmark,
                canonical or "none",
                EVAL_YAML,
            )
    return ["README.md", *files]


def push_to_hub(
    folder: str | os.PathLike,
    repo_id: str,
    *,
    token: str | None = None,
    private: bool | None = None,
    revision: str | None = None,
    register: bool = False,
    commit_message: str = "Upload foilkit export",
) -> str:
    """Upload an :func:`export` folder as dataset repository ``repo_id``; returns the commit URL.

    The token defaults to the environment (``HF_TOKEN`` or the cached login). Exactly the files
    of :func:`upload_files` are uploaded.
    """
    from huggingface_hub import HfApi

    check_redistributable(exported_benchmark(folder))
    files = upload_files(folder, repo_id, register=register)
    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    commit = api.upload_folder(
        folder_path=Path(folder),
        repo_id=repo_id,
        repo_type="dataset",
        revision=revision,
        commit_message=commit_message,
        allow_patterns=files,
    )
    return str(commit)
