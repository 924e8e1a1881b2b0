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


# --- benchmarks whose annotations live only on the Hub: their upstream formats, as fixtures ------

#: VELOCITI (katha-ai-iiith/VELOCITI): rows of the table ``load_dataset(...)["test"]`` gives
#: (``data.py`` reads test_name, video_id, event, pos, neg).
VELOCITI_ROWS = [
    {
        "test_name": "chrono",
        "video_id": "v_-0Qs5OQb1Ew_seg_10_20",
        "event": "Ev1-Ev2",
        "pos": "a man opens the door and then walks into the room",
        "neg": "a man walks into the room and then opens the door",
    },
    {
        "test_name": "chrono",
        "video_id": "v_1aBcD2eFg3h_seg_30_40",
        "event": "Ev2-Ev3",
        "pos": "a woman picks up a cup and then drinks from it",
        "neg": "a woman drinks from a cup and then picks it up",
    },
    {
        "test_name": "agent_random",
        "video_id": "v_-0Qs5OQb1Ew_seg_10_20",
        "event": "Ev1",
        "pos": "a man opens the door",
        "neg": "a dog opens the door",
    },
    {
        "test_name": "action_adv",
        "video_id": "v_1aBcD2eFg3h_seg_30_40",
        "event": "Ev3",
        "pos": "a woman slowly drinks from a cup",
        "neg": "a woman quickly drinks from a cup",
    },
]


def write_velociti(folder: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    """A clone of the VELOCITI Hub repository's annotation table: parquet under ``data/``, as
    ``datasets``' ``push_to_hub`` lays a ``test`` split out; returns the folder."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / "data" / "test-00000-of-00001.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(VELOCITI_ROWS if rows is None else rows), path)
    return folder


def temporalbench_question(idx: str, video: str, a: str, b: str, gt: str, **fields: Any) -> dict:
    """One question of ``temporalbench_short_qa.json`` as published (the dataset card's example:
    a header line, the options ``A.`` and ``B.``, the instruction line)."""
    return {
        "idx": idx,
        "video_name": video,
        "question": f"Which caption best describes this video?\nA. {a} \nB. {b}\n"
        "Answer with the option's letter from the given choices directly.",
        "GT": gt,
        "dataset": fields.pop("dataset", "Charades"),
        "category": fields.pop("category", "Action Effector"),
        **fields,
    }


_CHARADES = "short_video/Charades/EEVD3_start_11.4_end_16.9.mp4"
_COIN = "short_video/COIN/abc123_start_2.0_end_8.5.mp4"
TEMPORALBENCH_QUESTIONS = [
    temporalbench_question(
        f"{_CHARADES}_0",
        _CHARADES,
        "A person picks up a fruit with his left hand.",
        "A person picks up a fruit with his right hand.",
        "B",
    ),
    temporalbench_question(
        f"{_CHARADES}_1",
        _CHARADES,
        "A person tosses the fruit twice.",
        "A person tosses the fruit once.",
        "A",
        category="Action Frequency",
    ),
    temporalbench_question(
        f"{_COIN}_0",
        _COIN,
        "A hand turns the screw clockwise.",
        "A hand turns the screw counterclockwise.",
        "A",
        dataset="COIN",
        category="Motion Direction/Orientation",
    ),
]


def write_temporalbench(folder: Path, questions: list[dict[str, Any]] | None = None) -> Path:
    """A clone of microsoft/TemporalBench's ``temporalbench_short_qa.json`` (a JSON list);
    returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    data = TEMPORALBENCH_QUESTIONS if questions is None else questions
    (folder / "temporalbench_short_qa.json").write_text(json.dumps(data, indent=1))
    return folder


# Vinoground's question files (Hub: HanSolo9682/Vinoground, read by get_score_all.py and the LLM
# scripts of Vinoground/Vinoground@1543a2a): vinoground_textscore.json asks about each video
# (``vinoground_videos/<i>_pos.mp4`` / ``_neg.mp4``) which caption fits it, and
# vinoground_videoscore.json asks about the pair's concatenated video
# (``vinoground_videos_concated/``) which segment a caption describes; ``idx`` is ``<i>_pos`` /
# ``<i>_neg``, ``GT`` the right letter. The files are published on the Hub only: their wording is
# the one lmms-eval's first vinoground task (a72a9c0e, written by the benchmark's first author)
# spelled out before it switched to reading these files, and the one later papers print from
# them ("First segment (before black frame)"). The LLM scripts append VINOGROUND_SCRIPT_SUFFIX.
VINOGROUND_SCRIPT_SUFFIX = "\nPlease only output one English character."


def vinoground_text_item(idx: str, first: str, second: str, gt: str) -> dict[str, str]:
    """One item of ``vinoground_textscore.json``: captions ``first`` (A) and ``second`` (B)."""
    return {
        "idx": idx,
        "video_name": f"vinoground_videos/{idx}.mp4",
        "question": f"Which caption best describes this video?\nA. {first}\nB. {second}\n"
        "Answer with the option's letter from the given choices directly.",
        "GT": gt,
    }


def vinoground_video_item(idx: str, caption: str, video_name: str, gt: str) -> dict[str, str]:
    """One item of ``vinoground_videoscore.json``: which segment of ``video_name`` (two videos
    with two seconds of black between them) shows ``caption``."""
    return {
        "idx": idx,
        "video_name": video_name,
        "question": "Which video segment matches this caption? Note: The video contains two "
        f"segments separated by a 2-second black frame.\nCaption: {caption}\n"
        "A. First segment (before black frame)\nB. Second segment (after black frame)\n"
        "Answer with the option's letter from the given choices directly.",
        "GT": gt,
    }
