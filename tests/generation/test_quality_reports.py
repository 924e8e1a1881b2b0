"""Quality reports (issue 36): counts on fixed samples that can be checked by hand."""

from __future__ import annotations

import json
import math

import pytest

from foilkit.generation.quality.report import KEEP, REJECT, QualityReport, sample
from foilkit.generation.quality.rtime_rewrites import (
    OPPOSITE_CAPTION,
    PUBLISHED,
    PUBLISHED_WITH_OPPOSITE,
    SWAPPED,
    THEN_AFTER_THAT,
    THEN_REORDERED,
    moved_clause,
    rewrite_quality,
    rule_rewrites,
    spacy_tagger,
    swapped_markers,
)

DOOR = "A man opens the door and then walks into the room."
DOOR_REVERSED = "A man walks backwards out of the room and then closes the door."
RECORDS = [
    {
        "forward_captions": [DOOR],
        "reverse_captions": [DOOR_REVERSED],
        "forward_rewrites": [
            "A man opens the door, then he walks into the room.",
            "Bright red apples are stacked in a wooden crate at the market.",
        ],
        "reverse_rewrites": ["Walking backwards out of the room, a man then shuts the door."],
    }
]


def test_the_report_counts_and_rates() -> None:
    report = QualityReport("a filter", "heldout")
    for accepted in (True, True, True, False):
        report.add("foil", KEEP, accepted, "kept foil")
    for accepted in (False, False, True):
        report.add("synonym", REJECT, accepted, "a synonym")
    totals = report.totals()
    assert (totals["positives"], totals["positives_kept"]) == (4, 3)
    assert (totals["negatives"], totals["negatives_rejected"]) == (3, 2)
    assert totals["rejection_recall"] == pytest.approx(2 / 3)
    assert totals["rejection_precision"] == pytest.approx(2 / 3)  # 2 of the 3 rejected
    assert report.kinds["synonym"].examples == ["a synonym"]  # the one wrongly accepted
    assert "recall 66.7%" in report.table() and "heldout" in report.table()
    json.dumps(report.to_dict())
    with pytest.raises(ValueError, match="kind 'foil' is labelled 'keep', not 'reject'"):
        report.add("foil", REJECT, True)
    assert math.isnan(QualityReport("empty", "heldout").totals()["rejection_recall"])


def test_samples_are_deterministic_by_seed() -> None:
    items = list(range(100))
    assert sample(items, 5, seed=3) == sample(items, 5, seed=3) != sample(items, 5, seed=4)
    assert sample(items, 5, seed=3) == sorted(sample(items, 5, seed=3))
    assert sample(items, None, seed=0) == items


def test_the_rules_make_labelled_rewrites(nlp) -> None:
    assert swapped_markers("He eats after a run.") == "He eats before a run."
    assert swapped_markers("After a run, he eats.") == "Before a run, he eats."
    assert swapped_markers("Cups slide one after another.") is None  # orders no events
    tag = spacy_tagger(nlp)
    assert moved_clause("He eats after a run.", tag(["He eats after a run."])[0]) == (
        "After a run, he eats."
    )
    made = {(m.kind, m.text) for m in rule_rewrites([DOOR, DOOR_REVERSED], tag)}
    assert made == {
        (THEN_AFTER_THAT, "A man opens the door, and after that walks into the room."),
        (THEN_REORDERED, "A man walks into the room and opens the door."),
        (THEN_AFTER_THAT, "A man walks backwards out of the room, and after that closes the door."),
        (THEN_REORDERED, "A man closes the door and walks backwards out of the room."),
    }


def test_the_rtime_report_on_a_fixed_video(sentence_embedder, nlp) -> None:
    """By hand: of the three published rewrites the apples fail the similarity; both rule
    rewrites that keep the order pass; the two 'B and A' reversals and the two opposite
    captions (open <-> close) are rejected. Positives 4/5 kept, negatives 4/4 rejected, and
    1 of the 5 rejections is a positive."""
    from foilkit.generation.rtime.event_order import spacy_event_parser
    from foilkit.generation.rtime.rewrites import RewriteFilter
    from foilkit.generation.rtime.temporal_words import TemporalLexicon, spacy_tokenizer

    rewrite_filter = RewriteFilter(
        sentence_embedder,
        lexicon=TemporalLexicon.load(),
        tokenize=spacy_tokenizer(nlp),
        order_parser=spacy_event_parser(nlp),
    )
    report = rewrite_quality(RECORDS, rewrite_filter, spacy_tagger(nlp), split="heldout")
    counts = {kind: (c.accepted, c.offered) for kind, c in report.kinds.items()}
    assert counts == {
        PUBLISHED: (2, 3),
        OPPOSITE_CAPTION: (0, 2),
        THEN_AFTER_THAT: (2, 2),
        THEN_REORDERED: (0, 2),
    }
    totals = report.totals()
    assert (totals["positives_kept"], totals["positives"]) == (4, 5)
    assert (totals["negatives_rejected"], totals["negatives"]) == (4, 4)
    assert totals["rejection_precision"] == pytest.approx(0.8)
    assert report.description[PUBLISHED_WITH_OPPOSITE] == {"offered": 3, "accepted": 2}
    assert SWAPPED not in counts  # no caption has "before"/"after"
