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

Synonyms take the place of the paper's counter-fitted word vectors, which pull synonyms together
(from PPDB and WordNet) and ship in no package: :class:`WordNetVerbSenses` reads
``data/wordnet_verb_senses.json``, every WordNet 3.1 verb lemma with its synsets in WordNet's
sense order (written from a WordNet ``dict/`` folder by
``generation/calibration/wordnet_verb_senses.py``; WordNet's licence is ``data/LICENSE-WORDNET``),
and :func:`shared_synsets` says whether two verbs share a sense.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from foilkit.generation.wordnet import load_wordnet

# Frequent action verbs of video captions and their opposites (lemmas), "verb/opposite".
# Symmetrised below.
BUILTIN_VERB_ANTONYMS: tuple[tuple[str, str], ...] = tuple(
    tuple(pair.split("/"))
    for pair in (
        "open/close, push/pull, raise/lower, lift/drop, rise/fall, stand/sit, sit/lie, enter/exit, "
        "enter/leave, arrive/leave, come/go, give/take, give/receive, buy/sell, win/lose, "
        "start/stop, begin/end, begin/finish, laugh/cry, smile/frown, appear/disappear, "
        "attach/detach, fill/empty, increase/decrease, inflate/deflate, load/unload, lock/unlock, "
        "pack/unpack, tie/untie, wrap/unwrap, dress/undress, fold/unfold, plug/unplug, "
        "cover/uncover, build/destroy, build/demolish, assemble/disassemble, connect/disconnect, "
        "accept/reject, agree/disagree, love/hate, remember/forget, find/lose, catch/throw, "
        "catch/miss, hit/miss, sink/float, wake/sleep, whisper/shout, ask/answer, attack/defend, "
        "teach/learn, turn on/turn off, put on/take off, pick up/put down, speed up/slow down, "
        "add/remove, insert/remove, inhale/exhale, import/export, tighten/loosen, heat/cool, "
        "freeze/melt, climb/descend, ascend/descend, advance/retreat, expand/shrink, "
        "stretch/shrink, include/exclude, dive/surface"
    ).split(", ")
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


WORDNET_VERB_SENSES_FILE = Path(__file__).parent / "data" / "wordnet_verb_senses.json"


class VerbSenses(Protocol):
    name: str

    def senses(self, lemma: str) -> Sequence[int]:
        """The synset ids of a verb lemma, most frequent sense first (empty when unknown)."""


class WordNetVerbSenses:
    """WordNet verb lemma -> synset ids (indices into WordNet's verb synsets), in sense order.

    A multi-word lemma WordNet lacks ("walk slowly", or two verbs "stand walk") falls back to its
    first word, so a phrase is compared by its head verb; lemmas are lower case, words joined
    by a space.
    """

    def __init__(self, senses: Mapping[str, Sequence[int]], name: str) -> None:
        self._senses = senses
        self.name = name

    @classmethod
    def load(cls, path: str | os.PathLike = WORDNET_VERB_SENSES_FILE) -> WordNetVerbSenses:
        """The table written by ``generation/calibration/wordnet_verb_senses.py``."""
        return _load_senses(str(path))

    def senses(self, lemma: str) -> Sequence[int]:
        lemma = lemma.lower().strip()
        if lemma in self._senses:
            return self._senses[lemma]
        return self._senses.get(lemma.split(" ", 1)[0], ())

    def __len__(self) -> int:
        return len(self._senses)


@lru_cache(maxsize=4)
def _load_senses(path: str) -> WordNetVerbSenses:
    table = json.loads(Path(path).read_text(encoding="utf-8"))
    return WordNetVerbSenses(table["verbs"], name=table["name"])


def shared_synsets(senses: VerbSenses, original: str, candidate: str, first_senses: int) -> int:
    """How many synsets two verb lemmas share among the first ``first_senses`` senses of either
    (the same lemma shares all of its senses): WordNet calls them synonyms when this is > 0.

    A shared sense counts only when it is among the first ``first_senses`` of at least one of
    the two verbs, so that rare senses do not make synonyms of different actions: "talk" and
    "sing" share only their fifth senses ("spill the beans"), "play" and "run" the 18th and 10th;
    "pass" and "die" share the first sense of "die" and are synonyms.
    """
    left, right = senses.senses(original), senses.senses(candidate)
    return len((set(left[:first_senses]) & set(right)) | (set(left) & set(right[:first_senses])))


def read_wordnet_verb_index(dict_dir: str | os.PathLike) -> dict[str, list[int]]:
    """verb lemma -> synset byte offsets in ``data.verb``, in WordNet's sense order, from a
    WordNet ``dict/`` folder's ``index.verb`` (underscores of multi-word lemmas as spaces)."""
    offsets: dict[str, list[int]] = {}
    index = Path(dict_dir) / "index.verb"
    for line in index.read_text(encoding="utf-8").splitlines():
        if line.startswith(" "):  # the licence header
            continue
        fields = line.split()
        synset_count, pointer_count = int(fields[2]), int(fields[3])
        offsets[fields[0].replace("_", " ")] = [
            int(o) for o in fields[6 + pointer_count :][:synset_count]
        ]
    return offsets
