"""``foilkit metrics``: list foilkit's evaluate modules, compute one on a JSON file, push one to the
Hub as an evaluate Space.

``push`` sends the metric's folder as it is (module, metric card, ``app.py``,
``requirements.txt``) plus the shared files it imports (``_common.py``, ``_ranking.py``, links in
the checkout), read through the links, so the Space is a self-contained evaluate module:
``evaluate.load("<user>/<metric>")`` works there as ``evaluate.load("metrics/<metric>")`` does here.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from foilkit.folders import METRIC_DRY_RUN, claim_folder

#: what ``push`` never uploads from a metric folder.
_SKIPPED = ("__pycache__",)


def space_files(name: str) -> dict[str, Path]:
    """The files of metric ``name``'s Space: path in the repo -> local file (links resolved)."""
    from foilkit.metrics import metric_dir

    folder = metric_dir(name)
    files = {
        path.relative_to(folder).as_posix(): path.resolve()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and not any(part in _SKIPPED for part in path.parts)
    }
    missing = [
        required for required in (f"{name}.py", "README.md", "app.py") if required not in files
    ]
    if missing:
        raise FileNotFoundError(f"{folder} lacks {missing}: it is not a complete evaluate module")
    return files


def space_commit(name: str, repo_id: str):
    """The commit that publishes metric ``name`` as the evaluate Space ``repo_id``."""
    from foilkit.hub_commit import RepoCommit

    return RepoCommit(
        repo_id,
        "space",
        space_files(name),
        f"foilkit metric {name}",
        create_options={"space_sdk": "gradio"},
    )


def configure(parser: argparse.ArgumentParser) -> None:
    commands = parser.add_subparsers(dest="action", required=True, metavar="action")
    commands.add_parser("list", help="the metrics foilkit ships and where their folders are")
    compute = commands.add_parser(
        "compute", help="compute a metric on a JSON file of its arguments; print the flat result"
    )
    compute.add_argument("name", help="metric name (see 'foilkit metrics list')")
    compute.add_argument(
        "inputs",
        help='JSON object of the metric\'s keyword arguments, e.g. {"caption_scores": ...}',
    )
    push = commands.add_parser("push", help="upload a metric as a Hub evaluate Space")
    push.add_argument("name", help="metric name (see 'foilkit metrics list')")
    push.add_argument("repo", help="Space repo id, e.g. my-org/pairwise_foil_accuracy")
    push.add_argument("--private", action="store_true", help="create the Space as private")
    push.add_argument(
        "--dry-run",
        metavar="FOLDER",
        help="write the Space files and the commit here; send nothing",
    )


def run(args: argparse.Namespace) -> int:
    from foilkit.metrics import METRICS, metric_dir, metric_function

    if args.action == "list":
        for name in METRICS:
            print(f"{name:<32} {metric_dir(name)}")
        return 0
    if args.action == "compute":
        arguments = json.loads(Path(args.inputs).read_text(encoding="utf-8"))
        if not isinstance(arguments, dict):
            raise ValueError(f"{args.inputs}: expected a JSON object of keyword arguments")
        print(json.dumps(metric_function(args.name)(**arguments), indent=2))
        return 0
    commit = space_commit(args.name, args.repo)
    if args.dry_run:
        folder = claim_folder(args.dry_run, METRIC_DRY_RUN)  # foilkit.folders
        print(f"dry run: {commit.write_dry_run(folder, args.name)} holds what would be sent")
        return 0
    print(f"space commit: {commit.push(private=args.private or None)}")
    return 0
