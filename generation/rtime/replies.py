"""Reading lists out of an LLM's replies: numbered or bulleted lines, or a JSON array.

The RTime prompts ask for one item per line; models answer with numbering ("1.", "2)"),
bullets, quotes, a preamble ("Here are nine rewrites:"), code fences or a JSON array. All of
these read the same. A reply from which no item can be read raises :class:`ReplyFormatError`,
which names the request (its cache key) and what was being asked, so the cached reply can be
found and inspected.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from foilkit.generation.llm import Completion, LLMResponseError

T = TypeVar("T")

_FENCE = re.compile(r"^```[\w-]*\s*$")
_MARKER = re.compile(r"^\s*(?:[-*\u2022\u2023\u25e6>]+|\(?\d{1,3}\s*[.):\]]|#\d{1,3}[.:]?)\s*")
_QUOTES = "\"'\u201c\u201d\u2018\u2019`"
# Separators between an activity and its opposite, most specific first.
_PAIR_SEPARATORS = (
    "|",
    "<->",
    "\u2194",
    "\u21c4",
    " vs. ",
    " vs ",
    " versus ",
    " / ",
    "\t",
    " \u2013 ",
    " \u2014 ",
    " - ",
    " -> ",
    " => ",
    "/",
)
_TUPLE = re.compile(r"^[(\[{](.*)[)\]}]$")


class ReplyFormatError(LLMResponseError):
    """A reply arrived, but holds nothing the pipeline can use; names the request and the ask."""


def list_items(text: str) -> list[Any]:
    """The items of a list reply: a JSON array's elements, else its non-empty, non-header lines.

    Line items lose their numbering, bullets and surrounding quotes; a line ending in ":" is a
    header ("Here are the pairs:") and is skipped. JSON elements are returned as they are (a
    string, or a list/object for structured items).
    """
    lines = [line for line in text.strip().splitlines() if not _FENCE.match(line.strip())]
    body = "\n".join(lines).strip()
    if body[:1] in "[{":
        try:
            value = json.loads(body)
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict) and len(value) == 1:
            (value,) = value.values()
        if isinstance(value, list):
            return [item.strip() if isinstance(item, str) else item for item in value]
    items = []
    for line in lines:
        item = _MARKER.sub("", line.strip(), count=1).strip().strip(_QUOTES).strip()
        if item and not item.endswith(":"):
            items.append(item)
    return items


def parse_reply(
    completion: Completion,
    read_item: Callable[[Any], T | None],
    *,
    asked: str,
    choice: int = 0,
) -> tuple[list[T], list[str]]:
    """``(items, unreadable)`` of one choice of ``completion``; raise if no item is readable.

    ``read_item`` turns a raw list item into a ``T``, or ``None`` when the item is not one (it
    then lands in ``unreadable``). ``asked`` says what was requested ("activity pairs, round 3"),
    for the error message.
    """
    text = completion.texts[choice]
    items, unreadable = [], []
    for raw in list_items(text):
        item = read_item(raw)
        if item is None:
            unreadable.append(raw if isinstance(raw, str) else json.dumps(raw))
        else:
            items.append(item)
    if not items:
        raise ReplyFormatError(
            f"request {completion.key} ({asked}): no item could be read from the reply "
            f"{text[:300]!r}"
        )
    return items, unreadable


def read_pair(raw: Any) -> tuple[str, str] | None:
    """``(activity, opposite)`` from ``"a | b"``, ``"(a, b)"``, ``["a", "b"]`` or an object.

    An object needs ``activity`` and ``opposite`` keys (or exactly two string values); the
    separators tried on a string are ``|``, arrows, ``vs``, `` / ``, a tab and dashes.
    """
    if isinstance(raw, dict):
        if {"activity", "opposite"} <= raw.keys():
            raw = [raw["activity"], raw["opposite"]]
        else:
            raw = list(raw.values())
    if isinstance(raw, (list, tuple)):
        if len(raw) == 2 and all(isinstance(side, str) for side in raw):
            return _sides(raw[0], raw[1])
        return None
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    match = _TUPLE.match(text)
    if match and "," in match.group(1):
        left, _, right = match.group(1).partition(",")
        return _sides(left, right)
    for separator in _PAIR_SEPARATORS:
        if separator in text:
            left, _, right = text.partition(separator)
            return _sides(left, right)
    return None


def _sides(left: str, right: str) -> tuple[str, str] | None:
    left, right = (side.strip().strip(_QUOTES).strip() for side in (left, right))
    return (left, right) if left and right else None


def read_text(raw: Any) -> str | None:
    """A non-empty string item (a rewrite, an object name), else ``None``."""
    return raw if isinstance(raw, str) and raw.strip() else None


def first_unique(texts: Sequence[str], *, exclude: Sequence[str] = ()) -> list[str]:
    """``texts`` without case/space-insensitive repeats, nor any of ``exclude``; order kept."""
    seen = {_fold(text) for text in exclude}
    kept = []
    for text in texts:
        key = _fold(text)
        if key not in seen:
            seen.add(key)
            kept.append(text)
    return kept


def _fold(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")
