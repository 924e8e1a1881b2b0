"""TOMATO's answers: ``src/parse_result.py`` ``pre_parser``'s rules (one letter, the whole
``"A: option"`` string, or ``Answer is: (A)``), and its gpt-4o-mini judge (``gpt_parser``),
which extracts the option letter from an answer the rules cannot read. Where that fails too,
TOMATO picks a random letter; foilkit records ``unparseable`` instead (a departure, counted
wrong). The prompt text is the published one, character for character.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from foilkit.answers import (
    JUDGED,
    PARSED,
    REFUSED,
    UNPARSEABLE,
    AnswerParser,
    JudgeCase,
    JudgeProtocol,
    ParsedAnswer,
    chose,
    option_labels,
    refused,
)
from foilkit.builders.tomato.source import REFERENCE

_TOMATO_ANSWER_IS = re.compile(r"^Answer is:?[\(]?([A-Fa-f])[\)]?$")


def parse_tomato(
    answer: str | None, options: Sequence[str], labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """TOMATO ``parse_result.py`` ``pre_parser``: one letter (any case), the whole ``"A: text"``
    choice (compared with the answer in upper case, as there), or ``Answer is: (A)``."""
    if refused(answer):
        return ParsedAnswer(REFUSED)
    letters = option_labels(options, labels)
    answer = answer.strip()
    full = [f"{letter}: {text}" for letter, text in zip(letters, options)]
    match = _TOMATO_ANSWER_IS.match(answer)
    if len(answer) == 1 and answer.upper() in letters:
        return ParsedAnswer(PARSED, letters.index(answer.upper()))
    if answer.upper() in full:
        return chose(_letter_index(letters, answer[0].upper()))
    if match:
        return chose(_letter_index(letters, match.group(1).upper()))
    return ParsedAnswer(UNPARSEABLE)


def _letter_index(letters: Sequence[str], letter: str) -> int | None:
    """``letter``'s option, ``None`` when the question had no such option (TOMATO's check that
    the parsed letter is in ``all_choices``)."""
    return letters.index(letter) if letter in letters else None


#: TOMATO ``gpt_parser``'s prompt (its indentation and trailing spaces are the published ones).
TOMATO_EXTRACTION = (
    "You are given a response, a list of multiple-choice options, and a index2answer mapping. "
    "You are required to extract the letter option from the GPT. \n"
    "    \n"
    "    response: {response}\n"
    "\n"
    "    all_choices: {all_choices}\n"
    "\n"
    "    index2answer: {index2ans}\n"
    "\n"
    "Only output the single parsed letter from the response. No other texts are needed. \n"
    "\n"
    "If you think no options can match the index2answer dictionary, randomly select one "
    "letter. \n"
    "\n"
    "Your extracted letter is: \n"
)


def tomato_prompt(response: str, letters: Sequence[str], options: Sequence[str]) -> str:
    """The prompt TOMATO's ``gpt_parser`` sends: ``all_choices`` and ``index2ans`` written as
    Python writes a list and a dict in an f-string."""
    return TOMATO_EXTRACTION.format(
        response=response,
        all_choices=list(letters),
        index2ans=dict(zip(letters, options)),
    )


def tomato_letter(reply: str, letters: Sequence[str]) -> str | None:
    """TOMATO's check of ``gpt_parser``'s reply: the reply, as returned, is one of the letters
    (``None``: ask again)."""
    return reply if reply in letters else None


def _read_letter(reply: str, case: JudgeCase) -> tuple[str, int | None, str] | None:
    letter = tomato_letter(reply, case.labels)
    return None if letter is None else (JUDGED, case.labels.index(letter), letter)


#: The answer parsers, by name (the ``parser`` protocol setting, ``--parser``).
PARSERS: dict[str, AnswerParser] = {"tomato": parse_tomato}
#: The official judges, by the answer parser whose misses they read.
JUDGES: dict[str, JudgeProtocol] = {
    "tomato": JudgeProtocol(
        name="tomato",
        model="gpt-4o-mini",
        reference=f"{REFERENCE} src/parse_result.py gpt_parser, parse_result (MAX_ITER 5)",
        prompt=lambda case: tomato_prompt(case.answer, case.labels, case.options),
        read=_read_letter,
        decoding={"max_tokens": 16, "temperature": 0.0},
        max_asks=5,
        unsettled="an answer the judge cannot settle is unparseable, not a random letter",
    ),
}
