"""Synonym replacement, the data augmentation of VITATECS' filter-model fine-tuning (appendix E).

The paper follows EDA (Wei and Zou): "randomly choose one word from the sentence and replace it
with its synonym based on WordNet". WordNet's data cannot be installed from PyPI (NLTK fetches it
with ``nltk.download``), so the synonym source is pluggable, as the verb lexicon of
:mod:`foilkit.generation.contrast.lexicon` is:

* :class:`BuiltinSynonyms` -- a small list of synonyms of frequent video-caption words
  (inflected forms listed as such, so a replacement keeps the sentence grammatical);
* :class:`WordNetSynonyms` -- NLTK's WordNet, where ``nltk`` and its ``wordnet`` corpus are
  installed;
* anything with ``synonyms(word) -> list[str]`` and a ``name``.

For a sentence *pair* the replaced word is one both sentences share (the static context the
pair keeps), replaced in both, so the augmented pair differs exactly as the original did.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from foilkit.generation.wordnet import load_wordnet

# Groups of interchangeable words found in video captions ("word/word/..."); every word maps to
# the others.
BUILTIN_SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = tuple(
    tuple(group.split("/"))
    for group in (
        "man/guy/gentleman, men/guys/gentlemen, woman/lady, women/ladies, "
        "person/individual/someone, people/persons/folks, boy/lad, kid/child, kids/children, "
        "car/automobile/vehicle, cars/automobiles/vehicles, road/street, video/clip/footage, "
        "talking/speaking, talks/speaks, talk/speak, shows/displays, showing/displaying, "
        "big/large, small/little/tiny, quickly/rapidly/fast, slowly/gradually, home/house, "
        "stage/platform, shirt/top, photo/picture/photograph, photos/pictures/photographs, "
        "film/movie, song/tune, food/dish, kitchen/cookhouse, dog/puppy/hound, cat/kitty, "
        "ball/sphere, group/bunch, crowd/audience, room/chamber, begins/starts, "
        "beginning/starting, near/close to, large/huge, tv/television, cartoon/animation, "
        "game/match, field/pitch, pan/skillet, beautiful/pretty, old/elderly, young/youthful, "
        "happy/cheerful"
    ).split(", ")
)

_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")


class SynonymSource(Protocol):
    name: str

    def synonyms(self, word: str) -> list[str]:
        """Words that can replace ``word`` (lower case), best first; ``[]`` if none."""


class BuiltinSynonyms:
    """Synonyms from groups of interchangeable words (``BUILTIN_SYNONYM_GROUPS`` by default)."""

    def __init__(
        self, groups: Iterable[Iterable[str]] = BUILTIN_SYNONYM_GROUPS, name: str = "builtin"
    ) -> None:
        table: dict[str, list[str]] = {}
        for group in groups:
            words = [word.lower() for word in group]
            for word in words:
                table.setdefault(word, []).extend(other for other in words if other != word)
        self._table: Mapping[str, list[str]] = table
        self.name = name

    def synonyms(self, word: str) -> list[str]:
        return list(self._table.get(word.lower(), ()))


class WordNetSynonyms:
    """Synonyms from NLTK's WordNet (needs ``nltk`` and its ``wordnet`` corpus installed)."""

    name = "wordnet"

    def __init__(self) -> None:
        self._wordnet = load_wordnet("WordNetSynonyms", "the builtin synonym source")

    def synonyms(self, word: str) -> list[str]:
        found: list[str] = []
        for synset in self._wordnet.synsets(word.lower()):
            for lemma in synset.lemmas():
                name = lemma.name().replace("_", " ").lower()
                if name != word.lower() and name not in found:
                    found.append(name)
        return found


def _auto() -> SynonymSource:
    try:
        return WordNetSynonyms()
    except RuntimeError:
        return BuiltinSynonyms()


#: Name -> factory of the synonym sources ``FilterTraining.synonyms`` can name.
SYNONYM_SOURCES: dict[str, Callable[[], SynonymSource]] = {
    "auto": _auto,  # WordNet where its corpus is installed, else the builtin list
    "builtin": BuiltinSynonyms,
    "wordnet": WordNetSynonyms,
}


def synonym_source(name: str) -> SynonymSource:
    if name not in SYNONYM_SOURCES:
        raise ValueError(
            f"unknown synonym source {name!r}; choose one of {sorted(SYNONYM_SOURCES)}"
        )
    return SYNONYM_SOURCES[name]()


def _replace_word(text: str, word: str, replacement: str) -> str:
    """``text`` with every whole-word occurrence of ``word`` replaced, keeping a capital."""

    def substitute(match: re.Match[str]) -> str:
        found = match.group(0)
        return replacement[:1].upper() + replacement[1:] if found[:1].isupper() else replacement

    return re.sub(rf"\b{re.escape(word)}\b", substitute, text, flags=re.IGNORECASE)


def replace_synonym(
    first: str, second: str, *, rng: random.Random, source: SynonymSource
) -> tuple[str, str] | None:
    """The pair with one randomly chosen word replaced by a synonym, or ``None`` if no word of
    the pair has one. Words both sentences share are preferred (replaced in both)."""
    words_first = {w.lower() for w in _WORD.findall(first)}
    words_second = {w.lower() for w in _WORD.findall(second)}
    for pool in (words_first & words_second, words_first | words_second):
        choices = sorted(w for w in pool if source.synonyms(w))
        if choices:
            word = rng.choice(choices)
            replacement = rng.choice(source.synonyms(word))
            return _replace_word(first, word, replacement), _replace_word(second, word, replacement)
    return None
