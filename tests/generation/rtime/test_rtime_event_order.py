"""The event-order check: order reversals rejected without the opposite caption (issue 36)."""

from __future__ import annotations

import pytest

from foilkit.generation.rtime.event_order import spacy_event_parser
from foilkit.generation.rtime.rewrites import ORDER_REASON, RewriteFilter
from foilkit.generation.rtime.temporal_words import TemporalLexicon

# Real RTime test captions (shared/data/rtime/test.json) and the two reversals of them:
# "before"/"after" swapped, and "A, then B" told as "B and A"; beside each, a rewrite that
# restructures the sentence and keeps the order (which the check must keep).
BEFORE = (
    "A man with a long beard sits in the car and shows the car keys to the camera before "
    "turning his head to move the visor."
)
AFTER = (
    "A maintenance engineer sits at a white workbench and takes off the auxiliary equipment on "
    "his hands after finishing his work."
)
THEN = "The woman untied the brown ball of thread and then wrapped it back around."
CASES = [
    (BEFORE, BEFORE.replace(" before ", " after "), False),
    (
        BEFORE,
        "Before turning his head to move the visor, a man with a long beard sits in the car and "
        "shows the car keys to the camera.",
        True,
    ),
    (AFTER, AFTER.replace(" after ", " before "), False),
    (
        AFTER,
        "After finishing his work, a maintenance engineer sits at a white workbench and takes "
        "off the auxiliary equipment on his hands.",
        True,
    ),
    (THEN, "The woman wrapped it back around and untied the brown ball of thread.", False),
    (
        THEN,
        "The woman untied the brown ball of thread, and after that wrapped it back around.",
        True,
    ),
    (
        "A man opens the door and then walks into the room.",
        "A man walks into the room after he opens the door.",
        True,
    ),
    (
        "A man opens the door and then walks into the room.",
        "A man walks into the room before he opens the door.",
        False,
    ),
]


@pytest.fixture(scope="module")
def order_filter(sentence_embedder, nlp) -> RewriteFilter:
    from foilkit.generation.rtime.temporal_words import spacy_tokenizer

    return RewriteFilter(
        sentence_embedder,
        lexicon=TemporalLexicon.load(),
        tokenize=spacy_tokenizer(nlp),
        order_parser=spacy_event_parser(nlp),
    )


def test_order_reversals_are_rejected_without_the_opposite_caption(order_filter) -> None:
    judged = order_filter.judge([(caption, [rewrite]) for caption, rewrite, _ in CASES])
    for (caption, rewrite, keeps), (verdict,) in zip(CASES, judged):
        by_order = [r for r in verdict.reasons if r.startswith(ORDER_REASON)]
        assert bool(by_order) is not keeps, (caption, rewrite, verdict.reasons)
        assert verdict.accepted is keeps, (caption, rewrite, verdict.reasons)
    (swapped,) = judged[0]
    assert f"{ORDER_REASON} (caption: show before turn)" in swapped.reasons
    # Without the event-order check, the swap passes every other check (the finding).
    from dataclasses import replace

    (without,) = replace(order_filter, order_parser=None).judge([(BEFORE, [CASES[0][1]])])
    assert without[0].accepted


def test_the_order_is_read_from_the_structure(nlp) -> None:
    parse = spacy_event_parser(nlp)
    door, fronted, nominal, repeated = parse(
        [
            "A man opens the door and then walks into the room.",
            "After opening the door, a man walks into the room.",
            "An athlete gasps after a barbell workout.",
            "The woman puts the gift box in the carton first, and then puts the protective "
            "material (the airbag) in as well.",
        ]
    )
    assert door.before == fronted.before == {("open", "walk")}
    assert nominal.before == {("workout", "gasp")}
    assert repeated.before == {("put:box", "put:material")}  # one verb, two events
    assert door.reversals(parse(["A man walks into the room and opens the door."])[0]) == [
        ("open", "walk")
    ]
