"""``foilkit build``: build a benchmark's configs and write them in the Hub layout, optionally push.

foilkit build vitatecs --out exports/vitatecs --video-root ~/videos/vitatecs
foilkit build vilma --config action_counting --out exports/vilma --on-missing keep
foilkit build rtime --out exports/rtime --video-root ~/rtime --push-to-hub me/rtime
"""

from __future__ import annotations

import argparse
import sys
import textwrap

from foilkit.builders import BUILDERS  # light: the builder modules are imported on first use
from foilkit.cli.options import (
    add_build_source,
    add_configs,
    add_video_root,
    chosen_configs,
    one_video_root,
    same_named,
)


def video_layouts() -> str:
    """Each benchmark's video layout under ``--video-root``, as its dataset card gives it."""
    from foilkit.builders import get_benchmark

    lines = [
        "video layout under --video-root (videos are never downloaded; see each dataset card):"
    ]
    for name in sorted(BUILDERS):
        layout = get_benchmark(name).video_layout.replace("`", "")
        lines.append(
            textwrap.fill(layout, 96, initial_indent=f"  {name}: ", subsequent_indent="    ")
        )
    return "\n".join(lines)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # the layouts as written
    parser.epilog = video_layouts  # read when the help is shown (CommandParser.format_help)
    parser.add_argument("benchmark", choices=sorted(BUILDERS), help="which benchmark to build")
    add_configs(
        parser, "configs to build (default: every config buildable from the published files)"
    )
    parser.add_argument(
        "--out", required=True, help="folder to write the parquet files and README.md into"
    )
    add_video_root(parser)
    add_build_source(parser)
    parser.add_argument(
        "--datasets-cache", help="datasets cache folder (default: the datasets default)"
    )
    # Deprecated: --cache-dir is the embedding cache in score/evaluate; one meaning per flag name.
    parser.add_argument("--cache-dir", dest="legacy_cache_dir", help=argparse.SUPPRESS)
    parser.add_argument(
        "--embed-videos",
        action="store_true",
        help="store the video bytes in the parquet files (mind the video licences)",
    )
    parser.add_argument(
        "--annotation-version",
        choices=("chatgpt", "opt"),
        help="VITATECS: the released ChatGPT counterfactuals (default) or the earlier OPT ones",
    )
    parser.add_argument(
        "--no-validity-filter",
        action="store_true",
        help="ViLMA: keep rows that fail the paper's human validation (column 'valid' marks them)",
    )
    parser.add_argument(
        "--multiple-choice-file",
        help="contrast sets gender/random: the MSR-VTT multiple-choice file",
    )
    parser.add_argument(
        "--train-split",
        action="store_true",
        help="RTime: also build the train split from upstream train.json (for fine-tuning)",
    )
    parser.add_argument(
        "--foil-seed",
        type=int,
        help="contrast sets gender: seed of the gender-swap draws (default 0)",
    )
    # Deprecated: --seed is the frame seed (shuffled control, sampling) in score/evaluate.
    parser.add_argument("--seed", dest="legacy_seed", type=int, help=argparse.SUPPRESS)
    parser.add_argument(
        "--push-to-hub",
        metavar="REPO_ID",
        help="upload the export as this dataset repository "
        "(token from HF_TOKEN or the cached login)",
    )
    parser.add_argument(
        "--private", action="store_true", help="with --push-to-hub: create the repository private"
    )
    parser.add_argument(
        "--register",
        action="store_true",
        help="with --push-to-hub: upload eval.yaml (register the benchmark) to a repository that "
        "is not the benchmark's canonical one (docs: hub-results.md, Registering a benchmark)",
    )
    parser.add_argument(
        "--evaluation-framework",
        metavar="NAME",
        help="eval.yaml's evaluation_framework, one the Hub accepts (default: foilkit once the Hub "
        "lists it, else mteb; docs: hub-results.md, Registering a benchmark)",
    )


def _benchmark_options(args: argparse.Namespace) -> dict:
    """The benchmark-specific config fields the user set, and only those."""
    options = {
        "annotation_version": args.annotation_version,
        "validity_filter": False if args.no_validity_filter else None,
        "multiple_choice_file": args.multiple_choice_file,
        "train_split": True if args.train_split else None,
        "seed": args.foil_seed if args.foil_seed is not None else args.legacy_seed,
    }
    return {name: value for name, value in options.items() if value is not None}


def _legacy_flags(args: argparse.Namespace) -> None:
    """Accept the old names (--cache-dir, --seed) once more, saying what they are now."""
    if args.legacy_cache_dir is not None:
        print(
            "foilkit build: --cache-dir is now --datasets-cache (--cache-dir names the "
            "embedding cache in score/evaluate)",
            file=sys.stderr,
        )
        args.datasets_cache = args.datasets_cache or args.legacy_cache_dir
    if args.legacy_seed is not None:
        print(
            "foilkit build: --seed is now --foil-seed (--seed is the frame seed in score/evaluate)",
            file=sys.stderr,
        )


def run(args: argparse.Namespace) -> int:
    import logging

    from foilkit.builders.hub import check_redistributable, export, push_to_hub

    _legacy_flags(args)
    if args.push_to_hub:  # before building: the push would be refused after it
        check_redistributable(args.benchmark)
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    package_logger = logging.getLogger("foilkit")
    package_logger.addHandler(handler)
    package_logger.setLevel(logging.INFO)
    try:
        out = export(
            args.benchmark,
            args.out,
            chosen_configs(args),
            video_root=one_video_root(args.video_root, "build"),
            cache_dir=args.datasets_cache,
            **same_named(args, "on_missing annotations embed_videos evaluation_framework"),
            **_benchmark_options(args),
        )
    finally:  # a later command (or test) must not log to this run's stderr
        package_logger.removeHandler(handler)
    files = sorted(path.relative_to(out).as_posix() for path in out.rglob("*.parquet"))
    extra = " eval.yaml," if (out / "eval.yaml").is_file() else ""
    print(f"wrote {out}: README.md,{extra} and {len(files)} parquet file(s)")
    for name in files:
        print(f"  {name}")
    if args.push_to_hub:
        private = args.private or None
        url = push_to_hub(out, args.push_to_hub, private=private, register=args.register)
        print(f"pushed: {url}")
    return 0
