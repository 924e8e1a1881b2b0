"""The scoring engine: decode each video once, batch on the model side, stream results to disk.

Work flows through one loop whatever the model: ``DecodeUnit``s (one video file each) are
decoded by threads ahead of the model (``prefetch.py``) while this thread runs the model on
the previous units; every finished row goes to this process's JSONL shard at once. Dual encoders
encode each view and text once (views through the on-disk embedding cache) and score by dot
products; other adapters get ``TextsRequest``s that reuse one decode per view.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

import numpy as np
import torch

from foilkit.progress import DEFAULT_LOG_INTERVAL, ProgressLines, interactive
from foilkit.scorers import video_question
from foilkit.scorers.adapters import Adapter, EmbeddingAdapter
from foilkit.scorers.cache import CachedView, EmbeddingCache
from foilkit.scorers.controls import apply_control
from foilkit.scorers.plan import (
    VIDEO_QUESTION_GROUPS,
    DecodeUnit,
    PlannedRow,
    ScoringPlan,
    view_key,
)
from foilkit.scorers.prefetch import prefetched
from foilkit.scorers.requests import TextScores, TextsRequest
from foilkit.scorers.store import ResultStore
from foilkit.scorers.video import (
    MAX_DECODE_PIXELS,
    DecodedFrames,
    SamplingError,
    SamplingPolicy,
    VideoError,
    content_hash,
    decode_views,
    decoding,
    window_frames,
)
from foilkit.scorers.video.joined import FIRST, SECOND, SEPARATOR, Clip, join_frames, layout


@dataclass(frozen=True)
class ViewFrames:
    """What a model sees of one view: frames (absent when the embedding came from the cache).

    ``timestamps``: each frame's seconds in the source video, in the order shown (a temporal
    control reorders them with the frames); ``None`` when served from the cache.
    """

    frame_indices: list[int]
    frames: torch.Tensor | None = None
    cached: torch.Tensor | None = None
    cache_key: str | None = None
    timestamps: list[float] | None = None


class Fault(NamedTuple):
    """Why a row cannot be scored: the message naming its file, row or field, and its cause in a
    few words (``video missing``, ``corrupt video``, ...), which coverage counts."""

    message: str
    cause: str

    @classmethod
    def of(cls, error: VideoError) -> Fault:
        return cls(str(error), error.cause)


#: The cause of a row the plan refused (a bad video path, window or field).
INVALID_ROW = "invalid row"
#: The cause of a row the model gave a NaN or infinite score.
NONFINITE_SCORE = "non-finite score"


def _causes(error: type[VideoError]) -> frozenset[str]:
    """The causes of ``error`` and of every error class derived from it."""
    return frozenset({error.cause}).union(*(_causes(sub) for sub in error.__subclasses__()))


#: Causes that lie in a row's inputs, which the user can fix: every video fault (missing,
#: corrupt, empty, unreadable, a window or view that cannot be played), a field the plan
#: refused, and a cause not recorded (a row failed in a run from before causes were).
INPUT_CAUSES = _causes(VideoError) | {INVALID_ROW, "unrecorded"}


def retried_on_resume(record: dict[str, Any]) -> bool:
    """Whether a row a resumed run finds already written is scored again: a row that failed
    for its inputs (:data:`INPUT_CAUSES`), which the user may have fixed since; not a row
    scored, nor one that failed for the model's own answer (a non-finite score, a served
    model's refusal or oversized reply), which the same inputs give again."""
    return bool(record.get("error")) and (record.get("error_cause") or "unrecorded") in (
        INPUT_CAUSES
    )


@dataclass
class DecodedUnit:
    """A unit's decoded views; ``error``: its file's fault (every row fails), ``view_errors``:
    views that could not be played (a window beyond the video, or, in a unit of several files,
    a file that could not be read), which fail only their rows. ``decoded``: files decoded."""

    unit: DecodeUnit
    views: dict[str, ViewFrames] = field(default_factory=dict)
    error: Fault | None = None
    decoded: int = 0
    view_errors: dict[str, Fault] = field(default_factory=dict)
    #: per joined view: the sampled frames in its first video, its separator, its second video
    sampled: dict[str, list[int]] = field(default_factory=dict)

    def error_of(self, row: PlannedRow) -> Fault | None:
        """Why ``row`` cannot be scored: its own error, its file's, or one of its views' (its
        video's, then its foil video's, then its joined views'); else ``None``."""
        if row.error:
            return Fault(row.error, INVALID_ROW)
        faults = (self.view_errors.get(view) for view in (*row.views, *row.joined_views))
        return self.error or next((fault for fault in faults if fault is not None), None)


class UnitDecoder:
    """Decodes one unit per call (in the decoding threads): its views' frames, controls applied.

    With a cache, a unit whose views are all cached is served without opening the video.
    """

    def __init__(
        self,
        plan: ScoringPlan,
        policy: SamplingPolicy,
        *,
        decoder: str,
        control: str | None,
        seed: int,
        cache: EmbeddingCache | None,
        max_decode_pixels: int = MAX_DECODE_PIXELS,
    ):
        self.plan, self.policy = plan, policy
        self.decoder, self.control, self.seed, self.cache = decoder, control, seed, cache
        self.max_decode_pixels = max_decode_pixels

    def __call__(self, unit: DecodeUnit) -> DecodedUnit:
        result = DecodedUnit(unit)
        files: dict[str, list[str]] = {}  # a unit joined by video foils holds several files
        for view in unit.views:
            files.setdefault(self.plan.views[view].source_key, []).append(view)
        if unit.joined:
            self._decode_joined(files, result)
            return result
        for views in files.values():
            try:
                self._decode_file(views, result)
            except VideoError as error:
                if len(files) == 1:
                    result.views, result.view_errors = {}, {}
                    result.error = Fault.of(error)
                    continue
                for view in views:  # only the rows using this file fail
                    result.views.pop(view, None)
                    result.view_errors[view] = Fault.of(error)
        return result

    def _decode_joined(self, files: dict[str, list[str]], result: DecodedUnit) -> None:
        """Decode a unit whose rows ask the video question: each file opened and decoded once,
        its views' frames and the frames its part of each joined view shows in one pass
        (:mod:`foilkit.scorers.video.joined`); a control reorders each part's frames as it
        would the part's own view, the separator staying between them."""
        opened = {}
        for source, views in files.items():
            try:
                opened[source] = decoding.open_video(
                    self.plan.views[views[0]], self.decoder, self.max_decode_pixels
                )
            except VideoError as error:
                result.view_errors.update(dict.fromkeys(views, Fault.of(error)))
        layouts = {}
        for key in result.unit.joined:
            joined = self.plan.joined[key]
            parts = [self.plan.views[joined.first], self.plan.views[joined.second]]
            if any(view.source_key not in opened for view in parts):
                continue  # the file's error fails the row through its own view
            try:
                clips = []
                for view in parts:
                    meta = opened[view.source_key].metadata
                    first, last = window_frames(view, meta)
                    clips.append(Clip(first, last, meta.fps, view.reversed))
                layouts[key] = layout(*clips, self.policy, joined.gap_seconds, key=key)
            except VideoError:
                continue  # a window beyond its video: the view's own decode reports it
            except ValueError as error:  # the policy cannot sample the joined video
                result.view_errors[key] = Fault.of(SamplingError(key, str(error)))
        pieces: dict[tuple[str, int], DecodedFrames] = {}
        for source, views in files.items():
            if source not in opened:
                continue
            wanted = [
                (key, part)
                for key in layouts
                for part, name in (
                    (FIRST, self.plan.joined[key].first),
                    (SECOND, self.plan.joined[key].second),
                )
                if self.plan.views[name].source_key == source
            ]
            try:
                decoded = decode_views(
                    [self.plan.views[view] for view in views],
                    self.policy,
                    self.decoder,
                    self.max_decode_pixels,
                    video=opened[source],
                    frame_sets=[layouts[key].frames_of(part) for key, part in wanted],
                )
            except VideoError as error:  # the file fails while its frames are read
                result.view_errors.update(dict.fromkeys(views, Fault.of(error)))
                continue
            result.decoded += 1
            self._keep(result, views, decoded)
            pieces.update(zip(wanted, decoded[len(views) :]))
        for key, timeline in layouts.items():
            if (key, FIRST) not in pieces or (key, SECOND) not in pieces:
                continue  # a file failed: its rows fail through their own views
            parts = []
            for part in (FIRST, SECOND):
                piece = pieces[key, part]
                # the part's positions and times on the joined timeline, which the control
                # reorders (or thins, ``single``) with the frames
                shown = timeline.parts == part
                piece.indices = timeline.positions[shown]
                piece.timestamps = timeline.timestamps[shown]
                parts.append(
                    apply_control(piece, self.control, seed=self.seed, view_key=f"{key}#{part}")
                )
            first, second = parts
            gap = timeline.parts == SEPARATOR
            frames = join_frames(first.frames, int(gap.sum()), second.frames)
            positions = np.concatenate([first.indices, timeline.positions[gap], second.indices])
            times = np.concatenate([first.timestamps, timeline.timestamps[gap], second.timestamps])
            result.views[key] = ViewFrames(positions.tolist(), frames, timestamps=times.tolist())
            result.sampled[key] = [len(first.indices), int(gap.sum()), len(second.indices)]

    def _decode_file(self, views: list[str], result: DecodedUnit) -> None:
        """Decode ``views`` (all of one file) into ``result``, from the cache where it can."""
        keys, digest = {}, None
        if self.cache is not None or self.control == "shuffled":
            digest = content_hash(self.plan.views[views[0]])
        if self.cache is not None:
            keys = {view: self.cache.key(digest, self.plan.views[view]) for view in views}
            for view, key in keys.items():
                hit = self.cache.get(key)
                if hit is not None:
                    result.views[view] = ViewFrames(
                        hit.frame_indices, cached=hit.embedding, cache_key=key
                    )
        missing = [view for view in views if view not in result.views]
        if missing:
            decoded = decode_views(
                [self.plan.views[view] for view in missing],
                self.policy,
                self.decoder,
                self.max_decode_pixels,
            )
            result.decoded += 1
            self._keep(result, missing, decoded, digest, keys)

    def _keep(
        self,
        result: DecodedUnit,
        views: list[str],
        decoded: Sequence[DecodedFrames | VideoError],
        digest: str | None = None,
        cache_keys: dict[str, str] | None = None,
    ) -> None:
        """Each of ``views``' (all of one file) decoded frames into ``result``, the control
        applied, or its fault. Frames are shuffled by the file's content (``digest``, hashed
        here when not given), not its path: the same permutation in any folder, on any
        machine."""
        if self.control == "shuffled" and digest is None:
            digest = content_hash(self.plan.views[views[0]])
        for view, frames in zip(views, decoded):
            if isinstance(frames, VideoError):
                result.view_errors[view] = Fault.of(frames)
                continue
            key = view
            if self.control == "shuffled":
                key = view_key(self.plan.views[view], f"sha256:{digest}")
            frames = apply_control(frames, self.control, seed=self.seed, view_key=key)
            result.views[view] = ViewFrames(
                frames.indices.tolist(),
                frames.frames,
                cache_key=(cache_keys or {}).get(view),
                timestamps=frames.timestamps.tolist(),
            )


#: What a video LLM counts of its work (its prefix forwards; in generate mode, its decoding
#: batches and those holding questions about more than one view), summed into the throughput.
ADAPTER_COUNTS = ("prefix_forwards", "decode_batches", "cross_view_batches")


def _text_groups(row: PlannedRow) -> list[str]:
    """The row's text groups scored by a request of their own (the video question's are asked
    about the joined views)."""
    return [group for group in row.groups if group not in VIDEO_QUESTION_GROUPS]


def _request_key(row: PlannedRow, group: str) -> tuple[Any, ...]:
    """The engine's key of the request scoring ``row``'s text ``group``: view, texts, question,
    answers, the judge's reference; rows repeating all share one request."""
    return (row.view_of(group), row.groups[group], *row.asked(group), row.judged(group))


def error_record(row: PlannedRow, fault: Fault) -> dict[str, Any]:
    """A row that could not be scored: no scores, the error naming the file, row or field, and
    its cause."""
    return {
        "index": row.index,
        "id": row.id,
        "scores": {},
        "details": {},
        "frame_indices": [],
        "error": fault.message,
        "error_cause": fault.cause,
    }


def text_name(group: str, position: int) -> str:
    """What text ``position`` of a row's text group is, in the benchmarks' words."""
    if group == "pool":
        return f"pool text {position} (the caption of row {position})"
    prefix = "" if group == "main" else f"{group.replace('_', ' ')} "
    return f"{prefix}caption" if position == 0 else f"{prefix}foil {position}"


def nonfinite_text(row: PlannedRow, scores: dict[str, TextScores]) -> str | None:
    """Which text of ``row`` got a NaN or infinite score or detail (``None``: all are finite)."""
    for group, result in scores.items():
        for name, values in {"score": result.scores, **result.details}.items():
            for position, value in enumerate(values):
                if not math.isfinite(value):
                    text = row.groups[group][position]
                    return (
                        f"the model gave the {text_name(group, position)} {text!r} "
                        f"a non-finite {name} ({value})"
                    )
    return None


def available_cores() -> int:
    """CPU cores this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity else os.cpu_count() or 1


@contextmanager
def cores_beside_workers(num_workers: int) -> Iterator[None]:
    """Limit the model's intra-op threads to the cores the decoding threads leave free.

    With decoders busy on every core, a full-width thread pool for the model oversubscribes the
    machine and the model's threads wait on each other (on 2 cores with 2 decoders, a small
    model ran several times slower). The previous setting is restored afterwards.
    """
    before = torch.get_num_threads()
    if num_workers:
        torch.set_num_threads(max(1, min(before, available_cores() - num_workers)))
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass
class Throughput:
    views: int = 0
    cached_views: int = 0
    decoded_videos: int = 0
    texts: int = 0
    rows: int = 0
    seconds: float = 0.0
    #: video prefixes a video LLM encoded (``None``: an adapter that encodes none)
    prefix_forwards: int | None = None
    #: batches of several questions a video LLM decoded together (``None``: it decodes none),
    #: and those of them holding questions about more than one view
    decode_batches: int | None = None
    cross_view_batches: int | None = None

    def to_record(self) -> dict[str, float]:
        """This process's counts and seconds; the run's rates are computed from the counts
        summed over the processes (:func:`foilkit.scorers.runner._throughput`)."""
        prefixes = {} if self.prefix_forwards is None else {"prefix_forwards": self.prefix_forwards}
        if self.decode_batches is not None:
            prefixes["decode_batches"] = self.decode_batches
            prefixes["cross_view_batches"] = self.cross_view_batches or 0
        return {
            **prefixes,
            "views": self.views,
            "cached_views": self.cached_views,
            "decoded_videos": self.decoded_videos,
            "texts": self.texts,
            "rows": self.rows,
            "seconds": round(self.seconds, 3),
        }


class Engine:
    """Runs one process's share of a plan through an adapter, appending finished rows to
    ``store``."""

    def __init__(
        self,
        adapter: Adapter,
        plan: ScoringPlan,
        policy: SamplingPolicy,
        *,
        store: ResultStore,
        cache: EmbeddingCache | None = None,
        decoder: str = "torchcodec",
        max_decode_pixels: int = MAX_DECODE_PIXELS,
        control: str | None = None,
        seed: int = 0,
        batch_size: int = 8,
        num_workers: int = 0,
        progress: bool = False,
        log_interval: float | None = None,
        name: str | None = None,
    ):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.adapter, self.plan, self.policy, self.store = adapter, plan, policy, store
        self.cache = cache if isinstance(adapter, EmbeddingAdapter) else None
        self.decode = UnitDecoder(
            plan,
            policy,
            decoder=decoder,
            control=control,
            seed=seed,
            cache=self.cache,
            max_decode_pixels=max_decode_pixels,
        )
        self.batch_size, self.num_workers, self.progress = batch_size, num_workers, progress
        # seconds between two progress lines in a log (not a terminal); None: the default
        self.log_interval = DEFAULT_LOG_INTERVAL if log_interval is None else log_interval
        self.name = name  # what is scored (a dataset config), named in the log's first line
        self.throughput = Throughput()
        self.model_threads: int | None = None  # set by ``run``
        self._text_embeddings: dict[str, torch.Tensor] = {}
        # the plan's texts in fixed chunks, and each text's chunk: made on first use
        self._text_chunk_of: dict[str, int] | None = None
        self._text_chunks: list[list[str]] = []

    def decoded(self, units: Sequence[DecodeUnit]) -> Generator[DecodedUnit, None, None]:
        """Units with their frames, in order, decoded by ``num_workers`` threads ahead of the model.

        At most one batch plus one unit per thread is decoded ahead, so memory stays flat in
        the number of videos while the next batch is ready when the model finishes this one.
        """
        depth = self.batch_size + self.num_workers
        return prefetched(self.decode, units, workers=self.num_workers, depth=depth)

    def run(self, batches: Sequence[Sequence[DecodeUnit]]) -> list[dict[str, Any]]:
        """Score every row of ``batches``; returns the new records (also appended to the store).

        Batches come from ``ScoringPlan.batches``: fixed by the whole plan, so a unit is scored in
        the same company whichever process takes it and whether or not the run was resumed (texts
        too, in the plan's fixed chunks). Its numbers are then bit-identical across process counts
        and resumptions on the same device type with the same ``model_threads`` (recorded in
        ``run.json``). On a CPU the last bits also depend on the model's thread count, and
        ``accelerate launch`` gives each of N processes 1/N of the cores: pin the count
        (``OMP_NUM_THREADS``) or set ``MKL_CBWR=AUTO,STRICT`` (MKL's thread-count-independent
        GEMMs, slower) to compare a run of one process with one of several bit for bit.
        """
        with cores_beside_workers(self.num_workers):
            # recorded: on a CPU the last bits of a score depend on the model's thread count
            self.model_threads = torch.get_num_threads()
            return self._run(batches)

    def _run(self, batches: Sequence[Sequence[DecodeUnit]]) -> list[dict[str, Any]]:
        from tqdm.auto import tqdm

        started = time.perf_counter()
        units = [unit for batch in batches for unit in batch]
        records: list[dict[str, Any]] = []
        num_rows = sum(len(unit.rows) for unit in units)
        bars = self.progress and interactive()
        lines = None
        if self.progress and not bars:  # a log, not a terminal: a line now, then periodic ones
            what = "" if self.name is None else f" {self.name}:"
            print(
                f"scoring{what} {num_rows} rows of {len(units)} videos", file=sys.stderr, flush=True
            )
            lines = ProgressLines("score", num_rows, "rows", self.log_interval)

        shown = {"disable": not bars, "leave": False}
        decode_bar = tqdm(total=len(units), desc="decode", unit="video", position=0, **shown)
        rows_bar = tqdm(total=num_rows, desc="score", unit="row", position=1, **shown)
        decoding = self.decoded(units)
        try:
            for batch in batches:
                buffer = [next(decoding) for _ in batch]
                decode_bar.update(len(buffer))
                self.throughput.decoded_videos += sum(item.decoded for item in buffer)
                flushed = self._flush(buffer, rows_bar)
                records += flushed
                if lines is not None:
                    lines.update(len(flushed))
        finally:  # an interrupted run stops its decoding threads before the error goes on
            decoding.close()
            decode_bar.close()
            rows_bar.close()
        self.throughput.seconds += time.perf_counter() - started
        return records

    def _flush(self, buffer: list[DecodedUnit], bar: Any) -> list[dict[str, Any]]:
        if not buffer:
            return []
        if isinstance(self.adapter, EmbeddingAdapter):
            # texts batch by batch, while the decoding threads work ahead (not all before they
            # start)
            self._encode_texts(self.plan.texts(item.unit for item in buffer))
            records = self._score_embeddings(buffer)
        else:
            records = self._score_requests(buffer)
        self.store.append(records)
        self.throughput.rows += len(records)
        bar.update(len(records))
        return records

    def _rows(self, buffer: list[DecodedUnit]) -> Iterator[tuple[PlannedRow, DecodedUnit]]:
        for item in buffer:
            for index in item.unit.rows:
                yield self.plan.rows[index], item

    def _encode_texts(self, texts: list[str]) -> None:
        """Embed ``texts`` in the plan's fixed chunks of ``batch_size`` (so a text's bits never
        depend on the split), each chunk once."""
        if self._text_chunk_of is None:
            everything = self.plan.texts()
            self._text_chunk_of = {text: i // self.batch_size for i, text in enumerate(everything)}
            self._text_chunks = [
                everything[start : start + self.batch_size]
                for start in range(0, len(everything), self.batch_size)
            ]
        wanted = {self._text_chunk_of[t] for t in texts if t not in self._text_embeddings}
        for chunk in (self._text_chunks[k] for k in sorted(wanted)):
            self._text_embeddings.update(zip(chunk, self.adapter.encode_texts(chunk)))
            self.throughput.texts += len(chunk)

    def view_embeddings(self, buffer: list[DecodedUnit]) -> dict[str, torch.Tensor]:
        """Embeddings of the buffered views: from the cache, or encoded (and cached).

        A unit's views are never split across model calls, so a view and its reversal (same
        frames) get bit-identical frame embeddings.
        """
        embeddings = {
            key: view.cached
            for item in buffer
            for key, view in item.views.items()
            if view.cached is not None
        }
        chunks: list[list[tuple[str, ViewFrames]]] = [[]]
        for item in buffer:
            if len(chunks[-1]) >= self.batch_size:
                chunks.append([])
            chunks[-1] += [(key, view) for key, view in item.views.items() if view.cached is None]
        for chunk in filter(None, chunks):
            for (key, view), embedding in zip(
                chunk, self.adapter.encode_views([view.frames for _, view in chunk])
            ):
                embeddings[key] = embedding
                # A non-finite embedding fails its rows (see _record) and is not kept: a rerun
                # (another dtype, a fixed model) computes it again instead of reading it back.
                cacheable = view.cache_key is not None and bool(torch.isfinite(embedding).all())
                if self.cache is not None and cacheable:
                    self.cache.put(view.cache_key, CachedView(embedding, view.frame_indices))
        self.throughput.views += len(embeddings)
        self.throughput.cached_views += sum(
            1 for item in buffer for view in item.views.values() if view.cached is not None
        )
        return embeddings

    def _score_embeddings(self, buffer: list[DecodedUnit]) -> list[dict[str, Any]]:
        embeddings = self.view_embeddings(buffer)
        records = []
        for row, item in self._rows(buffer):
            if item.error_of(row) is not None:
                records.append(error_record(row, item.error_of(row)))
                continue
            scores = {}
            for group, texts in row.groups.items():
                similarity = self.adapter.similarity(
                    embeddings[row.view_of(group)],
                    torch.stack([self._text_embeddings[t] for t in texts]),
                )
                scores[group] = TextScores(tuple(similarity.tolist()))
            records.append(self._record(row, item, scores))
        return records

    def _score_requests(self, buffer: list[DecodedUnit]) -> list[dict[str, Any]]:
        # one request per (view, text group, question); rows repeating all share it
        requests: dict[tuple[Any, ...], TextsRequest] = {}
        for row, item in self._rows(buffer):
            if item.error_of(row) is None:
                for joined, text in video_question.asks(row):
                    view = item.views[joined]
                    requests.setdefault(
                        video_question.request_key(joined, text),
                        video_question.request(view.frames, view.timestamps, text),
                    )
                for group in _text_groups(row):
                    key = _request_key(row, group)
                    view, texts, *asked = key  # asked: the question, answers, judge's reference
                    shown = item.views[view] if view is not None else ViewFrames([])  # no video
                    request = TextsRequest(texts, shown.frames, shown.timestamps, *asked)
                    requests.setdefault(key, request)
        # model calls of about batch_size requests; a view's requests never straddle two calls,
        # so whatever the adapter shares between them (frame features, a prefix cache) is shared
        chunks: list[list[tuple[Any, ...]]] = [[]]
        for key in requests:
            if len(chunks[-1]) >= self.batch_size and key[0] != chunks[-1][-1][0]:
                chunks.append([])
            chunks[-1].append(key)
        keys = [key for chunk in chunks for key in chunk]
        results: list[TextScores] = []
        before = {name: getattr(self.adapter, name, None) for name in ADAPTER_COUNTS}
        for chunk in filter(None, chunks):
            results += self.adapter.score([requests[key] for key in chunk])
        for name, count in before.items():  # a video LLM's, in the run record
            if count is not None and (name == "prefix_forwards" or self.adapter.mode == "generate"):
                done = getattr(self.adapter, name) - count
                setattr(self.throughput, name, (getattr(self.throughput, name) or 0) + done)
        by_key = dict(zip(keys, results))
        self.throughput.views += len({key[0] for key in keys if key[0] is not None})
        self.throughput.texts += sum(len(key[1]) for key in keys)
        records = []
        for row, item in self._rows(buffer):
            if item.error_of(row) is not None:
                records.append(error_record(row, item.error_of(row)))
                continue
            scores = {group: by_key[_request_key(row, group)] for group in _text_groups(row)}
            asked = {
                (view, text): by_key[video_question.request_key(view, text)]
                for view, text in video_question.asks(row)
            }
            used = (*scores.values(), *asked.values())
            fault = next((scored.fault for scored in used if scored.fault is not None), None)
            if fault is not None:  # a request that failed alone (a served reply too large)
                records.append(error_record(row, Fault(*fault)))
                continue
            if row.joined_views:
                scores |= video_question.combine(row, asked)
            records.append(self._record(row, item, scores))
        return records

    def _record(
        self, row: PlannedRow, item: DecodedUnit, scores: dict[str, TextScores]
    ) -> dict[str, Any]:
        """The row's record; a row error when the model gave any text a NaN or infinite number.

        A non-finite score decides nothing (every comparison with NaN is false) and is no JSON
        number, so it fails its row here, naming the text, rather than a metric later.
        """
        problem = nonfinite_text(row, scores)
        if problem is not None:
            return error_record(
                row, Fault(f"row {row.index} (id={row.id!r}): {problem}", NONFINITE_SCORE)
            )
        frame_indices = item.views[row.view].frame_indices if row.view is not None else []
        foil_video = {}
        if row.foil_view is not None:  # the foil video's frames, beside the video's
            foil_video["foil_video_frame_indices"] = item.views[row.foil_view].frame_indices
        if row.joined_views:  # how many frames of each part each joined view showed
            foil_video["video_question_frames"] = [item.sampled[v] for v in row.joined_views]
        record = {
            "index": row.index,
            "id": row.id,
            "scores": {group: list(result.scores) for group, result in scores.items()},
            "details": {
                group: {name: list(values) for name, values in result.details.items()}
                for group, result in scores.items()
                if result.details
            },
            "frame_indices": frame_indices,
            **foil_video,
            "error": None,
        }
        answers = {
            group: [asdict(answer) for answer in result.answers]
            for group, result in scores.items()
            if result.answers
        }
        if answers:  # generate mode: every answer behind the scores, as read
            record["answers"] = answers
        return record
