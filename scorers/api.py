"""``foilkit.score`` and ``foilkit.score_matrix``: any Hub model on any foilkit dataset.

Both run under ``accelerate launch`` as they do in one process: every process plans the same
work, takes a contiguous share of the videos, streams its finished rows to its own shard in
``out_dir``, and the shares are gathered back in dataset order.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import sys
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from foilkit.benchmark_registry import BENCHMARKS
from foilkit.errors import (
    MissingExtra,
    UserError,
    check_local_path,
    check_offline_model,
    missing_modules,
    one_line,
)
from foilkit.files import atomic_write, naming_full_disk
from foilkit.folders import SCORES, ScoresFolder, check_folder, claim_folder
from foilkit.progress import library_progress_bars
from foilkit.scorers import video_question
from foilkit.scorers.adapters import (
    Adapter,
    EmbeddingAdapter,
    accepted_settings,
    adapter_class,
    dtype_problem,
    load_adapter,
    reads_hub_model,
    resolve_dtype,
)
from foilkit.scorers.cache import EmbeddingCache, default_cache_dir
from foilkit.scorers.dataset_files import (
    dataset_fingerprint,
    fingerprint_change,
    load_parquet_folder,
)
from foilkit.scorers.distributed import (
    gather_counts,
    gather_records,
    model_device,
    process_state,
    split,
)
from foilkit.scorers.engine import Engine, retried_on_resume
from foilkit.scorers.generate import check_generation
from foilkit.scorers.lock import run_lock
from foilkit.scorers.once import once
from foilkit.scorers.options import (
    SCORE_OPTION_NAMES,
    ScoreOptions,
    judge_settings,
    server_backend,
)
from foilkit.scorers.output import (
    GROUP_PREFIX,
    answer_outcomes,
    error_causes,
    scores_dataset,
    write_jsonl,
)
from foilkit.scorers.placement import (
    Placement,
    placement_record,
    plan_placement,
)
from foilkit.scorers.plan import PLAN_COLUMNS, ScoringPlan, make_plan
from foilkit.scorers.prompts import OWN_QUESTION, own_questions
from foilkit.scorers.protocols import ResolvedProtocol
from foilkit.scorers.record import (
    ScoringRun,
    foilkit_source,
    hardware,
    now,
    package_versions,
    start_json,
)
from foilkit.scorers.store import ResultStore
from foilkit.scorers.video import (
    MAX_DECODE_PIXELS,
    SEEDED_POLICIES,
    SamplingPolicy,
    resolve_decoder,
)
from foilkit.scorers.video.decoding import FFMPEG_FIX, ffmpeg_problem
from foilkit.video_paths import (
    check_video_root,
    missing_summary,
    named_roots,
    video_columns,
    video_roots_for,
)

logger = logging.getLogger(__name__)


def make_judge(options: ScoreOptions, protocol: ResolvedProtocol) -> Any:
    """The run's LLM judge (:class:`foilkit.scorers.judge.Judge`; its replies cached beside the
    embedding cache, none with ``use_cache=False``), or ``None`` when none is configured;
    refused outside generate mode or where the parser's official protocol has no judge. Made
    once per run for each answer parser (:func:`foilkit.scorers.once.once`: a config's usage
    is what the judge spent while it was scored, :func:`_judge_record`)."""
    settings = judge_settings(options)
    if settings is None:
        return None
    if protocol.settings.get("mode") != "generate":
        raise ValueError(
            "--judge-model reads the answers of generate mode; add --mode generate (the "
            f"{protocol.name} protocol scores {protocol.family} models in mode "
            f"{protocol.settings.get('mode', 'default')!r})"
        )
    from foilkit.scorers.judge import Judge
    from foilkit.scorers.parsers import DEFAULT_PARSER

    cache = None
    if options.use_cache:
        cache = str(Path(options.cache_dir or default_cache_dir()) / "judge")
    parser = protocol.settings.get("parser") or DEFAULT_PARSER
    judge = once(("judge", settings, parser, cache), lambda: Judge(settings, parser, cache))
    judge.check_key()
    return judge


def sampling_policy(protocol: ResolvedProtocol, seed: int) -> SamplingPolicy:
    """The frame sampling policy of a resolved protocol (``seed`` for seeded policies)."""
    settings = protocol.settings
    if "num_frames" not in settings:
        raise ValueError(
            f"the {protocol.name} protocol leaves the frame count of {protocol.family} models to "
            "the model, and none was found; pass num_frames= (--num-frames N)"
        )
    return SamplingPolicy(
        settings["sampling"],
        settings["num_frames"],
        stride=settings.get("stride", 1),
        target_fps=settings.get("target_fps"),
        max_frames=settings.get("max_frames"),
        normalized_fps=settings.get("normalized_fps"),
        seed=seed if settings["sampling"] in SEEDED_POLICIES else None,
    )


def _precision(protocol: ResolvedProtocol, device: Any, given: bool) -> ResolvedProtocol:
    """The protocol with a dtype its device can run.

    A protocol's dtype (``paper``: the reference's float16) that the device cannot run falls
    back to float32 as a recorded departure, warned about and shown in the report; a dtype the
    user gave (``given``: ``--dtype``) that the device cannot run is an error.
    """
    import torch

    dtype = protocol.settings.get("dtype")
    if dtype is None:
        return protocol
    device = torch.device(device)
    problem = dtype_problem(resolve_dtype(dtype, device), device)
    if problem is None:
        return protocol
    if given:
        raise ValueError(f"dtype {dtype!r} (--dtype {dtype}): {problem}; pick another dtype")
    logger.warning(
        "the %s protocol runs %s in %s, which %s cannot run: scoring in float32 instead (%s)",
        protocol.name,
        protocol.family,
        dtype,
        device,
        problem,
    )
    return protocol.with_departure("dtype", "float32", problem)


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


def _check_videos(
    data: Any, family: type[Adapter], roots: list[Path] | None, *, named: bool
) -> list[str]:
    """The video files the rows name, looked at before the model loads
    (:func:`foilkit.video_paths.check_video_root`: a wrong root is an error here); the paths
    of the missing ones. Nothing to look at for a text-only model, embedded video bytes or an
    unconfined dataset object (``roots`` ``None``)."""
    import datasets

    if not family.needs_video or roots is None or "video" not in data.column_names:
        return []
    paths = []
    for name in video_columns(data.column_names):  # the video, and a pair's foil video
        column = data.select_columns([name])
        if isinstance(column.features[name], datasets.Video):
            column = column.cast_column(name, datasets.Video(decode=False))
        for cell in column[name]:
            if isinstance(cell, Mapping):
                cell = None if cell.get("bytes") is not None else cell.get("path")
            if isinstance(cell, str) and cell:
                paths.append(cell)
    return check_video_root(paths, roots, named=named)


def _report_missing(
    missing: list[str], total: int, roots: list[Path], out_dir: Path | None
) -> None:
    """One warning line for the missing videos: how many, the first few, where the full list is
    (``missing_videos.txt`` in the output folder; the rows' errors name each one too)."""
    listed = "the rows' errors in the scores"
    if out_dir is not None:
        listing = ScoresFolder(out_dir).missing_videos
        atomic_write(listing, "".join(f"{path}\n" for path in missing))
        listed = str(listing)
    logger.warning(missing_summary(missing, total, roots, listed))


def _plan(
    dataset: Any, adapter: Adapter, roots: list[Path] | None, window_rule: str = "half-open"
) -> ScoringPlan:
    import datasets

    if adapter.needs_video and "video" not in dataset.column_names:
        raise ValueError(
            f"adapter {adapter.name!r} needs a 'video' column; the dataset has "
            f"{dataset.column_names}"
        )
    for name in video_columns(dataset.column_names):
        if isinstance(dataset.features.get(name), datasets.Video):
            dataset = dataset.cast_column(name, datasets.Video(decode=False))
    rows = dataset.select_columns([c for c in PLAN_COLUMNS if c in dataset.column_names])
    return make_plan(
        rows,
        needs_video=adapter.needs_video,
        video_root=roots,
        window_rule=window_rule,
        video_question=asks_video_question(adapter),
    )


def asks_video_question(adapter: Adapter) -> bool:
    """Whether pair rows ask Vinoground's video-score question about their joined videos: a
    model that answers questions, asked them (``choice``, ``generate``); in ``likelihood`` and
    ``entail`` mode, and for models that score texts alone, a caption's scores on the two
    videos are compared instead (:mod:`foilkit.scorers.video_question`)."""
    return adapter.asks_questions and getattr(adapter, "mode", None) in ("choice", "generate")


def _questions_record(adapter: Adapter, plan: ScoringPlan) -> dict[str, Any] | None:
    """Where rows ask their own question (TempCompass' ``prompt``) and the adapter asks it: how
    many, and what was scored instead of the adapter's own prompt (``None``: no row asks)."""
    asked = sum(1 for row in plan.rows if row.question is not None)
    if not asked or not adapter.asks_questions:
        return None
    scored = "each text by its answer label ('caption_answer', 'foil_answers')"
    if getattr(adapter, "mode", None) == "generate":
        scored = (
            "each text by the share of answers that name its label ('caption_answer', "
            "'foil_answers'), as the answer parser reads them"
        )
    return {
        "rows": asked,
        "prompt": "each row's own question (its 'prompt' column) instead of the adapter's",
        "scored": scored,
    }


def _video_question_record(
    plan: ScoringPlan, records: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """Where pair rows asked the video question: how, and how their joined videos were built
    (the question, the separator, the sampled frames of each part over the scored rows)."""
    if not plan.joined:
        return None
    sampled = [r["video_question_frames"] for r in records if r.get("video_question_frames")]
    return video_question.run_record(sampled)


def _described(adapter: Adapter, plan: ScoringPlan) -> dict[str, Any]:
    """The adapter's record (``describe()``) saying what it asked these rows: a question-asking
    adapter asks the rows that carry their own question that one instead of its own."""
    if not adapter.asks_questions:
        return adapter.describe()
    asked = sum(1 for row in plan.rows if row.question is not None)
    return adapter.describe(own_questions=own_questions(asked, len(plan.rows)))


def _identity(
    model: str,
    adapter: Adapter,
    options: ScoreOptions,
    protocol: ResolvedProtocol,
    policy: SamplingPolicy,
    decoder: str,
    plan: ScoringPlan,
    kind: str,
    data: Any,
) -> dict[str, Any]:
    """What must not change between a run and its resumption (``dataset``: the content of the
    rows scored, :func:`dataset_fingerprint`)."""
    # a row's question and answers count where it asks one, a pair row's foil video where it has
    # one (the other rows' entries are hashed as before)
    rows = hashlib.sha256(
        json.dumps(
            [
                [r.id, r.view, dict(r.groups), *([r.foil_view] if r.foil_view else [])]
                + ([] if r.question is None else [r.question, list(r.answers or ())])
                + ([list(r.joined_views)] if r.joined_views else [])
                for r in plan.rows
            ]
        ).encode()
    ).hexdigest()
    return {
        "kind": kind,
        "model": model,
        "revision": options.revision,
        **_described(adapter, plan),
        "dtype": adapter.dtype_record(),
        "protocol": protocol.name,
        "num_frames": policy.num_frames,
        "sampling": policy.to_record(),
        "decoder": decoder,
        "max_decode_pixels": options.max_decode_pixels,
        "control": options.control,
        "seed": options.seed,
        "rows": len(plan.rows),
        "rows_sha256": rows,
        "dataset": dataset_fingerprint(data),
        **({"judge": _judge_identity(adapter.judge)} if adapter.judge is not None else {}),
    }


def _judge_identity(judge: Any) -> dict[str, Any]:
    """What of the judge must not change on resumption: the model, endpoint and protocol."""
    record = judge.to_record()
    return {key: record[key] for key in ("model", "base_url", "protocol", "prompt_version")}


def _judge_counts(judge: Any) -> dict[str, Any]:
    """What the judge has asked and spent so far (its record's counts): subtracted from its
    record at the end of a config, they leave that config's share (a run's configs share one
    judge: :func:`make_judge`)."""
    record = judge.to_record()
    return {
        **{key: record[key] for key in ("answers_judged", "asks")},
        "usage": {key: value for key, value in record["usage"].items() if key != "cost"},
    }


def _judge_record(
    state: Any,
    adapter: Adapter,
    records: Sequence[dict[str, Any]],
    before: Mapping[str, Any] | None = None,
) -> Any:
    """The judge as ``run.json`` holds it (``None``: none ran): its settings, the official
    protocol it reproduces, its usage summed over processes with its cost, and how the answers
    were read (by the rules, by the judge, still unparseable). ``before``: its counts when the
    config began (:func:`_judge_counts`), which are not this config's."""
    if adapter.judge is None:
        return None
    record = adapter.judge.to_record()
    if before is not None:
        for key in ("answers_judged", "asks"):
            record[key] -= before[key]
        record["usage"] = {
            key: value - before["usage"].get(key, 0) if key in before["usage"] else value
            for key, value in record["usage"].items()
        }
    asked = {key: record[key] for key in ("answers_judged", "asks")}
    record.update(gather_counts(state, asked))
    record["usage"] = summed_usage(state, record)
    outcomes = answer_outcomes(records)
    record["answers"] = {
        "parsed_by_rules": outcomes["parsed"],
        "settled_by_judge": outcomes["judged"],
        "still_unparseable": outcomes["unparseable"],
        "refused": outcomes["refused"],
    }
    return record


def summed_usage(state: Any, record: Mapping[str, Any]) -> dict[str, Any]:
    """A served model's or the judge's ``usage`` (requests, cache hits, retries, tokens) summed
    over processes and over the run's earlier sessions (``usage_earlier_sessions``: what a
    resumed run had spent before), and its cost: the summed tokens at the prices ``record``
    holds (``price_per_1k_prompt_tokens``, ``price_per_1k_completion_tokens``)."""
    from foilkit.scorers.served import token_cost

    counts = gather_counts(state, {k: v for k, v in record["usage"].items() if k != "cost"})
    for name, value in (record.get("usage_earlier_sessions") or {}).items():
        counts[name] = counts.get(name, 0) + value
    prices = (record["price_per_1k_prompt_tokens"], record["price_per_1k_completion_tokens"])
    return {**counts, "cost": token_cost(counts, *prices)}


def _cache(
    identity: dict[str, Any], options: ScoreOptions, adapter: Adapter
) -> EmbeddingCache | None:
    if not (options.use_cache and isinstance(adapter, EmbeddingAdapter)):
        return None
    # the model and the frames, not the dataset: another benchmark on the same videos hits
    # (the protocol's name does not matter, only the settings it resolved to); the frame count
    # keeps its key of before the rename to ``num_frames``, so existing cache folders still hit
    namespace = {
        "frames" if key == "num_frames" else key: identity[key]
        for key in identity
        if key not in ("kind", "rows", "rows_sha256", "dataset", "protocol")
    }
    if namespace["max_decode_pixels"] == MAX_DECODE_PIXELS:
        # the default budget keeps the namespace of before the budget existed, so existing cache
        # folders still hit (only frames over 3840 x 2160 differ, and only by their scaling)
        namespace.pop("max_decode_pixels")
    if options.control == "shuffled":
        # the permutation's key: the video's content (before, its path; such entries must not
        # be served to a content-seeded run)
        namespace["shuffle_key"] = "content-sha256"
    else:
        # the seed changes no frame unless frames are shuffled (a seeded sampling policy keeps
        # its seed in the "sampling" record)
        namespace.pop("seed")
    return EmbeddingCache(options.cache_dir or default_cache_dir(), namespace)


def _check_out_dir(out_dir: Path, identity: dict[str, Any], resume: bool) -> bool:
    """Refuse to mix runs: an existing run continues only with ``resume`` and the same identity.
    Returns whether the run starts afresh (and writes its start record): no run there, or only
    the start record of one that scored no row (it failed or was stopped before its first
    batch), which blocks nothing: its rerun, corrected, starts over."""
    folder = ScoresFolder(out_dir)
    if not folder.record.is_file() or _scored_nothing(folder):
        return True
    if not resume:
        raise FileExistsError(
            f"{out_dir} already holds a run; pass resume=True (--resume) to continue it "
            "or choose another out_dir"
        )
    previous = ScoringRun.load(folder.record).identity  # an older one's keys by today's names
    # a run started before the decoding budget existed continues under the default budget
    previous.setdefault("max_decode_pixels", MAX_DECODE_PIXELS)
    from foilkit.scorers.served import SERVED_DTYPE

    if identity.get("dtype") == SERVED_DTYPE and previous.get("dtype") == "float32":
        previous["dtype"] = SERVED_DTYPE  # a served run recorded before: the same run

    if "dataset" in previous:
        _check_dataset(out_dir, previous["dataset"], identity["dataset"])
        # the rows' content is the dataset's; the files their videos resolve to may change as
        # videos arrive (an input fixed: its rows are retried), so the rows' hash is not compared
        skipped = {"dataset", "rows_sha256"}
    else:  # a run started before its dataset was fingerprinted: its rows' hash still holds
        skipped = {"dataset"}
    keys = (set(previous) | set(identity)) - skipped
    changed = sorted(k for k in keys if previous.get(k) != identity.get(k))
    if changed:
        raise ValueError(
            f"cannot resume {out_dir}: "
            + ", ".join(f"{k} was {previous.get(k)!r}, now {identity.get(k)!r}" for k in changed)
        )
    return False


def _scored_nothing(folder: ScoresFolder) -> bool:
    """Whether ``folder`` holds only the start of a run: its start record (no ``finished_at``)
    and no scored row in its shards."""
    try:
        record = ScoringRun.load(folder.record)
    except (OSError, ValueError):
        return False
    return record.finished_at is None and not ResultStore(folder.root).load()


def _check_dataset(out_dir: Path, before: dict[str, Any], now: dict[str, Any]) -> None:
    """Refuse to resume a run whose dataset changed since it started: its rows scored before
    and after would come from two datasets. One line naming what changed, and the fix."""
    change = fingerprint_change(before, now)
    if change is not None:
        raise ValueError(
            f"cannot resume {out_dir}: its dataset changed since the run started ({change}), "
            "so its scores would mix two datasets; score it into a new output folder (--out; "
            "out_dir= in Python), or start this run again (evaluate --overwrite)"
        )


def _check_resumed_dataset(options: ScoreOptions, data: Any) -> None:
    """On ``resume``, the dataset check of :func:`_check_out_dir` before any model loads."""
    folder = None if options.out_dir is None else ScoresFolder(Path(options.out_dir))
    if not options.resume or folder is None or not folder.record.is_file():
        return
    if _scored_nothing(folder):  # nothing to mix: it starts over
        return
    before = ScoringRun.load(folder.record).identity.get("dataset")
    if before is not None:
        _check_dataset(Path(options.out_dir), before, dataset_fingerprint(data))


def _out_dir_lock(options: ScoreOptions) -> AbstractContextManager[None]:
    """Claim the output folder (new, empty or foilkit's own: :mod:`foilkit.folders`; checked on
    every process) and hold its lock in the main process for the whole run (see ``lock``). A
    dead run's lock is taken over with ``resume``, or when that run scored no row (killed
    before its first batch): nothing of it is there to continue."""
    if options.out_dir is None:
        return nullcontext()
    out_dir = Path(options.out_dir)
    check_folder(out_dir, SCORES)
    if not process_state().is_main_process:
        return nullcontext()
    nothing = not ResultStore(out_dir).load()
    return run_lock(claim_folder(out_dir, SCORES), resume=options.resume or nothing)


def _placement(options: ScoreOptions, state: Any) -> Placement | None:
    """This process's share of the machine for a model spread by ``device_map``."""
    import torch

    on_gpu = model_device(state).type == "cuda"
    return plan_placement(
        options.device_map,
        options.max_memory,
        options.offload_folder,
        options.gpus_per_replica,
        device=options.device,
        local_index=state.local_process_index,
        local_processes=int(os.environ.get("LOCAL_WORLD_SIZE", state.num_processes)),
        process_index=state.process_index,
        num_processes=state.num_processes,
        num_gpus=torch.cuda.device_count() if on_gpu else 0,
    )


def _backend_record(state: Any, adapter: Adapter) -> dict[str, Any]:
    """Where the model ran (``run.json``'s ``backend``); a served model's usage summed over
    processes, its cost with it."""
    record = adapter.backend_record()
    if record.get("usage") is not None:
        record["usage"] = summed_usage(state, record)
    if "frames_sent" in record:  # the requests of every process, by the frames' size
        shapes = ("frames", "height", "width", "timed")
        sent = {
            json.dumps([entry[k] for k in shapes]): entry["requests"]
            for entry in record["frames_sent"]
        }
        record["frames_sent"] = [
            {**dict(zip(shapes, json.loads(shape))), "requests": requests}
            for shape, requests in sorted(
                gather_counts(state, sent).items(), key=lambda item: json.loads(item[0])
            )
        ]
    return record


def _placement_record(state: Any, options: ScoreOptions, adapter: Adapter) -> Any:
    """The run's placement: the options, and each replica's layout (gathered from every process,
    in process order); ``None`` when the model was not spread."""
    replica = adapter.placement_record()
    if replica is None:
        return None
    replicas = [{"process": state.process_index, **replica}]
    if state.num_processes > 1:
        from accelerate.utils import gather_object

        replicas = sorted(gather_object(replicas), key=lambda item: item["process"])
    return placement_record(
        options.device_map, options.max_memory, options.offload_folder, replicas
    )


@dataclass(frozen=True)
class Checked:
    """What :func:`check_inputs` found, before any model loads: the rows and their config, the
    adapter class, the resolved protocol and sampling, the video roots, the videos missing."""

    data: Any
    config: str | None
    family: type[Adapter]
    protocol: ResolvedProtocol
    policy: SamplingPolicy
    roots: list[Path] | None
    missing: list[str]


def check_inputs(
    model: str,
    dataset: Any,
    config: str | None,
    options: ScoreOptions,
    *,
    pool: bool = False,
    named: bool | None = None,
) -> Checked:
    """Everything about a scoring run that can be wrong without loading the model, checked
    first (a mistake found after a model loads costs its loading time, and a run folder):
    the output folder's owner, the dataset, the adapter and protocol, the frame count the model
    takes (:meth:`Adapter.check_frames`), the video root and the rows' video files
    (:func:`foilkit.video_paths.check_video_root`). ``pool``: for a retrieval matrix;
    ``named``: whether the user named the video roots (default: whether ``options`` names any;
    ``evaluate`` passes its roots on either way)."""
    if options.out_dir is not None:  # whether foilkit may write there: read only, first
        check_folder(Path(options.out_dir), SCORES)
    for flag, given in (
        ("--backend openai", options.backend == "openai"),
        ("--judge-model", options.judge_model),
    ):
        if given and missing_modules("served"):  # the openai client: foilkit[served]
            raise MissingExtra(flag, "served")
    data = load_scoring_dataset(dataset, config, options.split)
    _check_resumed_dataset(options, data)
    if options.backend == "openai":  # a served video LLM: no config to read here
        from foilkit.scorers.served import ServedVideoLLM

        server_backend(options).check_key()  # its settings and key, before any work
        family: type[Adapter] = ServedVideoLLM
    else:
        if reads_hub_model(options.adapter):  # one line, where the libraries would retry
            check_offline_model(model)
        family = adapter_class(
            model,
            adapter=options.adapter,
            revision=options.revision,
            trust_remote_code=options.trust_remote_code,
        )
    problem = ffmpeg_problem(options.decoder) if family.needs_video else None
    if problem is not None:  # once, here, not once per row
        raise UserError(f"{problem}: {FFMPEG_FIX}")
    native = family.native_settings(
        model, revision=options.revision, trust_remote_code=options.trust_remote_code
    )
    # the benchmark config: named, else the one the rows were built or loaded as
    benchmark_config = config or getattr(getattr(data, "info", None), "config_name", None)
    protocol = options.resolve(family.name, accepted_settings(family), native, benchmark_config)
    if not family.asks_questions and "needs_question" in data.column_names:
        asked = list(data["needs_question"])
        if any(asked):
            first = asked.index(True)
            rows, instead = _questions_only(options.benchmark)
            raise ValueError(
                f"row {first} (id={data[first]['id']!r}) and {sum(asked) - 1} other(s) are "
                f"questions whose options mean nothing without the question ({rows}); a "
                f"{family.name} model scores texts alone. Score them with a video LLM (--mode "
                "choice or likelihood), or leave such configs out where the benchmark has "
                f"others{instead}"
            )
    if pool and protocol.settings.get("pooling") == "softmax-mean":
        raise ValueError(
            "pooling 'softmax-mean' normalises over one item's caption and foils; a retrieval "
            "pool has none: use pooling 'mean' or 'mean-of-similarities'"
        )
    policy = sampling_policy(protocol, options.seed)
    make_judge(options, protocol)  # its settings and key, before any model
    if protocol.settings.get("mode") == "generate":  # the decoding and parser, before any model
        check_generation(protocol.settings, judged=options.judge_model is not None)
    if policy.name not in ("fps", "int-fps"):  # those take max_frames, not a set count
        family.check_frames(
            model,
            policy.num_frames,
            revision=options.revision,
            trust_remote_code=options.trust_remote_code,
        )
    roots = video_roots_for(options.video_root, dataset)
    if named is None:
        named = named_roots(options.video_root) is not None
    missing = _check_videos(data, family, roots, named=named)
    return Checked(data, config, family, protocol, policy, roots, missing)


def _questions_only(benchmark: str | None) -> tuple[str, str]:
    """Which rows of ``benchmark`` (else of every registered benchmark that has some) need their
    question, and what to choose instead, as their specs say it (``questions_only``)."""
    specs = [BENCHMARKS.get(name) for name in BENCHMARKS.names()]
    specs = [spec for spec in specs if spec.questions_only]
    specs = [spec for spec in specs if spec.name == benchmark] or specs
    rows = ", ".join(spec.questions_only[0] for spec in specs)
    instead = "".join(
        f" ({spec.title}: {spec.questions_only[1]})"
        for spec in specs
        if len(spec.questions_only) > 1
    )
    return rows, instead


def _run(
    model: str, checked: Checked, options: ScoreOptions, kind: str, pool: bool
) -> tuple[Any, Adapter, ScoringPlan, list[dict[str, Any]], ScoringRun]:
    """Shared by ``score`` and ``score_matrix``: plan, split, score, stream, gather (the inputs
    already checked: :func:`check_inputs`)."""
    state = process_state()
    data, family, protocol, policy = checked.data, checked.family, checked.protocol, checked.policy
    roots, missing = checked.roots, checked.missing
    placement = _placement(options, state)
    device = placement.first_device if placement is not None else options.device
    device = device or model_device(state)
    protocol = _precision(protocol, device, given=options.dtype != "auto")
    model_options = protocol.adapter_options(accepted_settings(family))
    if model_options.get("mode") == "generate":  # answers are drawn from the run's seed
        model_options["seed"] = options.seed
    if options.backend == "openai":
        adapter: Adapter = family(
            model, server=server_backend(options), device="cpu", **model_options
        )
    else:
        adapter = load_adapter(
            model,
            adapter=family.name,
            revision=options.revision,
            dtype=protocol.settings.get("dtype", "auto"),
            device=device,
            trust_remote_code=options.trust_remote_code,
            placement=placement,
            **model_options,
        )
    adapter.judge = make_judge(options, protocol)
    plan = _plan(data, adapter, roots, protocol.settings.get("window", "half-open"))
    if pool:
        plan = plan.pooled()
    decoder, decoder_fallback = resolve_decoder(options.decoder)
    if decoder_fallback:
        logger.warning("%s: decoding with %s instead", decoder_fallback, decoder)
    identity = _identity(model, adapter, options, protocol, policy, decoder, plan, kind, data)
    out_dir = Path(options.out_dir) if options.out_dir else None
    if out_dir is not None:
        # on every process, before anyone writes
        fresh = _check_out_dir(out_dir, identity, options.resume)
        state.wait_for_everyone()
        if state.is_main_process and fresh:
            out_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(ScoresFolder(out_dir).record, start_json(identity))
    if missing and state.is_main_process:
        _report_missing(missing, data.num_rows, roots or [], out_dir)
    store = ResultStore(out_dir, state.process_index)
    done = dict(store.load())
    if options.backend == "openai" or adapter.judge is not None:
        from foilkit.scorers.served import bill_run  # spend summed over the run's whole life

        bill_run(adapter, store.shards, state.process_index)
    # the run's judge, shared by its configs: what it asked before this config is not this one's
    judged_before = None if adapter.judge is None else _judge_counts(adapter.judge)
    state.wait_for_everyone()  # every process has read the shards before any appends
    store.open()
    # rows that failed for their inputs are scored again: the user may have fixed them
    retried = {index: record for index, record in done.items() if retried_on_resume(record)}
    done = {index: record for index, record in done.items() if index not in retried}
    if retried and state.is_main_process:
        causes = error_causes(list(retried.values()))
        logger.warning(
            "retrying %d row(s) that failed for their inputs (%s)",
            len(retried),
            ", ".join(f"{count} {cause}" for cause, count in causes.items()),
        )
    pending = [
        batch
        for batch in plan.batches(options.batch_size)
        if any(index not in done for unit in batch for index in unit.rows)
    ]
    engine = Engine(
        adapter,
        plan,
        policy,
        store=store,
        cache=_cache(identity, options, adapter),
        decoder=decoder,
        max_decode_pixels=options.max_decode_pixels,
        control=options.control,
        seed=options.seed,
        batch_size=options.batch_size,
        num_workers=options.num_workers,
        progress=options.progress and state.is_local_main_process,
        log_interval=options.log_interval,
        name=checked.config,
    )
    try:
        new = gather_records(state, engine.run(split(state, pending)))
    except BaseException:  # a stopped run's record says what it spent (a served model, a judge)
        spends = options.backend == "openai" or adapter.judge is not None
        if spends and out_dir is not None and state.is_main_process:
            from foilkit.scorers.served import record_stop

            record_stop(adapter, ScoresFolder(out_dir).record, store.shards)
        raise
    # a row scored before stays as it was written, though its batch was scored again
    merged = {**{record["index"]: record for record in new}, **done}
    missing = [row.id for row in plan.rows if row.index not in merged]
    if missing:
        raise RuntimeError(f"{len(missing)} rows were not scored, e.g. {missing[:5]}")
    records = [merged[row.index] for row in plan.rows]
    throughput = gather_counts(state, engine.throughput.to_record())
    seconds = max(engine.throughput.seconds, 1e-9)
    throughput.update(
        seconds=round(seconds, 3),
        views_per_s=round(throughput["views"] / seconds, 3),
        texts_per_s=round(throughput["texts"] / seconds, 3),
        resumed_rows=len(done),
        retried_rows=len(retried),
    )
    errors = sorted({record["error"] for record in records if record["error"]})
    failed = sum(1 for record in records if record["error"])
    if failed:
        logger.warning(
            "%d of %d rows could not be scored: %s", failed, len(records), "; ".join(errors)
        )
    described = _described(adapter, plan)
    # the adapter's own prompt, for the rows asked it (none where every row asks its own)
    templates = None if described.get("prompt") == OWN_QUESTION else adapter.prompt_templates()
    run = ScoringRun(
        identity=identity,
        model=model,
        revision=options.revision,
        adapter=described,
        prompt_templates=templates,
        processor=adapter.processor_settings(),
        mode=adapter.mode,
        questions=_questions_record(adapter, plan),
        video_question=_video_question_record(plan, records),
        score_kind=adapter.score_kind,
        protocol=protocol,
        num_frames=policy.num_frames,
        sampling=policy.to_record(),
        decoder=decoder,
        decoder_requested=options.decoder,
        decoder_fallback=decoder_fallback,
        max_decode_pixels=options.max_decode_pixels,
        video_roots=None if roots is None else [str(root) for root in roots],
        dtype=adapter.dtype_record(),
        device=str(adapter.device),
        placement=_placement_record(state, options, adapter),
        backend=_backend_record(state, adapter),
        seed=options.seed,
        control=options.control,
        batch_size=options.batch_size,
        num_workers=options.num_workers,
        model_threads=engine.model_threads,
        dataset={
            "config": checked.config,
            "split": options.split,
            "revision": hub_revision(data),
            "num_rows": len(plan.rows),
            "num_views": len(plan.views),
            # files, not units: a pair's two files are one unit
            "num_videos": len({plan.views[v].source_key for u in plan.units for v in u.views}),
        },
        cache=None if engine.cache is None else str(engine.cache.directory),
        errors={"rows": failed, "causes": error_causes(records), "messages": errors},
        answers=answer_outcomes(records) if adapter.mode == "generate" else None,
        judge=_judge_record(state, adapter, records, judged_before),
        throughput=throughput,
        packages=package_versions(),
        foilkit=foilkit_source(),
        hardware=hardware(state.num_processes),
        finished_at=now(),
    )
    if state.is_main_process and options.progress:
        print(
            f"scored {len(records)} rows ({failed} failed): {throughput['views']} views at "
            f"{throughput['views_per_s']} views/s, {throughput['texts']} texts at "
            f"{throughput['texts_per_s']} texts/s",
            file=sys.stderr,
        )
    return data, adapter, plan, records, run


@dataclass(frozen=True)
class ScoredRows:
    """What scoring per-sample rows gives: the rows (what :func:`score` returns) and the run
    record (what it writes as ``run.json``; ``run``: its JSON)."""

    rows: Any  # datasets.Dataset
    record: ScoringRun

    @property
    def run(self) -> dict[str, Any]:
        return self.record.to_json()


def score(model: str, dataset: Any, config: str | None = None, **options: Any) -> Any:
    """Score every row of a foilkit dataset with a Hub model; returns the per-sample ``Dataset``.

    Args:
        model: Hub id or local path of any supported model (see ``foilkit.scorers.adapters``).
        dataset: a ``datasets.Dataset``/``DatasetDict``, a ``save_to_disk`` folder, a parquet
            folder or a Hub id, in the canonical foilkit schema.
        config: the dataset config (aspect, test, ...) when ``dataset`` is a folder or Hub id.
        **options: see ``ScoreOptions``.

    Returns:
        One row per dataset row: ``id``, ``caption_score``, ``foil_scores`` (and the
        ``proficiency_`` pair for ViLMA), ``score_kind``, ``frame_indices``, ``error``, the
        adapter's details, then the dataset's metadata columns. With ``out_dir``, also writes
        ``scores.jsonl`` and ``run.json`` there. :func:`score_rows` also returns the run record.
    """
    return score_rows(model, dataset, config, ScoreOptions(**options)).rows


def score_rows(
    model: str,
    dataset: Any,
    config: str | None,
    options: ScoreOptions,
    *,
    checked: Checked | None = None,
) -> ScoredRows:
    """:func:`score` with typed options, returning the rows and the run record; ``checked``:
    what :func:`check_inputs` found for these inputs, when the caller checked them already
    (``evaluate`` checks every config before any scoring, once)."""
    if checked is None:
        checked = check_inputs(model, dataset, config, options)
    # foilkit's own progress only: no bars of datasets' or transformers' inner steps
    with _out_dir_lock(options), library_progress_bars(enabled=False):
        data, adapter, plan, records, run = _run(model, checked, options, "score", pool=False)
        groups = [group for group in GROUP_PREFIX if any(group in row.groups for row in plan.rows)]
        result = scores_dataset(records, groups, adapter.score_kind, data)
        if options.out_dir and process_state().is_main_process:
            folder = ScoresFolder(Path(options.out_dir))
            write_jsonl(result, folder.scores)
            atomic_write(folder.record, json.dumps(run.to_json(), indent=2))
    return ScoredRows(result, run)


@dataclass(frozen=True)
class ScoreMatrix:
    """Scores of every view (row ``i``: the view of dataset row ``i``) against every text.

    ``texts[j]`` is the caption of dataset row ``j``, so the diagonal holds the true pairs
    (RTime: forward and reversed views with their captions). Rows whose video failed are NaN.
    """

    scores: np.ndarray
    ids: list[str]
    texts: list[str]
    score_kind: str
    errors: dict[str, str]
    record: ScoringRun

    @property
    def run(self) -> dict[str, Any]:
        """The run record's JSON (``run.json``)."""
        return self.record.to_json()


def score_matrix(
    model: str, dataset: Any, config: str | None = None, **options: Any
) -> ScoreMatrix:
    """A views x texts score matrix over a retrieval pool (every row's view against every row's
    caption).

    Dual encoders compute it from (cached) embeddings as dot products; other adapters score
    each view against all captions (``choice`` mode does not apply: texts are not options).
    ``options``: see ``ScoreOptions``.
    """
    return score_pool(model, dataset, config, ScoreOptions(**options))


def score_pool(
    model: str,
    dataset: Any,
    config: str | None,
    options: ScoreOptions,
    *,
    checked: Checked | None = None,
) -> ScoreMatrix:
    """:func:`score_matrix` with typed options (the matrix carries its run record, ``run``);
    ``checked``: as :func:`score_rows`' (checked with ``pool=True``)."""
    if options.mode in ("choice", "generate"):
        raise ValueError(
            f"score_matrix needs a mode that scores each text alone; {options.mode!r} compares "
            "texts as the options of one question"
        )
    if checked is None:
        checked = check_inputs(model, dataset, config, options, pool=True)
    # foilkit's own progress only: no bars of datasets' or transformers' inner steps
    with _out_dir_lock(options), library_progress_bars(enabled=False):
        _, adapter, plan, records, run = _run(model, checked, options, "score_matrix", pool=True)
        texts = list(plan.rows[0].groups["pool"]) if plan.rows else []
        matrix = np.full((len(records), len(texts)), np.nan)
        for i, record in enumerate(records):
            if not record["error"]:
                matrix[i] = record["scores"]["pool"]
        errors = {record["id"]: record["error"] for record in records if record["error"]}
        result = ScoreMatrix(
            matrix, [record["id"] for record in records], texts, adapter.score_kind, errors, run
        )
        if options.out_dir and process_state().is_main_process:
            folder = ScoresFolder(Path(options.out_dir))
            with naming_full_disk(folder.matrix):
                np.save(folder.matrix, matrix)
            atomic_write(folder.matrix_index, json.dumps({"ids": result.ids, "texts": texts}))
            atomic_write(folder.record, json.dumps(run.to_json(), indent=2))
    return result


__all__ = [
    "SCORE_OPTION_NAMES",
    "ScoreMatrix",
    "ScoreOptions",
    "ScoredRows",
    "load_scoring_dataset",
    "score",
    "score_matrix",
    "score_pool",
    "score_rows",
]
