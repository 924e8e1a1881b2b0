"""Does a rewrite keep the caption's time? A lexicon of temporal words and reversal verbs.

RTime's captions describe an order of events or a direction of change (§3.1.3: "first ...
then ...", "opens", "takes off"); its rewrites (§3.1.3, Tab. 9) must vary the wording "while
retaining the key semantic information", and for a temporal benchmark the time is the key
information. A rewrite that drops "then", or turns "opens" into "closes", describes another
video -- possibly the reversed one, the very hard negative the benchmark is built around.

The lexicon is data (``data/temporal_words.json``, or any file of the same shape), edited by
whoever knows the captions best:

* ``classes``: name -> ``{"words": [...], "also_accepts": [...]}``. A class is *present* in a
  caption when one of its ``words`` occurs; a rewrite *keeps* it when one of its ``words`` or
  ``also_accepts`` occurs (``also_accepts`` holds words too ambiguous to detect a class, such as
  "as" for simultaneity, yet fine as its paraphrase).
* ``opposites``: pairs of class names (``["open", "close"]``). A rewrite that brings in a class
  the caption lacks while the caption holds its opposite, and does not keep that opposite, has
  reversed the caption (a rewrite naming both directions, as its caption may, reverses nothing).
* ``must_keep`` (optional): the classes a rewrite may not drop; without it, every class. The
  packaged file lists the order words only: a rewrite that says "unlatched" for "opened" drops
  the class ``open`` without changing the video it describes, while one that loses "then"
  loses the order of events.
* A word is a phrase of space-separated elements; an element matches a token whose lower-cased
  text *or* lemma equals it, ``word/POS`` also requires spaCy's coarse part of speech, and ``*``
  stands for up to ``max_gap`` arbitrary tokens ("take * off" matches "takes her shoes off").

Matching works on :class:`Token` lists (text, lemma, part of speech), which
:func:`spacy_tokenizer` makes from any spaCy pipeline; the checks themselves are pure.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from spacy.language import Language

DEFAULT_TEMPORAL_WORDS = Path(__file__).parent / "data" / "temporal_words.json"
GAP = "*"


class Token(NamedTuple):
    """One token as the lexicon sees it: lower-cased text, lower-cased lemma, coarse POS."""

    text: str
    lemma: str
    pos: str


Tokenizer = Callable[[Sequence[str]], list[list[Token]]]


@dataclass(frozen=True)
class _Element:
    word: str
    pos: str | None

    def matches(self, token: Token) -> bool:
        return (token.text == self.word or token.lemma == self.word) and (
            self.pos is None or token.pos == self.pos
        )


@dataclass(frozen=True)
class Phrase:
    """A lexicon word: elements that must occur in order, ``*`` allowing a gap between two."""

    source: str
    elements: tuple[_Element, ...]
    gaps: tuple[bool, ...]  # gaps[i]: may tokens come between elements i and i+1

    @classmethod
    def parse(cls, source: str, *, where: str) -> Phrase:
        elements: list[_Element] = []
        gaps: list[bool] = []
        gap = False
        for part in source.lower().split():
            if part == GAP:
                if not elements or gap:
                    raise ValueError(f"{where}: {source!r} has '*' at its start or twice in a row")
                gap = True
                continue
            word, _, pos = part.partition("/")
            if not word:
                raise ValueError(f"{where}: {source!r} has an empty element")
            if elements:
                gaps.append(gap)
            elements.append(_Element(word, pos.upper() or None))
            gap = False
        if not elements or gap:
            raise ValueError(f"{where}: {source!r} is empty or ends with '*'")
        return cls(source, tuple(elements), tuple(gaps))

    def occurs_in(self, tokens: Sequence[Token], max_gap: int) -> bool:
        return any(self._from(tokens, start, 0, max_gap) for start in range(len(tokens)))

    def _from(self, tokens: Sequence[Token], at: int, element: int, max_gap: int) -> bool:
        if at >= len(tokens) or not self.elements[element].matches(tokens[at]):
            return False
        if element + 1 == len(self.elements):
            return True
        reach = max_gap + 1 if self.gaps[element] else 1
        return any(
            self._from(tokens, at + step, element + 1, max_gap) for step in range(1, reach + 1)
        )


@dataclass(frozen=True)
class TemporalClass:
    """Words that say one temporal thing (an order, a direction, one side of a reversal)."""

    name: str
    words: tuple[Phrase, ...]
    also_accepts: tuple[Phrase, ...] = ()


@dataclass(frozen=True)
class TemporalViolation:
    """Why a rewrite does not keep its caption's time: a dropped or a reversed class."""

    kind: str  # "dropped" or "reversed"
    caption_class: str
    rewrite_class: str | None = None
    evidence: str = ""  # the caption's (dropped) or the rewrite's (reversed) words

    def __str__(self) -> str:
        if self.kind == "dropped":
            return f"drops {self.caption_class!r} ({self.evidence})"
        return f"reverses {self.caption_class!r} into {self.rewrite_class!r} ({self.evidence})"


class TemporalLexicon:
    """Temporal word classes and their opposites; see the module docstring for the file format."""

    def __init__(
        self,
        classes: Iterable[TemporalClass],
        opposites: Iterable[tuple[str, str]] = (),
        *,
        max_gap: int = 3,
        source: str = "<memory>",
        must_keep: Iterable[str] | None = None,
    ) -> None:
        self.classes = {cls.name: cls for cls in classes}
        self.must_keep = frozenset(self.classes if must_keep is None else must_keep)
        unknown = sorted(self.must_keep - set(self.classes))
        if unknown:
            raise ValueError(f"{source}: must_keep names unknown classes {unknown}")
        self.max_gap = max_gap
        self.source = source
        self.opposites: dict[str, set[str]] = {}
        for left, right in opposites:
            for name in (left, right):
                if name not in self.classes:
                    raise ValueError(f"{source}: opposites name an unknown class {name!r}")
            self.opposites.setdefault(left, set()).add(right)
            self.opposites.setdefault(right, set()).add(left)

    @classmethod
    def from_record(cls, record: Mapping[str, Any], *, source: str = "<memory>") -> TemporalLexicon:
        classes = []
        for name, spec in record.get("classes", {}).items():
            where = f"{source}: class {name!r}"
            if not isinstance(spec, Mapping) or not spec.get("words"):
                raise ValueError(f"{where} needs a non-empty 'words' list")
            classes.append(
                TemporalClass(
                    name,
                    tuple(Phrase.parse(word, where=where) for word in spec["words"]),
                    tuple(Phrase.parse(word, where=where) for word in spec.get("also_accepts", ())),
                )
            )
        if not classes:
            raise ValueError(f"{source}: no temporal word classes")
        opposites = []
        for pair in record.get("opposites", ()):
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ValueError(f"{source}: an entry of 'opposites' is not a pair: {pair!r}")
            opposites.append((pair[0], pair[1]))
        return cls(
            classes,
            opposites,
            max_gap=int(record.get("max_gap", 3)),
            source=source,
            must_keep=record.get("must_keep"),
        )

    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> TemporalLexicon:
        """The lexicon in ``path`` (JSON), by default foilkit's ``data/temporal_words.json``."""
        path = Path(path or DEFAULT_TEMPORAL_WORDS)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}: not valid JSON ({error.msg}, line {error.lineno})") from None
        return cls.from_record(record, source=str(path))

    def present(self, tokens: Sequence[Token]) -> dict[str, str]:
        """Class name -> the first of its words found in ``tokens`` (detection words only)."""
        found = {}
        for name, cls in self.classes.items():
            for phrase in cls.words:
                if phrase.occurs_in(tokens, self.max_gap):
                    found[name] = phrase.source
                    break
        return found

    def keeps(self, name: str, tokens: Sequence[Token]) -> bool:
        cls = self.classes[name]
        return any(p.occurs_in(tokens, self.max_gap) for p in cls.words + cls.also_accepts)

    def violations(
        self, caption: Sequence[Token], rewrite: Sequence[Token]
    ) -> list[TemporalViolation]:
        """What ``rewrite`` loses or reverses of ``caption``'s temporal classes (empty: kept)."""
        in_caption = self.present(caption)
        in_rewrite = self.present(rewrite)
        kept = {name: self.keeps(name, rewrite) for name in in_caption}
        found = [
            TemporalViolation("dropped", name, evidence=word)
            for name, word in in_caption.items()
            if name in self.must_keep and not kept[name]
        ]
        for name, word in in_rewrite.items():
            if name in in_caption:
                continue
            for opposite in sorted(self.opposites.get(name, ())):
                if opposite in in_caption and not kept[opposite]:
                    found.append(TemporalViolation("reversed", opposite, name, evidence=word))
        return found


# Components a lemma and a coarse POS do not need: skipping them makes tokenizing ~3x faster.
_UNNEEDED_COMPONENTS = ("parser", "ner", "senter")


def spacy_tokenizer(nlp: Language, *, batch_size: int = 256) -> Tokenizer:
    """Texts -> :class:`Token` lists through a spaCy pipeline (tagger and lemmatizer needed)."""
    disable = [name for name in _UNNEEDED_COMPONENTS if name in nlp.pipe_names]

    def tokenize(texts: Sequence[str]) -> list[list[Token]]:
        return [
            [Token(t.text.lower(), t.lemma_.lower(), t.pos_) for t in doc if not t.is_space]
            for doc in nlp.pipe(list(texts), batch_size=batch_size, disable=disable)
        ]

    return tokenize
