"""``foilkit evaluate``: build or load a benchmark, score a model, compute its metrics, report.

Takes every scoring flag of ``foilkit score`` (the same parser setup), plus the benchmark,
its config(s), the video root and the bootstrap; works under ``accelerate launch -m foilkit
evaluate`` as ``foilkit score`` does.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foilkit.run import RESULTS_FILE, UNITS

if TYPE_CHECKING:
    from foilkit.run import RunResults


def configure(parser: argparse.ArgumentParser) -> None:
    from foilkit.cli import score as score_cli
    from foilkit.cli.options import add_bootstrap, add_build_source, add_tracking, positive_int

    score_cli.configure(parser)
    for action in parser._actions:  # the same flags; a dataset is optional here (default: build it)
        if action.dest == "dataset":
            action.required = False
            action.help = (
                "an exported folder or Hub dataset id (default: build from the annotations)"
            )
        if action.dest == "configs":
            action.help = (
                "configs of the benchmark, or all (default: the paper's full set, as 'all'; "
                "several: --config a,b or --config a --config b; `foilkit benchmarks` lists them)"
            )
        if action.dest == "out":
            action.help = "the run folder: results.json, report.md, plots, scores/<config>.parquet"
        if action.dest == "benchmark":
            action.required = True
            action.help = "the benchmark to evaluate"
        if action.dest == "matrix":  # chosen per benchmark; passing it is an error (see run)
            action.help = argparse.SUPPRESS
    evaluation = parser.add_argument_group("evaluation")
    # --video-root (the scoring flags') is the one name; --videos stays accepted, unlisted.
    evaluation.add_argument("--videos", dest="video_root", action="append", help=argparse.SUPPRESS)
    add_build_source(evaluation)
    add_bootstrap(
        evaluation, "bootstrap resamples of the CIs", seed="seed of the bootstrap resampling"
    )
    evaluation.add_argument(
        "--limit",
        type=positive_int,
        metavar="N",
        help="score only the first N items of each config: a quick check, recorded in "
        "results.json and shown as a partial run in every report",
    )
    evaluation.add_argument("--label", help="the model's name in reports (default: --model)")
    add_tracking(evaluation, "the run's settings, metrics with CI bounds and coverage")
    evaluation.add_argument(
        "--overwrite", action="store_true", help="replace the run folder if it exists"
    )


def run(args: argparse.Namespace) -> int:
    from foilkit.cli.options import chosen_configs, coverage_status, print_json
    from foilkit.cli.score import score_options
    from foilkit.evaluation import EVALUATE_SETS, evaluate
    from foilkit.tracking import check_trackers, log_evaluation, tracking_dir

    if args.matrix:
        raise SystemExit(
            "foilkit evaluate: --matrix is chosen per benchmark (RTime Origin/Hard); do not pass it"
        )
    trackers = check_trackers(args.log_with)  # before any work: a typo costs no run
    result = evaluate(
        args.benchmark,
        args.model,
        config=chosen_configs(args),
        limit=args.limit,
        out_dir=args.out,
        dataset=args.dataset,
        videos=args.video_root,
        annotations=args.annotations,
        on_missing=args.on_missing,
        split=args.split,
        n_resamples=args.n_resamples,
        bootstrap_seed=args.bootstrap_seed,
        label=args.label,
        overwrite=args.overwrite,
        resume=args.resume,
        score_options=score_options(args, leave=EVALUATE_SETS),
        command_line=getattr(args, "command_line", None),
    )
    if result.results is None:  # another process than the main one: it scored its share
        return 0
    directory = tracking_dir(result.run_dir, args.tracking_dir)
    log_evaluation(result.results, trackers, directory, project="foilkit-evaluate")
    coverages = {
        name: entry.coverage
        for name, entry in result.results.configs.items()
        if entry.coverage is not None
    }
    status = coverage_status("evaluate", coverages, args.min_coverage, str(result.run_dir))
    if args.json:
        print_json(summary(result.results, result.run_dir, result.report, status))
    else:
        print(f"report: {result.report}")
    return status


def summary(results: RunResults, run_dir: Path, report: Path, status: int) -> dict[str, Any]:
    """``--json``: the run folder, report, exit status, wall time and, per config, its coverage
    and metrics (fractions, with CIs) as ``results.json`` holds them."""
    invocation = results.invocation
    return {
        "command": "evaluate",
        "status": status,
        "run_dir": str(run_dir),
        "results": str(run_dir / RESULTS_FILE),
        "report": str(report),
        "benchmark": results.benchmark,
        "model": results.model,
        "partial": results.partial(),
        "wall_seconds": None if invocation is None else invocation.wall_seconds,
        "units": UNITS,
        "configs": {
            name: {
                "num_rows": entry.num_rows,
                "coverage": None if entry.coverage is None else entry.coverage.to_json(),
                "metrics": {metric: result.overall for metric, result in entry.metrics.items()},
            }
            for name, entry in results.configs.items()
        },
    }
