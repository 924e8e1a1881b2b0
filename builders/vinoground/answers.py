"""Vinoground's answers: ``get_score_all.py`` (lmms-eval's ``vinoground_aggregate_results``
alike) reads the answer's first characters, in any case, as the letter
(``response[:len(GT)].lower() == GT.lower()``); nothing is stripped, so ``" A"`` or ``"The answer
is A"`` choose nothing, as they are wrong there.
"""

from __future__ import annotations

from collections.abc import Sequence

from foilkit.answers import (
    REFUSED,
    AnswerParser,
    ParsedAnswer,
    chose,
    option_labels,
    refused,
)


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


#: The answer parsers, by name (the ``parser`` protocol setting, ``--parser``).
PARSERS: dict[str, AnswerParser] = {"vinoground": parse_vinoground}
