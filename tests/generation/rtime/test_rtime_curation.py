"""Curation files: written for a person, edited as a person would, read back with checks."""

from __future__ import annotations

import csv
import json

import pytest

from foilkit.generation.rtime.activities import ActivityPair
from foilkit.generation.rtime.curation import read_curation, write_curation
from foilkit.generation.rtime.enrichment import ActivityPhrase

SEED = ActivityPair("open [something]", "close [something]", source="RTime Fig. 1")
NEW = [
    ActivityPair("zip [something]", "unzip [something]", origin="llm", model="m", round=1),
    ActivityPair("smile", "frown", origin="llm", model="m", round=1),
    ActivityPair("climb up [something]", "climb down [something]", origin="llm", round=2),
]


def _candidates():
    return [(True, SEED)] + [(None, pair) for pair in NEW]


def _edit_csv(path, edit, delimiter=","):
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter=delimiter))
    columns = list(rows[0])
    rows = edit(rows)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, delimiter=delimiter)
        writer.writeheader()
        writer.writerows(rows)


def _decide(rows, decisions):
    for row, decision in zip(rows, decisions):
        row["keep"] = decision
    return rows


@pytest.mark.parametrize("suffix", [".csv", ".tsv"])
def test_a_spreadsheet_round_trip_keeps_the_decisions_and_edits(tmp_path, suffix) -> None:
    path = write_curation(_candidates(), tmp_path / f"pairs{suffix}")
    delimiter = "\t" if suffix == ".tsv" else ","
    header = path.read_text().splitlines()[0].split(delimiter)
    assert header[:3] == ["keep", "activity", "opposite"] and "request_key" in header

    def curate(rows):
        rows = _decide(rows, ["yes", "Y", "no", "keep"])  # the seed stays; "smile" goes
        rows[1]["activity"] = "Zip up [something]"  # an edit
        rows.append(
            {
                **rows[0],
                "activity": "stand up",
                "opposite": "sit down",
                "origin": "human",
                "source": "",
                "notes": "added by the curator",
            }
        )
        return rows

    _edit_csv(path, curate, delimiter)
    curated = read_curation(path)
    assert curated.kind == "activity_pairs" and curated.dropped == 1 and curated.undecided == 0
    kept = {(p.activity, p.opposite, p.origin, p.round, p.notes) for p in curated.kept}
    assert kept == {
        ("open [something]", "close [something]", "seed", None, ""),
        ("zip up [something]", "unzip [something]", "llm", 1, ""),
        ("climb up [something]", "climb down [something]", "llm", 2, ""),
        ("stand up", "sit down", "human", None, "added by the curator"),
    }
    assert next(p for p in curated.kept if p.origin == "seed").source == "RTime Fig. 1"


def test_a_jsonl_round_trip(tmp_path) -> None:
    path = write_curation(_candidates(), tmp_path / "pairs.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["keep"] for r in records] == ["yes", "", "", ""] and records[1]["round"] == 1
    records[1]["keep"], records[2]["keep"], records[3]["keep"] = True, False, "n"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    curated = read_curation(path)
    assert [p.activity for p in curated.kept] == ["open [something]", "zip [something]"]
    assert curated.dropped == 2


def test_undecided_rows_are_refused_with_their_lines_unless_a_policy_is_given(tmp_path) -> None:
    path = write_curation(_candidates(), tmp_path / "pairs.csv")
    with pytest.raises(ValueError, match=r"3 row\(s\) have no keep decision \(lines 3, 4, 5\)"):
        read_curation(path)
    dropped = read_curation(path, undecided="drop")
    assert [p.origin for p in dropped.kept] == ["seed"] and dropped.dropped == 0
    assert dropped.undecided == 3
    assert len(read_curation(path, undecided="keep").kept) == 4


def test_a_bad_keep_value_names_file_and_line(tmp_path) -> None:
    path = write_curation(_candidates(), tmp_path / "pairs.csv")
    _edit_csv(path, lambda rows: _decide(rows, ["yes", "maybe", "no", "no"]))
    with pytest.raises(ValueError, match=r"pairs\.csv:3: keep must be yes or no, got 'maybe'"):
        read_curation(path)


def test_an_edit_that_makes_a_duplicate_or_an_empty_side_is_refused(tmp_path) -> None:
    path = write_curation(_candidates(), tmp_path / "pairs.csv")

    def duplicate(rows):
        rows = _decide(rows, ["yes"] * 4)
        rows[3]["activity"], rows[3]["opposite"] = "close sth", "open sth"
        return rows

    _edit_csv(path, duplicate)
    with pytest.raises(ValueError, match=r"pairs\.csv:5: repeats the kept row on line 2"):
        read_curation(path)

    def emptied(rows):
        rows = _decide(rows, ["yes"] * 4)
        rows[2]["opposite"] = "Smile."
        return rows

    _edit_csv(path, emptied)
    with pytest.raises(ValueError, match=r"pairs\.csv:4: .*same activity on both sides"):
        read_curation(path)


def test_phrases_are_told_apart_from_pairs_by_their_columns(tmp_path) -> None:
    phrases = [
        (None, ActivityPhrase("open [something]", "close [something]", "laptop", model="m")),
        (None, ActivityPhrase("stand up", "sit down")),
    ]
    path = write_curation(phrases, tmp_path / "phrases.csv")

    def curate(rows):
        rows = _decide(rows, ["yes", "yes"])
        rows[0]["phrase"] = "open a laptop"  # the curator fixes the query's wording
        return rows

    _edit_csv(path, curate)
    curated = read_curation(path)
    assert curated.kind == "activity_phrases"
    assert [(p.phrase, p.opposite_phrase) for p in curated.kept] == [
        ("open a laptop", "close laptop"),
        ("stand up", "sit down"),
    ]


def test_files_of_no_known_kind_or_format_are_refused(tmp_path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("keep,caption\nyes,a dog\n")
    with pytest.raises(ValueError, match=r"columns \['keep', 'caption'\] fit no curation kind"):
        read_curation(path)
    path.write_text("activity,opposite\nopen,close\n")
    with pytest.raises(ValueError, match="no 'keep' column"):
        read_curation(path)
    with pytest.raises(ValueError, match=r"ends in one of \['.csv', '.jsonl', '.tsv'\]"):
        write_curation(_candidates(), tmp_path / "pairs.xlsx")
    with pytest.raises(ValueError, match="one curation file holds one kind"):
        write_curation(
            [(None, SEED), (None, ActivityPhrase("stand up", "sit down"))], tmp_path / "mixed.csv"
        )
