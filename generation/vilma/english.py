"""Small English morphology the ViLMA templates need: third-person verbs, present participles,
phrasal verbs."""

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


# Participles the spelling rules get wrong: final stress doubles a two-syllable verb's consonant
# (unplug), and ViLMA's verb list (the XTAG forms, tasks/actions) spells travel/control British.
_IRREGULAR_PARTICIPLE = {
    "be": "being",
    "control": "controlling",
    "travel": "travelling",
    "unplug": "unplugging",
}


def _doubles_final_consonant(word: str) -> bool:
    """A one-syllable verb ending consonant-vowel-consonant (cut, shed, drop; not wax, row)."""
    vowel_groups = sum(
        1 for i, c in enumerate(word) if c in _VOWELS and (i == 0 or word[i - 1] not in _VOWELS)
    )
    return (
        vowel_groups == 1
        and len(word) >= 3
        and word[-1] not in _VOWELS | set("wxy")
        and word[-2] in _VOWELS
        and word[-3] not in _VOWELS
    )


def present_participle(verb: str) -> str:
    """The -ing form of a verb lemma (``ride`` -> ``riding``, ``cut`` -> ``cutting``, ``lie`` ->
    ``lying``); for a phrasal verb only the head is inflected (``type on`` -> ``typing on``)."""
    head, *rest = verb.split()
    lower = head.lower()
    if lower in _IRREGULAR_PARTICIPLE:
        inflected = _IRREGULAR_PARTICIPLE[lower]
    elif lower.endswith("ie"):
        inflected = lower[:-2] + "ying"
    elif lower.endswith("e") and not lower.endswith(("ee", "ye", "oe")) and len(lower) > 2:
        inflected = lower[:-1] + "ing"
    elif _doubles_final_consonant(lower):
        inflected = lower + lower[-1] + "ing"
    else:
        inflected = lower + "ing"
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
