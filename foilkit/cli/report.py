"""``foilkit report RUN_DIR [RUN_DIR ...]``: rebuild ``report.html`` from run folders.

One run folder: its own page (``RUN_DIR/report.html``). Several: a side-by-side page in
``--out``, the items on which the runs disagree first (what ``foilkit compare`` and the demo
write). A ``foilkit leaderboard`` folder (``leaderboard.csv``): ``leaderboard.html``, its
ranked tables and plot. Nothing is re-scored: the page reads ``results.json`` and
``scores/<config>.parquet`` and decodes the thumbnails' frames from the videos.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from foilkit.cli.options import add_video_root
from foilkit.folders import SIDE_BY_SIDE, claim_folder
from foilkit.html_report import MAX_THUMBNAILS


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_dirs", nargs="+", metavar="RUN_DIR", help="foilkit evaluate run folders"
    )
    parser.add_argument(
        "--out",
        help="folder of the side-by-side page of several runs (required with several RUN_DIRs)",
    )
    parser.add_argument("--title", default="foilkit report", help="side-by-side page title")
    # as in score/evaluate: one name, one meaning (the default here: the exported dataset's videos/)
    add_video_root(parser)
    parser.add_argument("--videos", dest="video_root", action="append", help=argparse.SUPPRESS)
    parser.add_argument(
        "--max-thumbnails",
        type=int,
        default=MAX_THUMBNAILS,
        help="items that get frame thumbnails, most informative first (default: %(default)s)",
    )


def run(args: argparse.Namespace) -> int:
    from foilkit.html_report import write_run_html, write_side_by_side_html
    from foilkit.leaderboard import write_leaderboard_html
    from foilkit.run import RunFolder

    if args.max_thumbnails < 0:
        raise ValueError(f"--max-thumbnails must be >= 0, got {args.max_thumbnails}")
    started = time.perf_counter()
    folder = Path(args.run_dirs[0])
    if (
        len(args.run_dirs) == 1
        and (folder / "leaderboard.csv").is_file()
        and not RunFolder(folder).is_run()
    ):
        page = write_leaderboard_html(folder)
    elif len(args.run_dirs) == 1 and args.out is None:
        page = write_run_html(
            args.run_dirs[0], videos=args.video_root, max_thumbnails=args.max_thumbnails
        )
    elif args.out is None:
        raise ValueError(f"{len(args.run_dirs)} run folders need --out for the side-by-side page")
    else:
        claim_folder(args.out, SIDE_BY_SIDE)  # new, empty or foilkit's (foilkit.folders)
        page = write_side_by_side_html(
            args.run_dirs,
            args.out,
            title=args.title,
            videos=args.video_root,
            max_thumbnails=args.max_thumbnails,
        )
    print(
        f"report: {page} ({page.stat().st_size / 1e6:.2f} MB, {time.perf_counter() - started:.1f} "
        "s)"
    )
    return 0
