"""VITATECS' answers, as lmms-eval's ``vitatecs`` task reads them (VITATECS published no code
for its video LLMs and its README points to lmms-eval): the rules of
``lmms_eval/tasks/vitatecs/utils.py`` ``vitatecs_process_results``, and its ChatGPT judge for
answers the rules cannot read (a correctness question in its own wording). The prompt texts
are the published ones, character for character.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from foilkit.answers import (
    GPT35_JUDGE,
    LETTERS,
    PARSED,
    REFUSED,
    UNPARSEABLE,
    AnswerParser,
    ChoicePrompt,
    JudgeProtocol,
    ParsedAnswer,
    option_labels,
    read_correctness,
    refused,
    spoken,
)
from foilkit.protocol import LMMS_EVAL_REPO


def parse_vitatecs(
    answer: str | None, options: Sequence[str], labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """lmms-eval's VITATECS rules (see the module docstring); the answer is read as given."""
    if refused(answer):
        return ParsedAnswer(REFUSED)
    letters = option_labels(options, labels)
    lowered = answer.lower()
    matching = [(text[:-1] if text.endswith(".") else text).lower() for text in options]
    inside = [index for index, text in enumerate(matching) if text in lowered]
    if len(inside) == 1:
        return ParsedAnswer(PARSED, inside[0])
    if answer in letters:
        return ParsedAnswer(PARSED, letters.index(answer))
    for index, letter in enumerate(letters):
        if answer.startswith((f"{letter}.", f"{letter})", f"({letter})")):
            return ParsedAnswer(PARSED, index)
    return ParsedAnswer(UNPARSEABLE)


#: lmms-eval ``vitatecs_process_results``' ``base_prompt`` (one line, a final space).
LMMS_EVAL_VITATECS_CORRECTNESS = (
    "You will receive a caption matching question, the ground-truth answer and the prediction "
    "from a question answering (QA) model. Your task is to determine whether QA model "
    "prediction is correct, based on the question and ground-truth answer. If the prediction "
    'is correct, respond "Correct". If the prediction is incorrect, respond "Incorrect". '
)


def lmms_eval_vitatecs_question(options: Sequence[str]) -> str:
    """lmms-eval's ``format_question_and_answer`` question for ``options`` in the order shown
    (``process_option_for_question``: a full stop added, then ``capitalize``)."""
    listed = "".join(
        f" \n({letter}) {_capitalised(option)}" for letter, option in zip("ABCDEFGHIJ", options)
    )
    return f"Which of the following best describes the content of the video:{listed}"


def lmms_eval_vitatecs_order(caption: str, counterfactual: str) -> tuple[int, int]:
    """The order lmms-eval's ``format_question_and_answer`` shows a row's texts in, as indices
    of ``(caption, counterfactual)``: ``random.seed`` of the texts' character codes summed,
    modulo 100, then the caption first where ``random.random() > 0.5``. Fixed per row, so every
    lmms-eval run asks a row in the same order."""
    seed = sum(ord(character) for character in caption + counterfactual) % 100
    return (0, 1) if random.Random(seed).random() > 0.5 else (1, 0)


def lmms_eval_vitatecs_answer(options: Sequence[str], true: int) -> str:
    """lmms-eval's ground-truth answer: ``"(B) " + option_b`` for the true option shown second."""
    return f"({'ABCDEFGHIJ'[true]}) {_capitalised(options[true])}"


def _capitalised(option: str) -> str:
    return (option if option.endswith(".") else option + ".").capitalize()


def lmms_eval_vitatecs_prompt(options: Sequence[str], true: int, prediction: str) -> str:
    """The user turn lmms-eval's ``vitatecs`` task sends its judge about ``prediction`` (as
    generated: lmms-eval does not strip it)."""
    return (
        f"{LMMS_EVAL_VITATECS_CORRECTNESS}\n\nCaption Matching Question: "
        f"{lmms_eval_vitatecs_question(options)}\n\nGround-Truth Answer: "
        f"{lmms_eval_vitatecs_answer(options, true)}\n\nModel Prediction: {prediction}"
    )


# --- the questions --------------------------------------------------------------------------

#: VITATECS' paper, Table 11: a system prompt ("You are given a short video clip and two
#: sentences. ..."), then the question with the options inline after the video.
CHOICE_SYSTEM = (
    "You are given a short video clip and {count} sentences. "
    "Select the sentence that best describes the content of the video."
)
CHOICE_QUESTION = (
    "Which of the following best describes the content of the video: {options} "
    "Respond with a single letter ({letters})."
)
LMMS_EVAL_QUESTION = (
    "Which of the following best describes the content of the video:{options}\n"
    "Please response with a single letter ({letters}):"
)


def choice_question(options: Sequence[str]) -> str:
    """VITATECS' multiple-choice question for ``options`` in the order given."""
    letters = LETTERS[: len(options)]
    listed = " ".join(f"({letter}) {option}" for letter, option in zip(letters, options))
    return CHOICE_QUESTION.format(options=listed, letters=spoken(letters))


def lmms_eval_question(options: Sequence[str]) -> str:
    """lmms-eval's VITATECS question (``format_question_and_answer`` + its ``post_prompt``) for
    ``options`` in the order given; each option ends with a full stop and is ``capitalize``d."""
    letters = LETTERS[: len(options)]
    written = [
        (option if option.endswith(".") else option + ".").capitalize() for option in options
    ]
    listed = "".join(f" \n({letter}) {option}" for letter, option in zip(letters, written))
    return LMMS_EVAL_QUESTION.format(options=listed, letters=spoken(letters))


#: The choice prompts, by name (the ``prompt`` protocol setting): VITATECS' paper's (the
#: default of choice and generate modes) and lmms-eval's ``vitatecs`` task's (no system prompt,
#: options on their own lines, capitalised with a full stop).
PROMPTS: dict[str, ChoicePrompt] = {
    "vitatecs": ChoicePrompt(CHOICE_QUESTION, choice_question, CHOICE_SYSTEM),
    "lmms-eval": ChoicePrompt(LMMS_EVAL_QUESTION, lmms_eval_question),
}
#: The answer parsers, by name (the ``parser`` protocol setting, ``--parser``).
PARSERS: dict[str, AnswerParser] = {"vitatecs": parse_vitatecs}
#: The official judges, by the answer parser whose misses they read.
JUDGES: dict[str, JudgeProtocol] = {
    "vitatecs": JudgeProtocol(
        name="lmms_eval_vitatecs",
        reference=f"{LMMS_EVAL_REPO} lmms_eval/tasks/vitatecs/utils.py vitatecs_process_results, "
        "get_eval_result",
        prompt=lambda case: lmms_eval_vitatecs_prompt(case.options, case.true, case.answer),
        read=read_correctness,
        max_asks=11,
        **GPT35_JUDGE,
    ),
}
