"""``foilkit push-results``: the command line of :mod:`foilkit.hub_results`."""

from __future__ import annotations

import argparse

from foilkit.cli.options import add_min_coverage, same_named
from foilkit.hub_results import RESULTS_LICENSE, prepare_upload, push_results, write_dry_run


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", help="a foilkit evaluate run folder")
    parser.add_argument(
        "--repo", required=True, help="dataset repo id for the per-sample scores and results"
    )
    parser.add_argument(
        "--model-repo",
        help="model repo that gets .eval_results/<benchmark>[_<control>].yaml (as a pull request)",
    )
    parser.add_argument(
        "--dataset-id",
        help="Hub id of the benchmark dataset (the one with eval.yaml); default: the benchmark's "
        "canonical repository (its spec's hub_repo), else the dataset the run "
        "loaded when that is a Hub id",
    )
    parser.add_argument(
        "--dataset-revision",
        help="commit of the benchmark dataset that was scored (default: the commit the run "
        "loaded, when it loaded that dataset from the Hub)",
    )
    parser.add_argument(
        "--direct",
        action="store_true",
        help="commit to the model repo's main branch instead of opening a pull request",
    )
    parser.add_argument(
        "--model-index",
        action="store_true",
        help="also write the legacy model-index metadata on the model card",
    )
    parser.add_argument(
        "--license",
        default=RESULTS_LICENSE,
        help="licence of the results dataset (default: %(default)s)",
    )
    parser.add_argument("--private", action="store_true", help="create the dataset repo as private")
    parser.add_argument(
        "--dry-run",
        metavar="FOLDER",
        help="write the files and commit operations here (model repo files under FOLDER/model/); "
        "send nothing",
    )
    add_min_coverage(
        parser,
        "with --model-repo, a run below it is refused (its values are no leaderboard result)",
    )


def run(args: argparse.Namespace) -> int:
    upload = prepare_upload(
        args.run_dir,
        args.repo,
        create_pr=not args.direct,
        **same_named(
            args, "model_repo dataset_id dataset_revision model_index license min_coverage"
        ),
    )
    if args.dry_run:
        print(f"dry run: {write_dry_run(upload, args.dry_run)} holds what would be sent")
        return 0
    for name, url in push_results(upload, private=args.private or None).items():
        print(f"{name}: {url}")
    return 0
