"""Bias checks for a foil set: can foils be told from captions without the video?

* Lexical bias (ViLMA appendix B.1): the Jensen-Shannon divergence between the normalised word
  frequencies of the foils ``f`` and of the captions ``c``,
  ``JS(f || c) = (KL(f || m) + KL(c || m)) / 2`` with ``m = (f + c) / 2``; 0 when both use words
  alike, 1 (in bits) when they share none. ViLMA reports it before and after validation; here
  before and after any filter (:func:`filter_bias_report`).
* Plausibility bias (ViLMA §4's unimodal baselines): how often a text-only causal LM prefers
  the caption to every one of its foils by perplexity (:func:`text_only_baseline`). Far above
  chance, the foils are solvable from text alone.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from foilkit.generation.perplexity import perplexities

if TYPE_CHECKING:
    from foilkit.scorers.adapters.text_lm import TextLMAdapter

_WORD = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")


def word_frequencies(texts: Iterable[str]) -> Counter[str]:
    """Lower-cased word counts of ``texts``."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(_WORD.findall(text.lower()))
    return counts


def _normalise(counts: Mapping[str, float], vocabulary: Sequence[str]) -> list[float]:
    total = sum(counts.get(word, 0) for word in vocabulary)
    if total <= 0:
        raise ValueError("cannot normalise an empty word distribution")
    return [counts.get(word, 0) / total for word in vocabulary]


def _kl(p: Sequence[float], q: Sequence[float], base: float) -> float:
    return sum(pi * math.log(pi / qi, base) for pi, qi in zip(p, q) if pi > 0)


def js_divergence(
    foil_counts: Mapping[str, float], caption_counts: Mapping[str, float], *, base: float = 2.0
) -> float:
    """Jensen-Shannon divergence of two word-frequency tables (normalised here); in bits by
    default, so it lies in [0, 1]."""
    vocabulary = sorted(set(foil_counts) | set(caption_counts))
    f, c = _normalise(foil_counts, vocabulary), _normalise(caption_counts, vocabulary)
    m = [(fi + ci) / 2 for fi, ci in zip(f, c)]
    return (_kl(f, m, base) + _kl(c, m, base)) / 2


def lexical_bias(captions: Iterable[str], foils: Iterable[str], *, base: float = 2.0) -> float:
    """JS divergence between the word frequencies of ``foils`` and of ``captions``."""
    return js_divergence(word_frequencies(foils), word_frequencies(captions), base=base)


def filter_bias_report(
    captions: Sequence[str],
    foils_before: Sequence[str],
    foils_after: Sequence[str],
    *,
    captions_after: Sequence[str] | None = None,
) -> dict[str, float]:
    """Lexical bias before and after a filter (``captions_after``: the captions still paired
    with a foil after it, when the filter drops whole items)."""
    before = lexical_bias(captions, foils_before)
    after = lexical_bias(captions if captions_after is None else captions_after, foils_after)
    return {
        "js_before": before,
        "js_after": after,
        "js_change": after - before,
        "foils_before": float(len(foils_before)),
        "foils_after": float(len(foils_after)),
    }


def text_only_baseline(
    lm: TextLMAdapter, items: Sequence[tuple[str, Sequence[str]]]
) -> dict[str, Any]:
    """How often a causal LM gives the caption a lower perplexity than every foil.

    ``items`` are ``(caption, foils)`` pairs. Returns the ``accuracy`` (strictly preferred
    caption), ``ties`` (caption tied with its best foil), ``chance`` (1 / (1 + foils), averaged),
    mean perplexities of captions and foils, and the number of ``items``.
    """
    if not items:
        raise ValueError("text_only_baseline needs at least one (caption, foils) item")
    for index, (caption, foils) in enumerate(items):
        if not foils:
            raise ValueError(f"item {index} (caption {caption!r}) has no foils")
    texts = list(dict.fromkeys(t for caption, foils in items for t in (caption, *foils)))
    ppl = dict(zip(texts, perplexities(lm, texts)))
    wins = ties = 0
    chance = 0.0
    for caption, foils in items:
        best_foil = min(ppl[f] for f in foils)
        wins += ppl[caption] < best_foil
        ties += ppl[caption] == best_foil
        chance += 1 / (1 + len(foils))
    n = len(items)
    caption_ppl = [ppl[c] for c, _ in items]
    foil_ppl = [ppl[f] for _, foils in items for f in foils]
    return {
        "model_id": str(lm.model_id),
        "items": n,
        "accuracy": wins / n,
        "ties": ties / n,
        "chance": chance / n,
        "mean_caption_perplexity": sum(caption_ppl) / len(caption_ppl),
        "mean_foil_perplexity": sum(foil_ppl) / len(foil_ppl),
    }
