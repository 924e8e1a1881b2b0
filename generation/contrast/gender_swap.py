"""Gender contrast foils (paper 001, §3.1 and appendix A.1, Table 6).

One gender-sensitive noun of the caption is swapped for a noun of the other gender, keeping
singular or plural; when Table 6 offers several targets, one is drawn uniformly with the given
``rng``. Only a single noun is swapped, because swapping all of them ("man and woman walk" ->
"woman and man walk") may describe the same video. Then every pronoun of the original noun's
gender is swapped to the other gender ("A woman is pushing her stroller" -> "A man is pushing his
stroller").
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from foilkit.generation.foil import Foil
from foilkit.generation.spacy_pipeline import pipeline_id

if TYPE_CHECKING:
    from spacy.language import Language

RULE = "contrast.gender_swap"
FOIL_TYPE = "gender"

# Table 6 of the paper: noun -> the nouns of the other gender it may become (number kept).
GENDER_NOUN_MAP: Mapping[str, tuple[str, ...]] = {
    # male nouns
    "man": ("woman",),
    "men": ("women",),
    "boy": ("girl",),
    "boys": ("girls",),
    "guy": ("woman", "girl"),
    "guys": ("women", "girls", "ladies"),
    # female nouns
    "woman": ("man",),
    "women": ("men", "guys"),
    "girl": ("boy", "guy"),
    "girls": ("boys", "guys"),
    "lady": ("man", "guy"),
    "ladies": ("men", "guys"),
}
MALE_NOUNS = frozenset({"man", "men", "boy", "boys", "guy", "guys"})
FEMALE_NOUNS = frozenset({"woman", "women", "girl", "girls", "lady", "ladies"})

MALE_TO_FEMALE_PRONOUNS: Mapping[str, str] = {
    "he": "she",
    "him": "her",
    "his": "her",
    "himself": "herself",
}
# "her" is "him" as an object and "his" as a possessive: decided per occurrence.
FEMALE_TO_MALE_PRONOUNS: Mapping[str, str] = {"she": "he", "hers": "his", "herself": "himself"}

# Words after which "her" is an object pronoun, not a possessive determiner.
_NOT_A_NOUN_AFTER_HER = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "to",
        "in",
        "on",
        "at",
        "with",
        "for",
        "from",
        "into",
        "onto",
        "by",
        "of",
        "as",
        "up",
        "down",
        "out",
        "off",
        "over",
        "while",
        "when",
        "then",
        "than",
        "so",
        "is",
        "are",
        "was",
        "were",
        "be",
    ]
)
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


def _match_case(word: str, template: str) -> str:
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _her_is_possessive(
    words: Sequence[re.Match[str]], index: int, tags: Sequence[str] | None
) -> bool:
    if tags is not None:
        return tags[index] == "PRP$"
    following = words[index + 1].group().lower() if index + 1 < len(words) else None
    return following is not None and following not in _NOT_A_NOUN_AFTER_HER


def gender_swap(
    caption: str,
    *,
    rng: random.Random,
    noun_map: Mapping[str, Sequence[str]] = GENDER_NOUN_MAP,
    nlp: Language | None = None,
) -> list[Foil]:
    """The gender foil of ``caption``, or ``[]`` when it has no gender-sensitive noun.

    Args:
        caption: the true caption.
        rng: the source of the uniform choice among several targets (seed it for reproducibility).
        noun_map: noun -> candidate replacements; Table 6 by default.
        nlp: a spaCy pipeline, used to tell possessive "her" (``PRP$`` -> "his") from object
            "her" (-> "him"); without it, "her" followed by a content word is taken as possessive.

    The first gender-sensitive noun (in reading order) is the one swapped.
    """
    words = list(_WORD.finditer(caption))
    lowered = [m.group().lower() for m in words]
    target = next((i for i, word in enumerate(lowered) if word in noun_map), None)
    if target is None:
        return []
    noun = lowered[target]
    if noun not in MALE_NOUNS | FEMALE_NOUNS:
        raise ValueError(f"noun {noun!r} of noun_map is in neither MALE_NOUNS nor FEMALE_NOUNS")
    female = noun in FEMALE_NOUNS
    pronouns = FEMALE_TO_MALE_PRONOUNS if female else MALE_TO_FEMALE_PRONOUNS
    replacement = rng.choice(list(noun_map[noun]))

    tags = _word_tags(nlp, caption, words) if nlp is not None and "her" in lowered else None
    edits = {target: replacement}
    for i, word in enumerate(lowered):
        if female and word == "her":
            edits[i] = "his" if _her_is_possessive(words, i, tags) else "him"
        elif word in pronouns:
            edits[i] = pronouns[word]

    pieces, last = [], 0
    for i, match in enumerate(words):
        if i in edits:
            pieces += [caption[last : match.start()], _match_case(edits[i], match.group())]
            last = match.end()
    text = "".join(pieces) + caption[last:]
    return [
        Foil(
            text,
            FOIL_TYPE,
            RULE,
            parameters={"noun_map": "table6" if noun_map is GENDER_NOUN_MAP else "custom"},
            model_ids={"tagger": pipeline_id(nlp)} if tags is not None else {},
            source={
                "span": words[target].group(),
                "replacement": replacement,
                "candidates": list(noun_map[noun]),
            },
        )
    ]


def _word_tags(nlp: Language, caption: str, words: Sequence[re.Match[str]]) -> list[str]:
    """The fine-grained tag of the spaCy token starting at each regex word."""
    doc = nlp(caption)
    by_start = {token.idx: token.tag_ for token in doc}
    return [by_start.get(match.start(), "") for match in words]
