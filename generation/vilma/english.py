"""Small English morphology the ViLMA templates need: third-person verbs and phrasal verbs."""

from __future__ import annotations

_IRREGULAR_THIRD_PERSON = {"be": "is", "have": "has", "do": "does", "go": "goes"}
_VOWELS = set("aeiou")


def third_person(verb: str) -> str:
    """The present third-person singular of a verb lemma (``tidy`` -> ``tidies``); for a phrasal
    verb only the head is inflected (``turn on`` -> ``turns on``)."""
    head, *rest = verb.split()
    lower = head.lower()
    if lower in _IRREGULAR_THIRD_PERSON:
        inflected = _IRREGULAR_THIRD_PERSON[lower]
    elif lower.endswith("y") and len(lower) > 1 and lower[-2] not in _VOWELS:
        inflected = head[:-1] + "ies"
    elif lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        inflected = head + "es"
    else:
        inflected = head + "s"
    return " ".join([inflected, *rest])


def place_object(verb: str, obj: str) -> str:
    """``verb obj`` with a phrasal verb's particle after the object (``tidies up`` + ``the
    closet`` -> ``tidies the closet up``), as in ViLMA's change-of-state captions."""
    head, *particles = verb.split()
    return " ".join([head, obj, *particles])


def is_plural(noun_phrase: str) -> bool:
    """Whether a noun phrase looks plural: coordinated (``the salt and water``) or with a head
    (last word) in -s (``the screws``; not ``glass``)."""
    words = noun_phrase.lower().replace(",", " ").split()
    last = words[-1]
    return "and" in words or (last.endswith("s") and not last.endswith(("ss", "us", "is")))


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]
