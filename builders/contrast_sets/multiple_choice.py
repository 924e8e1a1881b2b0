"""Gender and Random MC of the contrast sets: the builder's own data prep from the user's file.

The paper's Random MC is MSR-VTT's multiple-choice test file (Yu et al., 2018), which the user
supplies: :func:`read_multiple_choice_file` reads it. Its Gender MC replaces one random negative
of each item with the gender swap of its true caption (:func:`swap_gender`, below) and drops the
items without one (:func:`gender_mc`, :func:`with_contrast_foil`). The contrast-set builder runs
these on the user's file; the foil generator (:mod:`foilkit.generation.contrast`) runs the same
functions and records each foil's provenance. They are functions of text, so builders import
nothing of generation.

**The gender swap** (paper 001, §3.1 and appendix A.1, Table 6).

One gender-sensitive noun of the caption is swapped for a noun of the other gender, keeping
singular or plural; when Table 6 offers several targets, one is drawn uniformly with the given
``rng``. Only a single noun is swapped, because swapping all of them ("man and woman walk" ->
"woman and man walk") may describe the same video. Then the pronouns of the original noun's
gender that refer to it are swapped to the other gender ("A woman is pushing her stroller" ->
"A man is pushing his stroller").

Details the paper leaves open, decided so that a foil never describes someone else:

* a possessive noun is a noun ("a woman's back" -> "a man's back");
* a noun inside a name is not a person ("iron man", "spider-man", "Pac-Man": see
  ``NAME_COMPOUNDS``; a noun joined by a hyphen or capitalised mid-sentence counts as a name);
* a pronoun refers to the nearest gendered person noun of its gender before it (singular nouns
  first), else to the first one after it; only pronouns referring to the swapped noun change
  ("a man makes a young man cry by talking to him": "him" is the young man and stays);
* a swap that would coordinate a noun with itself says it once: "many men and women" ->
  "many women" (not "many women and women"), "a man and a woman" -> "two women", "a man or a
  woman" -> "a woman".
"""

from __future__ import annotations

import csv
import os
import random
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from spacy.language import Language

#: One item of a multiple-choice file: clip, options, the true option's index, and the file's
#: row (every column as read: a written file's ``foil_type`` and ``foil_provenance`` too).
MultipleChoiceRecord = tuple[str, tuple[str, ...], int, dict[str, str]]


def read_multiple_choice_file(path: str | os.PathLike) -> list[MultipleChoiceRecord]:
    """The items of a ``clip, ending0..ending{n-1}, label`` file (tab- or comma-separated)."""
    with open(path, newline="", encoding="utf-8") as handle:
        sample = handle.readline()
        handle.seek(0)
        delimiter = "\t" if "\t" in sample else ","
        reader = csv.DictReader(handle, delimiter=delimiter)
        fields = reader.fieldnames or []
        endings = sorted((f for f in fields if f.startswith("ending")), key=lambda f: int(f[6:]))
        missing = {"clip", "label"} - set(fields)
        if missing or not endings:
            raise ValueError(
                f"{path}: expected columns clip, ending0..ending4, label; header is {fields}"
            )
        items = []
        for line, row in enumerate(reader, start=2):
            try:
                label = int(row["label"])
            except (TypeError, ValueError):
                raise ValueError(
                    f"{path}:{line}: label {row['label']!r} is not an integer"
                ) from None
            options = tuple(row[e] for e in endings)
            if not 0 <= label < len(options):
                raise ValueError(
                    f"clip {row['clip']!r}: label {label} is not an index of its "
                    f"{len(options)} options"
                )
            items.append((row["clip"], options, label, row))
    return items


def with_contrast_foil(
    options: Sequence[str], label: int, foils: Sequence[str], rng: random.Random
) -> tuple[int, tuple[str, ...]] | None:
    """``options`` with one negative, drawn uniformly, replaced by one of ``foils``, drawn
    uniformly among those not already an option (case and outer spaces aside), and that foil's
    index in ``foils``; ``None`` when no foil is new. The true option keeps its place."""
    present = {option.strip().lower() for option in options}
    fresh = [index for index, foil in enumerate(foils) if foil.strip().lower() not in present]
    if not fresh:
        return None
    chosen = rng.choice(fresh)
    slot = rng.choice([i for i in range(len(options)) if i != label])
    replaced = list(options)
    replaced[slot] = foils[chosen]
    return chosen, tuple(replaced)


def gender_mc(
    items: Sequence[MultipleChoiceRecord], *, rng: random.Random, nlp: Language | None = None
) -> list[MultipleChoiceRecord]:
    """Gender MC from Random MC items: one negative of each replaced by the gender swap of its
    true caption; the items without a swap, or whose swap is already an option, dropped."""
    built = []
    for clip, options, label, row in items:
        swap = swap_gender(options[label], rng=rng, nlp=nlp)
        made = with_contrast_foil(options, label, [] if swap is None else [swap.text], rng)
        if made is not None:
            built.append((clip, made[1], label, row))
    return built


class GenderSwap(NamedTuple):
    """A caption with one gendered noun swapped (:func:`swap_gender`)."""

    text: str
    #: what was replaced and by what: ``span``, ``replacement``, ``candidates`` (and
    #: ``coordination``, the phrase said once: "many men and women" -> "many women")
    source: dict[str, Any]


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
# Person nouns beyond Table 6, never swapped but possible referents of a pronoun.
_OTHER_MALE_NOUNS = frozenset(
    "father dad son brother husband boyfriend gentleman gentlemen uncle grandfather grandpa king "
    "prince sir mr".split()
)
_OTHER_FEMALE_NOUNS = frozenset(
    "mother mom mum daughter sister wife girlfriend aunt grandmother grandma queen princess madam "
    "mrs ms miss".split()
)
_PLURAL_NOUNS = frozenset({"men", "boys", "guys", "women", "girls", "ladies", "gentlemen"})
# Names in which a gendered noun names no person of that gender: "<word> man" -> not swapped.
NAME_COMPOUNDS: frozenset[tuple[str, str]] = frozenset(
    tuple(name.split())
    for name in (
        "iron man, spider man, ant man, bat man, super man, aqua man, he man, pac man, snow man, "
        "snow men, pac men, gingerbread man, cave man, cave men, wonder woman, bat girl, "
        "super girl, spider woman, spice girls, pac girl, power girl, golden girls, gossip girl, "
        "cat woman, bat woman, rain man, tin man, straw man, elephant man, pac woman, pokemon man"
    ).split(", ")
)

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
    "a an the and or but to in on at with for from into onto by of as up down out off over while "
    "when then than so is are was were be".split()
)
# Words with their contractions ("isn't"), but a possessive "'s" is no part of its noun.
_WORD = re.compile(r"[A-Za-z]+(?:'(?!s\b)[A-Za-z]+)?")


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


def swap_gender(
    caption: str,
    *,
    rng: random.Random,
    noun_map: Mapping[str, Sequence[str]] = GENDER_NOUN_MAP,
    nlp: Language | None = None,
) -> GenderSwap | None:
    """The gender swap of ``caption``, or ``None`` when it has no gender-sensitive noun.

    Args:
        caption: the true caption.
        rng: the source of the uniform choice among several targets (seed it for reproducibility).
        noun_map: noun -> candidate replacements; Table 6 by default.
        nlp: a spaCy pipeline, used to tell possessive "her" (``PRP$`` -> "his") from object
            "her" (-> "him"); without it, "her" followed by a content word is taken as possessive.
            Given one, every caption with a noun to swap is tagged.

    The first gender-sensitive noun (in reading order) is the one swapped.
    """
    words = list(_WORD.finditer(caption))
    lowered = [m.group().lower() for m in words]
    target = next(
        (
            i
            for i, word in enumerate(lowered)
            if word in noun_map and not in_name(caption, words, i)
        ),
        None,
    )
    if target is None:
        return None
    noun = lowered[target]
    if noun not in MALE_NOUNS | FEMALE_NOUNS:
        raise ValueError(f"noun {noun!r} of noun_map is in neither MALE_NOUNS nor FEMALE_NOUNS")
    female = noun in FEMALE_NOUNS
    pronouns = FEMALE_TO_MALE_PRONOUNS if female else MALE_TO_FEMALE_PRONOUNS
    replacement = rng.choice(list(noun_map[noun]))

    # With a pipeline, every caption with a noun to swap is tagged (its foil records the tagger:
    # one run, one provenance, whichever captions hold a "her" for the tags to decide).
    tags = _word_tags(nlp, caption, words) if nlp is not None else None
    persons = _person_nouns(caption, words, lowered, female)
    edits = {target: replacement}
    for i, word in enumerate(lowered):
        if not (word in pronouns or (female and word == "her")):
            continue
        if _referent(i, persons) != target:
            continue
        if female and word == "her":
            edits[i] = "his" if _her_is_possessive(words, i, tags) else "him"
        else:
            edits[i] = pronouns[word]

    replacements = {
        i: (words[i].start(), words[i].end(), _match_case(edit, words[i].group()))
        for i, edit in edits.items()
    }
    merged = _merged_coordination(caption, words, lowered, target, replacement)
    if merged is not None:  # "many men and women" -> "many women", not "many women and women"
        first, last_word, phrase = merged
        replacements = {i: r for i, r in replacements.items() if not first <= i <= last_word}
        replacements[first] = (words[first].start(), words[last_word].end(), phrase)
    pieces, last = [], 0
    for start, end, piece in (replacements[i] for i in sorted(replacements)):
        pieces += [caption[last:start], piece]
        last = end
    text = "".join(pieces) + caption[last:]
    source = {
        "span": words[target].group(),
        "replacement": replacement,
        "candidates": list(noun_map[noun]),
    }
    if merged is not None:
        source["coordination"] = caption[words[merged[0]].start() : words[merged[1]].end()]
    return GenderSwap(text, source)


# Singular and plural of the Table 6 nouns: a coordination of one noun with itself is merged.
_PLURAL_OF = {
    "man": "men",
    "woman": "women",
    "boy": "boys",
    "girl": "girls",
    "guy": "guys",
    "lady": "ladies",
}
_SINGULAR_OF = {plural: singular for singular, plural in _PLURAL_OF.items()}
# Words that may stand before a conjunct noun ("a man and *the* woman").
_DETERMINERS = frozenset(
    "a an the some many several few two three four this that these those his her their its "
    "our my your one".split()
)
_SINGULAR_DETERMINERS = frozenset({"a", "an", "one", "this", "that"})


def _merged_coordination(
    caption: str,
    words: Sequence[re.Match[str]],
    lowered: Sequence[str],
    target: int,
    replacement: str,
) -> tuple[int, int, str] | None:
    """Where swapping the noun ``target`` for ``replacement`` would coordinate a noun phrase
    with itself ("many men and women" -> "many women and women", "a young man and young woman"
    -> "a young woman and young woman"), the words ``(first, last)`` of that coordination and
    the one noun phrase that says it: the plural ("many women"), or "two" and the plural for
    two singular nouns joined by "and" ("two women", "the two young women"). ``None`` where the
    swap repeats no noun phrase (the modifiers differ: "a woman and a young woman")."""
    conjunction = target + 1
    if conjunction >= len(words) or lowered[conjunction] not in ("and", "or"):
        return None
    if caption[words[target].end() : words[conjunction].start()].strip():
        return None  # punctuation between: "a man, and a woman behind him"
    new = replacement.lower()
    start = conjunction + 1
    while start < len(words) and lowered[start] in ("and", "or"):  # a typo: "men and and women"
        start += 1
    if start < len(words) and lowered[start] in _DETERMINERS:
        start += 1
    other = next(
        (
            i
            for i in range(start, min(start + 3, len(words)))
            if _SINGULAR_OF.get(lowered[i], lowered[i]) == _SINGULAR_OF.get(new, new)
        ),
        None,
    )
    if other is None:
        return None
    modifiers = lowered[start:other]
    first = target - len(modifiers)
    if first < 0 or list(lowered[first:target]) != list(modifiers):
        return None  # "a man and a young woman": not the same noun phrase
    if first > 0 and lowered[first - 1] in _DETERMINERS:
        first -= 1
    determiner = lowered[first] if lowered[first] in _DETERMINERS and first < target else ""
    described = " ".join(
        caption[words[i].start() : words[i].end()] for i in range(first + bool(determiner), target)
    )
    conjunct = lowered[other]
    both_singular = new in _PLURAL_OF and conjunct in _PLURAL_OF
    kept = determiner if determiner not in _SINGULAR_DETERMINERS else ""
    if both_singular and lowered[conjunction] == "or":
        parts = [determiner, described, new]  # "a man or a woman" -> "a woman"
    elif both_singular:
        parts = [kept, "two", described, _PLURAL_OF[new]]
    else:
        parts = [kept, described, _PLURAL_OF.get(new, new)]
    phrase = " ".join(part for part in parts if part)
    return first, other, _match_case(phrase, words[first].group())


def in_name(caption: str, words: Sequence[re.Match[str]], index: int) -> bool:
    """Whether word ``index`` is part of a name ("iron man", "Spider-Man", "Iron Man")
    rather than a person noun: a ``NAME_COMPOUNDS`` pair, a hyphen on either side, or a
    capital letter when the caption is not in title case and no sentence starts at the word."""
    match = words[index]
    word = match.group().lower()
    before = words[index - 1].group().lower() if index > 0 else ""
    after = words[index + 1].group().lower() if index + 1 < len(words) else ""
    if (before, word) in NAME_COMPOUNDS or (word, after) in NAME_COMPOUNDS:
        return True
    if (
        caption[match.start() - 1 : match.start()] == "-"
        or caption[match.end() : match.end() + 1] == "-"
    ):
        return True
    sentence_start = caption[: match.start()].rstrip()[-1:] in ("", ".", "!", "?", ":", ";", '"')
    capitalised = match.group()[:1].isupper() and not sentence_start
    title_case = sum(w.group()[:1].isupper() for w in words) > len(words) / 2
    return capitalised and not title_case


def _person_nouns(
    caption: str, words: Sequence[re.Match[str]], lowered: Sequence[str], female: bool
) -> list[tuple[int, bool]]:
    """``(index, plural)`` of the caption's person nouns of one gender, the referents a pronoun
    of that gender may have (names such as "iron man" excluded)."""
    nouns = (FEMALE_NOUNS | _OTHER_FEMALE_NOUNS) if female else (MALE_NOUNS | _OTHER_MALE_NOUNS)
    return [
        (i, word in _PLURAL_NOUNS)
        for i, word in enumerate(lowered)
        if word in nouns and not in_name(caption, words, i)
    ]


def _referent(pronoun: int, persons: Sequence[tuple[int, bool]]) -> int | None:
    """The noun a singular pronoun at word ``pronoun`` refers to: the nearest singular person
    noun before it, else the nearest plural one before it, else the first one after it."""
    before = [(i, plural) for i, plural in persons if i < pronoun]
    singular = [i for i, plural in before if not plural]
    if singular:
        return singular[-1]
    if before:
        return before[-1][0]
    after = [i for i, _ in persons if i > pronoun]
    return after[0] if after else None


def _word_tags(nlp: Language, caption: str, words: Sequence[re.Match[str]]) -> list[str]:
    """The fine-grained tag of the spaCy token starting at each regex word."""
    doc = nlp(caption)
    by_start = {token.idx: token.tag_ for token in doc}
    return [by_start.get(match.start(), "") for match in words]
