"""The scoring run: a resolved :class:`foilkit.scorers.job.ScoringJob` planned, split over the
processes, scored by the engine, gathered back in dataset order and written.

Both kinds run under ``accelerate launch`` as they do in one process: every process plans the
same work, takes a contiguous share of the videos, streams its finished rows to its own shard in
``out_dir``, and the shares are gathered back in dataset order. :func:`run_rows` writes the
per-sample scores, :func:`run_pool` a retrieval pool's matrix; both write the run record
(:class:`foilkit.scorers.record.ScoringRun`) into the scoring folder
(:class:`foilkit.folders.ScoresFolder`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from foilkit.files import atomic_write, naming_full_disk
from foilkit.folders import SCORES, ScoresFolder, check_folder, claim_folder
from foilkit.progress import library_progress_bars
from foilkit.scorers import video_question
from foilkit.scorers.adapters import Adapter, EmbeddingAdapter
from foilkit.scorers.cache import EmbeddingCache, default_cache_dir
from foilkit.scorers.dataset_files import dataset_fingerprint, hub_revision
from foilkit.scorers.distributed import gather_counts, gather_records, process_state, split
from foilkit.scorers.engine import Engine, retried_on_resume
from foilkit.scorers.job import ScoringJob, check_same_dataset, scored_nothing
from foilkit.scorers.lock import run_lock
from foilkit.scorers.options import ScoreOptions
from foilkit.scorers.output import (
    GROUP_PREFIX,
    answer_outcomes,
    error_causes,
    scores_dataset,
    write_jsonl,
)
from foilkit.scorers.placement import placement_record
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
from foilkit.scorers.video import MAX_DECODE_PIXELS, SamplingPolicy, resolve_decoder
from foilkit.video_paths import missing_summary, video_columns

logger = logging.getLogger(__name__)


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


#: What an adapter's record says of how its numbers are computed, not of which they are: a run
#: resumes across a change of them (generate mode's batching decodes the answers of one at a time).
HOW_ONLY = ("batched_decoding",)


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
        **{k: v for k, v in _described(adapter, plan).items() if k not in HOW_ONLY},
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
    judge: :func:`foilkit.scorers.job.make_judge`)."""
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
    from foilkit.scorers.openai_client import token_cost

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


def check_out_dir(out_dir: Path, identity: dict[str, Any], resume: bool) -> bool:
    """Refuse to mix runs: an existing run continues only with ``resume`` and the same identity.
    Returns whether the run starts afresh (and writes its start record): no run there, or only
    the start record of one that scored no row (it failed or was stopped before its first
    batch), which blocks nothing: its rerun, corrected, starts over."""
    folder = ScoresFolder(out_dir)
    if not folder.record.is_file() or scored_nothing(folder):
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
        check_same_dataset(out_dir, previous["dataset"], identity["dataset"])
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
class _Setup:
    """A run ready to score in this process (:func:`_set_up`): its job, options and process
    state, the adapter loaded with the protocol its device runs, the plan, the decoder (and why
    not the one asked for: ``decoder_fallback``), the identity its folder records and the
    folder (``None``: none is written)."""

    job: ScoringJob
    options: ScoreOptions
    state: Any
    adapter: Adapter
    protocol: ResolvedProtocol
    plan: ScoringPlan
    decoder: str
    decoder_fallback: str | None
    identity: dict[str, Any]
    out_dir: Path | None

    @property
    def spends(self) -> bool:
        """Whether the run pays for its requests: a served model's, a judge's."""
        return self.options.backend != "local" or self.adapter.judge is not None


def _set_up(job: ScoringJob, options: ScoreOptions, kind: str, pool: bool) -> _Setup:
    """The job's adapter loaded in this process, its rows planned (``pool``: as one retrieval
    pool), the decoder chosen and the run's identity (``kind``: ``score``, ``score_matrix``)."""
    state = process_state()
    adapter, protocol = job.load_adapter(options, state)
    plan = _plan(job.data, adapter, job.roots, protocol.settings.get("window", "half-open"))
    if pool:
        plan = plan.pooled()
    decoder, decoder_fallback = resolve_decoder(options.decoder)
    if decoder_fallback:
        logger.warning("%s: decoding with %s instead", decoder_fallback, decoder)
    identity = _identity(
        job.model, adapter, options, protocol, job.policy, decoder, plan, kind, job.data
    )
    out_dir = Path(options.out_dir) if options.out_dir else None
    return _Setup(
        job, options, state, adapter, protocol, plan, decoder, decoder_fallback, identity, out_dir
    )


def _start(run: _Setup) -> None:
    """The output folder checked on every process before anyone writes (an existing run
    continues only as itself: :func:`check_out_dir`), a fresh run's start record written, and
    the missing videos reported."""
    state, out_dir = run.state, run.out_dir
    if out_dir is not None:
        fresh = check_out_dir(out_dir, run.identity, run.options.resume)
        state.wait_for_everyone()
        if state.is_main_process and fresh:
            out_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(ScoresFolder(out_dir).record, start_json(run.identity))
    if run.job.missing and state.is_main_process:
        _report_missing(run.job.missing, run.job.data.num_rows, run.job.roots or [], out_dir)


def _resume(run: _Setup) -> tuple[ResultStore, dict[int, Any], dict[int, Any]]:
    """This process's shard store, opened for appending once every process has read the rows
    scored before: those kept (``done``) and those scored again because they failed for their
    inputs, which the user may have fixed (``retried``)."""
    state = run.state
    store = ResultStore(run.out_dir, state.process_index)
    done = dict(store.load())
    if run.spends:
        from foilkit.scorers.openai_client import bill_run  # spend summed over the run's whole life

        bill_run(run.adapter, store.shards, state.process_index)
    state.wait_for_everyone()  # every process has read the shards before any appends
    store.open()
    retried = {index: record for index, record in done.items() if retried_on_resume(record)}
    done = {index: record for index, record in done.items() if index not in retried}
    if retried and state.is_main_process:
        causes = error_causes(list(retried.values()))
        logger.warning(
            "retrying %d row(s) that failed for their inputs (%s)",
            len(retried),
            ", ".join(f"{count} {cause}" for cause, count in causes.items()),
        )
    return store, done, retried


def _engine(run: _Setup, store: ResultStore) -> Engine:
    """The engine that scores the run's rows in this process, streaming them to ``store``."""
    options = run.options
    return Engine(
        run.adapter,
        run.plan,
        run.job.policy,
        store=store,
        cache=_cache(run.identity, options, run.adapter),
        decoder=run.decoder,
        max_decode_pixels=options.max_decode_pixels,
        control=options.control,
        seed=options.seed,
        batch_size=options.batch_size,
        num_workers=options.num_workers,
        progress=options.progress and run.state.is_local_main_process,
        log_interval=options.log_interval,
        name=run.job.config,
    )


def _score(
    run: _Setup, engine: Engine, store: ResultStore, done: dict[int, Any]
) -> list[dict[str, Any]]:
    """Every row's record in dataset order: the batches with a row not ``done`` scored by
    ``engine`` over the processes and gathered, the rows scored before kept as written. A
    stopped run's record says what it spent (a served model, a judge)."""
    state = run.state
    pending = [
        batch
        for batch in run.plan.batches(run.options.batch_size)
        if any(index not in done for unit in batch for index in unit.rows)
    ]
    try:
        new = gather_records(state, engine.run(split(state, pending)))
    except BaseException:
        if run.spends and run.out_dir is not None and state.is_main_process:
            from foilkit.scorers.openai_client import record_stop

            record_stop(run.adapter, ScoresFolder(run.out_dir).record, store.shards)
        raise
    # a row scored before stays as it was written, though its batch was scored again
    merged = {**{record["index"]: record for record in new}, **done}
    missing = [row.id for row in run.plan.rows if row.index not in merged]
    if missing:
        raise RuntimeError(f"{len(missing)} rows were not scored, e.g. {missing[:5]}")
    return [merged[row.index] for row in run.plan.rows]


def _throughput(state: Any, engine: Engine, resumed: int, retried: int) -> dict[str, Any]:
    """The run's throughput summed over processes: views, texts and their rates, and the rows
    resumed and retried."""
    throughput = gather_counts(state, engine.throughput.to_record())
    seconds = max(engine.throughput.seconds, 1e-9)
    throughput.update(
        seconds=round(seconds, 3),
        views_per_s=round(throughput["views"] / seconds, 3),
        texts_per_s=round(throughput["texts"] / seconds, 3),
        resumed_rows=resumed,
        retried_rows=retried,
    )
    return throughput


def _errors(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The rows that could not be scored (warned about): how many, their causes, the messages."""
    messages = sorted({record["error"] for record in records if record["error"]})
    failed = sum(1 for record in records if record["error"])
    if failed:
        logger.warning(
            "%d of %d rows could not be scored: %s", failed, len(records), "; ".join(messages)
        )
    return {"rows": failed, "causes": error_causes(records), "messages": messages}


def _dataset_record(run: _Setup) -> dict[str, Any]:
    """What was scored: the config, split and revision, and its rows, views and video files."""
    plan = run.plan
    return {
        "config": run.job.config,
        "split": run.options.split,
        "revision": hub_revision(run.job.data),
        "num_rows": len(plan.rows),
        "num_views": len(plan.views),
        # files, not units: a pair's two files are one unit
        "num_videos": len({plan.views[v].source_key for u in plan.units for v in u.views}),
    }


def _record(
    run: _Setup,
    engine: Engine,
    records: list[dict[str, Any]],
    judged_before: dict[str, Any] | None,
    throughput: dict[str, Any],
) -> ScoringRun:
    """The run's record (``run.json``) once every row is scored."""
    adapter, options, policy = run.adapter, run.options, run.job.policy
    described = _described(adapter, run.plan)
    # the adapter's own prompt, for the rows asked it (none where every row asks its own)
    templates = None if described.get("prompt") == OWN_QUESTION else adapter.prompt_templates()
    roots = run.job.roots
    return ScoringRun(
        identity=run.identity,
        model=run.job.model,
        revision=options.revision,
        adapter=described,
        prompt_templates=templates,
        processor=adapter.processor_settings(),
        mode=adapter.mode,
        questions=_questions_record(adapter, run.plan),
        video_question=_video_question_record(run.plan, records),
        score_kind=adapter.score_kind,
        protocol=run.protocol,
        num_frames=policy.num_frames,
        sampling=policy.to_record(),
        decoder=run.decoder,
        decoder_requested=options.decoder,
        decoder_fallback=run.decoder_fallback,
        max_decode_pixels=options.max_decode_pixels,
        video_roots=None if roots is None else [str(root) for root in roots],
        dtype=adapter.dtype_record(),
        device=str(adapter.device),
        placement=_placement_record(run.state, options, adapter),
        backend=_backend_record(run.state, adapter),
        seed=options.seed,
        control=options.control,
        batch_size=options.batch_size,
        num_workers=options.num_workers,
        model_threads=engine.model_threads,
        dataset=_dataset_record(run),
        cache=None if engine.cache is None else str(engine.cache.directory),
        errors=_errors(records),
        answers=answer_outcomes(records) if adapter.mode == "generate" else None,
        judge=_judge_record(run.state, adapter, records, judged_before),
        throughput=throughput,
        packages=package_versions(),
        foilkit=foilkit_source(),
        hardware=hardware(run.state.num_processes),
        finished_at=now(),
    )


def _run(
    job: ScoringJob, options: ScoreOptions, kind: str, pool: bool
) -> tuple[Adapter, ScoringPlan, list[dict[str, Any]], ScoringRun]:
    """Shared by ``score`` and ``score_matrix``: set up, start the folder, resume, score over
    the processes, gather and record (the job resolved before:
    :meth:`foilkit.scorers.job.ScoringJob.resolve`)."""
    run = _set_up(job, options, kind, pool)
    _start(run)
    store, done, retried = _resume(run)
    # the run's judge, shared by its configs: what it asked before this config is not this one's
    judge = run.adapter.judge
    judged_before = None if judge is None else _judge_counts(judge)
    engine = _engine(run, store)
    records = _score(run, engine, store, done)
    throughput = _throughput(run.state, engine, len(done), len(retried))
    record = _record(run, engine, records, judged_before, throughput)
    if run.state.is_main_process and options.progress:
        print(
            f"scored {len(records)} rows ({record.failed_rows} failed): {throughput['views']} "
            f"views at {throughput['views_per_s']} views/s, {throughput['texts']} texts at "
            f"{throughput['texts_per_s']} texts/s",
            file=sys.stderr,
        )
    return run.adapter, run.plan, records, record


@dataclass(frozen=True)
class ScoredRows:
    """What scoring per-sample rows gives: the rows (what :func:`score` returns) and the run
    record (what it writes as ``run.json``; ``run``: its JSON)."""

    rows: Any  # datasets.Dataset
    record: ScoringRun

    @property
    def run(self) -> dict[str, Any]:
        return self.record.to_record()


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
        return self.record.to_record()


def run_rows(job: ScoringJob, options: ScoreOptions) -> ScoredRows:
    """Score ``job``'s rows with ``options`` (those it was resolved with; ``evaluate``: with
    each config's own folder), writing ``scores.jsonl`` and ``run.json`` into ``out_dir``."""
    # foilkit's own progress only: no bars of datasets' or transformers' inner steps
    with _out_dir_lock(options), library_progress_bars(enabled=False):
        adapter, plan, records, run = _run(job, options, "score", pool=False)
        groups = [group for group in GROUP_PREFIX if any(group in row.groups for row in plan.rows)]
        result = scores_dataset(records, groups, adapter.score_kind, job.data)
        if options.out_dir and process_state().is_main_process:
            folder = ScoresFolder(Path(options.out_dir))
            write_jsonl(result, folder.scores)
            atomic_write(folder.record, json.dumps(run.to_record(), indent=2))
    return ScoredRows(result, run)


def run_pool(job: ScoringJob, options: ScoreOptions) -> ScoreMatrix:
    """Score ``job``'s retrieval pool (every view against every caption) with ``options``,
    writing ``matrix.npy``, ``matrix.json`` and ``run.json`` into ``out_dir``."""
    # foilkit's own progress only: no bars of datasets' or transformers' inner steps
    with _out_dir_lock(options), library_progress_bars(enabled=False):
        adapter, plan, records, run = _run(job, options, "score_matrix", pool=True)
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
            atomic_write(folder.record, json.dumps(run.to_record(), indent=2))
    return result
