"""Criterion (e), diversity: when merging filtered samples, favour less common changes of verb.

VITATECS' finalisation (§3.3) "address[es] the issue of diversity by favoring generations that
involve a less common change of verb throughout the dataset when merging the filtered samples".
foilkit makes that concrete: every accepted candidate gets a *change signature* -- the verb
lemmas it removes and adds (``verb:open>close``), or, when no verb changes, the words it
removes and adds (``word:fast>slowly``), or ``order`` for a pure reordering. Then for every
caption and aspect the candidate whose signature is rarest among all accepted candidates of
that aspect is kept (ties: the filter's larger margin), optionally capping how often one
signature may appear.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from spacy.language import Language

T = TypeVar("T")


def _signature(removed: Sequence[str], added: Sequence[str], kind: str) -> str:
    return f"{kind}:{'+'.join(sorted(set(removed)))}>{'+'.join(sorted(set(added)))}"


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.lower())


def change_signatures(pairs: Sequence[tuple[str, str]], nlp: Language | None = None) -> list[str]:
    """The change signature of every (caption, counterfactual); verbs need a spaCy ``nlp``."""
    signatures = []
    texts = [text for pair in pairs for text in pair]
    docs = list(nlp.pipe(texts)) if nlp is not None else [None] * len(texts)
    for index, (caption, counterfactual) in enumerate(pairs):
        doc_caption, doc_counterfactual = docs[2 * index], docs[2 * index + 1]
        if doc_caption is not None:
            verbs = [
                {t.lemma_.lower() for t in doc if t.pos_ == "VERB"}
                for doc in (doc_caption, doc_counterfactual)
            ]
            if verbs[0] != verbs[1]:
                signatures.append(_signature(verbs[0] - verbs[1], verbs[1] - verbs[0], "verb"))
                continue
        words = [set(_words(caption)), set(_words(counterfactual))]
        if words[0] != words[1]:
            signatures.append(_signature(words[0] - words[1], words[1] - words[0], "word"))
        else:
            signatures.append("order")
    return signatures


def select_diverse(
    items: Sequence[T],
    *,
    signature: Callable[[T], Hashable],
    group: Callable[[T], Hashable],
    score: Callable[[T], float],
    per_group: int = 1,
    max_per_signature: int | None = None,
) -> list[bool]:
    """Which items to keep: per group, up to ``per_group`` items with the rarest signatures.

    Rarity is the signature's count over all ``items``; ties go to the higher ``score``.
    ``max_per_signature`` caps how many items with one signature are kept in all.
    """
    frequency = Counter(signature(item) for item in items)
    groups: dict[Hashable, list[int]] = {}
    for index, item in enumerate(items):
        groups.setdefault(group(item), []).append(index)
    kept = [False] * len(items)
    used: Counter = Counter()
    for indices in groups.values():
        ranked = sorted(
            indices, key=lambda i: (frequency[signature(items[i])], -score(items[i]), i)
        )
        taken = 0
        for index in ranked:
            key = signature(items[index])
            if taken == per_group:
                break
            if max_per_signature is not None and used[key] >= max_per_signature:
                continue
            kept[index] = True
            used[key] += 1
            taken += 1
    return kept
