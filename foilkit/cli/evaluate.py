"""``foilkit evaluate``: build or load a benchmark, score a model, compute its metrics, report.

Takes every scoring flag of ``foilkit score`` (the same parser setup), plus the benchmark,
its config(s), the video root and the bootstrap; works under ``accelerate launch -m foilkit
evaluate`` as ``foilkit score`` does.

``--tasks vitatecs/direction,vilma`` evaluates several benchmarks in one invocation: one run
folder per benchmark under ``--out`` and a summary beside them (:mod:`foilkit.evaluation_tasks`).
There ``--video-root NAME=DIR`` gives one benchmark its videos and a plain ``--video-root DIR``
and ``--annotations DIR`` hold one sub-folder per benchmark (``DIR/vitatecs/``, ...).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foilkit.cli.options import comma_items
from foilkit.errors import UserError, check_writable
from foilkit.run import RESULTS_FILE, UNITS

if TYPE_CHECKING:
    from foilkit.evaluation import EvaluateOptions, Evaluation
    from foilkit.run import RunResults

#: The flags of ``foilkit evaluate`` that the run does not read but its ``config.yaml`` holds,
#: so that the file replays the command whole (``EvaluateOptions.command_flags``).
REPLAYED = ("min_coverage", "verbosity", "json", "log_with", "tracking_dir")


def configure(parser: argparse.ArgumentParser) -> None:
    from foilkit.cli import score as score_cli
    from foilkit.cli.options import add_bootstrap, add_build_source, add_tracking, limit_type

    score_cli.add_scoring_flags(  # the same flags; a dataset is optional here (default: build it)
        parser,
        dataset="an exported folder or Hub dataset id (default: build from the annotations)",
        dataset_required=False,
        configs="configs of the benchmark, or all (default: the paper's full set, as 'all'; "
        "`foilkit benchmarks` lists them)",
        out="the run folder: results.json, config.yaml, report.md, plots, "
        "scores/<config>.parquet (with --tasks: one such folder per benchmark, "
        "<out>/<benchmark>/, and summary.md, summary.json)",
        benchmark="the benchmark to evaluate (or several: --tasks)",
        matrix=argparse.SUPPRESS,  # chosen per benchmark; passing it is an error (see run)
    )
    evaluation = parser.add_argument_group("evaluation")
    evaluation.add_argument(
        "--tasks",
        action="extend",
        type=comma_items("item", "--tasks vitatecs/direction,vilma"),  # names checked in run
        metavar="BENCHMARK[/CONFIG][,...]",
        help="several benchmarks in one invocation, instead of --benchmark/--config: "
        "benchmark/config items (a benchmark alone: its default set, as --config all), "
        "comma-separated or repeated, each kept once in order; one run folder per benchmark "
        "under --out, and summary.md/summary.json there; --video-root NAME=DIR gives benchmark "
        "NAME its videos, and a plain --video-root DIR or --annotations DIR holds a sub-folder "
        "per benchmark (DIR/vitatecs/, ...)",
    )
    # --video-root (the scoring flags') is the one name; --videos stays accepted, unlisted.
    evaluation.add_argument("--videos", dest="video_root", action="append", help=argparse.SUPPRESS)
    add_build_source(evaluation)
    add_bootstrap(
        evaluation, "bootstrap resamples of the CIs", seed="seed of the bootstrap resampling"
    )
    evaluation.add_argument(
        "--limit",
        type=limit_type,
        metavar="N",
        help="evaluate only the first N rows of each config, or a share of them (0.1: 10%%, "
        "rounded up): selected before any video is looked for, so only their videos are "
        "needed; a quick check, recorded in results.json and shown as a partial run in every "
        "report, its coverage the rows scored of those selected",
    )
    evaluation.add_argument(
        "--limit-seed",
        type=int,
        metavar="S",
        help="with --limit: a random sample of that many rows of each config, drawn with seed "
        "S, instead of the first ones",
    )
    evaluation.add_argument("--label", help="the model's name in reports (default: --model)")
    add_tracking(evaluation, "the run's settings, metrics with CI bounds and coverage")
    evaluation.add_argument(
        "--overwrite", action="store_true", help="replace the run folder if it exists"
    )


def run(args: argparse.Namespace) -> int:
    from foilkit.cli.options import print_json
    from foilkit.evaluation import evaluate
    from foilkit.tracking import check_trackers

    if args.matrix:
        raise SystemExit(
            "foilkit evaluate: --matrix is chosen per benchmark (RTime Origin/Hard); do not pass it"
        )
    check_writable(args.out, "--out")  # before any build or model: a typo costs nothing
    if args.tasks is not None:
        return run_tasks(args)
    if args.benchmark is None and args.dataset is not None:
        from foilkit.builders.card import exported_benchmark

        args.benchmark = exported_benchmark(args.dataset)  # a foilkit export's card names it
    if args.benchmark is None:
        raise UserError(
            "name the benchmark: --benchmark NAME [--config ...] (a foilkit export's card names "
            "it for you), or several: --tasks vitatecs/direction,vilma"
        )
    trackers = check_trackers(args.log_with)  # before any work: a typo costs no run
    result = evaluate(args.benchmark, args.model, out_dir=args.out, options=evaluate_options(args))
    if result.results is None:  # another process than the main one: it scored its share
        return 0
    entry = finish(args, trackers, result)
    if args.json:
        print_json(entry)
    else:
        print_results(result.results, result.report)
    return entry["status"]


def finish(args: argparse.Namespace, trackers: list[str], run: Evaluation) -> dict[str, Any]:
    """Log a finished run to the trackers; its ``--json`` summary, with its exit status."""
    from foilkit.cli.options import coverage_status
    from foilkit.tracking import log_evaluation, tracking_dir

    assert run.results is not None  # the main process's run
    directory = tracking_dir(run.run_dir, args.tracking_dir)
    log_evaluation(run.results, trackers, directory, project="foilkit-evaluate")
    status = coverage_status(
        "evaluate", run.results.coverages(), args.min_coverage, str(run.run_dir)
    )
    return summary(run.results, run.run_dir, run.report, status)


def evaluate_options(args: argparse.Namespace) -> EvaluateOptions:
    """The flags of ``foilkit evaluate`` as :class:`foilkit.evaluation.EvaluateOptions` (with
    ``--tasks``: those every benchmark shares)."""
    from foilkit.cli.options import chosen_configs, same_named
    from foilkit.cli.score import score_options
    from foilkit.evaluation import EVALUATE_SETS, EvaluateOptions

    return EvaluateOptions(
        config=chosen_configs(args),
        videos=args.video_root,
        score_options=score_options(args, leave=EVALUATE_SETS),
        command_line=getattr(args, "command_line", None),
        command_flags={name: getattr(args, name) for name in REPLAYED},
        **same_named(
            args,
            "limit limit_seed dataset annotations on_missing split n_resamples bootstrap_seed "
            "label overwrite resume",
        ),
    )


def print_results(results: RunResults, report: Path) -> None:
    """The end of a run on the terminal: its results table (report.md's), then the report's
    path."""
    from foilkit.report import markdown_table, run_table

    print(markdown_table(run_table(results)))
    print()
    print(f"report: {report}", flush=True)


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
                "coverage": None if entry.coverage is None else entry.coverage.to_record(),
                "metrics": {metric: result.overall for metric, result in entry.metrics.items()},
            }
            for name, entry in results.configs.items()
        },
    }


def run_tasks(args: argparse.Namespace) -> int:
    """``foilkit evaluate --tasks``: one run per benchmark under ``--out``, then the summary; the
    exit status is the worst of the runs' (3 when one is below ``--min-coverage``)."""
    from foilkit.cli.options import print_json
    from foilkit.evaluation_tasks import SUMMARY_MD, evaluate_tasks, parse_tasks
    from foilkit.tracking import check_trackers

    clash = [
        flag
        for flag, value in (("--benchmark", args.benchmark), ("--config", args.configs))
        if value
    ]
    if clash:
        raise UserError(
            f"--tasks names the benchmarks and their configs; drop "
            f"{' and '.join(clash)} (e.g. --tasks vitatecs/direction,vilma/change_of_state)"
        )
    tasks = parse_tasks(args.tasks)
    videos = task_video_roots(args.video_root, tasks)
    annotations = {
        name: None if args.annotations is None else sub_folder(args.annotations, name)
        for name in tasks
    }
    trackers = check_trackers(args.log_with)
    runs = evaluate_tasks(
        tasks,
        args.model,
        out_dir=args.out,
        videos=videos,
        annotations=annotations,
        min_coverage=args.min_coverage,
        options=evaluate_options(args),
    )
    if any(run.results is None for run in runs):  # not the main process: it scored its share
        return 0
    summaries = [finish(args, trackers, run) for run in runs]
    status = max(entry["status"] for entry in summaries)
    overview = Path(args.out) / SUMMARY_MD
    if args.json:
        print_json(
            {"command": "evaluate", "status": status, "summary": str(overview), "runs": summaries}
        )
    else:
        for run in runs:
            print_results(run.results, run.report)
            print()
        print(f"summary: {overview}")
    return status


def task_video_roots(
    given: list[str] | None, tasks: Mapping[str, object]
) -> dict[str, Path | None]:
    """Each benchmark's video root under ``--tasks``: ``--video-root NAME=DIR`` names benchmark
    NAME's (once each); a plain ``--video-root DIR`` (one at most) holds a sub-folder per
    benchmark, ``DIR/NAME``, for the benchmarks not named; a benchmark with neither has none."""
    from foilkit.builders import BENCHMARKS

    own: dict[str, Path] = {}
    parents: list[str] = []
    for text in given or []:
        name, sep, folder = text.partition("=")
        if not (sep and name in BENCHMARKS.names()):
            parents.append(text)
        elif name not in tasks:
            raise UserError(
                f"--video-root {text}: {name} is not one of --tasks ({', '.join(tasks)})"
            )
        elif name in own:
            raise UserError(f"--video-root names {name}'s folder twice: pass {name}=DIR once")
        else:
            own[name] = Path(folder).expanduser()
    if len(parents) > 1:
        raise UserError(
            f"--video-root with --tasks takes NAME=DIR per benchmark, or one folder holding a "
            f"sub-folder per benchmark; got {len(parents)} folders: {' '.join(parents)} (write "
            f"--video-root {next(iter(tasks))}=DIR ...)"
        )
    return {
        name: own.get(name) or (sub_folder(parents[0], name, "--video-root") if parents else None)
        for name in tasks
    }


def sub_folder(parent: str, name: str, flag: str = "--annotations") -> Path:
    """``parent/name``, benchmark ``name``'s folder in a folder of one sub-folder per benchmark
    (``flag`` given ``parent`` under ``--tasks``); a missing one is a :class:`UserError`."""
    folder = Path(parent).expanduser() / name
    if not folder.is_dir():
        fix = f" or --video-root {name}=DIR" if flag == "--video-root" else ""
        raise UserError(
            f"{flag} {parent}: no folder {folder} for {name}; with --tasks it holds one "
            f"sub-folder per benchmark (lay out {folder}/{fix})"
        )
    return folder
