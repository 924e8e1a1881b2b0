"""A benchmark's questions and what a parser and an LLM judge make of the answers, as data: the
types a benchmark's questions and answer rules are written in (``builders/<name>/answers.py``)
and the scorer runs.

A named multiple-choice question (:class:`ChoicePrompt`: the ``prompt`` protocol setting)
renders the options as the benchmark's paper or code asks them.
A parser reads a video LLM's free-text answer with a benchmark's hand-written rules
(:data:`AnswerParser` -> :class:`ParsedAnswer`); an official judge (:class:`JudgeProtocol`)
is asked about the answers the rules miss, or about every answer, and its reply read. The
benchmarks declare theirs in their folders and register them on their
:class:`~foilkit.builders.spec.Benchmark` (``parsers``, ``judges``); the scorer finds them by
name through :mod:`foilkit.benchmark_registry` (:func:`foilkit.scorers.parsers.get_parser`).
This module sits below both and imports nothing of foilkit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: What became of an answer, in the order reports list them: read by the rules, settled by the
#: LLM judge (:mod:`foilkit.scorers.judge`, only when one is configured), neither, or empty.
PARSED, JUDGED, UNPARSEABLE, REFUSED = "parsed", "judged", "unparseable", "refused"
OUTCOMES = (PARSED, JUDGED, UNPARSEABLE, REFUSED)
#: What a parser (the rules alone) can make of an answer.
PARSER_OUTCOMES = (PARSED, UNPARSEABLE, REFUSED)
LETTERS = "ABCDEFGHIJ"


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


def lettered(options: Sequence[str]) -> str:
    """``options`` one per line, each after its letter: ``A. text``."""
    return "\n".join(f"{letter}. {option}" for letter, option in zip(LETTERS, options))


def spoken(letters: str) -> str:
    """Letters as a sentence says them: ``A``, ``A or B``, ``A, B or C``."""
    return letters[0] if len(letters) == 1 else ", ".join(letters[:-1]) + f" or {letters[-1]}"


@dataclass(frozen=True)
class ChoicePrompt:
    """A named multiple-choice question: its ``template`` (``{options}``: the listed options), as
    run records show it; ``question``, the question for options in the order given; ``system``,
    a system prompt before it (``{count}``: the number of options, in words; ``None``: none)."""

    template: str
    question: Callable[[Sequence[str]], str]
    system: str | None = None


#: The roles of a :class:`CaptionQuestion` (a benchmark's ``questions``): entail mode's question
#: of each text; a pair row's about its two videos joined into one.
ENTAIL, JOINED_VIDEO = "entail", "joined video"


@dataclass(frozen=True)
class CaptionQuestion:
    """A question about one caption (``{caption}`` in ``template``; ``{options}``: ``options``
    lettered); ``gap_seconds``: the black between the joined video's segments it asks about."""

    template: str
    options: tuple[str, ...] = ()
    gap_seconds: float = 0.0

    def ask(self, caption: str) -> str:
        return self.template.format(caption=caption, options=lettered(self.options))


#: ``parser(answer, options, labels) -> ParsedAnswer``; ``labels`` ``None``: letters.
AnswerParser = Callable[[str | None, Sequence[str], Sequence[str] | None], ParsedAnswer]


def option_labels(options: Sequence[str], labels: Sequence[str] | None) -> list[str]:
    """The labels the question gave ``options``: ``labels``, or letters where it gave none."""
    if labels is None:
        if len(options) > len(LETTERS):
            raise ValueError(f"at most {len(LETTERS)} lettered options, got {len(options)}")
        return list(LETTERS[: len(options)])
    if len(labels) != len(options):
        raise ValueError(f"{len(labels)} labels for {len(options)} options")
    return list(labels)


def refused(answer: str | None) -> bool:
    """Whether the model produced nothing (no answer, or only whitespace)."""
    return answer is None or not answer.strip()


def chose(index: int | None) -> ParsedAnswer:
    """Option ``index`` chosen; ``None``: the rules chose none (``unparseable``)."""
    return ParsedAnswer(UNPARSEABLE) if index is None else ParsedAnswer(PARSED, index)


def index_of_word(options: Sequence[str], word: str) -> int:
    """The position of the option ``word`` (``yes`` or ``no``) among yes/no ``options``."""
    wanted = [index for index, option in enumerate(options) if option.strip().lower() == word]
    if len(wanted) != 1:
        raise ValueError(f"a yes/no parser needs options 'yes' and 'no', got {list(options)}")
    return wanted[0]


@dataclass(frozen=True)
class JudgeCase:
    """One answer for the judge: its text, the option texts in the order the question showed
    them, their labels, which of them is true, and (where the official judge is shown them) the
    question and ground-truth answer (``reference``)."""

    answer: str
    options: tuple[str, ...]
    labels: tuple[str, ...]
    true: int
    reference: tuple[str, str] | None = None


#: reply, case -> (outcome, chosen position, verdict), or ``None``: ask again.
Reader = Callable[[str, JudgeCase], tuple[str, int | None, str] | None]


@dataclass(frozen=True)
class JudgeProtocol:
    """One official judge: who it was, how it is asked (``system`` turn, ``prompt`` builder,
    ``decoding``), how many times at most (``max_asks``), and how its reply is read;
    ``unsettled``: what becomes of an answer it cannot settle, where the official code does
    something foilkit does not (``None``: the default account, by ``every_answer``)."""

    name: str
    model: str
    reference: str
    prompt: Callable[[JudgeCase], str]
    read: Reader
    system: str | None = None
    decoding: Mapping[str, Any] = field(default_factory=dict)
    max_asks: int = 1
    every_answer: bool = False  # asked about every answer, not only those the rules miss
    unsettled: str | None = None

    def messages(self, case: JudgeCase) -> tuple[dict[str, Any], ...]:
        turns = [] if self.system is None else [{"role": "system", "content": self.system}]
        return (*turns, {"role": "user", "content": self.prompt(case)})

    def to_record(self) -> dict[str, Any]:
        return {
            "protocol": self.name,
            "official_model": self.model,
            "reference": self.reference,
            "decoding": dict(self.decoding),
            "max_asks": self.max_asks,
            "asked_about": "every answer" if self.every_answer else "answers the rules miss",
        }


def judge_reference(case: JudgeCase) -> tuple[str, str]:
    """The question and ground-truth answer a judge is shown; a row without them is an error
    saying how to get them."""
    if case.reference is None:
        raise ValueError(
            "this judge is shown the question and its ground-truth answer, and the row has "
            "none ('judge_question', 'judge_answer'): rebuild the dataset with this foilkit"
        )
    return case.reference


# --- the correctness judge several benchmarks share (TempCompass' own, lmms-eval's copy) --------

#: The correctness judge's decoding (TempCompass ``get_llm_output``; lmms-eval's is the same).
GPT35_DECODING = {"max_tokens": 128, "temperature": 1.0, "top_p": 1, "presence_penalty": 1}
#: TempCompass ``utils/eval_utils.py`` ``get_llm_output``'s system prompt (and lmms-eval's).
QA_SYSTEM = "You are an AI assistant for question answering."
#: The correctness judge's model and how it is asked: a :class:`JudgeProtocol`'s ``model``,
#: ``system`` and ``decoding`` (TempCompass' judges, lmms-eval's VITATECS judge).
GPT35_JUDGE = {"model": "gpt-3.5-turbo-1106", "system": QA_SYSTEM, "decoding": GPT35_DECODING}


def correctness_rating(reply: str) -> int | None:
    """``llm_output_to_rating`` (TempCompass and lmms-eval) of a reply (stripped, as their
    ``get_llm_output`` strips it): 1 ``Correct``, 0 ``Incorrect``; ``None`` where the reference's
    assertion fails (neither word), which makes it ask again."""
    reply = reply.strip()
    if "Correct" not in reply and "Incorrect" not in reply:
        return None
    if reply.startswith("Correct"):
        return 1
    if reply.startswith("Incorrect"):
        return 0
    return 1 if "Incorrect" not in reply else 0


def read_correctness(reply: str, case: JudgeCase) -> tuple[str, int | None, str] | None:
    """A correctness judge's reply: the true option (``correct``), none (``incorrect``), or
    ``None``: ask again."""
    rating = correctness_rating(reply)
    if rating is None:
        return None
    return (JUDGED, case.true, "correct") if rating else (JUDGED, None, "incorrect")
