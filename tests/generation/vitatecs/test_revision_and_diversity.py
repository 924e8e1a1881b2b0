"""Human revision files (export, edit, import) and the diversity selection of finalisation."""

from __future__ import annotations

import csv
import json

import pytest
from vitatecs_candidates import make_candidate

from foilkit.generation.vitatecs.diversity import change_signatures, select_diverse
from foilkit.generation.vitatecs.exemplars import ExemplarSets
from foilkit.generation.vitatecs.generate import ACCEPTED, REJECTED
from foilkit.generation.vitatecs.prompt import load_aspects
from foilkit.generation.vitatecs.revision import export_revision, read_labels


def _jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _candidate(i, caption, counterfactual, aspect, status, label, margin=0.5):
    scores = {"filter": {"margin": margin}}
    return make_candidate(i, caption, counterfactual, aspect, status, label=label, scores=scores)


CANDIDATES = [
    _candidate(1, "a man opens a box", "a man closes a box", "direction", ACCEPTED, "direction"),
    _candidate(2, "a man lifts a cup", "a man drops a cup", "direction", ACCEPTED, "type", 0.7),
    _candidate(3, "a dog runs", "a dog is not running", "direction", REJECTED, "invalid"),
]


def test_export_shows_what_annotators_need(tmp_path):
    aspects = load_aspects()
    paths = export_revision(CANDIDATES, aspects, tmp_path / "revision")
    with open(paths["csv"], newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["id"] for row in rows] == ["1:direction:0", "2:direction:0"]  # accepted only
    first = rows[0]
    assert (first["caption"], first["counterfactual"], first["label"]) == (
        "a man opens a box",
        "a man closes a box",
        "direction",
    )
    assert first["aspect_definition"] == f"Direction: {aspects['direction'].definition}"
    assert rows[1]["label"] == "type" and rows[1]["target_aspect"] == "direction"
    assert _jsonl(paths["jsonl"]) == [
        {**row, "filter_margin": float(row["filter_margin"])} for row in rows
    ]
    sheet = paths["instructions"].read_text()
    assert "`invalid` (or `negative`)" in sheet and aspects["type"].definition in sheet
    everything = export_revision(
        CANDIDATES, aspects, tmp_path / "all", statuses=(ACCEPTED, REJECTED)
    )
    assert len(_jsonl(everything["jsonl"])) == 3


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_edited_labels_come_back_into_the_exemplar_sets(tmp_path, suffix):
    paths = export_revision(CANDIDATES, load_aspects(), tmp_path / "revision")
    if suffix == "csv":
        with open(paths["csv"], newline="") as handle:
            rows = list(csv.DictReader(handle))
        rows[0]["label"], rows[1]["label"] = "Direction", "negative"
        rows[1]["note"] = "drop is not the reverse of lift"
        with open(paths["csv"], "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    else:
        rows = _jsonl(paths["jsonl"])
        rows[0]["label"], rows[1]["label"] = "direction", "invalid"
        rows[1]["note"] = "drop is not the reverse of lift"
        paths["jsonl"].write_text("".join(json.dumps(row) + "\n" for row in rows))
    labelled = read_labels(paths[suffix], source="round 1")
    assert [(p.label, p.aspect, p.source) for p in labelled] == [
        ("direction", "direction", "round 1"),
        ("invalid", "direction", "round 1"),
    ]
    grown, added = ExemplarSets.load().with_labels(labelled)
    assert added["positive"] == 1 and added["negative"] == 1
    assert grown.negative[-1].reason == "drop is not the reverse of lift"
    assert grown.positive["direction"][-1].counterfactual == "a man closes a box"


def test_unlabelled_rows_are_skipped_and_bad_labels_named(tmp_path):
    path = tmp_path / "labels.csv"
    header = "caption,counterfactual,target_aspect,label\n"
    path.write_text(header + "a,b,type,\na,c,type,skip\na,d,type,speed\n")
    with pytest.raises(ValueError, match=r"labels.csv:4: label 'speed' is not an aspect"):
        read_labels(path)
    path.write_text(header + "a,b,type,\na,c,direction,na\n")
    assert [(p.label, p.aspect) for p in read_labels(path)] == [("na", "direction")]
    path.write_text("caption,label\na,type\n")
    with pytest.raises(ValueError, match=r"labels.csv:2: missing column\(s\)"):
        read_labels(path)


def test_change_signatures_with_and_without_verbs(nlp):
    pairs = [
        ("a man opens a door", "a man closes a door"),
        ("a car drives fast", "a car drives slowly"),
        ("a girl jumps and sits", "a girl sits and jumps"),
    ]
    assert change_signatures(pairs, nlp) == ["verb:open>close", "word:fast>slowly", "order"]
    assert change_signatures(pairs[:1]) == ["word:opens>closes"]


def test_selection_prefers_rare_changes_and_caps_them():
    # (caption id, signature, score): open>close is common, push>pull rare.
    items = [
        ("1", "verb:open>close", 0.9),
        ("1", "verb:push>pull", 0.4),
        ("2", "verb:open>close", 0.8),
        ("3", "verb:open>close", 0.7),
        ("4", "verb:open>close", 0.6),
        ("4", "verb:lift>drop", 0.5),
    ]
    kept = select_diverse(
        items, signature=lambda x: x[1], group=lambda x: x[0], score=lambda x: x[2]
    )
    assert [item for item, keep in zip(items, kept) if keep] == [
        items[1],
        items[2],
        items[3],
        items[5],
    ]
    capped = select_diverse(
        items,
        signature=lambda x: x[1],
        group=lambda x: x[0],
        score=lambda x: x[2],
        max_per_signature=1,
    )
    assert [item for item, keep in zip(items, capped) if keep] == [items[1], items[2], items[5]]
    two = select_diverse(
        items, signature=lambda x: x[1], group=lambda x: x[0], score=lambda x: x[2], per_group=2
    )
    assert sum(two) == 6
