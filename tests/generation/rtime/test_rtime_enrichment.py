"""Step 2: concrete objects for [something], from the scripted LLM over real HTTP."""

from __future__ import annotations

import pytest

from foilkit.generation.rtime.activities import ActivityPair
from foilkit.generation.rtime.enrichment import (
    ActivityPhrase,
    directed_activities,
    enrich_activities,
    read_object,
)
from foilkit.generation.rtime.replies import ReplyFormatError


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("A laptop", "laptop"),
        ("the backpack (a school bag)", "backpack"),
        ("suitcase - easy to film", "suitcase"),
        ("Water bottle.", "water bottle"),
        ("jacket: a common garment", "jacket"),
        ("a very long description of an object that is not a noun phrase", None),
        ("[something]", None),
        ("", None),
        (["laptop"], None),
    ],
)
def test_read_object(raw, expected) -> None:
    assert read_object(raw) == expected


def test_every_activity_is_enriched_in_both_directions_once() -> None:
    pairs = [ActivityPair("zip sth", "unzip sth"), ActivityPair("unzip sth", "zip up sth")]
    assert directed_activities(pairs) == [
        ("zip [something]", "unzip [something]"),
        ("unzip [something]", "zip [something]"),
        ("unzip [something]", "zip up [something]"),
        ("zip up [something]", "unzip [something]"),
    ]


def test_enrichment_fills_the_slot_on_both_sides_with_provenance(llm_server, chat_client) -> None:
    server = llm_server()
    pairs = [
        ActivityPair("zip [something]", "unzip [something]"),
        ActivityPair("stand up", "sit down"),
    ]
    enrichment = enrich_activities(chat_client(server), pairs, objects=3)
    by_activity: dict[str, list[ActivityPhrase]] = {}
    for phrase in enrichment.phrases:
        by_activity.setdefault(phrase.activity, []).append(phrase)
    zips = by_activity["zip [something]"]
    # "Jacket" repeats "A jacket"; the backpack loses its explanation
    assert [(p.object, p.phrase, p.opposite_phrase) for p in zips] == [
        ("jacket", "zip jacket", "unzip jacket"),
        ("backpack", "zip backpack", "unzip backpack"),
        ("suitcase", "zip suitcase", "unzip suitcase"),
    ]
    assert [p.phrase for p in by_activity["unzip [something]"]] == [
        "unzip jacket",
        "unzip backpack",
        "unzip suitcase",
    ]
    # activities without a slot are phrases as they are, without asking the LLM
    assert [(p.phrase, p.opposite_phrase, p.model) for p in by_activity["stand up"]] == [
        ("stand up", "sit down", "")
    ]
    assert len(server.requests) == 2 and enrichment.short == ()
    prompts = [body["messages"][-1]["content"] for body in server.requests]
    assert any("Its temporally opposite activity: unzip [something]" in p for p in prompts)
    assert all("List 3 different" in p for p in prompts)
    assert zips[0].model == "scripted-llm" and len(zips[0].prompt_hash) == 64


def test_fewer_objects_than_asked_are_reported(llm_server, chat_client) -> None:
    server = llm_server()
    enrichment = enrich_activities(
        chat_client(server), [ActivityPair("zip [something]", "unzip [something]")], objects=4
    )
    assert enrichment.short == (("zip [something]", 3), ("unzip [something]", 3))


def test_a_reply_without_objects_names_the_activity(llm_server, chat_client) -> None:
    server = llm_server(responder=lambda body: "[something] | [something]")
    with pytest.raises(ReplyFormatError, match=r"objects for 'fold \[something\]'"):
        enrich_activities(chat_client(server), [ActivityPair("fold sth", "unfold sth")])


def test_a_phrase_with_a_slot_needs_an_object() -> None:
    with pytest.raises(ValueError, match="has a \\[something\\] slot but no object"):
        ActivityPhrase("fold [something]", "unfold [something]")
