"""Exemplar sets: the shipped seeds, sampling, label merging, files, the held-out split."""

from __future__ import annotations

import random

import pytest

from foilkit.builders.vitatecs import ASPECTS
from foilkit.generation.vitatecs.exemplars import (
    ExemplarSets,
    LabelledPair,
    PairExemplar,
    split_heldout,
)


@pytest.fixture(scope="module")
def seeds():
    return ExemplarSets.load()


def test_seed_sets_hold_every_aspect_and_the_papers_examples(seeds):
    counts = seeds.counts()
    assert all(counts[f"positive.{aspect}"] >= 6 for aspect in ASPECTS)  # 6 per prompt
    assert all(len(seeds.na[aspect]) >= 2 for aspect in ASPECTS)  # 2 per prompt
    assert counts["negative"] > 0 and counts["total"] == sum(
        counts[k] for k in ("positive", "negative", "na")
    )
    fig2 = [e for e in seeds.positive["direction"] if e.source == "paper Fig. 2"]
    assert [(e.caption, e.counterfactual) for e in fig2] == [
        ("a toy egg is being unboxed", "a toy egg is being put in a box")
    ]
    assert {e.label for e in seeds.negative} == {"invalid"}


def test_demonstrations_are_drawn_from_the_aspect_reproducibly(seeds):
    first = seeds.demonstrations("sequence", random.Random(3), positives=6, na=2)
    again = seeds.demonstrations("sequence", random.Random(3), positives=6, na=2)
    assert first == again
    positives = {(e.caption, e.counterfactual) for e in seeds.positive["sequence"]}
    na = {e.caption for e in seeds.na["sequence"]}
    assert sum((d.caption, d.counterfactual) in positives for d in first) == 6
    assert sum(d.counterfactual is None and d.caption in na for d in first) == 2
    other = seeds.demonstrations("sequence", random.Random(4), positives=6, na=2)
    assert other != first


def test_small_sets_give_what_they_have_and_empty_ones_fail(seeds):
    tiny = ExemplarSets(positive={"type": seeds.positive["type"][:2]}, negative=(), na={})
    assert len(tiny.demonstrations("type", random.Random(0))) == 2
    with pytest.raises(ValueError, match="no positive exemplars for aspect 'direction'"):
        tiny.demonstrations("direction", random.Random(0))


def test_labels_grow_the_sets_and_bump_the_version(seeds):
    direction = seeds.positive["direction"][0]
    labelled = [
        LabelledPair("a man opens a box", "a man closes a box", "direction", "direction"),
        LabelledPair("a man opens a box", "a man opens a crate", "invalid", "direction", "static"),
        LabelledPair("a picture of a lake", "a picture of a sea", "na", "type"),
        # a seed positive relabelled as a negative moves out of X+
        LabelledPair(direction.caption, direction.counterfactual, "invalid", "direction"),
        # an existing positive confirmed changes nothing
        LabelledPair(
            seeds.positive["type"][0].caption,
            seeds.positive["type"][0].counterfactual,
            "type",
            "type",
        ),
    ]
    grown, added = seeds.with_labels(labelled)
    assert added == {"positive": 1, "negative": 1, "na": 1, "moved": 1, "unchanged": 1, "valid": 1}
    assert grown.version == seeds.version + 1
    assert len(grown.positive["direction"]) == len(seeds.positive["direction"])  # +1 -1
    assert direction.id not in {e.id for e in grown.positive["direction"]}
    assert direction.id in {e.id for e in grown.negative}
    assert grown.na["type"][-1].caption == "a picture of a lake"
    assert grown.counts()["total"] == seeds.counts()["total"] + 3


def test_labels_may_put_a_pair_under_another_aspect(seeds):
    grown, _ = seeds.with_labels(
        [LabelledPair("a dog sits down", "a dog lies down", "type", "direction")]
    )
    assert grown.positive["type"][-1].counterfactual == "a dog lies down"
    assert grown.positive["type"][-1].aspect == "type"


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_save_and_load_round_trip(seeds, tmp_path, suffix):
    grown, _ = seeds.with_labels([LabelledPair("a b c", "a c b", "sequence", "sequence")])
    path = grown.save(tmp_path / f"exemplars{suffix}")
    assert ExemplarSets.load(path) == grown


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "positive:\n  speed:\n    - {caption: a, counterfactual: b}\n",
            r"unknown aspect\(s\) \['speed'\]",
        ),
        ("positive:\n  type:\n    - {caption: a}\n", r"positive.type\[0\]: field 'counterfactual'"),
        (
            "negative:\n  - {caption: a, counterfactual: b, aspect: speed}\n",
            r"negative\[0\]: aspect 'speed'",
        ),
        ("version: 0\n", "'version' must be a positive integer"),
    ],
)
def test_bad_exemplar_files_name_the_entry(tmp_path, text, message):
    path = tmp_path / "exemplars.yaml"
    path.write_text("format: foilkit.vitatecs.exemplars/1\n" + text)
    with pytest.raises(ValueError, match=message):
        ExemplarSets.load(path)


def test_heldout_is_the_papers_100_per_class_capped_at_half_a_class(seeds):
    pairs = seeds.pairs()
    train, heldout = split_heldout(pairs)
    assert len(train) + len(heldout) == len(pairs)
    for label in {p.label for p in pairs}:
        size = sum(p.label == label for p in pairs)
        assert sum(p.label == label for p in heldout) == min(100, size // 2)
    many = [PairExemplar(f"caption {i}", f"counterfactual {i}", "type") for i in range(300)]
    _, heldout_many = split_heldout(many)
    assert len(heldout_many) == 100  # the paper's size once a class has enough pairs
    assert split_heldout(pairs, per_class=0) == (pairs, [])


def test_heldout_pairs_stay_held_out_as_the_sets_grow(seeds):
    pairs = seeds.pairs()
    _, heldout = split_heldout(pairs)
    more = pairs + [PairExemplar(f"caption {i}", f"counterfactual {i}", "type") for i in range(20)]
    _, heldout_more = split_heldout(more, keep=[p.id for p in heldout])
    assert {e.id for e in heldout} <= {e.id for e in heldout_more}


def test_labels_already_in_the_sets_are_not_new(seeds):
    known = seeds.positive["direction"][0]
    labelled = [
        LabelledPair(known.caption, known.counterfactual, "direction", "direction"),
        LabelledPair("a man sits down", "a man stands up", "direction", "direction"),
        LabelledPair("a man sits down", "a man stands up", "direction", "direction"),
    ]
    grown, added = seeds.with_labels(labelled)
    assert (added["positive"], added["unchanged"], added["valid"]) == (1, 2, 1)
    assert grown.counts()["total"] == seeds.counts()["total"] + 1
