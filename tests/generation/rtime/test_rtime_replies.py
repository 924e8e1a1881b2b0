"""Reading list replies: numbering, bullets, JSON, fences, preambles; pairs in every spelling."""

from __future__ import annotations

import pytest

from foilkit.generation.llm import Completion, LLMResponseError
from foilkit.generation.rtime.replies import (
    ReplyFormatError,
    first_unique,
    list_items,
    parse_reply,
    read_pair,
    read_text,
)


@pytest.mark.parametrize(
    "reply",
    [
        "1. open the box\n2) close the box\n3 : fold it",
        "- open the box\n* close the box\n• fold it",
        'Here are three:\n\n"open the box"\n"close the box"\n\nfold it',
        '```json\n["open the box", "close the box", "fold it"]\n```',
        '{"rewrites": ["open the box", "close the box", "fold it"]}',
        "#1 open the box\n#2 close the box\n#3 fold it\n",
    ],
    ids=["numbered", "bullets", "preamble-quotes", "fenced-json", "json-object", "hash-numbers"],
)
def test_list_items_reads_every_list_style(reply: str) -> None:
    assert list_items(reply) == ["open the box", "close the box", "fold it"]


def test_a_numbered_item_keeps_numbers_inside_the_text() -> None:
    assert list_items("1. A man lifts 2 boxes.\n2. 3 dogs run.") == [
        "A man lifts 2 boxes.",
        "3 dogs run.",
    ]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("open [something] | close [something]", ("open [something]", "close [something]")),
        ("(plug in sth, unplug sth)", ("plug in sth", "unplug sth")),
        ("stand up <-> sit down", ("stand up", "sit down")),
        ("stand up vs. sit down", ("stand up", "sit down")),
        ("stand up / sit down", ("stand up", "sit down")),
        ("stand up \u2013 sit down", ("stand up", "sit down")),
        ("open/close", ("open", "close")),
        (["tie", "untie"], ("tie", "untie")),
        ({"activity": "tie", "opposite": "untie"}, ("tie", "untie")),
        ('"climb up" | "climb down"', ("climb up", "climb down")),
    ],
)
def test_read_pair_spellings(raw, expected) -> None:
    assert read_pair(raw) == expected


@pytest.mark.parametrize("raw", ["light a candle", "a |", ["a", "b", "c"], 7, {"x": 1}])
def test_read_pair_refuses_what_is_no_pair(raw) -> None:
    assert read_pair(raw) is None


def _completion(text: str) -> Completion:
    return Completion(
        texts=(text,), prompt_tokens=1, completion_tokens=1, cached=False, key="k" * 64
    )


def test_parse_reply_returns_items_and_unreadable_lines() -> None:
    reply = _completion("1. tie | untie\n2. just a sentence\n3. fold | unfold")
    items, unreadable = parse_reply(reply, read_pair, asked="pairs")
    assert items == [("tie", "untie"), ("fold", "unfold")]
    assert unreadable == ["just a sentence"]


def test_a_reply_without_any_item_names_the_request_and_the_ask() -> None:
    with pytest.raises(ReplyFormatError) as error:
        parse_reply(_completion("I'm sorry, I cannot help."), read_pair, asked="pairs, round 2")
    message = str(error.value)
    assert "k" * 64 in message and "pairs, round 2" in message and "cannot help" in message
    assert isinstance(error.value, LLMResponseError)


def test_read_text_and_first_unique() -> None:
    assert read_text("  ") is None and read_text(["a"]) is None and read_text("a") == "a"
    texts = ["A dog runs.", "a  dog runs", "The cat sits.", "A cat sleeps"]
    assert first_unique(texts, exclude=["a cat sleeps."]) == ["A dog runs.", "The cat sits."]
