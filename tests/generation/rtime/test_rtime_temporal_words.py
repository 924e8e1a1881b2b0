"""The temporal lexicon: phrase matching, dropped and reversed classes, the packaged data file."""

from __future__ import annotations

import json

import pytest

from foilkit.generation.rtime.temporal_words import (
    DEFAULT_TEMPORAL_WORDS,
    Phrase,
    TemporalLexicon,
    Token,
)


def _tokens(text: str, pos: str = "VERB") -> list[Token]:
    return [Token(word, word.rstrip("s"), pos) for word in text.lower().split()]


@pytest.mark.parametrize(
    ("phrase", "text", "found"),
    [
        ("take off", "she takes off her shoes", True),
        ("take off", "she takes her shoes off", False),
        ("take * off", "she takes her shoes off", True),
        ("take * off", "she takes her new red shoes off", False),  # 4 tokens > max_gap 3
        ("take * off", "she takes off her shoes", True),  # a gap may be empty
        ("open/VERB", "he opens the box", True),
        ("open/ADJ", "he opens the box", False),
        ("bottom * top", "from the bottom to the top", True),
        ("bottom * top", "from the top to the bottom", False),
    ],
)
def test_phrase_matching(phrase: str, text: str, found: bool) -> None:
    assert Phrase.parse(phrase, where="test").occurs_in(_tokens(text), max_gap=3) is found


@pytest.mark.parametrize("bad", ["* off", "take *", "take * * off", "", "/VERB"])
def test_malformed_phrases_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="lexicon.json"):
        Phrase.parse(bad, where="lexicon.json")


def test_a_lexicon_file_with_errors_names_itself(tmp_path) -> None:
    path = tmp_path / "words.json"
    path.write_text('{"classes": {"open": {"words": ["open"]}}, "opposites": [["open", "shut"]]}')
    with pytest.raises(ValueError, match=r"words\.json: opposites name an unknown class 'shut'"):
        TemporalLexicon.load(path)
    path.write_text('{"classes": {"open": {"words": []}}}')
    with pytest.raises(ValueError, match=r"words\.json: class 'open' needs a non-empty 'words'"):
        TemporalLexicon.load(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match=r"words\.json: not valid JSON"):
        TemporalLexicon.load(path)


def test_dropped_and_reversed_classes_on_hand_made_tokens() -> None:
    lexicon = TemporalLexicon.from_record(
        {
            "classes": {
                "sequence": {"words": ["then"], "also_accepts": ["afterwards"]},
                "open": {"words": ["open"]},
                "close": {"words": ["close", "shut"]},
            },
            "opposites": [["open", "close"]],
        }
    )
    caption = _tokens("he open the box then leaves")
    assert lexicon.violations(caption, _tokens("he open the box and afterwards leaves")) == []
    (dropped,) = lexicon.violations(caption, _tokens("he open the box and leaves"))
    assert str(dropped) == "drops 'sequence' (then)"
    shut = lexicon.violations(caption, _tokens("he shut the box then leaves"))
    assert [str(v) for v in shut] == [
        "drops 'open' (open)",
        "reverses 'open' into 'close' (shut)",
    ]
    # the caption's own opposite words are no reversal
    both = _tokens("he open the box then close it")
    assert lexicon.violations(both, _tokens("he open the box then close it again")) == []


def test_the_packaged_lexicon_loads_and_every_opposite_is_a_class() -> None:
    lexicon = TemporalLexicon.load()
    record = json.loads(DEFAULT_TEMPORAL_WORDS.read_text())
    assert lexicon.source == str(DEFAULT_TEMPORAL_WORDS)
    assert {"sequence", "start", "end", "simultaneity", "open", "close"} <= lexicon.classes.keys()
    assert len(lexicon.opposites["open"]) == 1 and len(record["opposites"]) >= 20
    # only the order words must be kept; a direction word may be paraphrased away
    assert lexicon.must_keep == {"sequence", "start", "end", "until", "simultaneity"}


def test_must_keep_names_known_classes() -> None:
    record = {"classes": {"then": {"words": ["then"]}}, "must_keep": ["then", "later"]}
    with pytest.raises(ValueError, match=r"must_keep names unknown classes \['later'\]"):
        TemporalLexicon.from_record(record)
    assert TemporalLexicon.from_record({"classes": record["classes"]}).must_keep == {"then"}


@pytest.mark.parametrize(
    ("caption", "rewrite", "expected"),
    [
        ("A man opens the door and then walks in.", "After opening the door, a man walks in.", []),
        (
            "A man opens the door and then walks in.",
            "A man opens the door, walking in.",
            ["drops 'sequence' (then)"],
        ),
        (
            "A man opens the door and then walks in.",
            "A man closes the door and then walks in.",
            ["reverses 'open' into 'close' (close/VERB)"],
        ),
        ("The red curtain of a stage rose up.", "The stage's red curtain ascended.", []),
        (
            "The red curtain of a stage rose up.",
            "The stage's red curtain fell down.",
            ["reverses 'upward' into 'downward' (fall/VERB)"],
        ),
        ("A boy takes his shoes off.", "A boy removes his shoes.", []),
        (
            "A person turned on the oven.",
            "Someone switched the oven off.",
            ["reverses 'turn_on' into 'turn_off' (switch * off)"],
        ),
        ("A man walks to the open door.", "A man walks to the door.", []),  # "open": adjective
    ],
)
def test_the_packaged_lexicon_on_rtime_like_captions(tokenize, caption, rewrite, expected) -> None:
    lexicon = TemporalLexicon.load()
    caption_tokens, rewrite_tokens = tokenize([caption, rewrite])
    assert [str(v) for v in lexicon.violations(caption_tokens, rewrite_tokens)] == expected
