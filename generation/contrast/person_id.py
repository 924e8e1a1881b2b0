"""Person-ID contrast foils for LSMDC-IDs (paper 001, §3.1 and appendix A.2).

The first character ID of a caption is replaced by another character of the same movie with
the same gender, drawn uniformly; each following ID is swapped the same way with probability
``swap_probability`` (the paper's "uniform chance of being kept or swapped": 0.5), else kept.
Same movie and same gender keep the language statistics from giving the swap away.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping

from foilkit.generation.foil import Foil

RULE = "contrast.person_id_swap"
FOIL_TYPE = "person_id"
SWAP_PROBABILITY = 0.5


def person_id_swap(
    caption: str,
    characters: Mapping[str, str],
    *,
    rng: random.Random,
    swap_probability: float = SWAP_PROBABILITY,
) -> list[Foil]:
    """The ID foil of ``caption`` given its movie's ``characters`` (name -> gender).

    Returns ``[]`` when the caption names no character or the first named character has no
    other character of the same gender in the movie.
    """
    if not 0.0 <= swap_probability <= 1.0:
        raise ValueError(f"swap_probability must be in [0, 1], got {swap_probability}")
    names = sorted(characters, key=len, reverse=True)  # "Mary Jane" before "Mary"
    if not names:
        return []
    pattern = re.compile(r"\b(" + "|".join(re.escape(name) for name in names) + r")\b")
    mentions = list(pattern.finditer(caption))
    if not mentions:
        return []
    present = {m.group() for m in mentions}
    swaps: dict[str, str] = {}
    for position, mention in enumerate(mentions):
        name = mention.group()
        if name in swaps or (position > 0 and rng.random() >= swap_probability):
            continue
        others = sorted(
            other
            for other, gender in characters.items()
            if gender == characters[name] and other not in present and other not in swaps.values()
        )
        if not others:
            if position == 0:
                return []
            continue
        swaps[name] = rng.choice(others)
    text = pattern.sub(lambda m: swaps.get(m.group(), m.group()), caption)
    return [
        Foil(
            text,
            FOIL_TYPE,
            RULE,
            parameters={"swap_probability": swap_probability},
            source={"swaps": swaps},
        )
    ]
