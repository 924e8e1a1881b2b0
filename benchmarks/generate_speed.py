"""Generate-mode speed: the engine against the per-question loop of the reference scripts.

A TempCompass-shaped workload (several multiple-choice questions of their own about each video,
4 options, 8 frames) is answered in one run, on one adapter object, four times:

1. ``engine``: ``foilkit.scorers.engine.Engine`` end to end (planning, one decode per video,
   each video's prefix (its system turn and video) encoded once for all its questions, the
   questions decoded together in left-padded batches, a batch holding several videos'
   questions, each row on its own video's KV cache: ``batch_across_views``);
2. ``per_view``: the engine again with ``batch_across_views=False``: each video's questions in
   batches of their own;
3. ``unbatched``: the engine again with ``generate_batch_size=1``: each video's prefix once,
   its questions decoded one at a time on the cache;
4. ``naive``: the loop TempCompass' inference scripts and lmms-eval's model wrappers run: per
   question, decode its video, render the whole prompt, and call ``model.generate`` on it
   (``naive.generate_answer``), so the video is encoded again for every question.

It prints the engine/naive and unbatched/naive ratios of wall time and of CPU time, the engine's
batched over unbatched and over per-view batching, the prefix forwards and decoding batches
(those across videos too) against the questions asked, and whether every greedy answer is the
same in all four. The model (``--model``) is a LLaVA-NeXT-Video twin sized so compute dominates
on a CPU (``models.GENERATE_TWIN``: an 8-layer 512-wide Llama, 512 video tokens for 8 frames),
its head steered to answer an option letter as a trained model does; ``--model tiny`` runs
foilkit's tiny test model (the tests' size).

Usage::

    python benchmarks/generate_speed.py --quick           # 3 videos x 8 questions, CPU, minutes
    python benchmarks/generate_speed.py                   # 8 videos x 18 (TempCompass' mean)
    python benchmarks/generate_speed.py --smoke --model tiny --json out.json   # the tests' run

``--json PATH`` writes the record: the ratios of wall and CPU time (``engine_over_naive``,
``engine_over_naive_cpu``, ...), the counts, ``answers_equal`` (all four phases), the phases and
the environment. Exit status 1 when the answers differ or a view's prefix is encoded more than
once; a missed speed target (engine/naive >= 3x) is reported, not fatal.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from corpus import DIRECTIONS, CorpusSize, CorpusVideo, _row, corpus, default_cache_root
from counters import ForwardCounter
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
from models import GENERATE_TWIN
from naive import decode_item, generate_answer
from scoring_speed import Settings, make_engine

from foilkit.scorers.adapters import load_adapter
from foilkit.scorers.plan import make_plan
from foilkit.scorers.requests import TextsRequest
from foilkit.synthetic.models import tiny_model_path
from foilkit.synthetic.videos import COLOURS

#: engine wall time over the naive loop's, at least (the issue's target on the quick workload)
TARGET = 3.0
LETTERS = "ABCD"
#: The ratios of phases the record keeps (``fast_over_slow``, wall and CPU time).
PAIRS = (
    ("engine", "naive"),
    ("unbatched", "naive"),
    ("engine", "unbatched"),
    ("engine", "per_view"),
)


@dataclass(frozen=True)
class Workload:
    """``videos`` clips of ``seconds``, each asked ``questions`` questions; answers of at most
    ``max_new_tokens`` tokens."""

    videos: int
    questions: int
    seconds: float
    max_new_tokens: int = 32


WORKLOADS = {
    "smoke": Workload(videos=2, questions=3, seconds=1.5, max_new_tokens=4),
    "quick": Workload(videos=3, questions=8, seconds=2.0),
    # TempCompass: 7,540 questions about 410 videos, about 18 a video
    "full": Workload(videos=8, questions=18, seconds=4.0),
}


def question_rows(videos: Sequence[CorpusVideo], questions: int) -> list[dict[str, Any]]:
    """TempCompass-shaped rows: per video, ``questions`` multiple-choice questions of their own
    (its ``prompt``, the options in the published order, the true one's letter varying), each
    about the square's direction or colour, worded as TempCompass' multi-choice task."""
    colours = tuple(COLOURS)
    rows = []
    for video in videos:
        for number in range(questions):
            if number % 2 == 0:
                asked, truth, pool = "In which direction", video.scene.direction, DIRECTIONS
            else:
                asked, truth, pool = "What colour", video.scene.colour, colours
            others = [option for option in pool if option != truth][:3]
            options = others[:]
            options.insert(number % 4, truth)
            listed = "\n".join(f"{LETTERS[k]}. {option}" for k, option in enumerate(options))
            prompt = (
                f"{asked} is the square in the video moving? (question {number + 1})\n{listed}\n"
                "Please directly give the best option:"
            )
            rows.append(
                _row(
                    video,
                    f"q{number:02d}",
                    caption=truth,
                    foils=others,
                    prompt=prompt,
                    caption_answer=LETTERS[options.index(truth)],
                    foil_answers=[LETTERS[options.index(other)] for other in others],
                )
            )
    return rows


def engine_answers(records: Sequence[dict]) -> list[str]:
    """The answer the engine wrote for each row, in row order."""
    ordered = sorted(records, key=lambda record: record["index"])
    return [answer["text"] for record in ordered for answer in record["answers"]["main"]]


def naive_answers(adapter: Any, rows: Sequence[dict], settings: Settings) -> list[str]:
    """Per row, as the reference scripts: decode its video, then one ``model.generate`` on the
    whole prompt of its question."""
    answers = []
    for row in rows:
        decoded = decode_item(row, settings.policy(), settings.decoder)
        texts = (row["caption"], *row["foils"])
        labels = (row["caption_answer"], *row["foil_answers"])
        request = TextsRequest(
            texts,
            decoded.frames,
            timestamps=tuple(decoded.timestamps.tolist()),
            question=row["prompt"],
            answers=labels,
        )
        answers.append(generate_answer(adapter, request))
    return answers


def answered(
    adapter: Any, plan: Any, settings: Settings, phase: str, **changed: Any
) -> tuple[Phase, list[str]]:
    """The engine's answers on ``plan``, timed as ``phase``, with the adapter's settings
    ``changed`` for this phase only (their values before are restored after it)."""
    before = {name: getattr(adapter, name) for name in changed}
    for name, value in changed.items():
        setattr(adapter, name, value)
    try:
        with measure(phase) as timed:
            engine = make_engine(adapter, plan, settings, None)
            answers = engine_answers(engine.run(plan.batches(settings.batch_size)))
    finally:
        for name, value in before.items():
            setattr(adapter, name, value)
    return timed, answers


def run(adapter: Any, rows: list[dict], settings: Settings) -> dict[str, Any]:
    """The four phases on ``rows``, timed and counted, and what they show; before them, the
    first video's questions through the engine once, untimed, so that no phase pays the first
    forward's and the decoders' start-up."""
    first = make_plan([row for row in rows if row["video"] == rows[0]["video"]])
    make_engine(adapter, first, settings, None).run(first.batches(settings.batch_size))
    plan = make_plan(rows)
    phases: dict[str, Phase] = {}
    answers: dict[str, list[str]] = {}
    before = adapter.decode_batches, adapter.batched_questions, adapter.cross_view_batches
    with ForwardCounter(adapter) as forwards:
        phases["engine"], answers["engine"] = answered(adapter, plan, settings, "engine")
    batches = adapter.decode_batches - before[0], adapter.batched_questions - before[1]
    across = adapter.cross_view_batches - before[2]
    per_view_batches = adapter.decode_batches
    # each video's questions in batches of their own
    phases["per_view"], answers["per_view"] = answered(
        adapter, plan, settings, "per_view", batch_across_views=False
    )
    per_view_batches = adapter.decode_batches - per_view_batches
    # one question at a time
    phases["unbatched"], answers["unbatched"] = answered(
        adapter, plan, settings, "unbatched", generate_batch_size=1
    )
    with measure("naive") as phases["naive"]:
        answers["naive"] = naive_answers(adapter, rows, settings)
    questions = len(rows)
    mean_tokens = sum(len(adapter.tokenizer(text).input_ids) for text in answers["engine"])
    ratios = {}  # X_over_Y: how many times faster X ran than Y, in wall and in CPU time
    for fast, slow in PAIRS:
        ratios[f"{fast}_over_{slow}"] = phases[slow].seconds / phases[fast].seconds
        ratios[f"{fast}_over_{slow}_cpu"] = phases[slow].cpu_seconds / phases[fast].cpu_seconds
    differing = sum(len(set(row)) > 1 for row in zip(*answers.values(), strict=True))
    return {
        "rows": questions,
        "questions": questions,
        "views": len(plan.views),
        "prefix_forwards": forwards.prefix_forwards,
        "decode_batches": batches[0],
        "batched_questions": batches[1],
        "cross_view_batches": across,
        "per_view_decode_batches": per_view_batches,
        "batching": adapter.describe()["batched_decoding"],
        "naive_generate_calls": questions,
        "warmup": "the first video's questions through the engine once, untimed",
        **ratios,
        "per_view_over_naive": phases["naive"].seconds / phases["per_view"].seconds,
        "answers_equal": differing == 0,
        "answers_differing": differing,
        "mean_answer_tokens": mean_tokens / questions,
        "phases": {name: phase_record(phase) for name, phase in phases.items()},
        "questions_per_s": {name: phase.rate(questions) for name, phase in phases.items()},
    }


def table(result: dict[str, Any]) -> str:
    per_s = result["questions_per_s"]
    return render_table(
        "Generate mode: engine (batched across videos; per video; unbatched) against one "
        "model.generate per question",
        [
            {
                "questions": result["questions"],
                "views": result["views"],
                "engine prefix fwd": result["prefix_forwards"],
                "decode batches (across videos)": (
                    f"{result['decode_batches']} ({result['cross_view_batches']})"
                ),
                "per-video batches": result["per_view_decode_batches"],
                "naive generate calls": result["naive_generate_calls"],
                "engine q/s": per_s["engine"],
                "per-video q/s": per_s["per_view"],
                "unbatched q/s": per_s["unbatched"],
                "naive q/s": per_s["naive"],
                "engine/naive wall": times(result["engine_over_naive"]),
                "engine/naive CPU": times(result["engine_over_naive_cpu"]),
                "unbatched/naive wall": times(result["unbatched_over_naive"]),
                "engine/unbatched wall": times(result["engine_over_unbatched"]),
                "engine/per-video wall": times(result["engine_over_per_view"]),
                "answers equal": result["answers_equal"],
                "target": against(result["engine_over_naive"], TARGET),
            }
        ],
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = size_parser(
        __doc__,
        {
            name: f"{WORKLOADS[name].videos} videos x {WORKLOADS[name].questions} questions "
            "(without any: the full workload)"
            for name in ("quick", "smoke")
        },
    )
    parser.add_argument(
        "--model",
        choices=("twin", "tiny"),
        default="twin",
        help="twin: models.GENERATE_TWIN (compute-sized); tiny: foilkit's tiny LLaVA-NeXT-Video",
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--num-frames", "--frames", dest="num_frames", type=int, default=8)
    parser.add_argument("--batch-size", type=int, default=32, help="rows per engine batch")
    parser.add_argument("--workers", type=int, default=1, help="decoding threads")
    parser.add_argument("--decoder", default="torchcodec")
    parser.add_argument("--cache-root", type=Path, default=None)
    parser.add_argument("--json", type=Path, help="write the full record here")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    root = args.cache_root or default_cache_root()
    workload = WORKLOADS[args.size]
    settings = Settings(args.num_frames, args.batch_size, args.workers, args.decoder, args.device)
    videos = corpus(CorpusSize(videos=workload.videos, seconds=workload.seconds), root)
    folder = (
        GENERATE_TWIN.folder(root) if args.model == "twin" else tiny_model_path("llava-next-video")
    )
    adapter = load_adapter(
        str(folder), mode="generate", device=args.device, max_new_tokens=workload.max_new_tokens
    )
    summary = GENERATE_TWIN.summary if args.model == "twin" else "foilkit's tiny LLaVA-NeXT-Video"
    env = environment()
    print(
        f"# generate speed, {args.size}: {workload.videos} videos x {workload.questions} "
        f"questions, {settings.num_frames} frames, greedy, at most {workload.max_new_tokens} "
        f"new tokens; model {args.model}: {summary}"
    )
    batching = adapter.describe()["batched_decoding"]
    print(
        f"# {describe_hardware(env)}; prefix reuse: {adapter.prefix_reuse}; batched decoding: "
        f"{batching['batching']} (at most {batching.get('max_questions', 1)} questions; "
        f"across videos: {batching.get('across_views', 'off')})\n"
    )
    with torch.inference_mode():
        result = run(adapter, question_rows(videos, workload.questions), settings)
    print(table(result))
    record = {
        "size": args.size,
        "workload": asdict(workload),
        "model": args.model,
        "model_summary": summary,
        "settings": asdict(settings),
        "environment": env,
        "target": {"engine_over_naive": TARGET, "met": result["engine_over_naive"] >= TARGET},
        **result,
    }
    if args.json:
        print(f"full record: {write_json(args.json, record)}")
    return 0 if result["answers_equal"] and result["prefix_forwards"] == result["views"] else 1


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
