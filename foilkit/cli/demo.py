"""``foilkit demo``: the command line of :mod:`foilkit.demo`."""

from __future__ import annotations

import argparse

from foilkit.cli.options import add_bootstrap, positive_int
from foilkit.demo import DEMO_CONTROLS, DEMO_MODELS, run_demo
from foilkit.errors import check_extras
from foilkit.report import headline


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        default="runs/demo",
        help="folder for the benchmark, the runs and the report (default: %(default)s)",
    )
    parser.add_argument(
        "--models",
        nargs="+",
        default=list(DEMO_MODELS),
        help="tiny model families from foilkit.synthetic.models (default: %(default)s)",
    )
    parser.add_argument(
        "--num-frames",
        "--frames",
        dest="num_frames",
        type=positive_int,
        default=8,
        help="frames per video (default: %(default)s)",
    )
    add_bootstrap(parser, "bootstrap resamples of the confidence intervals")
    parser.add_argument(
        "--no-controls", action="store_true", help="skip the reversed/shuffled-frames runs"
    )
    parser.add_argument(
        "--no-finetune",
        action="store_true",
        help="skip fine-tuning the temporal CLIPs (with and without reversed hard negatives) "
        "and their paired test",
    )
    parser.add_argument(
        "--training-seed",
        type=int,
        default=0,
        help="seed of initialisation and batch order of both temporal CLIPs' fine-tuning, as "
        "foilkit finetune's (default: %(default)s)",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress at all (default: progress bars on a terminal, else one line per phase)",
    )


def run(args: argparse.Namespace) -> int:
    check_extras("demo")  # its tiny CLIPs' vocabulary (clip-anytorch), before anything is made
    report = run_demo(
        args.out,
        models=args.models,
        controls=(None,) if args.no_controls else DEMO_CONTROLS,
        num_frames=args.num_frames,
        n_resamples=args.n_resamples,
        progress=not args.no_progress,
        finetune=not args.no_finetune,
        seed=args.training_seed,
    )
    print(headline(report))  # the result the demo exists to show, here in the terminal
    print()
    print(f"report: {report}")
    print(f"plots:  {', '.join(str(p) for p in sorted(report.parent.glob('*.png')))}")
    return 0
