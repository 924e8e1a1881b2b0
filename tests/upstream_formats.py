"""The upstream annotation formats of the four benchmarks: one valid record of each, for tests
that write faulty or tiny annotation files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from foilkit.builders import build

# One valid record per benchmark, in its upstream format (the faults are injected into copies).
VITATECS = {
    "src_dataset": "MSRVTT",
    "video_name": "video1.mp4",
    "caption": "a man opens a door",
    "counterfactual": "a man closes a door",
    "aspect": "Direction",
}
VILMA = {
    "dataset": "QUVA",
    "youtube_id": None,
    "video_file": "000_rope.mp4",
    "start_time": 30,
    "end_time": 90,
    "time_unit": "pts",
    "caption": "a man skips rope exactly three times.",
    "foils": ["... nine times."],
    "mturk": {"foil": 0, "caption": 3, "other": 0},
    "proficiency": {
        "caption": "a man skips rope.",
        "foils": ["a man climbs a rope."],
        "human": {"foil": 0, "caption": 1, "other": 0},
    },
}
RTIME = {
    "temporal": True,
    "reverse": True,
    "forward_captions": ["a door opens"],
    "reverse_captions": ["a door closes"],
    "forward_rewrites": ["the door is opened"],
    "reverse_rewrites": ["the door is closed"],
    "url": "https://example.org/1",
}
TSV_HEADER = "clip\tending0\tending1\tending2\tending3\tending4\tlabel\n"

# benchmark -> (config, the annotation file the faults go into)
FILES = {
    "vitatecs": ("direction", "Direction.jsonl"),
    "vilma": ("action_counting_easy", "counting-easy-spelled-pts.json"),
    "rtime": ("hard", "test.json"),
    "contrast_sets": ("verb_lm", "msrvtt_lm_contrast_set.tsv"),
}


class Annotations:
    """Annotation files of each benchmark written under ``folder``, and builds from them."""

    records: ClassVar[dict[str, dict]] = {"vitatecs": VITATECS, "vilma": VILMA, "rtime": RTIME}

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def write(self, benchmark: str, content: str | bytes) -> Path:
        """The folder holding ``content`` as the benchmark's annotation file (RTime: a valid
        ``valid.json`` beside it)."""
        folder = self.folder / benchmark
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / FILES[benchmark][1]
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        if benchmark == "rtime":
            (folder / "valid.json").write_text(json.dumps({"1": RTIME}))
        return folder

    def build(self, benchmark: str, folder: Path, **options: Any):
        """The benchmark's config built from ``folder`` (text-only without ``video_root``)."""
        options.setdefault("on_missing", "keep")
        return build(
            benchmark,
            FILES[benchmark][0],
            annotations=folder,
            cache_dir=str(self.folder / "datasets-cache"),
            **options,
        )


# Vinoground's vinoground.csv (Hub: HanSolo9682/Vinoground): one row per pair, numbered from 0.
# The official scorers read index, major, minor (categories joined by ';', possibly empty),
# pos_cap and neg_cap; the source-clip columns between them are carried but not read. Captions
# are quoted where they hold commas, as the csv module (and pandas) write them.
VINOGROUND_HEADER = (
    "index",
    "major",
    "minor",
    "pos_vid",
    "pos_start",
    "pos_end",
    "pos_cap",
    "neg_vid",
    "neg_start",
    "neg_end",
    "neg_cap",
)
VINOGROUND_ROWS = (
    (
        "0",
        "action",
        "",
        "QINQHWlQIzU",
        "5",
        "15",
        "a toddler plays, then picks up a toy",
        "QINQHWlQIzU",
        "10",
        "20",
        "a toddler picks up a toy, then plays",
    ),
    (
        "1",
        "object",
        "interaction;cyclical",
        "pVD1fx2Hb0c",
        "0",
        "10",
        'the person says "go" before the ball rolls',
        "MX1hcxfiltU",
        "32",
        "42",
        'the ball rolls before the person says "go"',
    ),
    (
        "2",
        "viewpoint",
        "spatial",
        "tT1NpFX14LE",
        "25",
        "30",
        "the camera shows the cockpit then the outside",
        "tT1NpFX14LE",
        "35",
        "38",
        "the camera shows the outside then the cockpit",
    ),
    (
        "3",
        "action",
        "interaction",
        "aB3dEfGhIjK",
        "0",
        "5",
        "a dog runs and then sits",
        "aB3dEfGhIjK",
        "5",
        "10",
        "a dog sits and then runs",
    ),
)


def vinoground_csv(rows=VINOGROUND_ROWS, header=VINOGROUND_HEADER) -> str:
    """``vinoground.csv`` holding ``rows`` in the upstream format."""
    import csv
    import io

    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()
