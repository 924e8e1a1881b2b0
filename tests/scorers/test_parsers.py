"""Every answer parser reads model-style answers as its official code does (a port of it:
``tests/answer_references.py``), and records what it cannot read instead of guessing."""

from __future__ import annotations

import pytest
from answer_references import (
    tempcompass_caption_matching,
    tempcompass_multi_choice,
    tempcompass_yes_no,
    tomato_pre_parser,
    vitatecs_lmms_eval,
)
from references import vinoground_response_correct

from foilkit.scorers.parsers import (
    PARSED,
    REFUSED,
    UNPARSEABLE,
    ParsedAnswer,
    get_parser,
    parser_names,
)

CAPTION = "A man is pushing a cart."
FOIL = "A man is pulling a cart."
#: answers as video LLMs write them: letters in every dress, both letters, lower case, the
#: option's text instead of its letter, refusals, and nothing at all
ANSWERS = [
    "A",
    "B",
    "a",
    " B",
    "A.",
    "B. A man is pulling a cart.",
    "A) pushing",
    "(A)",
    "(B) A man is pulling a cart",
    "Answer: (B)",
    "The answer is A.",
    "A or B",
    "A man is pushing a cart.",
    "a man is pulling a cart",
    "The video shows a man is pushing a cart, not a man is pulling a cart.",
    "I'm sorry, I cannot determine the content of the video.",
    "C",
    "A</s>",
    "",
    "   ",
]


def _official_outcome(matched: bool, answer: str | None) -> str:
    if not matched:
        return REFUSED if answer is None or not answer.strip() else UNPARSEABLE
    return PARSED


@pytest.mark.parametrize("answer", ANSWERS)
@pytest.mark.parametrize("caption_first", [True, False])
def test_vitatecs_parser_equals_lmms_eval(answer, caption_first):
    options = [CAPTION, FOIL] if caption_first else [FOIL, CAPTION]
    truth = "(A) " + options[0] if caption_first else "(B) " + options[1]
    matched, rating = vitatecs_lmms_eval(answer, CAPTION, FOIL, truth)
    parsed = get_parser("vitatecs")(answer, options, None)
    assert parsed.outcome == _official_outcome(matched, answer)
    assert int(parsed.choice == options.index(CAPTION)) == rating


MULTI_OPTIONS = ["dunking a basketball", "dribbling a basketball", "passing a basketball"]
MULTI_ANSWERS = [
    *ANSWERS,
    "C. passing a basketball",
    "B. dribbling a basketball",
    "b",
    "D",
    "dunking a basketball",
    "Answer: (C)",
    None,
]


@pytest.mark.parametrize("answer", MULTI_ANSWERS)
@pytest.mark.parametrize("truth", [0, 2])
def test_tempcompass_multi_choice_parser_equals_the_official(answer, truth):
    matched, rating = tempcompass_multi_choice(answer, f"{'ABC'[truth]}. {MULTI_OPTIONS[truth]}")
    parsed = get_parser("tempcompass_multi_choice")(answer, MULTI_OPTIONS, None)
    if answer == "D":  # a letter the question did not offer: matched (rated 0) there, unparseable
        assert (matched, rating, parsed.outcome) == (True, 0, UNPARSEABLE)
    else:
        assert parsed.outcome == _official_outcome(matched, answer)
    assert int(parsed.choice == truth) == rating


@pytest.mark.parametrize(
    "answer",
    ["yes", "Yes.", "No, it moves left", "no", "Nothing moves", "yesterday", "Maybe", "", None]
    + ["The answer is yes", " YES</s>"],
)
@pytest.mark.parametrize("truth", ["yes", "no"])
def test_tempcompass_yes_no_parser_equals_the_official(answer, truth):
    matched, rating = tempcompass_yes_no(answer, truth)
    parsed = get_parser("tempcompass_yes_no")(answer, ("yes", "no"), None)
    assert parsed.outcome == _official_outcome(matched, answer)
    assert int(parsed.choice == ("yes", "no").index(truth)) == rating


CAPTION_MATCHING = [
    (["Sentence A", "Sentence B"], ["A man is dunking a basketball.", "A man is passing it."]),
    (["Option 1", "Option 2"], ["The man is dribbling a basketball.", "A man is dunking."]),
    (["Caption A", "Caption B"], ["Time flows: backwards", "Time flows: forwards"]),
]
CAPTION_ANSWERS = [
    "Sentence A",
    "Sentence B.",
    "A",
    "B.",
    "1",
    "Option 2",
    "Caption A: Time flows: backwards",
    "Time flows",
    "Sentence A: A man is dunking a basketball.",
    "A man is passing it.",
    "(B) A man is passing it.",
    "The man is dribbling a basketball.",
    "Sentence A is better",
    "I cannot tell",
    "",
    None,
]


@pytest.mark.parametrize("answer", CAPTION_ANSWERS)
@pytest.mark.parametrize("labels, options", CAPTION_MATCHING)
@pytest.mark.parametrize("truth", [0, 1])
def test_tempcompass_caption_matching_parser_equals_the_official(answer, labels, options, truth):
    lines = [f"{label}: {text}" for label, text in zip(labels, options)]
    question = "\n".join(["Which caption matches the video better?", *lines])
    matched, rating = tempcompass_caption_matching(answer, question, lines[truth])
    parsed = get_parser("tempcompass_caption_matching")(answer, options, labels)
    if answer == "Time flows" and labels[0] == "Caption A":
        # both sentences cut at ": " read as this: rated right there whatever the truth
        assert (matched, rating, parsed.outcome) == (True, 1, UNPARSEABLE)
        return
    assert parsed.outcome == _official_outcome(matched, answer)
    assert int(parsed.choice == truth) == rating


TOMATO_OPTIONS = ["Not moving at all", "Left.", "Right.", "First left then right.", "UP"]
TOMATO_ANSWERS = [
    *ANSWERS,
    "e",
    "Answer is: (C)",
    "Answer is B",
    "Answer is:(f)",
    "E: UP",
    "e: up",
    "B: Left.",
    "Answer: C",
    "C. Right.",
]


@pytest.mark.parametrize("answer", TOMATO_ANSWERS)
def test_tomato_parser_equals_the_official_pre_parser(answer):
    letters = list("ABCDE")
    official = tomato_pre_parser(answer, letters, dict(zip(letters, TOMATO_OPTIONS)))
    parsed = get_parser("tomato")(answer, TOMATO_OPTIONS, None)
    if official in letters:
        assert parsed == ParsedAnswer(PARSED, letters.index(official))
    else:  # TOMATO asks gpt-4o-mini, then guesses: foilkit records it
        assert parsed.outcome in (UNPARSEABLE, REFUSED)
        assert parsed.outcome == _official_outcome(False, answer)


@pytest.mark.parametrize("answer", [*ANSWERS, "b. the second", "Answer: A", "\nA"])
@pytest.mark.parametrize("truth", ["A", "B"])
def test_vinoground_parser_equals_get_score_all(answer, truth):
    """An answer chooses the key's option exactly when get_score_all.py counts it right."""
    options = ["First segment (before black frame)", "Second segment (after black frame)"]
    parsed = get_parser("vinoground")(answer, options, None)
    assert (parsed.choice == "AB".index(truth)) == vinoground_response_correct(answer, truth)
    if parsed.outcome != PARSED:  # wrong there whatever the key; nothing chosen here
        assert not any(vinoground_response_correct(answer, key) for key in "AB")
    assert parsed.outcome == (REFUSED if not answer.strip() else parsed.outcome)


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("Yes", ParsedAnswer(PARSED, 0)),
        ("**No**, it does not.", ParsedAnswer(PARSED, 1)),
        ('"yes."', ParsedAnswer(PARSED, 0)),
        ("Nothing happens", ParsedAnswer(UNPARSEABLE)),
        ("I think yes", ParsedAnswer(UNPARSEABLE)),
        ("", ParsedAnswer(REFUSED)),
    ],
)
def test_yes_no_reads_the_first_word(answer, expected):
    assert get_parser("yes_no")(answer, ("yes", "no"), None) == expected


def test_parsers_are_registered_and_unknown_names_fail():
    assert set(parser_names()) >= {
        "vitatecs",
        "tempcompass_multi_choice",
        "tempcompass_yes_no",
        "tempcompass_caption_matching",
        "tomato",
        "vinoground",
        "yes_no",
    }
    with pytest.raises(ValueError, match="unknown answer parser 'vitatec'.*'vitatecs'"):
        get_parser("vitatec")
    with pytest.raises(ValueError, match="needs options 'yes' and 'no'"):
        get_parser("yes_no")("yes", ("true", "false"), None)
