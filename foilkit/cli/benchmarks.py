"""``foilkit benchmarks``: the benchmarks ``foilkit evaluate`` knows, their configs, row counts
and the video layout each expects under ``--video-root``.

Row counts come from the annotation files themselves, read by each benchmark's builder (the rows
a build keeps before looking for videos), and only from a local copy: ``--annotations FOLDER``
with one sub-folder per benchmark (``FOLDER/vitatecs/``, ``FOLDER/vilma/``, ... as the copies in
``../shared/data`` are laid out). Nothing is downloaded; without a copy the counts are left out.

foilkit benchmarks
foilkit benchmarks vitatecs rtime --annotations ../shared/data
foilkit benchmarks --annotations ../shared/data --json
"""

from __future__ import annotations

import argparse
import json
import tempfile
import textwrap
from pathlib import Path
from typing import Any

from foilkit.builders import BENCHMARKS


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "names",
        nargs="*",
        metavar="benchmark",
        help=f"benchmarks to list (default: all of {', '.join(BENCHMARKS.names())})",
    )
    parser.add_argument(
        "--annotations",
        metavar="FOLDER",
        help="local annotation files, one sub-folder per benchmark (FOLDER/vitatecs/, "
        "FOLDER/vilma/, ...): count each config's rows from them (nothing is downloaded)",
    )
    parser.add_argument("--json", action="store_true", help="print the listing as JSON")


def benchmark_listing(name: str, annotations: str | Path | None = None) -> dict[str, Any]:
    """What ``foilkit benchmarks`` says of benchmark ``name``: title, summary, its configs (each
    with its rows per split, or why they are not counted), what ``--config all`` evaluates, and
    the video layout its builder expects (``None``: no builder, read from an exported folder)."""
    from foilkit.builders import get_benchmark

    spec = get_benchmark(name)
    folder = None if annotations is None else Path(annotations).expanduser() / name
    configs = {}
    for config in spec.configs:
        rows, note = None, None
        if spec.builder is None:
            note = "read from an exported folder (--dataset)"
        elif folder is None:
            note = "pass --annotations to count"
        elif not folder.is_dir():
            note = f"no {folder}"
        else:
            rows, note = _count(spec.builder, config, folder)
        configs[config] = {"rows": rows, "note": note}
    layout = spec.video_layout or None
    return {
        "name": name,
        "title": spec.title,
        "summary": BENCHMARKS.summary(name),
        "split": spec.split,
        "all_configs": list(spec.all_configs),
        "configs": configs,
        "video_layout": None if layout is None else layout.replace("`", ""),
    }


def _count(builder: str, config: str, folder: Path) -> tuple[dict[str, int] | None, str | None]:
    """Rows per split of ``config`` from the files in ``folder``, or why they cannot be counted
    (a config built from a file the user brings, a file missing from the copy)."""
    from foilkit.builders import load_builder
    from foilkit.errors import USER_ERRORS

    with tempfile.TemporaryDirectory() as cache:  # the builder writes nothing; keep it so
        try:
            return load_builder(
                builder, config, annotations=folder, cache_dir=cache
            ).count_rows(), None
        except (*USER_ERRORS, LookupError) as error:
            first = " ".join(str(error).split()).split(": ", 1)[0].split(". ")[0]
            return None, f"not counted: {first}"


def _text(listing: dict[str, Any]) -> str:
    """One benchmark's listing as the command prints it."""
    lines = [f"{listing['name']}: {listing['summary']}"]
    width = max(len(config) for config in listing["configs"])
    for config, entry in listing["configs"].items():
        mark = "*" if config in listing["all_configs"] else " "
        if entry["rows"] is not None:
            rows = ", ".join(f"{split} {n:,} rows" for split, n in entry["rows"].items())
        else:
            rows = entry["note"]
        lines.append(f"  {mark} {config:<{width}}  {rows}")
    layout = listing["video_layout"] or "none: videos lie where the exported folder names them"
    lines.append(
        textwrap.fill(
            layout, 96, initial_indent="  videos under --video-root: ", subsequent_indent="    "
        )
    )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from foilkit.errors import UserError

    unknown = [name for name in args.names if name not in BENCHMARKS]
    if unknown:
        raise UserError(
            f"no benchmark {', '.join(map(repr, unknown))}; choose from "
            f"{', '.join(BENCHMARKS.names())}"
        )
    if args.annotations is not None and not Path(args.annotations).expanduser().is_dir():
        raise UserError(f"--annotations {args.annotations}: no such folder")
    listings = [benchmark_listing(name, args.annotations) for name in args.names or BENCHMARKS]
    if args.json:
        print(json.dumps(listings, indent=2))
        return 0
    print("\n\n".join(_text(listing) for listing in listings))
    print(
        "\n* evaluated by --config all (the default); rows: the annotation files' rows before "
        "videos are looked for (--on-missing skip drops those whose video is missing)"
    )
    return 0
