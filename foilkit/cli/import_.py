"""``foilkit import``: the command line of :mod:`foilkit.imports`."""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

from foilkit.cli.options import add_bootstrap, add_option


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "source",
        help="an answer file or a folder of them: TempCompass' predictions/<model>/<task>.json, "
        "lmms-eval --log_samples files (its tempcompass_*, vitatecs_*, temporalbench_short_qa, "
        "tomato and vinoground tasks), or JSONL with one "
        '{"id": ..., "answer": ...} per line (format detected)',
    )
    parser.add_argument("--benchmark", required=True, help="the benchmark the answers answer")
    parser.add_argument("--out", required=True, help="the run folder to write")
    parser.add_argument(
        "--config", nargs="+", help="the configs to import (default: those the answers name)"
    )
    parser.add_argument("--annotations", help="the benchmark's annotation files (its builder's)")
    parser.add_argument("--dataset", help="an exported folder or Hub id instead of a build")
    parser.add_argument("--label", help="the model's name in reports (default: the folder's)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing run folder")
    add_bootstrap(parser, "bootstrap resamples of the CIs", seed="seed of the bootstrap")
    from foilkit.scorers.options import JudgeOptions

    group = parser.add_argument_group(JudgeOptions.SECTION, "the official LLM judge, as evaluate's")
    for option in fields(JudgeOptions):
        add_option(group, option)


def run(args: argparse.Namespace) -> int:
    from foilkit.cli.evaluate import print_results
    from foilkit.cli.options import same_named
    from foilkit.imports import import_answers
    from foilkit.scorers.cache import default_cache_dir
    from foilkit.scorers.options import JudgeOptions, ScoreOptions, judge_settings

    judge = judge_settings(
        ScoreOptions(**{f.name: getattr(args, f.name) for f in fields(JudgeOptions)})
    )

    results = import_answers(
        args.source,
        args.benchmark,
        out_dir=args.out,
        **same_named(args, "config annotations dataset label n_resamples bootstrap_seed overwrite"),
        judge=judge,
        judge_cache=str(Path(default_cache_dir()) / "judge"),
    )
    print_results(results, Path(args.out) / "report.md")
    return 0
