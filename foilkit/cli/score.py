"""``foilkit score``: score a Hub model on a foilkit dataset (``accelerate launch`` works too)."""

from __future__ import annotations

import argparse
from collections.abc import Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from foilkit.scorers.options import ScoreOptions


def configure(parser: argparse.ArgumentParser) -> None:
    from foilkit.builders import BENCHMARKS  # light: names only, no builder module is imported
    from foilkit.cli.options import (
        add_backend,
        add_configs,
        add_generation,
        add_judge,
        add_logging,
        add_max_decode_pixels,
        add_min_coverage,
        add_num_workers,
        add_placement,
        add_video_root,
        positive_int,
        positive_number,
    )

    parser.add_argument(
        "--model",
        required=True,
        help="Hub id or local path of the model (--backend openai: the served model's name)",
    )
    parser.add_argument(
        "--dataset",
        required=True,
        help="a save_to_disk folder, a parquet dataset folder or a Hub dataset id",
    )
    add_configs(parser, "dataset config (aspect, test, ...) of a folder or Hub dataset")
    parser.add_argument("--split", help="dataset split (needed when there are several)")
    parser.add_argument(
        "--out", required=True, help="folder for scores.jsonl, run.json and the resumable shards"
    )
    parser.add_argument("--resume", action="store_true", help="continue the run already in --out")
    parser.add_argument(
        "--matrix",
        action="store_true",
        help="score every view against every caption (retrieval pools such as RTime)",
    )
    protocol = parser.add_argument_group(
        "protocol",
        "what the scores reproduce; every model or frame flag below that is given overrides one "
        "of the protocol's settings and is recorded as an override",
    )
    protocol.add_argument(
        "--protocol",
        choices=("paper", "uniform"),
        help="paper: the benchmark's own published scoring code per model family; uniform: one "
        "protocol across benchmarks (default: paper when --benchmark is known, else uniform)",
    )
    protocol.add_argument(
        "--benchmark",
        choices=sorted(BENCHMARKS),
        help="the benchmark the dataset is, for its paper protocol",
    )
    model = parser.add_argument_group("model")
    model.add_argument("--adapter", help="adapter name (default: chosen from the model's config)")
    model.add_argument(
        "--mode",
        help="scoring mode of video LLMs: likelihood, choice (option-letter probabilities), "
        "entail (P(yes) to a caption question) or generate (answers read by --parser)",
    )
    model.add_argument(
        "--pooling",
        help="dual encoders: mean, mean-of-similarities or softmax-mean; BLIP: frame-mean or "
        "joined-frames",
    )
    model.add_argument(
        "--reduction",
        help="video LLMs (likelihood): mean or sum of token log-probabilities; text LMs: mean or "
        "vilma (ViLMA's perplexity)",
    )
    model.add_argument(
        "--prompt",
        help="video LLMs (choice): the question asked: vitatecs, lmms-eval, temporalbench or "
        "vinoground (default: the protocol's, else vitatecs)",
    )
    model.add_argument(
        "--itm-output", help="BLIP: the ITM head's probability (softmax) or raw match logit"
    )
    model.add_argument(
        "--first-token", help="BLIP: cls (HF's first text token) or enc (BLIP's [ENC] for ITM)"
    )
    model.add_argument(
        "--max-text-tokens", type=positive_int, help="truncate texts to this many tokens"
    )
    model.add_argument(
        "--preprocess",
        help="dual encoders: default (the checkpoint's image processor) or pil (its PIL "
        "backend: VITATECS' PIL bicubic resize); video LLMs: default (the checkpoint's "
        "processor) or reference (Qwen2/2.5/3-VL frames sized by qwen-vl-utils' rules)",
    )
    model.add_argument(
        "--score-scale",
        help="dual encoders, X-CLIP: cosine, or logit (logit_scale x cosine, as CLIP4Clip and "
        "X-CLIP report)",
    )
    add_generation(model)
    model.add_argument("--revision", help="model revision (branch, tag or commit)")
    model.add_argument(
        "--trust-remote-code", action="store_true", help="allow the model's own code to run"
    )
    model.add_argument(
        "--dtype",
        default="auto",
        help="auto (the protocol's: paper runs float16 where the reference did; else bf16/fp16 "
        "on GPU, fp32 on CPU), float32, bfloat16, float16 (default: %(default)s)",
    )
    model.add_argument("--device", help="default: the process's accelerator, else CPU")
    add_placement(model)
    add_backend(parser.add_argument_group("backend", "where the model runs"))
    add_judge(parser.add_argument_group("judge", "generate mode's LLM judge (off by default)"))
    frames = parser.add_argument_group("frames")
    frames.add_argument(
        "--num-frames",
        "--frames",
        dest="num_frames",
        type=positive_int,
        help="frames per view (default: the protocol's)",
    )
    frames.add_argument(
        "--sampling",
        help="frame sampling policy (default: the protocol's): uniform, segment-middle, "
        "segment-start, segment-step, consecutive, random-consecutive, fps, int-fps or "
        "qwen-vl-utils",
    )
    frames.add_argument(
        "--window",
        help="how a window in seconds becomes frames: half-open ([start, end)) or read-video "
        "(torchvision read_video's: end frame included, ViLMA)",
    )
    frames.add_argument("--stride", type=positive_int, help="frame step of 'consecutive' sampling")
    frames.add_argument(
        "--target-fps",
        type=positive_number,
        help="rate of 'fps' / 'int-fps' / 'qwen-vl-utils' sampling",
    )
    frames.add_argument(
        "--max-frames",
        type=positive_int,
        help="cap of 'fps' / 'int-fps' / 'qwen-vl-utils' sampling: longer views are thinned to it "
        "(without it, 'fps' and 'int-fps' fail a view of more than 768 frames)",
    )
    frames.add_argument(
        "--normalized-fps",
        type=positive_number,
        help="frame rate 'random-consecutive' reads the video at (ViLMA: 30)",
    )
    frames.add_argument(
        "--decoder",
        default="torchcodec",
        help="torchcodec (FFmpeg on the CPU), torchcodec-cuda (NVDEC on the GPU: frames stay "
        "there; on a machine without CUDA the run decodes with torchcodec and records why) or "
        "pyav (default: %(default)s)",
    )
    add_max_decode_pixels(frames)
    frames.add_argument(
        "--control",
        choices=("reversed", "shuffled", "single"),
        help="temporal control: break the frames' order on purpose",
    )
    frames.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the 'shuffled' control, seeded frame sampling and generate mode's sampled "
        "answers (default: %(default)s)",
    )
    add_video_root(frames)
    work = parser.add_argument_group("work")
    work.add_argument(
        "--batch-size",
        type=positive_int,
        default=8,
        help="views (videos) per model call in each process (default: %(default)s)",
    )
    add_num_workers(work, default=2)
    work.add_argument(
        "--cache-dir", help="embedding cache folder (default: $HF_HOME/foilkit/embeddings)"
    )
    work.add_argument(
        "--no-cache", action="store_true", help="do not read or write the embedding cache"
    )
    work.add_argument("--no-progress", action="store_true", help="no progress bars or summary")
    add_logging(work)
    add_min_coverage(
        work,
        "below it everything is still written and the command exits with status 3 (so does a "
        "run that scored no row)",
    )


def score_options(args: argparse.Namespace, *, leave: Collection[str] = ()) -> ScoreOptions:
    """The scoring flags in ``args`` as :class:`foilkit.scorers.api.ScoreOptions`, but the
    fields in ``leave`` (a command that sets them itself)."""
    from foilkit.cli.options import shows_progress
    from foilkit.scorers.options import SCORE_OPTION_NAMES, ScoreOptions

    values = {
        **vars(args),
        "out_dir": args.out,
        "use_cache": not args.no_cache,
        "progress": shows_progress(args),
    }
    chosen = [name for name in SCORE_OPTION_NAMES if name in values and name not in leave]
    return ScoreOptions(**{name: values[name] for name in chosen})


def run(args: argparse.Namespace) -> int:
    from foilkit.cli.options import chosen_configs, coverage_status, print_json
    from foilkit.errors import UserError, check_writable
    from foilkit.run import Coverage
    from foilkit.scorers.api import score_pool, score_rows

    configs = chosen_configs(args) or [None]
    if len(configs) > 1:
        raise UserError(
            f"foilkit score scores one config, not {', '.join(configs)}: run it once per config "
            "(each with its own --out), or use foilkit evaluate --config " + ",".join(configs)
        )
    check_writable(args.out, "--out")  # before the dataset or model: a typo costs nothing
    (config,) = configs
    scored = (score_pool if args.matrix else score_rows)(
        args.model, args.dataset, config, score_options(args)
    )
    errors = scored.run["errors"]
    coverage = Coverage.of(
        scored.run["dataset"]["num_rows"], None, errors["rows"], errors["causes"]
    )
    status = coverage_status("score", {config or "rows": coverage}, args.min_coverage, args.out)
    if args.json:
        print_json(
            {
                "command": "score",
                "status": status,
                "out": args.out,
                "config": config,
                "model": args.model,
                "coverage": coverage.to_json(),
                "throughput": scored.run["throughput"],
            }
        )
    return status
