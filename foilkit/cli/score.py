"""``foilkit score``: score a Hub model on a foilkit dataset (``accelerate launch`` works too)."""

from __future__ import annotations

import argparse
from collections.abc import Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from foilkit.scorers.options import ScoreOptions

#: The flags of ``foilkit score`` that its scoring does not read but its ``config.yaml``
#: holds, so that the file replays the command whole (:func:`foilkit.scorers.api.
#: write_score_config`).
REPLAYED = ("min_coverage", "verbosity", "json")


def configure(parser: argparse.ArgumentParser) -> None:
    add_scoring_flags(
        parser,
        dataset="a save_to_disk folder, a parquet dataset folder or a Hub dataset id",
        configs="dataset config (aspect, test, ...) of a folder or Hub dataset",
        out="folder for scores.jsonl, run.json, config.yaml and the resumable shards",
        benchmark="the benchmark the dataset is, for its paper protocol",
        matrix="score every view against every caption (retrieval pools such as RTime)",
    )


def add_scoring_flags(
    parser: argparse.ArgumentParser,
    *,
    dataset: str,
    configs: str,
    out: str,
    benchmark: str,
    matrix: str,
    dataset_required: bool = True,
) -> None:
    """The flags of ``foilkit score``, which ``foilkit evaluate`` takes too: the model, dataset
    and folder, ``--config-file``, and every scoring option's (made from
    :class:`foilkit.scorers.options.ScoreOptions`' fields); the arguments are the help of the
    flags whose meaning differs between the two commands."""
    from foilkit.builders import BENCHMARKS  # light: names only, no builder module is imported
    from foilkit.cli.options import (
        Adder,
        add_config_file,
        add_configs,
        add_logging,
        add_min_coverage,
        add_num_workers,
        add_score_options,
        add_video_root,
    )

    parser.add_argument(
        "--model",
        required=True,
        help="Hub id or local path of the model (--backend openai: the served model's name)",
    )
    parser.add_argument("--dataset", required=dataset_required, help=dataset)
    add_configs(parser, configs)
    parser.add_argument("--split", help="dataset split (needed when there are several)")
    parser.add_argument("--out", required=True, help=out)
    parser.add_argument("--resume", action="store_true", help="continue the run already in --out")
    parser.add_argument("--matrix", action="store_true", help=matrix)
    add_config_file(parser)

    def work_logging(group: Adder) -> None:
        add_logging(group)
        add_min_coverage(
            group,
            "below it everything is still written and the command exits with status 3 (so does "
            "a run that scored no row)",
        )

    add_score_options(
        parser,
        {
            "benchmark": lambda group: group.add_argument(
                "--benchmark", choices=sorted(BENCHMARKS), help=benchmark
            ),
            "video_root": add_video_root,
            "num_workers": lambda group: add_num_workers(group, default=2),
            "log_interval": work_logging,
        },
    )


def score_options(args: argparse.Namespace, *, leave: Collection[str] = ()) -> ScoreOptions:
    """The scoring flags in ``args`` as :class:`foilkit.scorers.api.ScoreOptions`, but the
    fields in ``leave`` (a command that sets them itself)."""
    from foilkit.cli.options import shows_progress
    from foilkit.scorers.options import SCORE_OPTION_NAMES, ScoreOptions

    values = {**vars(args), "out_dir": args.out, "progress": args.progress and shows_progress(args)}
    chosen = [name for name in SCORE_OPTION_NAMES if name in values and name not in leave]
    return ScoreOptions(**{name: values[name] for name in chosen})


def run(args: argparse.Namespace) -> int:
    from foilkit.cli.options import chosen_configs, coverage_status, print_json
    from foilkit.errors import UserError, check_writable
    from foilkit.run import Coverage
    from foilkit.scorers.api import score_pool, score_rows, write_score_config

    configs = chosen_configs(args) or [None]
    if len(configs) > 1:
        raise UserError(
            f"foilkit score scores one config, not {', '.join(configs)}: run it once per config "
            "(each with its own --out), or use foilkit evaluate --config " + ",".join(configs)
        )
    check_writable(args.out, "--out")  # before the dataset or model: a typo costs nothing
    (config,) = configs
    options = score_options(args)
    scored = (score_pool if args.matrix else score_rows)(args.model, args.dataset, config, options)
    command = {name: getattr(args, name) for name in REPLAYED}
    write_score_config(
        args.model, args.dataset, config, options, matrix=args.matrix, command=command
    )
    record = scored.record
    coverage = Coverage.of(record.num_rows, None, record.failed_rows, record.error_causes)
    status = coverage_status("score", {config or "rows": coverage}, args.min_coverage, args.out)
    if args.json:
        print_json(
            {
                "command": "score",
                "status": status,
                "out": args.out,
                "config": config,
                "model": args.model,
                "coverage": coverage.to_record(),
                "throughput": record.throughput,
            }
        )
    return status
