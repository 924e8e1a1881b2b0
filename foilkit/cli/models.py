"""``foilkit models``: the model families foilkit scores with the installed transformers.

One row per model type transformers lists as a video-capable image-text-to-text model, plus the
video-text and image-text encoders foilkit claims: the adapter that claims it, its modes, its
tiny twin, whether the frames' times reach the processor, the frames it expects, and its status
(``tested``, ``refused`` with foilkit's reason, or ``untested``). The table is
:mod:`foilkit.synthetic.models.families`; nothing is downloaded.

foilkit models
foilkit models --status untested
foilkit models --json
"""

from __future__ import annotations

import argparse
import json

STATUSES = ("tested", "refused", "untested")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--status", choices=STATUSES, help="list only the families with this status"
    )
    parser.add_argument("--json", action="store_true", help="print the table as JSON")


def run(args: argparse.Namespace) -> int:
    from foilkit.progress import LIBRARY_NOISE, TWIN_CONFIG_NOISE, library_noise_dropped
    from foilkit.synthetic.models.families import as_json, counts, families
    from foilkit.synthetic.models.families import note as family_note

    with library_noise_dropped((*LIBRARY_NOISE, *TWIN_CONFIG_NOISE)):  # the twins' configs' notes
        rows = families()
    tally = counts(rows)
    if args.status is not None:
        rows = [row for row in rows if row.status == args.status]
    if args.json:
        print(json.dumps({"counts": tally, "families": as_json(rows)}, indent=2))
        return 0
    header = ("model_type", "adapter", "modes", "twin", "status")
    table = [header] + [
        (
            row.model_type,
            row.adapter or "-",
            ",".join(row.modes) or "-",
            row.twin or "-",
            row.status,
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    for line, row in zip(table, [None, *rows], strict=True):
        text = "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        note = "" if row is None else family_note(row)
        print(f"{text}  {note}".rstrip())
    print(
        f"{tally['families']} families: {tally['tested']} tested, {tally['refused']} refused, "
        f"{tally['untested']} untested"
    )
    return 0
