"""TOMATO's answers: ``src/parse_result.py`` ``pre_parser``'s rules (one letter, the whole
``"A: option"`` string, or ``Answer is: (A)``), and its gpt-4o-mini judge (``gpt_parser``),
which extracts the option letter from an answer the rules cannot read. Where that fails too,
TOMATO picks a random letter; foilkit records ``unparseable`` instead (a departure, counted
wrong). The prompt text is the published one, character for character.
"""

from __future__ import annotations

import ast
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


def option_letter(index: int) -> str:
    """The official letter of option ``index`` (``chr(65 + index)``)."""
    return chr(65 + index)


def lettered(options: Sequence[str]) -> dict[str, str]:
    """``options`` keyed by their official letters, A, B, ... in the order given (the prompts'
    ``index2ans``)."""
    return {option_letter(index): option for index, option in enumerate(options)}


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


#: The official prompt (``construct_prompt``), trailing spaces included; ``{options}`` is the
#: Python ``repr`` of the letter -> option dict (``index2ans``), as the f-string writes it.
PROMPT = (
    "You will be provided with {frames} separate frames uniformly sampled from a video, the "
    "frames are provided in chronological order of the video. Analyze these frames and provide "
    "the answer to the question about the video content. Answer the multiple-choice question "
    "about the video content. \n\n"
    "You must use these frames to answer the multiple-choice question; do not rely on any "
    "externel knowledge or commonsense. \n\n"
    "<question> \n{question} \n</question>\n\n"
    "<options> \n{options} \n</options>\n\n"
    "Even if the information in these separate frames is not enough to answer the question, "
    "PLEASE TRY YOUR BEST TO GUESS AN ANSWER WHICH YOU THINK WOULD BE THE MOST POSSIBLE ONE "
    "BASED ON THE QUESTION. \n\n"
    "DO NOT GENERATE ANSWER SUCH AS 'NOT POSSIBLE TO DETERMINE.' \n"
)

#: lmms-eval 0.7's ``tomato`` task's prompt (``lmms_eval/tasks/tomato/utils.py``
#: ``construct_prompt``): TOMATO's without the frame count ("frames uniformly sampled", no
#: "{frames} separate") and without the space after its first paragraph.
LMMS_EVAL_PROMPT = PROMPT.replace("{frames} separate frames", "frames").replace(
    "content. \n", "content.\n"
)
_LMMS_EVAL_ASKED = re.compile(
    r"<question> \n(?P<question>.*) \n</question>\n\n<options> \n(?P<options>\{.*\}) \n</options>",
    re.DOTALL,
)


def lmms_eval_tomato_prompt(question: str, options: Sequence[str]) -> str:
    """lmms-eval's ``tomato`` prompt asking ``question`` with ``options`` lettered A, B, ... in
    the order given (``tomato_doc_to_text``)."""
    return LMMS_EVAL_PROMPT.format(question=question, options=repr(lettered(options)))


def read_lmms_eval_tomato_prompt(prompt: str) -> tuple[str, tuple[str, ...]] | None:
    """The question and the options (in letter order) an lmms-eval ``tomato`` prompt asks, read
    from its ``<question>`` and ``<options>`` blocks (the options a Python dict of letter ->
    text); ``None`` where the prompt holds no such blocks."""
    found = _LMMS_EVAL_ASKED.search(prompt)
    if found is None:
        return None
    try:
        options = ast.literal_eval(found["options"])
    except (ValueError, SyntaxError):
        return None
    letters = (
        [option_letter(index) for index in range(len(options))] if isinstance(options, dict) else []
    )
    if (
        not letters
        or list(options) != letters
        or not all(isinstance(v, str) for v in options.values())
    ):
        return None
    return found["question"], tuple(options.values())


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
