"""Answer parsers: which option a generated answer chose, as each benchmark's own code reads it.

A generative protocol asks a question with options and reads the model's free-text answer. The
benchmarks' own scripts turn that text into a decision with hand-written rules, then (some) ask
an LLM judge or guess when the rules fail. foilkit reproduces the rules exactly, as pure
functions registered by name, and never guesses: an answer the rules cannot read is recorded
``unparseable`` and counts as wrong (the official scripts' rating 0 when their judge is off:
TempCompass' ``--disable_llm``); an empty answer is ``refused`` (TempCompass' ``prediction is
None``: the model produced nothing) and counts as wrong too. Only where a judge is configured
(off by default) does the official LLM judge read what the rules miss
(:mod:`foilkit.scorers.judge`; outcome ``judged``).

Every parser takes the answer, the option texts in the order the question showed them, and the
labels the question gave them (``A``, ``B``, ... by default; TempCompass' caption matching
writes ``Sentence A`` or ``Option 1``), and returns a :class:`ParsedAnswer`: the outcome and
the chosen option's index. Each is tested against a port of the official function on real
model-style answers (``tests/answer_references.py``).

Registered parsers (:data:`PARSERS`):

``vitatecs``
    lmms-eval's ``vitatecs`` task (``lmms_eval/tasks/vitatecs/utils.py``,
    ``vitatecs_process_results``; VITATECS published no code for its video LLMs and its README
    points to lmms-eval): exactly one option's text (lower case, one final full stop dropped)
    inside the answer; else the answer is a letter, or starts with ``A.``, ``A)`` or ``(A)``.
    Two options in the reference; the same rules over more letters here.
``tempcompass_multi_choice``, ``tempcompass_yes_no``, ``tempcompass_caption_matching``
    TempCompass' ``eval_multi-choice.py``, ``eval_yes_no.py`` and ``eval_caption_matching.py``
    (llyx97/TempCompass@e1b4631) rule-based matching; their ChatGPT fallback only with a judge
    configured. A letter
    the question did not offer (``D`` of three options) is matched and rated 0 there, and
    ``unparseable`` here: wrong either way.
``tomato``
    TOMATO's ``src/parse_result.py`` ``pre_parser`` (yale-nlp/TOMATO@fe2025f): one letter, the whole
    ``"A: option"`` string, or ``Answer is: (A)``. Where it fails, TOMATO asks gpt-4o-mini and
    then picks a random letter; foilkit asks gpt-4o-mini's prompt only with a judge configured,
    and records ``unparseable`` instead of the random letter (a departure, counted wrong, where
    TOMATO's random pick is right one time in the number of options).
``tempcompass_captioning``
    TempCompass ``eval_captioning.py`` has no rules: every caption goes to its LLM judge, which
    answers the video's multi-choice question from it (:mod:`foilkit.scorers.judge`). Without a
    judge every caption is ``unparseable``; ``foilkit evaluate`` refuses captioning then.
``vinoground``
    Vinoground's ``get_score_all.py`` (Vinoground/Vinoground@1543a2a; lmms-eval's
    ``vinoground_aggregate_results`` alike): the answer's first characters, in any case, are
    the letter (``response[:len(GT)].lower() == GT.lower()``); nothing is stripped, so
    ``" A"`` or ``"The answer is A"`` choose nothing, as they are wrong there.
``yes_no``
    foilkit's own (no benchmark published one): the answer's first word, case and punctuation
    aside, is ``yes`` or ``no``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: What became of an answer, in the order reports list them: read by the rules, settled by the
#: LLM judge (:mod:`foilkit.scorers.judge`, only when one is configured), neither, or empty.
PARSED, JUDGED, UNPARSEABLE, REFUSED = "parsed", "judged", "unparseable", "refused"
OUTCOMES = (PARSED, JUDGED, UNPARSEABLE, REFUSED)
#: What a parser (the rules alone) can make of an answer.
PARSER_OUTCOMES = (PARSED, UNPARSEABLE, REFUSED)
LETTERS = "ABCDEFGHIJ"
#: The parser of generate mode when none is named: the rules for the VITATECS question it asks.
DEFAULT_PARSER = "vitatecs"


@dataclass(frozen=True)
class ParsedAnswer:
    """The outcome of reading one answer, and the index of the option it chose (``None`` unless
    ``outcome`` is ``parsed``)."""

    outcome: str
    choice: int | None = None

    def __post_init__(self) -> None:
        if self.outcome not in PARSER_OUTCOMES:
            raise ValueError(
                f"unknown outcome {self.outcome!r}; choose from {list(PARSER_OUTCOMES)}"
            )
        if (self.choice is None) != (self.outcome != PARSED):
            raise ValueError(f"a {self.outcome} answer has choice {self.choice!r}")


#: ``parser(answer, options, labels) -> ParsedAnswer``; ``labels`` ``None``: letters.
AnswerParser = Callable[[str | None, Sequence[str], Sequence[str] | None], ParsedAnswer]
PARSERS: dict[str, AnswerParser] = {}


def register_parser(name: str) -> Callable[[AnswerParser], AnswerParser]:
    """Register an answer parser under ``name`` (the ``parser`` protocol setting, ``--parser``)."""

    def decorator(function: AnswerParser) -> AnswerParser:
        if name in PARSERS:
            raise ValueError(f"an answer parser named {name!r} is already registered")
        PARSERS[name] = function
        return function

    return decorator


def get_parser(name: str) -> AnswerParser:
    """The parser registered as ``name``; an unknown name is an error listing the known ones."""
    if name not in PARSERS:
        raise ValueError(
            f"unknown answer parser {name!r} (--parser); choose from {sorted(PARSERS)}"
        )
    return PARSERS[name]


def _labels(options: Sequence[str], labels: Sequence[str] | None) -> list[str]:
    if labels is None:
        if len(options) > len(LETTERS):
            raise ValueError(f"at most {len(LETTERS)} lettered options, got {len(options)}")
        return list(LETTERS[: len(options)])
    if len(labels) != len(options):
        raise ValueError(f"{len(labels)} labels for {len(options)} options")
    return list(labels)


def _refused(answer: str | None) -> bool:
    return answer is None or not answer.strip()


def _chose(index: int | None) -> ParsedAnswer:
    return ParsedAnswer(UNPARSEABLE) if index is None else ParsedAnswer(PARSED, index)


@register_parser("vitatecs")
def parse_vitatecs(
    answer: str | None, options: Sequence[str], labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """lmms-eval's VITATECS rules (see the module docstring); the answer is read as given."""
    if _refused(answer):
        return ParsedAnswer(REFUSED)
    letters = _labels(options, labels)
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


def _tempcompass_clean(answer: str) -> str:
    """TempCompass' scripts drop ``</s>`` and surrounding whitespace before matching."""
    return answer.replace("</s>", "").strip()


@register_parser("tempcompass_multi_choice")
def parse_tempcompass_multi_choice(
    answer: str | None, options: Sequence[str], labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """TempCompass ``eval_multi-choice.py``: the whole option line (``A. text``), the letter
    alone, or an answer starting ``A.`` or ``A)``."""
    if _refused(answer):
        return ParsedAnswer(REFUSED)
    letters = _labels(options, labels)
    answer = _tempcompass_clean(answer)
    for index, (letter, text) in enumerate(zip(letters, options)):
        if answer == f"{letter}. {text}":
            return ParsedAnswer(PARSED, index)
    if answer in letters:
        return ParsedAnswer(PARSED, letters.index(answer))
    for mark in (".", ")"):
        for index, letter in enumerate(letters):
            if answer.startswith(letter + mark):
                return ParsedAnswer(PARSED, index)
    return ParsedAnswer(UNPARSEABLE)


@register_parser("tempcompass_yes_no")
def parse_tempcompass_yes_no(
    answer: str | None, options: Sequence[str] = ("yes", "no"), labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """TempCompass ``eval_yes_no.py``: the answer, in lower case, starts with ``yes`` or ``no``
    (so ``"Nothing"`` reads as no, as there); ``options`` name the index of each."""
    if _refused(answer):
        return ParsedAnswer(REFUSED)
    lowered = _tempcompass_clean(answer).lower()
    for word in ("yes", "no"):
        if lowered.startswith(word):
            return _chose(_index_of_word(options, word))
    return ParsedAnswer(UNPARSEABLE)


def _index_of_word(options: Sequence[str], word: str) -> int:
    wanted = [index for index, option in enumerate(options) if option.strip().lower() == word]
    if len(wanted) != 1:
        raise ValueError(f"a yes/no parser needs options 'yes' and 'no', got {list(options)}")
    return wanted[0]


@register_parser("tempcompass_caption_matching")
def parse_tempcompass_caption_matching(
    answer: str | None, options: Sequence[str], labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """TempCompass ``eval_caption_matching.py`` ``eval_rule``: the whole line (``Sentence A:
    text``), the sentence (also after a ``") "``), or the label with or without its
    ``Sentence``/``Option``/``Caption`` word (a final full stop aside); a later rule's match
    wins, as there. The reference cuts each sentence at a second ``": "``; an answer equal to
    a cut that several options share is rated right there whatever the truth, and is
    ``unparseable`` here."""
    if _refused(answer):
        return ParsedAnswer(REFUSED)
    labels = _labels(options, labels)
    answer = _tempcompass_clean(answer)
    chosen: set[int] = set()  # the options the last matching rule names
    for index, (label, text) in enumerate(zip(labels, options)):
        if f"{label}: {text}" == answer:
            chosen = {index}
    after = answer.split(") ")[1] if ") " in answer else None
    # the sentence as the reference cuts it from its line: up to a second ": "
    sentences = [text.split(": ")[0] for text in options]
    for sentence in sentences:
        if sentence == answer or sentence == after:
            chosen = {i for i, other in enumerate(sentences) if other == sentence}
    short = [
        label.replace("Sentence ", "").replace("Option ", "").replace("Caption ", "")
        for label in labels
    ]
    for index, label in enumerate([*labels, *short]):
        if label == answer or label == answer.replace(".", ""):
            chosen = {index % len(options)}
    # a cut sentence several options share: the reference rates it right whatever the truth
    return _chose(chosen.pop() if len(chosen) == 1 else None)


@register_parser("tempcompass_captioning")
def parse_tempcompass_captioning(
    answer: str | None, options: Sequence[str], labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """TempCompass ``eval_captioning.py``: no rules read a caption (its judge does); an empty
    one is ``refused`` (``prediction is None``: rated 0 there)."""
    return ParsedAnswer(REFUSED) if _refused(answer) else ParsedAnswer(UNPARSEABLE)


_TOMATO_ANSWER_IS = re.compile(r"^Answer is:?[\(]?([A-Fa-f])[\)]?$")


@register_parser("tomato")
def parse_tomato(
    answer: str | None, options: Sequence[str], labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """TOMATO ``parse_result.py`` ``pre_parser``: one letter (any case), the whole ``"A: text"``
    choice (compared with the answer in upper case, as there), or ``Answer is: (A)``."""
    if _refused(answer):
        return ParsedAnswer(REFUSED)
    letters = _labels(options, labels)
    answer = answer.strip()
    full = [f"{letter}: {text}" for letter, text in zip(letters, options)]
    match = _TOMATO_ANSWER_IS.match(answer)
    if len(answer) == 1 and answer.upper() in letters:
        return ParsedAnswer(PARSED, letters.index(answer.upper()))
    if answer.upper() in full:
        return _chose(_letter_index(letters, answer[0].upper()))
    if match:
        return _chose(_letter_index(letters, match.group(1).upper()))
    return ParsedAnswer(UNPARSEABLE)


def _letter_index(letters: Sequence[str], letter: str) -> int | None:
    """``letter``'s option, ``None`` when the question had no such option (TOMATO's check that
    the parsed letter is in ``all_choices``)."""
    return letters.index(letter) if letter in letters else None


@register_parser("vinoground")
def parse_vinoground(
    answer: str | None, options: Sequence[str], labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """Vinoground ``get_score_all.py``: the option whose label the answer starts with, any
    case, nothing stripped first (its scripts read ``response[:len(GT)]``)."""
    if _refused(answer):
        return ParsedAnswer(REFUSED)
    letters = _labels(options, labels)
    chosen = [i for i, label in enumerate(letters) if answer[: len(label)].lower() == label.lower()]
    return _chose(chosen[0] if len(chosen) == 1 else None)


#: The first word, past any leading spaces and punctuation (``**Yes**``, ``"No."``).
_FIRST_WORD = re.compile(r"[\W_]*([a-z]+)")


@register_parser("yes_no")
def parse_yes_no(
    answer: str | None, options: Sequence[str] = ("yes", "no"), labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """foilkit's yes/no rule: the first word (letters only, any case) is ``yes`` or ``no``."""
    if _refused(answer):
        return ParsedAnswer(REFUSED)
    first = _FIRST_WORD.match(answer.lower())
    if first is not None and first.group(1) in ("yes", "no"):
        return ParsedAnswer(PARSED, _index_of_word(options, first.group(1)))
    return ParsedAnswer(UNPARSEABLE)


__all__ = [
    "DEFAULT_PARSER",
    "JUDGED",
    "OUTCOMES",
    "PARSED",
    "PARSERS",
    "REFUSED",
    "UNPARSEABLE",
    "AnswerParser",
    "ParsedAnswer",
    "get_parser",
    "register_parser",
]
