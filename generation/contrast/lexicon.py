"""Verb antonyms for the contrast-set semantic-inconsistency check (paper 001, §3.2, A.3).

A candidate verb that is an antonym of the original verb makes a valid foil even when embedding
similarity is high ("raises" vs "lowers" are close in most embedding spaces). The paper takes
antonyms from WordNet/VerbNet. WordNet's data cannot be installed from PyPI (NLTK fetches it
with ``nltk.download``, which needs network access), so the lexicon is pluggable:

* :class:`BuiltinVerbLexicon` -- a small hand-written list of frequent action-verb antonym pairs
  (``BUILTIN_VERB_ANTONYMS``), symmetric, used by default;
* :class:`WordNetVerbLexicon` -- NLTK's WordNet verb antonyms, for users who have ``nltk`` and its
  ``wordnet`` corpus installed.

Anything with ``antonyms(lemma) -> set[str]`` and a ``name`` works.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from foilkit.generation.wordnet import load_wordnet

# Frequent action verbs of video captions and their opposites (lemmas). Symmetrised below.
BUILTIN_VERB_ANTONYMS: tuple[tuple[str, str], ...] = (
    ("open", "close"),
    ("push", "pull"),
    ("raise", "lower"),
    ("lift", "drop"),
    ("rise", "fall"),
    ("stand", "sit"),
    ("sit", "lie"),
    ("enter", "exit"),
    ("enter", "leave"),
    ("arrive", "leave"),
    ("come", "go"),
    ("give", "take"),
    ("give", "receive"),
    ("buy", "sell"),
    ("win", "lose"),
    ("start", "stop"),
    ("begin", "end"),
    ("begin", "finish"),
    ("laugh", "cry"),
    ("smile", "frown"),
    ("appear", "disappear"),
    ("attach", "detach"),
    ("fill", "empty"),
    ("increase", "decrease"),
    ("inflate", "deflate"),
    ("load", "unload"),
    ("lock", "unlock"),
    ("pack", "unpack"),
    ("tie", "untie"),
    ("wrap", "unwrap"),
    ("dress", "undress"),
    ("fold", "unfold"),
    ("plug", "unplug"),
    ("cover", "uncover"),
    ("build", "destroy"),
    ("build", "demolish"),
    ("assemble", "disassemble"),
    ("connect", "disconnect"),
    ("accept", "reject"),
    ("agree", "disagree"),
    ("love", "hate"),
    ("remember", "forget"),
    ("find", "lose"),
    ("catch", "throw"),
    ("catch", "miss"),
    ("hit", "miss"),
    ("sink", "float"),
    ("wake", "sleep"),
    ("whisper", "shout"),
    ("ask", "answer"),
    ("attack", "defend"),
    ("teach", "learn"),
    ("turn on", "turn off"),
    ("put on", "take off"),
    ("pick up", "put down"),
    ("speed up", "slow down"),
    ("add", "remove"),
    ("insert", "remove"),
    ("inhale", "exhale"),
    ("import", "export"),
    ("tighten", "loosen"),
    ("heat", "cool"),
    ("freeze", "melt"),
    ("climb", "descend"),
    ("ascend", "descend"),
    ("advance", "retreat"),
    ("expand", "shrink"),
    ("stretch", "shrink"),
    ("include", "exclude"),
    ("dive", "surface"),
)


class VerbLexicon(Protocol):
    name: str

    def antonyms(self, lemma: str) -> set[str]:
        """The antonym lemmas of a verb lemma (multi-word lemmas joined by a space)."""


class BuiltinVerbLexicon:
    """Antonyms from a list of lemma pairs (``BUILTIN_VERB_ANTONYMS`` by default), symmetric."""

    def __init__(
        self, pairs: Iterable[tuple[str, str]] = BUILTIN_VERB_ANTONYMS, name: str = "builtin"
    ) -> None:
        table: dict[str, set[str]] = {}
        for left, right in pairs:
            table.setdefault(left, set()).add(right)
            table.setdefault(right, set()).add(left)
        self._table: Mapping[str, set[str]] = table
        self.name = name

    def antonyms(self, lemma: str) -> set[str]:
        return set(self._table.get(lemma.lower(), ()))


class WordNetVerbLexicon:
    """Verb antonyms from NLTK's WordNet (needs ``nltk`` and its ``wordnet`` corpus installed)."""

    name = "wordnet"

    def __init__(self) -> None:
        self._wordnet = load_wordnet(
            "WordNetVerbLexicon", "BuiltinVerbLexicon or another VerbLexicon"
        )

    def antonyms(self, lemma: str) -> set[str]:
        found = set()
        for synset in self._wordnet.synsets(lemma.replace(" ", "_"), pos=self._wordnet.VERB):
            for synset_lemma in synset.lemmas():
                found.update(a.name().replace("_", " ") for a in synset_lemma.antonyms())
        return found


def is_antonym(lexicon: VerbLexicon, original: str, candidate: str) -> bool:
    """Whether two verb lemmas are antonyms in either direction of the lexicon."""
    return candidate.lower() in lexicon.antonyms(original) or original.lower() in lexicon.antonyms(
        candidate
    )
