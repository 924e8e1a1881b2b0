"""Action-counting captions and foils from ``exactly <number>`` templates (ViLMA §3.2, app. C.2).

A template such as "a man skips rope exactly <number> times." gets the true count in the
caption and a wrong count in the foil. Counts above ``max_count`` (10 in the published data)
are discarded. The two subtests differ in where the *small* numbers (1 to ``small_max`` = 3,
those most frequent in pretraining text) go:

* **easy**: the caption has a small count, the foil a count in ``small_max+1 .. max_count``;
* **difficult**: the caption has a larger count, the foil a small one,

so a model biased towards small numbers is right on easy and wrong on difficult items. The foil
count is drawn uniformly from the subtest's range with the given ``rng``. Numbers are spelled
("three") or digits; with a count of one, the counted noun loses its plural -s
("exactly one time", "exactly one pull-up").
"""

from __future__ import annotations

import random
import re

from foilkit.generation.foil import Foil

RULE = "vilma.counting"
FOIL_TYPE = "counting"
PLACEHOLDER = "<number>"
SMALL_MAX = 3
MAX_COUNT = 10
SUBTESTS = ("easy", "difficult")

_SPELLED = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]


def spell_number(number: int) -> str:
    if not 0 <= number < len(_SPELLED):
        raise ValueError(f"can only spell 0..{len(_SPELLED) - 1}, got {number}")
    return _SPELLED[number]


def fill_count_template(
    template: str, number: int, *, spelled: bool = True, singular_template: str | None = None
) -> str:
    """``template`` with its ``<number>`` filled.

    For one, ``singular_template`` (ViLMA's hand-written singular form, e.g. from
    ``quva-templates-processed.json``) is used when given; otherwise the word after the number
    loses its plural -s.
    """
    if number == 1 and singular_template is not None:
        template = singular_template
    if template.count(PLACEHOLDER) != 1:
        raise ValueError(f"template must contain {PLACEHOLDER} once: {template!r}")
    text = template.replace(PLACEHOLDER, spell_number(number) if spelled else str(number))
    if number == 1 and singular_template is None:  # "exactly one lunges" -> "exactly one lunge"
        word = re.escape(spell_number(1) if spelled else "1")
        text = re.sub(rf"\b({word} [\w-]+?[^s])s\b", r"\1", text, count=1)
    return text


def counting_subtest(count: int, *, small_max: int = SMALL_MAX) -> str:
    """``"easy"`` for a small true count, ``"difficult"`` otherwise."""
    return "easy" if count <= small_max else "difficult"


def foil_counts(count: int, *, small_max: int = SMALL_MAX, max_count: int = MAX_COUNT) -> list[int]:
    """The counts a foil may take for a caption with ``count``: the other subtest's range."""
    if not 1 <= count <= max_count:
        raise ValueError(f"count {count} is outside 1..{max_count}")
    if counting_subtest(count, small_max=small_max) == "easy":
        return list(range(small_max + 1, max_count + 1))
    return list(range(1, small_max + 1))


def counting_pair(
    template: str,
    count: int,
    *,
    rng: random.Random,
    small_max: int = SMALL_MAX,
    max_count: int = MAX_COUNT,
    spelled: bool = True,
    singular_template: str | None = None,
) -> tuple[str, Foil] | None:
    """The caption and foil for a video whose action happens ``count`` times, or ``None`` when
    the count exceeds ``max_count`` (or is below one)."""
    if not 1 <= count <= max_count:
        return None
    foil_count = rng.choice(foil_counts(count, small_max=small_max, max_count=max_count))
    fill = {"spelled": spelled, "singular_template": singular_template}
    caption = fill_count_template(template, count, **fill)
    foil = Foil(
        fill_count_template(template, foil_count, **fill),
        FOIL_TYPE,
        RULE,
        parameters={
            "subtest": counting_subtest(count, small_max=small_max),
            "small_max": small_max,
            "max_count": max_count,
            "spelled": spelled,
        },
        source={"template": template, "count": count, "foil_count": foil_count},
    )
    return caption, foil
