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
