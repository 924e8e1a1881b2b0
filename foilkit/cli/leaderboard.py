"""``foilkit leaderboard``: the command line of :mod:`foilkit.leaderboard`."""

from __future__ import annotations

import argparse
import sys

from foilkit.cli.options import add_bootstrap, add_min_coverage
from foilkit.leaderboard import Skipped, write_leaderboard


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs",
        nargs="*",
        help="run folders, or folders holding run folders at any depth (e.g. runs/)",
    )
    parser.add_argument("--out", required=True, help="folder for leaderboard.md, .csv and .png")
    parser.add_argument(
        "--hub",
        action="append",
        metavar="DATASET_ID=BENCHMARK",
        help="also rank the Hub leaderboard of this benchmark dataset (online; repeatable)",
    )
    add_bootstrap(parser, "paired bootstrap resamples between neighbours")
    add_min_coverage(
        parser, "runs below it are marked incomplete and ranked below every complete run"
    )


def run(args: argparse.Namespace) -> int:
    hub = []
    for item in args.hub or []:
        dataset_id, _, benchmark = item.partition("=")
        if not benchmark:
            raise ValueError(
                f"--hub {item!r}: expected DATASET_ID=BENCHMARK, e.g. me/vitatecs=vitatecs"
            )
        hub.append((dataset_id, benchmark))
    skipped: list[Skipped] = []
    report = write_leaderboard(
        args.runs,
        args.out,
        hub=hub,
        n_resamples=args.n_resamples,
        min_coverage=args.min_coverage,
        skipped=skipped,
    )
    for entry in skipped:  # the error above names them when nothing was left to rank
        print(f"foilkit leaderboard: skipped {entry}", file=sys.stderr)
    print(f"leaderboard: {report}")
    return 0
