"""Answer parsers: which option a generated answer chose, as each benchmark's own code reads it.

A generative protocol asks a question with options and reads the model's free-text answer. The
benchmarks' own scripts turn that text into a decision with hand-written rules, then (some) ask
an LLM judge or guess when the rules fail. foilkit reproduces the rules exactly, as pure
functions registered by name, and never guesses: an answer the rules cannot read is recorded
``unparseable`` and counts as wrong (the official scripts' rating 0 when their judge is off);
an empty answer is ``refused`` (the model produced nothing) and counts as wrong too. Only where
a judge is configured (off by default) does the official LLM judge read what the rules miss
(:mod:`foilkit.scorers.judge`; outcome ``judged``).

Every parser takes the answer, the option texts in the order the question showed them, and the
labels the question gave them (``A``, ``B``, ... by default; a benchmark's caption matching may
write ``Sentence A`` or ``Option 1``), and returns a :class:`~foilkit.answers.ParsedAnswer`:
the outcome and the chosen option's index. Each is tested against a port of the official
function on real model-style answers (``tests/answer_references.py``).

Where the parsers are: foilkit's own ``yes_no`` (the answer's first word, case and punctuation
aside, is ``yes`` or ``no``: no benchmark published one) is here (:data:`PARSERS`); each
benchmark's parsers are in its folder (``builders/<name>/answers.py``), registered on its
:class:`~foilkit.builders.spec.Benchmark` (``parsers``, with its official judges in
``judges``), and :func:`get_parser` finds them by name through
:mod:`foilkit.benchmark_registry`, so ``--parser NAME`` works with no benchmark named.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from foilkit.answers import (
    JUDGED,
    OUTCOMES,
    PARSED,
    PARSER_OUTCOMES,
    REFUSED,
    UNPARSEABLE,
    AnswerParser,
    ParsedAnswer,
    index_of_word,
    refused,
)
from foilkit.benchmark_registry import BENCHMARKS

#: The parser of generate mode when none is named: the rules for the question it asks, the
#: default benchmark's (a user-facing default, found through the registry like any other).
DEFAULT_PARSER = "vitatecs"
#: foilkit's own parsers, which no benchmark declares.
PARSERS: dict[str, AnswerParser] = {}


def register_parser(name: str) -> Callable[[AnswerParser], AnswerParser]:
    """Register one of foilkit's own answer parsers under ``name`` (a benchmark's go on its
    spec)."""

    def decorator(function: AnswerParser) -> AnswerParser:
        if name in PARSERS:
            raise ValueError(f"an answer parser named {name!r} is already registered")
        PARSERS[name] = function
        return function

    return decorator


def declared_tables(kind: str) -> Iterator[Mapping[str, Any]]:
    """Each registered benchmark's ``kind`` (``parsers``, ``judges``, ``prompts``: a table by
    name), in registry order; a benchmark is imported only when reached."""
    for benchmark in BENCHMARKS.names():
        yield getattr(BENCHMARKS.get(benchmark), kind)


def _declared(kind: str) -> Iterator[Mapping[str, Any]]:
    """foilkit's own parsers (for ``parsers``), then the benchmarks' ``kind``."""
    if kind == "parsers":
        yield PARSERS
    yield from declared_tables(kind)


def declared(kind: str, name: str) -> Any:
    """The parser (``kind="parsers"``), official judge (``"judges"``) or choice prompt
    (``"prompts"``) a benchmark registered as ``name`` (a parser also foilkit's own); ``None``
    when there is none."""
    for table in _declared(kind):
        if name in table:
            return table[name]
    return None


def parser_names() -> list[str]:
    """Every registered answer parser's name, sorted."""
    return sorted(name for table in _declared("parsers") for name in table)


def get_parser(name: str) -> AnswerParser:
    """The parser registered as ``name``; an unknown name is an error listing the known ones."""
    parser = declared("parsers", name)
    if parser is None:
        raise ValueError(f"unknown answer parser {name!r} (--parser); choose from {parser_names()}")
    return parser


#: The first word, past any leading spaces and punctuation (``**Yes**``, ``"No."``).
_FIRST_WORD = re.compile(r"[\W_]*([a-z]+)")


@register_parser("yes_no")
def parse_yes_no(
    answer: str | None, options: Sequence[str] = ("yes", "no"), labels: Sequence[str] | None = None
) -> ParsedAnswer:
    """foilkit's yes/no rule: the first word (letters only, any case) is ``yes`` or ``no``."""
    if refused(answer):
        return ParsedAnswer(REFUSED)
    first = _FIRST_WORD.match(answer.lower())
    if first is not None and first.group(1) in ("yes", "no"):
        return ParsedAnswer(PARSED, index_of_word(options, first.group(1)))
    return ParsedAnswer(UNPARSEABLE)


__all__ = [
    "DEFAULT_PARSER",
    "JUDGED",
    "OUTCOMES",
    "PARSED",
    "PARSERS",
    "PARSER_OUTCOMES",
    "REFUSED",
    "UNPARSEABLE",
    "AnswerParser",
    "ParsedAnswer",
    "declared",
    "declared_tables",
    "get_parser",
    "parser_names",
    "register_parser",
]
