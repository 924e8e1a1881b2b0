"""Scoring speed: the engine against a naive per-item loop, the decode limit and the model limit.

For each model and each benchmark shape of the synthetic corpus (``corpus.py``) one run
measures, on the same adapter object:

1. ``engine``: ``foilkit.scorers.engine.Engine`` end to end (planning, decoding in
   ``--workers`` threads, the embedding cache cold, batching, scoring); its
   views/s and items/s. Dual encoders also get ``engine, cached``: the same run again, served
   from the cache the first run filled.
2. ``naive``: the per-item loop of the published scripts (``naive.py``).
3. ``decode-only``: the engine's own decoding pipeline (same frames, same workers), no model.
4. ``model-only``: the engine fed frames decoded beforehand, so only the model side is timed.
5. peak memory of each phase (RSS of this process, decoding threads included; GPU peak) and
   its CPU use: cores kept busy, CPU time per item, and what engine/naive would be with every
   core busy at the engine's CPU cost per item (where that bound is below 3x, cores bound it).

and checks the engine's promises: one decode per unique (video, window), none for reversed
or proficiency views, none at all from a warm cache; video-LLM ``choice`` mode runs one
prefix forward per view for every option order; the engine and the naive loop agree on every
score; peak memory does not grow with the number of videos (the engine run on half the
videos against the run on all of them).

Usage::

    python benchmarks/scoring_speed.py --quick            # 12 short videos, tiny models, CPU
    python benchmarks/scoring_speed.py                    # 300 videos of 15 s (the full corpus)
    python benchmarks/scoring_speed.py --device cuda      # GPU-sized models (see models.py)
    python benchmarks/scoring_speed.py --smoke --json out.json --models clip-tiny

Exit status 1 when a check fails; missed speed targets are reported, not fatal.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
from collections.abc import Generator, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from corpus import SHAPES, SIZES, CorpusVideo, corpus, default_cache_root
from counters import DecodeCounter, ForwardCounter
from measure import (
    Phase,
    against,
    describe_hardware,
    environment,
    measure,
    phase_record,
    render_table,
    size_parser,
    times,
    write_json,
)
from models import DEFAULT_MODELS, MODELS, ModelSpec
from naive import naive_scores

from foilkit.scorers.adapters import EmbeddingAdapter, load_adapter
from foilkit.scorers.cache import EmbeddingCache
from foilkit.scorers.engine import Engine, available_cores
from foilkit.scorers.plan import make_plan
from foilkit.scorers.store import ResultStore
from foilkit.scorers.video import SamplingPolicy

# The targets: engine items/s over naive on the VITATECS shape, and engine views/s over
# the decode-only limit for dual encoders.
TARGETS = {
    "engine/naive": ("vitatecs", None, 3.0),
    "engine/decode-only": (None, "dual-encoder", 0.8),
}
# Largest difference allowed between the engine's and the naive loop's scores, by the model's
# dtype: the two batch the same numbers differently, and half precision rounds differently.
AGREEMENT = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 5e-2}
# Peak memory of the full run may exceed the half-corpus run by at most this factor ("flat").
MEMORY_GROWTH_LIMIT = 1.1
# The printed tables' ratios, and the phases of their memory and CPU columns (RSS: column name ->
# phase).
RATIOS = ("engine/naive", "engine/decode-only", "engine/model-only")
RSS = {"engine N/2": "engine, half the videos", "engine N": "engine"}
RSS |= {phase: phase for phase in ("naive", "decode-only", "model-only")}
GPU = ("engine", "naive", "model-only")
CORES_BUSY = ("engine", "naive", "decode-only", "model-only")


@dataclass(frozen=True)
class Settings:
    """How every phase runs: the same frames, batches, workers and decoder for all of them."""

    num_frames: int = 8
    batch_size: int = 8
    num_workers: int = 2
    decoder: str = "torchcodec"
    device: str = "cpu"

    def policy(self) -> SamplingPolicy:
        return SamplingPolicy("uniform", self.num_frames)


def make_engine(adapter: Any, plan: Any, settings: Settings, cache: Any, **kwargs: Any) -> Any:
    """An engine over ``plan`` with the run's settings (``kwargs``: ``PredecodedEngine``'s)."""
    engine_class = PredecodedEngine if "predecoded" in kwargs else Engine
    return engine_class(
        adapter,
        plan,
        settings.policy(),
        store=ResultStore(None),
        cache=cache,
        decoder=settings.decoder,
        batch_size=settings.batch_size,
        num_workers=settings.num_workers,
        **kwargs,
    )


class PredecodedEngine(Engine):
    """The engine fed from units decoded beforehand: what the model side alone sustains."""

    def __init__(self, *args: Any, predecoded: Sequence[Any], **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._predecoded = {item.unit.rows[0]: item for item in predecoded}

    def decoded(self, units: Sequence[Any]) -> Generator[Any, None, None]:
        for unit in units:
            yield self._predecoded[unit.rows[0]]


def new_cache(adapter: Any, spec: ModelSpec, settings: Settings, directory: str) -> Any:
    """A cold embedding cache for dual encoders (``None`` for adapters that cannot cache)."""
    if not isinstance(adapter, EmbeddingAdapter):
        return None
    namespace = {"model": spec.name, **adapter.describe(), **asdict(settings)}
    return EmbeddingCache(directory, namespace)


@contextmanager
def counted(
    adapter: Any, spec: ModelSpec, settings: Settings, name: str
) -> Iterator[tuple[Phase, dict[str, int]]]:
    """Time the ``with`` block as phase ``name`` and count its decodes (and a video LLM's
    forwards): the counts fill the yielded dict when the block ends."""
    counts: dict[str, int] = {}
    llm = spec.family == "video-llm"
    forwards = ForwardCounter(adapter) if llm else nullcontext()
    with DecodeCounter(settings.decoder) as decodes, forwards, measure(name) as phase:
        yield phase, counts
    counts.update(decodes.counts(), **(forwards.counts() if llm else {}))


def engine_run(
    adapter: Any, spec: ModelSpec, rows: list[dict], settings: Settings, cache: Any, name: str
) -> tuple[Phase, dict[str, int], Any, list[dict]]:
    """Plan and run the engine once, timed and counted; returns (phase, counts, plan, records)."""
    with counted(adapter, spec, settings, name) as (phase, counts):
        plan = make_plan(rows)
        records = make_engine(adapter, plan, settings, cache).run(plan.batches(settings.batch_size))
    return phase, counts, plan, records


def unique_windows(plan: Any) -> int:
    """Unique (video, window) pairs: what must be decoded, whatever the direction or texts."""
    return len({(view.source_key, view.start, view.end) for view in plan.views.values()})


def requests_of(plan: Any) -> dict[tuple[str, tuple[str, ...]], int]:
    """Unique (view, text group) requests and their option counts (a video LLM's questions)."""
    return {(row.view, texts): len(texts) for row in plan.rows for texts in row.groups.values()}


def max_difference(records: Sequence[dict], naive: Mapping[str, dict]) -> float:
    """Largest absolute difference between the engine's and the naive loop's scores (on the
    items the naive loop scored)."""
    return max(
        abs(a - b)
        for record in records
        if record["id"] in naive
        for group, scores in record["scores"].items()
        for a, b in zip(scores, naive[record["id"]][group], strict=True)
    )


def profile_engine(
    adapter: Any, spec: ModelSpec, rows: list[dict], settings: Settings, out: Path, label: str
) -> Path:
    """The engine run again under cProfile (main process), its top functions written to ``out``."""
    profiler = cProfile.Profile()
    with tempfile.TemporaryDirectory() as directory:
        cache = new_cache(adapter, spec, settings, directory)
        profiler.enable()
        plan = make_plan(rows)
        make_engine(adapter, plan, settings, cache).run(plan.batches(settings.batch_size))
        profiler.disable()
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text).strip_dirs()
    stats.sort_stats("cumulative").print_stats(40)
    stats.sort_stats("tottime").print_stats(25)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{label}.txt"
    path.write_text(text.getvalue())
    return path


def bench_case(
    spec: ModelSpec,
    adapter: Any,
    shape: str,
    videos: Sequence[CorpusVideo],
    settings: Settings,
    profile_dir: Path | None,
    naive_items: int | None = None,
) -> dict[str, Any]:
    """All phases and checks of one (model, shape) pair; the naive loop on the first
    ``naive_items`` items only, when given (its cost per item does not depend on the others)."""
    rows = SHAPES[shape](videos)
    phases: dict[str, Phase] = {}
    counts: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as directory:
        # memory first, before any phase can leave freed memory behind: half the videos, then all
        half = SHAPES[shape](videos[: max(1, len(videos) // 2)])
        with tempfile.TemporaryDirectory() as half_cache:
            cache = new_cache(adapter, spec, settings, half_cache)
            phases["engine, half the videos"], *_ = engine_run(
                adapter, spec, half, settings, cache, "engine, half the videos"
            )
        cache = new_cache(adapter, spec, settings, directory)
        phases["engine"], counts["engine"], plan, records = engine_run(
            adapter, spec, rows, settings, cache, "engine"
        )
        if cache is not None:
            phases["engine, cached"], counts["engine, cached"], *_ = engine_run(
                adapter, spec, rows, settings, cache, "engine, cached"
            )
    naive_rows = rows[:naive_items] if naive_items else rows
    with counted(adapter, spec, settings, "naive") as (phases["naive"], counts["naive"]):
        naive = naive_scores(adapter, spec.family, naive_rows, settings.policy(), settings.decoder)
    with measure("decode-only") as phases["decode-only"]:
        delivered = sum(
            len(item.views)
            for item in make_engine(adapter, plan, settings, None).decoded(plan.units)
        )
    predecoded = list(make_engine(adapter, plan, settings, None).decoded(plan.units))
    with measure("model-only") as phases["model-only"]:
        engine = make_engine(adapter, plan, settings, None, predecoded=predecoded)
        engine.run(plan.batches(settings.batch_size))
    del predecoded, engine
    views, items = len(plan.views), len(plan.rows)
    rates = {
        "engine_views_per_s": phases["engine"].rate(views),
        "engine_items_per_s": phases["engine"].rate(items),
        "naive_items_per_s": phases["naive"].rate(len(naive_rows)),
        "decode_only_views_per_s": phases["decode-only"].rate(views),
        "model_only_views_per_s": phases["model-only"].rate(views),
    }
    if "engine, cached" in phases:
        rates["cached_views_per_s"] = phases["engine, cached"].rate(views)
    ratios = {
        "engine/naive": rates["engine_items_per_s"] / rates["naive_items_per_s"],
        "engine/decode-only": phases["decode-only"].seconds / phases["engine"].seconds,
        "engine/model-only": phases["model-only"].seconds / phases["engine"].seconds,
    }
    windows, difference = unique_windows(plan), max_difference(records, naive)
    checks = {
        "decodes == unique (video, window)": counts["engine"]["decode_passes"] == windows,
        "views decoded by the decode-only pass": delivered == views,
        "engine and naive agree": difference <= AGREEMENT[adapter.dtype],
    }
    # flat memory is a promise about corpora larger than what is held at once (a batch and the
    # look-ahead); below that, more videos fill bigger batches (the smoke corpus: 1 vs 3 videos)
    if len(videos) // 2 > settings.batch_size + settings.num_workers:
        checks["peak memory flat in videos"] = (
            phases["engine"].peak_rss_mib
            <= MEMORY_GROWTH_LIMIT * phases["engine, half the videos"].peak_rss_mib
        )
    if "engine, cached" in counts:
        checks["a warm cache decodes nothing"] = counts["engine, cached"]["decode_passes"] == 0
    if spec.family == "video-llm":
        continuations = sum(requests_of(plan).values())
        checks["one prefix forward per view"] = counts["engine"]["prefix_forwards"] == views
        checks["every option order on that prefix"] = (
            counts["engine"]["continuations"] == continuations
        )
    case = {
        "model": spec.name,
        "family": spec.family,
        "summary": spec.summary,
        "shape": shape,
        "videos": len(videos),
        "rows": items,
        "naive_rows": len(naive_rows),
        "views": views,
        "unique_video_windows": windows,
        "texts": len(plan.texts()),
        "phases": {name: phase_record(phase) for name, phase in phases.items()},
        "counts": counts,
        "rates": rates,
        "ratios": ratios,
        "max_abs_difference": difference,
        "checks": checks,
        "targets": targets_of(spec.family, shape, ratios),
        "cpu": cpu_use(phases, items, len(naive_rows)),
    }
    if profile_dir is not None:
        case["profile"] = str(
            profile_engine(adapter, spec, rows, settings, profile_dir, f"{spec.name}-{shape}")
        )
    return case


def cpu_use(phases: Mapping[str, Phase], items: int, naive_items: int) -> dict[str, Any]:
    """How busy each phase kept the cores, CPU time per item, and the most the engine could
    gain over the naive loop with every core busy at its measured CPU cost per item (a CPU
    bound: on a GPU machine the model's time is mostly not CPU time)."""
    cores = available_cores()
    engine_cpu = phases["engine"].cpu_seconds / items
    return {
        "cores": cores,
        # a phase running torch ops on several threads also counts OpenMP's spin-waiting
        "cores_busy": {name: phase.cores_busy for name, phase in phases.items()},
        "engine_cpu_ms_per_item": 1000 * engine_cpu,
        "engine/naive with every core busy": cores / engine_cpu / phases["naive"].rate(naive_items),
    }


def targets_of(family: str, shape: str, ratios: Mapping[str, float]) -> dict[str, dict]:
    """The issue's targets that apply to this case, each with its goal and whether it holds."""
    return {
        ratio: {"goal": goal, "value": ratios[ratio], "met": ratios[ratio] >= goal}
        for ratio, (only_shape, only_family, goal) in TARGETS.items()
        if only_shape in (None, shape) and only_family in (None, family)
    }


def tables(cases: Sequence[Mapping[str, Any]]) -> str:
    """The printed tables: throughput and ratios, memory, CPU use, checks."""
    speed, memory, cpu, checks = [], [], [], []
    for c in cases:
        rates, phases, counts, use = c["rates"], c["phases"], c["counts"], c["cpu"]
        case = {"model": c["model"], "shape": c["shape"]}
        speed.append(
            {
                **case,
                "items": c["rows"],
                "views": c["views"],
                "engine views/s": rates["engine_views_per_s"],
                "engine items/s": rates["engine_items_per_s"],
                "naive items/s": rates["naive_items_per_s"],
                "decode-only views/s": rates["decode_only_views_per_s"],
                "model-only views/s": rates["model_only_views_per_s"],
                "cached views/s": rates.get("cached_views_per_s"),
                **{ratio: times(c["ratios"][ratio]) for ratio in RATIOS},
            }
        )
        memory.append(
            {
                **case,
                **{f"RSS {name}": phases[phase]["peak_rss_mib"] for name, phase in RSS.items()},
                **{f"GPU {phase}": phases[phase]["peak_gpu_mib"] for phase in GPU},
            }
        )
        cpu.append(
            {
                **case,
                "cores": use["cores"],
                **{phase: use["cores_busy"][phase] for phase in CORES_BUSY},
                "engine CPU ms/item": use["engine_cpu_ms_per_item"],
                "engine/naive, every core busy": times(use["engine/naive with every core busy"]),
            }
        )
        failed = [name for name, ok in c["checks"].items() if not ok]
        targets = [f"{r} {against(t['value'], t['goal'])}" for r, t in c["targets"].items()]
        checks.append(
            {
                **case,
                "unique (video, window)": c["unique_video_windows"],
                "engine decodes": counts["engine"]["decode_passes"],
                "cached decodes": counts.get("engine, cached", {}).get("decode_passes"),
                "naive decodes": counts["naive"]["decode_passes"],
                "engine prefix fwd": counts["engine"].get("prefix_forwards"),
                "naive prefix fwd": counts["naive"].get("prefix_forwards"),
                "max |engine-naive|": f"{c['max_abs_difference']:.1e}",
                "checks": "FAILED: " + "; ".join(failed) if failed else "all",
                "targets": ", ".join(targets) or "-",
            }
        )
    return "\n".join(
        [
            render_table("Throughput (views/s, items/s) and ratios", speed),
            render_table(
                "Peak memory (MiB): host RSS (decoding threads included), GPU allocated", memory
            ),
            render_table(
                "CPU use: cores kept busy (CPU s / wall s, all threads), CPU ms per item", cpu
            ),
            render_table("Checks", checks),
        ]
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    purposes = {
        "quick": "CI-sized: minutes on 2 CPU cores",
        "smoke": "the tests' run",
        "vatex": "VATEX-like 640x360 clips, for GPU decoding",
    }
    parser = size_parser(
        __doc__,
        {
            name: f"{SIZES[name].videos} videos of {SIZES[name].seconds:g} s ({purpose}); "
            "without any, the full corpus"
            for name, purpose in purposes.items()
        },
    )
    parser.add_argument("--device", default="cpu", choices=sorted(DEFAULT_MODELS))
    parser.add_argument("--models", help=f"comma-separated, from {sorted(MODELS)}")
    parser.add_argument(
        "--shapes", default=",".join(SHAPES), help="comma-separated benchmark shapes"
    )
    parser.add_argument("--workers", type=int, default=2, help="decoding threads")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--num-frames", "--frames", dest="num_frames", type=int, default=8)
    parser.add_argument(
        "--decoder", default="torchcodec", help="torchcodec, torchcodec-cuda (NVDEC) or pyav"
    )
    parser.add_argument(
        "--cache-root",
        type=Path,
        default=None,
        help="where the corpus and built models are kept (default: FOILKIT_CACHE/benchmarks)",
    )
    parser.add_argument(
        "--naive-items",
        type=int,
        help="time the naive loop on the first N items only (a rate: it reuses nothing anyway)",
    )
    parser.add_argument("--json", type=Path, help="write the full record here")
    parser.add_argument("--profile", type=Path, help="write a cProfile summary per case here")
    args = parser.parse_args(argv)
    args.models = args.models.split(",") if args.models else list(DEFAULT_MODELS[args.device])
    args.shapes = args.shapes.split(",")
    unknown = [m for m in args.models if m not in MODELS] + [
        s for s in args.shapes if s not in SHAPES
    ]
    if unknown:
        parser.error(
            f"unknown models or shapes {unknown}; models: {sorted(MODELS)}, shapes: "
            f"{sorted(SHAPES)}"
        )
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = args.cache_root or default_cache_root()
    settings = Settings(args.num_frames, args.batch_size, args.workers, args.decoder, args.device)
    size = SIZES[args.size]
    videos = corpus(size, root)
    env = environment()
    print(
        f"# scoring speed, {args.size} corpus: {size.videos} videos of {size.seconds:g} s, "
        f"{size.width}x{size.height} at {size.fps} fps (H.264)"
    )
    print(
        f"# {describe_hardware(env)}; {settings.num_workers} decoding threads, "
        f"batch {settings.batch_size}, {settings.num_frames} frames, {settings.decoder}\n"
    )
    cases = []
    for name in args.models:
        spec = MODELS[name]
        adapter = load_adapter(str(spec.folder(root)), device=settings.device, **spec.options)
        for shape in args.shapes:
            cases.append(
                bench_case(spec, adapter, shape, videos, settings, args.profile, args.naive_items)
            )
            print(f"  done: {name} on {shape}", file=sys.stderr, flush=True)
        del adapter
    print(tables(cases))
    record = {
        "size": args.size,
        "corpus": asdict(size),
        "settings": asdict(settings),
        "environment": env,
        "cases": cases,
    }
    if args.json:
        print(f"full record: {write_json(args.json, record)}")
    return 0 if all(all(case["checks"].values()) for case in cases) else 1


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
