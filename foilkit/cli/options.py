"""Flags that several commands share, declared once so that each means the same everywhere.

A command's ``configure`` calls these on its parser (or an argument group of it); the flags'
names, types, defaults and destinations are the same in every command that has them.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from foilkit.errors import LOW_COVERAGE_EXIT
from foilkit.selection import limit_value

if TYPE_CHECKING:
    from foilkit.run import Coverage

from foilkit.errors import UserError

#: A parser or one of its argument groups: both have ``add_argument``.
Adder = argparse.ArgumentParser | argparse._ArgumentGroup


def add_video_root(parser: Adder) -> None:
    """``--video-root``: the folders video files may come from (score, evaluate, build, finetune,
    report); repeatable, so ``args.video_root`` is a list (``None`` when not given). A command
    that reads one root (``build``) takes it with :func:`one_video_root`."""
    parser.add_argument(
        "--video-root",
        action="append",
        metavar="DIR",
        help="folder holding the videos, repeatable: relative video paths resolve against it, "
        "and every video path, absolute ones too, must lie inside one (symlinks followed), else "
        "its row is an error (default: the --dataset folder when it is local, else none)",
    )


def one_video_root(roots: list[str] | None, command: str) -> str | None:
    """The one ``--video-root`` of a command that reads a single layout; several are an error."""
    if roots is not None and len(roots) > 1:
        raise UserError(
            f"foilkit {command} reads one --video-root (the layout its dataset card gives), got "
            f"{len(roots)}: {' '.join(roots)}; pass one"
        )
    return None if roots is None else roots[0]


def add_build_source(parser: Adder) -> None:
    """``--annotations`` and ``--on-missing``: what a benchmark is built from (build, evaluate)."""
    parser.add_argument(
        "--annotations",
        help="local folder with the annotation files (default: download "
        "them from the upstream repository at the pinned commit)",
    )
    parser.add_argument(
        "--on-missing",
        choices=("error", "skip", "keep"),
        default="error",
        help="a missing video: fail (default), drop its rows, or keep them with video=None",
    )


def add_configs(parser: Adder, help: str) -> None:
    """``--config``: the configs to work on (score, evaluate, build), as ``--config a,b`` or
    ``--config a --config b``: every one given is kept, in order, once (``args.configs``,
    ``None`` when none is given); ``help`` says what they are."""
    parser.add_argument(
        "--config",
        action="extend",
        type=config_names,
        dest="configs",
        metavar="NAME[,NAME...]",
        help=f"{help} (several: --config a,b or --config a --config b)",
    )


def config_names(text: str) -> list[str]:
    """``a,b`` -> ``["a", "b"]``; an empty name (``a,,b``, ``a,``) is a usage error."""
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(
            f"{text!r} has an empty config name: write --config a,b or --config a --config b"
        )
    return names


def chosen_configs(args: argparse.Namespace) -> list[str] | None:
    """The configs ``--config`` named, each once in the order first given (``None``: none)."""
    return None if args.configs is None else list(dict.fromkeys(args.configs))


def add_bootstrap(parser: Adder, resamples: str, seed: str | None = None) -> None:
    """``--n-resamples`` (default 1000) and, when ``seed`` is given, ``--bootstrap-seed``
    (default 0); ``resamples`` and ``seed`` are their help texts, which name the bootstrap."""
    parser.add_argument(
        "--n-resamples",
        type=non_negative_int,
        default=1000,
        help=f"{resamples} (default: %(default)s)",
    )
    if seed is not None:
        parser.add_argument(
            "--bootstrap-seed", type=int, default=0, help=f"{seed} (default: %(default)s)"
        )


def add_num_workers(parser: Adder, default: int) -> None:
    """``--num-workers``: decoding threads per process (score, evaluate, finetune)."""
    parser.add_argument(
        "--num-workers",
        type=non_negative_int,
        default=default,
        help="decoding threads per process (0: decode in the model's thread; default: %(default)s)",
    )


def add_min_coverage(parser: Adder, below: str) -> None:
    """``--min-coverage``: the share of rows that must be scored (score, evaluate, leaderboard);
    ``below`` says what happens to a run under it."""
    from foilkit.run import DEFAULT_MIN_COVERAGE

    parser.add_argument(
        "--min-coverage",
        type=_fraction,
        default=DEFAULT_MIN_COVERAGE,
        metavar="FRACTION",
        help=f"share of each config's rows that must be scored, 0 to 1; {below} "
        "(default: %(default)s)",
    )


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (``--limit``, ``--batch-size``,
    ``--num-frames``, ...): a wrong value is a usage error naming the flag, before any work."""
    return _whole(text, 1, "20")


def non_negative_int(text: str) -> int:
    """An argparse type: a whole number of at least 0 (``--num-workers``, ``--n-resamples``)."""
    return _whole(text, 0, "2")


def _whole(text: str, minimum: int, example: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a whole number of at least {minimum} (e.g. {example})"
        )
    return value


def positive_number(text: str) -> float:
    """An argparse type: a number above 0 (``--target-fps``, ``--normalized-fps``)."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not (value > 0 and value != float("inf")):  # NaN too
        raise argparse.ArgumentTypeError(f"{text!r} is not a number above 0 (e.g. 1.0)")
    return value


def limit_type(text: str) -> int | float:
    """An argparse type: ``--limit``'s rows per config, a whole number (``20``) or a share
    (``0.1``): :func:`foilkit.selection.limit_value`."""
    try:
        return limit_value(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _fraction(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a fraction from 0 to 1 (e.g. 0.9)")
    return value


def coverage_status(
    command: str, coverages: Mapping[str, Coverage], minimum: float, where: str
) -> int:
    """The exit status of a run whose configs scored ``coverages``: 0, or
    :data:`foilkit.errors.LOW_COVERAGE_EXIT` with one summary line on stderr when a config
    scored fewer rows than ``minimum`` (or none). What the run wrote (``where``) stays."""
    low = {name: c for name, c in coverages.items() if c.below(minimum)}
    if not low:
        return 0
    parts = "; ".join(
        f"{name}: {c.label} rows scored ({c.fraction:.0%})"
        + (f", not scored: {c.why()}" if c.why() else "")
        + (f"; {c.left_out()}" if c.left_out() else "")
        for name, c in low.items()
    )
    # A row --on-missing skip dropped at build comes back as a new row once its video is there:
    # another dataset, which --resume refuses (foilkit.run); the other rows' faults it retries.
    if any(c.dropped_missing_video for c in low.values()):
        fix = "add the missing videos and rerun with --overwrite"
    else:
        fix = "fix the inputs and rerun with --resume"
    print(
        f"foilkit {command}: incomplete: {parts}; below --min-coverage {minimum:g}, so this is no "
        f"result (everything is written to {where}; {fix}, or pass --min-coverage 0 to accept it)",
        file=sys.stderr,
    )
    return LOW_COVERAGE_EXIT


def add_placement(parser: Adder) -> None:
    """``--device-map``, ``--max-memory``, ``--offload-folder``, ``--gpus-per-replica``: a model
    spread over several devices (score, evaluate; see :mod:`foilkit.scorers.placement`)."""
    from foilkit.scorers.placement import DEVICE_MAPS  # light: no torch

    parser.add_argument(
        "--device-map",
        choices=DEVICE_MAPS,
        help="spread the model over GPUs, then CPU memory, then --offload-folder "
        "(accelerate's big-model inference); instead of --device",
    )
    parser.add_argument(
        "--max-memory",
        metavar="DEVICE=SIZE,...",
        help="memory each device may hold of the model, e.g. 0=70GiB,1=70GiB,cpu=200GiB "
        "(GPU indices as CUDA_VISIBLE_DEVICES numbers them; each replica takes the sizes of its "
        "GPUs and cpu; default: 90%% of free memory, a node's CPU memory shared by its replicas)",
    )
    parser.add_argument(
        "--offload-folder", help="folder for the layers beyond --max-memory (one per process)"
    )
    parser.add_argument(
        "--gpus-per-replica",
        type=positive_int,
        help="with accelerate launch --num_processes R: each process is one replica of the model "
        "on that many GPUs, process i of a node taking GPUs i*N .. i*N+N-1 (default: the node's "
        "GPUs shared evenly)",
    )


def add_generation(parser: Adder) -> None:
    """``--parser``, ``--temperature``, ``--top-p``, ``--num-samples``, ``--max-new-tokens``: how
    a video LLM answers in ``--mode generate`` and how its answers are read (each overrides the
    protocol's value; see :class:`foilkit.scorers.requests.Decoding`)."""
    parser.add_argument(
        "--parser",
        help="generate mode: the answer parser reproducing a benchmark's official extraction: "
        "vitatecs, tempcompass_multi_choice, tempcompass_yes_no, tempcompass_caption_matching, "
        "tempcompass_captioning (needs --judge-model), tomato, vinoground, yes_no (default: the "
        "protocol's, else vitatecs)",
    )
    parser.add_argument(
        "--temperature",
        type=float,
        help="generate mode: sampling temperature, 0 for greedy (default: the protocol's, e.g. "
        "0.2 for VITATECS' and 0.1 for TempCompass' paper protocol, else 0)",
    )
    parser.add_argument("--top-p", type=float, help="generate mode: nucleus sampling's top-p")
    parser.add_argument(
        "--num-samples",
        type=positive_int,
        help="generate mode: answers sampled per question; accuracy is reported per sample, "
        "with its mean and spread (needs --temperature above 0)",
    )
    parser.add_argument(
        "--max-new-tokens",
        type=positive_int,
        help="generate mode: the longest answer, in tokens (default: the protocol's, e.g. 128 "
        "for TempCompass' and 1024 for TOMATO's paper protocol, else 32)",
    )


def add_backend(parser: Adder) -> None:
    """``--backend openai`` and its settings: a video LLM served behind an OpenAI-compatible
    API (vLLM, SGLang, a hosted model; see :mod:`foilkit.scorers.served`). The defaults are
    :class:`foilkit.scorers.api.ScoreOptions`'."""
    parser.add_argument(
        "--backend",
        choices=("local", "openai"),
        default="local",
        help="where the model runs: local (loaded in this process) or openai (a server speaking "
        "the OpenAI chat-completions API; --model is then the served model's name) "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--base-url",
        help="--backend openai: the server's endpoint, e.g. http://host:8000/v1 "
        "(default: OpenAI's)",
    )
    parser.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="--backend openai: the NAME of the environment variable holding the API key (the "
        "key itself is never written anywhere; unset, a local server gets EMPTY) "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--frames-as",
        choices=("images", "video"),
        default="images",
        help="--backend openai: each frame as an image part, or all as one vLLM video_url part "
        "(JPEG frames) (default: %(default)s)",
    )
    parser.add_argument(
        "--image-format",
        choices=("png", "jpeg"),
        default="png",
        help="--backend openai: how frames are encoded (default: %(default)s, lossless)",
    )
    parser.add_argument(
        "--frame-times",
        choices=("metadata", "text", "none"),
        help="--backend openai: how each frame's time is sent: metadata (with --frames-as video: "
        "vLLM's media_io_kwargs and mm_processor_kwargs fps), text (a '<t seconds>' part before "
        "each image, as lmms-eval's Qwen3-VL API messages), none (default: metadata for video, "
        "none for images)",
    )
    parser.add_argument(
        "--no-sampler-params",
        dest="sampler_params",
        action="store_false",
        help="--backend openai: do not send top_k=-1 and repetition_penalty=1 (which vLLM and "
        "SGLang read, so a checkpoint's generation_config.json applies no other sampler): for "
        "a hosted API that rejects unknown parameters (default: they are sent)",
    )
    parser.add_argument(
        "--max-concurrency",
        type=positive_int,
        default=8,
        help="--backend openai: requests in flight at once (default: %(default)s)",
    )
    parser.add_argument(
        "--max-retries",
        type=non_negative_int,
        default=5,
        help="--backend openai: retries of a request on 429/5xx/timeouts/malformed replies, with "
        "exponential backoff (default: %(default)s)",
    )
    parser.add_argument(
        "--request-timeout",
        type=_positive_number,
        default=600.0,
        metavar="SECONDS",
        help="--backend openai and the judge: the most seconds one request may take in all, from "
        "sending it to its reply's last byte, however slowly the reply trickles; past it, it is "
        "retried as a timeout (--max-retries); recorded in run.json (default: %(default)s)",
    )
    parser.add_argument(
        "--max-reply-mb",
        type=_positive_number,
        default=16.0,
        metavar="MB",
        help="--backend openai and the judge: the largest reply read, in MB (2**20 bytes); a "
        "larger one is not read further and its rows fail (cause 'reply too large') "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--price-per-1k-prompt-tokens",
        type=price,
        help="--backend openai: price of 1000 prompt tokens, for the cost in run.json",
    )
    parser.add_argument(
        "--price-per-1k-completion-tokens",
        type=price,
        help="--backend openai: price of 1000 completion tokens, for the cost in run.json",
    )


def price(text: str) -> float:
    """An argparse type: a price per 1000 tokens, a finite number >= 0 (no NaN: run.json is
    strict JSON)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a price >= 0 (e.g. 0.0005)")
    return value


def _positive_number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number > 0 (e.g. 120)")
    return value


def add_judge(parser: Adder) -> None:
    """``--judge-model``, ``--judge-base-url``, ``--judge-api-key-env`` and the judge's prices
    per 1000 tokens: generate mode's LLM judge, off unless ``--judge-model`` names one, asked
    only where the benchmark's official protocol asks one (see :mod:`foilkit.scorers.judge`)."""
    parser.add_argument(
        "--judge-model",
        metavar="NAME",
        help="generate mode: turn on the official LLM judge, served as NAME (TempCompass and "
        "lmms-eval's VITATECS used gpt-3.5-turbo-1106, TOMATO gpt-4o-mini); it reads what the "
        "official protocol gives it: answers the rules miss, TempCompass captions (default: "
        "off, no judge: such answers count as unparseable)",
    )
    parser.add_argument(
        "--judge-base-url",
        metavar="URL",
        help="--judge-model: the judge's OpenAI-compatible endpoint, e.g. http://host:8000/v1 "
        "(default: OpenAI's)",
    )
    parser.add_argument(
        "--judge-api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="--judge-model: the NAME of the environment variable holding the judge's API key "
        "(never written anywhere; unset, a local server gets EMPTY) (default: %(default)s)",
    )
    parser.add_argument(
        "--judge-price-per-1k-prompt-tokens",
        type=price,
        help="--judge-model: price of 1000 of the judge's prompt tokens, for its cost in run.json",
    )
    parser.add_argument(
        "--judge-price-per-1k-completion-tokens",
        type=price,
        help="--judge-model: price of 1000 of the judge's completion tokens, for its cost in "
        "run.json",
    )


def pixel_count(text: str) -> int:
    """A pixel budget given as a count (``8294400``) or a size (``3840x2160``), at least 1."""
    size = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    try:
        pixels = int(size[1]) * int(size[2]) if size else int(text)
    except ValueError:
        pixels = 0
    if pixels < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a pixel count >= 1: give a number (8294400) or WIDTHxHEIGHT "
            "(3840x2160)"
        )
    return pixels


def add_max_decode_pixels(parser: Adder) -> None:
    """``--max-decode-pixels``: the decoding memory bound (score, evaluate). Left out, the run
    takes ``ScoreOptions``' default, ``MAX_DECODE_PIXELS`` (not imported: it pulls in torch)."""
    parser.add_argument(
        "--max-decode-pixels",
        type=pixel_count,
        default=argparse.SUPPRESS,
        metavar="PIXELS",
        help="frames of more pixels are scaled down (aspect kept) while decoding, so that no "
        "file's declared size can exhaust memory: a number or WIDTHxHEIGHT (default: 3840x2160, "
        "8294400); torchcodec-cuda cannot scale and fails the rows of such a file",
    )


def add_logging(parser: Adder, *, json_summary: bool = True) -> None:
    """``--verbosity``, ``--log-interval`` and (``json_summary``) ``--json``: what a long command
    (score, evaluate, finetune) tells a log (see :mod:`foilkit.progress`)."""
    from foilkit.progress import DEFAULT_LOG_INTERVAL, VERBOSITIES

    parser.add_argument(
        "--verbosity",
        choices=VERBOSITIES,
        default="info",
        help="error/warning: no progress output, the libraries' messages from that level; info: "
        "foilkit's progress (bars on a terminal, lines in a log), no library bars; debug: the "
        "libraries' info messages too, and their bars outside scoring (default: %(default)s)",
    )
    parser.add_argument(
        "--log-interval",
        type=_seconds,
        metavar="SECONDS",
        help="when stderr is no terminal (a log file), print a progress line (done, rate, ETA) "
        f"at most every SECONDS; 0: after every batch (default: {DEFAULT_LOG_INTERVAL:g})",
    )
    if json_summary:
        parser.add_argument(
            "--json",
            action="store_true",
            help="print a machine-readable summary as one JSON object on stdout (progress and "
            "messages stay on stderr)",
        )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # NaN too
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds >= 0 (e.g. 30)")
    return value


def shows_progress(args: argparse.Namespace) -> bool:
    """Whether a command prints its progress: not ``--no-progress``, ``--verbosity`` info or
    debug."""
    return not getattr(args, "no_progress", False) and getattr(args, "verbosity", "info") in (
        "info",
        "debug",
    )


def print_json(summary: Mapping[str, object]) -> None:
    """``--json``: ``summary`` as one JSON object on stdout."""
    import json

    print(json.dumps(summary, default=str), flush=True)


#: Flags of lmms-eval (and lm-evaluation-harness, whose flags it shares) a user may bring
#: along -> what to write in foilkit instead; answered in one line (:func:`foreign_flags`).
PEER_FLAGS = {
    "--model_args": "foilkit has no --model_args: pass the checkpoint itself as --model "
    "HUB_ID_OR_FOLDER (the adapter is chosen from its config; --adapter overrides) and its "
    "settings as flags (--dtype, --revision, --trust-remote-code, --device-map)",
    "--batch_size": "write --batch-size",
    "--output_path": "write --out (the run folder)",
    "--output_dir": "write --out (the run folder)",
    "--log_samples": "foilkit always writes every row's scores (scores/<config>.parquet in the "
    "run folder): drop --log_samples",
    "--gen_kwargs": "write --temperature, --top-p, --max-new-tokens and --num-samples (with "
    "--mode generate)",
    "--num_fewshot": "foilkit's benchmarks are zero-shot: drop --num_fewshot",
    "--wandb_args": "write --log-with wandb",
    "--use_cache": "the embedding cache is on by default: --cache-dir DIR moves it, --no-cache "
    "turns it off",
    "--cache_requests": "the embedding cache is on by default: --cache-dir DIR moves it, "
    "--no-cache turns it off",
}


def foreign_flags(known: Collection[str], argv: Sequence[str]) -> list[str]:
    """What to write instead of each flag in ``argv`` that the command does not know (``known``:
    its option strings) but a user of a peer harness would type (:data:`PEER_FLAGS`), or that
    differs from one of its own by underscores (``--num_frames``): one clause per such flag,
    naming it; nothing for any other argument (argparse reports those)."""
    clauses = []
    for arg in argv:
        if arg == "--":  # what follows is positional
            break
        flag = arg.split("=", 1)[0]
        if not flag.startswith("--") or flag in known:
            continue
        if flag in PEER_FLAGS:
            clauses.append(f"lmms-eval's {flag}: {PEER_FLAGS[flag]}")
        elif "_" in flag and flag.replace("_", "-") in known:
            clauses.append(f"{flag}: foilkit's flag is {flag.replace('_', '-')}")
    return clauses


def add_tracking(parser: Adder, what: str) -> None:
    """``--log-with`` and ``--tracking-dir``: experiment trackers through accelerate's
    ``log_with`` (evaluate, finetune; see :mod:`foilkit.tracking`); ``what`` says what is
    logged."""
    parser.add_argument(
        "--log-with",
        action="extend",
        type=config_names,
        metavar="TRACKER[,TRACKER...]",
        help=f"log {what} to experiment trackers through accelerate: tensorboard, wandb, "
        "trackio, or any other accelerate supports (its package must be installed)",
    )
    parser.add_argument(
        "--tracking-dir",
        metavar="DIR",
        help="where local trackers (tensorboard) write (default: the run folder's tracking/)",
    )
