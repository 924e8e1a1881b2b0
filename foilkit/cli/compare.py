"""``foilkit compare``: the command line of :mod:`foilkit.compare`."""

from __future__ import annotations

import argparse
import json
import sys

from foilkit.cli.options import add_bootstrap
from foilkit.compare import _test_lines, compare_runs
from foilkit.errors import check_writable
from foilkit.folders import SIDE_BY_SIDE, claim_folder


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_a", help="a foilkit evaluate run folder")
    parser.add_argument("run_b", help="another run folder, same benchmark and items")
    parser.add_argument(
        "--out", required=True, help="folder for report.md, comparison.json and the plots"
    )
    add_bootstrap(parser, "paired bootstrap resamples", seed="seed of the paired bootstrap")
    # Deprecated: --seed is the frame seed (shuffled control, sampling) in score/evaluate.
    parser.add_argument("--seed", dest="legacy_seed", type=int, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from foilkit.report import headline, write_side_by_side

    check_writable(args.out, "--out")  # before the runs are read and tested
    seed = args.bootstrap_seed
    if args.legacy_seed is not None:
        print(
            "foilkit compare: --seed is now --bootstrap-seed (--seed is the frame seed in "
            "score/evaluate)",
            file=sys.stderr,
        )
        seed = args.legacy_seed
    tests = compare_runs(args.run_a, args.run_b, n_resamples=args.n_resamples, seed=seed)
    out = claim_folder(args.out, SIDE_BY_SIDE)  # new, empty or foilkit's (foilkit.folders)
    comparison = {"run_a": args.run_a, "run_b": args.run_b, "tests": tests}
    (out / "comparison.json").write_text(json.dumps(comparison, indent=2, default=str))
    lines = _test_lines(tests)
    report = write_side_by_side(
        [args.run_a, args.run_b], out, title="foilkit compare", extra=lines, paired=comparison
    )
    # the numbers on the terminal: the side-by-side tables and the paired tests, as report.md
    print(headline(report))
    print()
    print("\n".join(lines))
    print()
    print(f"report: {report}")
    return 0
