"""Vinoground's questions and answers. Its questions, each with the suffix its LLM scripts append
(``eval/llava-onevision.py``): the text-score question (which caption a video shows: the
``vinoground`` choice prompt) and the video-score question about a pair's two videos joined by
two seconds of black (which segment a caption describes: the ``JOINED_VIDEO`` question). Its
answers: ``get_score_all.py`` (lmms-eval's ``vinoground_aggregate_results`` alike) reads the
answer's first characters, in any case, as the letter (``response[:len(GT)].lower() ==
GT.lower()``); nothing is stripped, so ``" A"`` or ``"The answer is A"`` choose nothing, as they
are wrong there.
"""

from __future__ import annotations

from collections.abc import Sequence

from foilkit.answers import (
    JOINED_VIDEO,
    REFUSED,
    AnswerParser,
    CaptionQuestion,
    ChoicePrompt,
    ParsedAnswer,
    chose,
    lettered,
    option_labels,
    refused,
)

SUFFIX = "\nPlease only output one English character."
TEXT_QUESTION = (
    "Which caption best describes this video?\n{options}\n"
    "Answer with the option's letter from the given choices directly." + SUFFIX
)
#: The video-score question; the answer ``A`` names the segment before the black frames.
VIDEO_QUESTION = CaptionQuestion(
    "Which video segment matches this caption? Note: The video contains two segments separated "
    "by a 2-second black frame.\nCaption: {caption}\n{options}\n"
    "Answer with the option's letter from the given choices directly." + SUFFIX,
    options=("First segment (before black frame)", "Second segment (after black frame)"),
    gap_seconds=2.0,  # the question says "2-second black frame"
)


def text_question(options: Sequence[str]) -> str:
    """The text-score question for ``options`` (captions) in the order given."""
    return TEXT_QUESTION.format(options=lettered(options))


def parse_vinoground(
    answer: str | None, options: Sequence[str], labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """Vinoground ``get_score_all.py``: the option whose label the answer starts with, any
    case, nothing stripped first (its scripts read ``response[:len(GT)]``)."""
    if refused(answer):
        return ParsedAnswer(REFUSED)
    letters = option_labels(options, labels)
    chosen = [i for i, label in enumerate(letters) if answer[: len(label)].lower() == label.lower()]
    return chose(chosen[0] if len(chosen) == 1 else None)


def shown_captions(question: str) -> tuple[str, str] | None:
    """The two captions a text-score question shows as ``A.`` and ``B.`` (its first line
    starting with each), in that order; ``None`` where it shows no such pair."""
    lines = question.splitlines()
    shown = [next((ln[3:] for ln in lines if ln.startswith(f"{x}. ")), None) for x in "AB"]
    return None if None in shown else (shown[0], shown[1])


#: The answer parsers, by name (the ``parser`` protocol setting, ``--parser``).
PARSERS: dict[str, AnswerParser] = {"vinoground": parse_vinoground}
#: The choice prompts, by name (the ``prompt`` protocol setting, ``--prompt``).
PROMPTS: dict[str, ChoicePrompt] = {"vinoground": ChoicePrompt(TEXT_QUESTION, text_question)}
#: The questions about one caption, by the role the scorer asks them in.
QUESTIONS: dict[str, CaptionQuestion] = {JOINED_VIDEO: VIDEO_QUESTION}
