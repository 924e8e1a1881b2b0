"""Flags that several commands share, declared once so that each means the same everywhere.

A command's ``configure`` calls these on its parser (or an argument group of it); the flags'
names, types, defaults and destinations are the same in every command that has them.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import Field, fields
from typing import TYPE_CHECKING, Any

from foilkit.errors import LOW_COVERAGE_EXIT
from foilkit.selection import limit_value

if TYPE_CHECKING:
    from foilkit.run import Coverage

from foilkit.errors import UserError

#: A parser or one of its argument groups: both have ``add_argument``.
Adder = argparse.ArgumentParser | argparse._ArgumentGroup
#: What adds a flag to a parser or group (a shared flag, a command's own).
Adding = Callable[[Adder], None]


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


def comma_items(what: str, fix: str) -> Callable[[str], list[str]]:
    """An argparse type: ``a,b`` -> ``["a", "b"]``; an empty item (``a,,b``, ``a,``) is a usage
    error saying the text has an empty ``what``, and how to write it (``fix``)."""

    def items(text: str) -> list[str]:
        found = [item.strip() for item in text.split(",")]
        if not all(found):
            raise argparse.ArgumentTypeError(f"{text!r} has an empty {what}: write {fix}")
        return found

    return items


config_names = comma_items("config name", "--config a,b or --config a --config b")


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
    return _number(text, _finite_positive, "a number above 0", "1.0")


def _number(text: str, ok: Callable[[float], bool], what: str, example: str) -> float:
    """``text`` as a number that ``ok`` accepts (text that is no number is NaN); else a usage
    error saying it is not ``what``, with an ``example``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not ok(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not {what} (e.g. {example})")
    return value


def _finite_positive(value: float) -> bool:
    return math.isfinite(value) and value > 0


def limit_type(text: str) -> int | float:
    """An argparse type: ``--limit``'s rows per config, a whole number (``20``) or a share
    (``0.1``): :func:`foilkit.selection.limit_value`."""
    try:
        return limit_value(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _fraction(text: str) -> float:
    return _number(text, lambda value: 0 <= value <= 1, "a fraction from 0 to 1", "0.9")


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


def price(text: str) -> float:
    """An argparse type: a price per 1000 tokens, a finite number >= 0 (no NaN: run.json is
    strict JSON)."""
    return _number(
        text, lambda value: math.isfinite(value) and value >= 0, "a price >= 0", "0.0005"
    )


def _positive_number(text: str) -> float:
    return _number(text, _finite_positive, "a number > 0", "120")


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


#: The argparse types an option's ``check`` names (:func:`foilkit.scorers.options.option`; the
#: scorers do not import the CLI): a wrong value is a usage error naming the flag, before any work.
CHECKS: dict[str, Callable[[str], Any]] = {
    "int": int,
    "number": float,
    "positive_int": positive_int,
    "non_negative_int": non_negative_int,
    "positive_number": positive_number,
    "positive_finite": _positive_number,
    "price": price,
    "pixel_count": pixel_count,
}

#: The check of a field whose metadata names none, by its annotation (``int``, ``float``,
#: ``float | None``).
BY_ANNOTATION = {"int": "int", "float": "number", "float | None": "number"}


def add_score_options(parser: argparse.ArgumentParser, own: Mapping[str, Adding]) -> None:
    """The flags of :class:`foilkit.scorers.options.ScoreOptions` (score, evaluate): one argument
    group per part (its section's name, its docstring's first paragraph), one flag per field,
    made from the field's metadata (its help, type, choices).
    A field whose flag is declared elsewhere (its help ``None``: shared with other commands, or
    the command's own) is added in its part's group by ``own[field]`` when the command gives one,
    else the command declares it itself (``--out``, ``--split``, ``--resume``)."""
    from foilkit.scorers.options import PARTS

    for part in PARTS:
        description = (part.__doc__ or "").split("\n\n")[0]  # the first paragraph
        add_fields(
            parser.add_argument_group(part.SECTION, " ".join(description.split())), part, own
        )


def add_fields(parser: Adder, options: type, own: Mapping[str, Adding]) -> None:
    """One flag per field of the dataclass ``options`` (a part of ``ScoreOptions``,
    ``FinetuneOptions``), in field order, made from its metadata by :func:`add_option`; a field
    without help is added by ``own[field]`` when the command gives one, else not here."""
    for option in fields(options):
        if option.metadata.get("help") is not None:
            add_option(parser, option)
        elif option.name in own:
            own[option.name](parser)


def add_option(parser: Adder, option: Field[Any]) -> None:
    """The flag of one field made by :func:`foilkit.scorers.options.option`, from its metadata."""
    from foilkit.scorers.options import option_flag

    meta = option.metadata
    settings: dict[str, Any] = {"dest": option.name, "help": meta["help"]}
    if isinstance(option.default, bool):  # a switch: on, or off when it is on by default
        settings["action"] = "store_false" if option.default else "store_true"
    else:
        settings["default"] = option.default
        settings["type"] = CHECKS.get(meta["check"] or BY_ANNOTATION.get(str(option.type)))
        choices = meta["choices"]
        settings["choices"] = tuple(choices()) if callable(choices) else choices
        settings["metavar"] = meta["metavar"]
    action = parser.add_argument(option_flag(option), *meta["aliases"], **settings)
    action.names = meta["names"]  # {names} in its help: filled in when the help is shown


def fill_names(actions: Iterable[argparse.Action]) -> None:
    """Each flag's help with ``{names}`` (:func:`add_option`) filled in with its registry's
    names as they are now: read when the help is shown, not when the parser is made (the
    benchmarks that declare them import ``datasets``, which a usage error need not wait for)."""
    for action in actions:
        names = getattr(action, "names", None)
        if names is not None:
            action.help = str(action.help).replace("{names}", ", ".join(names()))
            action.names = None


def add_config_file(parser: Adder) -> None:
    """``--config-file``: the command's flags from a YAML file (score, evaluate); a flag given on
    the command line overrides the file (:func:`config_file_values`)."""
    parser.add_argument(
        "--config-file",
        metavar="YAML",
        help="read the flags from this file: a run folder's config.yaml (which replays that "
        "run), or one written by hand in its layout: the command's own flags at the top "
        "(model: ..., configs: [...]), the scoring options in sections named after the groups "
        "below (frames: {num_frames: 8}), each key a flag's name with underscores; a flag given "
        "on the command line overrides the file",
    )


#: The flags a config file does not give: help, and the file itself.
FILE_FREE = ("help", "config_file")


def config_file_values(
    actions: Sequence[argparse.Action], path: str, argv: Sequence[str]
) -> dict[str, Any]:
    """The values ``--config-file path`` gives the flags of ``actions`` that ``argv`` does not
    give, by destination, each checked as its flag's text would be; a key that is no flag's, or
    a bad value, is a :class:`UserError` naming the key and the file."""
    from foilkit.config_file import read_config
    from foilkit.scorers.options import PART_OF, SECTION_OF

    where = {
        a.dest: a
        for a in actions
        if a.option_strings and a.help != argparse.SUPPRESS and a.dest not in FILE_FREE
    }
    given = {
        a.dest
        for a in actions
        for arg in argv
        if any(arg == s or arg.startswith(s + "=") for s in a.option_strings)
    }
    values = {}
    for key, value, section in _file_items(read_config(path), PART_OF):
        named = f"{section}.{key}" if section else key
        if key not in where or section != SECTION_OF.get(key):
            if key in where and key in SECTION_OF:
                fix = f"write it under {SECTION_OF[key]}:"
            elif key in where:
                fix = "write it at the top level"
            else:
                fix = "the keys are the flags' names with underscores (foilkit --help lists them)"
            raise UserError(f"{path}: unknown key {named!r}: {fix}")
        if key not in given:
            values[key] = _file_value(where[key], value, f"{path}: {named}")
    return values


def _file_items(data: Mapping[str, Any], sections: Collection[str]) -> Iterator[tuple]:
    """``(key, value, section)`` of a config file's top-level keys (section ``None``) and of its
    sections' keys."""
    for key, value in data.items():
        if key in sections and isinstance(value, Mapping):
            for inner, item in value.items():
                yield inner, item, key
        else:
            yield key, value, None


def _file_value(action: argparse.Action, value: Any, where: str) -> Any:
    """``value`` from a config file for ``action``'s flag: a switch takes true or false, a
    repeatable flag a list (each item read as on the command line), any other flag one value
    read as its text on the command line would be (its type and choices)."""
    if value is None:
        return None
    if action.nargs == 0:  # a switch
        if not isinstance(value, bool):
            raise UserError(f"{where}: {value!r} is not true or false")
        return value
    try:
        if isinstance(action.default, list) or isinstance(value, list):
            items = value if isinstance(value, list) else [value]
            read = [_read(action, item) for item in items]
            return [part for item in read for part in (item if isinstance(item, list) else [item])]
        return _read(action, value)
    except (argparse.ArgumentTypeError, ValueError) as error:
        raise UserError(f"{where}: {error}") from None


def _read(action: argparse.Action, value: Any) -> Any:
    """One value as its flag's text would be read (``action.type``), within its choices."""
    if action.type is not None and isinstance(value, (str, int, float)):
        value = action.type(str(value))
    if action.choices is not None and value not in action.choices:
        raise ValueError(f"{value!r} is not one of {', '.join(map(str, action.choices))}")
    return value


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
    return _number(text, lambda value: value >= 0, "a number of seconds >= 0", "30")


def same_named(args: argparse.Namespace, names: str) -> dict[str, Any]:
    """The options ``names`` (their destinations, separated by white space) of a command line,
    each under its own name: the keyword arguments of a function whose parameters are named as
    the flags' destinations."""
    return {name: getattr(args, name) for name in names.split()}


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
