"""Spatial-preposition foils (ViLMA §3.6 and appendix C.6).

1. Candidates: each spatial preposition of a caption is replaced by every other preposition
   found in the caption set itself, so foils use the captions' vocabulary
   (:func:`spatial_prepositions`, :func:`preposition_candidates`).
2. Ranking: T5 scores each candidate's preposition in context with a subject prepended
   ("someone rolling a can onto a flat surface"; the subject is for scoring only), and the
   ``top_k`` (10) best are kept (:func:`rank_by_t5`). The score is the mean log-likelihood T5
   gives the preposition as the filler of a ``<extra_id_0>`` span in its place: T5's own
   pretraining task, and comparable across candidates of one caption.
3. The NLI and grammaticality filters run on the ranked candidates (given as callables).
4. Distribution matching: one foil is chosen per caption, best first, skipping candidates whose
   preposition has already been used as often as it occurs in the captions
   (:func:`match_caption_distribution`): no preposition is more frequent among foils than
   among captions, so a model cannot tell foils by their prepositions.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from foilkit.generation.foil import Foil
from foilkit.generation.infill import T5_MASK

RULE = "vilma.spatial"
FOIL_TYPE = "spatial"
TOP_K = 10
SCORING_SUBJECT = "someone"
PAPER_RANKING_MODEL = "t5-base"

# The spatial prepositions of ViLMA's relations subtest (Something-Something V2 validation set)
# and common others; multi-word ones are matched first.
SPATIAL_PREPOSITIONS: tuple[str, ...] = (
    "from behind of",
    "in front of",
    "next to",
    "out of",
    "away from",
    "on top of",
    *"across against along behind beside down from in inside into off on onto over through "
    "towards toward under underneath up with".split(),
)


@dataclass(frozen=True)
class PrepositionSlot:
    """One occurrence of a preposition in a caption (character span)."""

    start: int
    end: int
    preposition: str


def _pattern(vocabulary: Iterable[str]) -> re.Pattern[str]:
    words = sorted(set(vocabulary), key=lambda p: (-len(p.split()), -len(p)))
    return re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)


def preposition_slots(
    caption: str, vocabulary: Iterable[str] = SPATIAL_PREPOSITIONS
) -> list[PrepositionSlot]:
    """The prepositions of ``vocabulary`` in ``caption``, longest match first, left to right."""
    return [
        PrepositionSlot(m.start(), m.end(), m.group().lower())
        for m in _pattern(vocabulary).finditer(caption)
    ]


def spatial_prepositions(
    captions: Iterable[str], vocabulary: Iterable[str] = SPATIAL_PREPOSITIONS
) -> Counter[str]:
    """How often each preposition of ``vocabulary`` occurs in the caption set."""
    vocabulary = tuple(vocabulary)
    return Counter(slot.preposition for c in captions for slot in preposition_slots(c, vocabulary))


def preposition_candidates(caption: str, in_distribution: Iterable[str]) -> list[Foil]:
    """Every caption with one preposition replaced by another of ``in_distribution``."""
    in_distribution = sorted(set(in_distribution))
    foils = []
    for slot in preposition_slots(caption, in_distribution):
        for preposition in in_distribution:
            if preposition != slot.preposition:
                foils.append(
                    Foil(
                        caption[: slot.start] + preposition + caption[slot.end :],
                        FOIL_TYPE,
                        RULE,
                        source={
                            "preposition": slot.preposition,
                            "replacement": preposition,
                            "start": slot.start,
                        },
                    )
                )
    return foils


def rank_by_t5(
    caption: str,
    candidates: Sequence[Foil],
    model: Any,
    tokenizer: Any,
    *,
    top_k: int = TOP_K,
    subject: str = SCORING_SUBJECT,
    model_id: str | None = None,
) -> list[Foil]:
    """The ``top_k`` candidates whose new preposition T5 finds most plausible, best first;
    each records its ``t5_plausibility`` (mean log-likelihood of the preposition)."""
    import torch

    if not candidates:
        return []
    model_id = model_id or str(model.config.name_or_path)
    inputs, targets = [], []
    for foil in candidates:
        start = int(foil.source["start"])
        replacement = str(foil.source["replacement"])
        context = caption[:start] + T5_MASK + caption[start + len(foil.source["preposition"]) :]
        inputs.append(f"{subject} {context}" if subject else context)
        targets.append(f"{T5_MASK} {replacement} <extra_id_1>")
    encoded = tokenizer(inputs, return_tensors="pt", padding=True).to(model.device)
    labels = tokenizer(targets, return_tensors="pt", padding=True)["input_ids"].to(model.device)
    labels[labels == tokenizer.pad_token_id] = -100
    with torch.inference_mode():
        logits = model(**encoded, labels=labels).logits
    logprobs = logits.log_softmax(-1)
    mask = labels != -100
    token_logprobs = logprobs.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1) * mask
    scores = (token_logprobs.sum(-1) / mask.sum(-1)).tolist()
    ranked = sorted(zip(scores, range(len(candidates))), key=lambda pair: (-pair[0], pair[1]))
    return [
        candidates[i].passed(
            "t5_plausibility", score, model_id=model_id, top_k=top_k, subject=subject
        )
        for score, i in ranked[:top_k]
    ]


def match_caption_distribution(
    ranked_foils: Sequence[Sequence[Foil]], caption_counts: Mapping[str, int]
) -> list[Foil | None]:
    """One foil per caption (``None`` where every candidate would over-use its preposition).

    ``ranked_foils[i]`` are caption ``i``'s candidates, best first; a candidate is skipped when
    its preposition already has ``caption_counts[p]`` foils.
    """
    used: Counter[str] = Counter()
    chosen: list[Foil | None] = []
    for candidates in ranked_foils:
        pick = next(
            (
                f
                for f in candidates
                if used[f.source["replacement"]]
                < caption_counts.get(str(f.source["replacement"]), 0)
            ),
            None,
        )
        if pick is not None:
            used[str(pick.source["replacement"])] += 1
        chosen.append(pick)
    return chosen


def spatial_foils(
    captions: Sequence[str],
    model: Any,
    tokenizer: Any,
    *,
    filters: Sequence[Callable[[str, Sequence[Foil]], list[Foil]]] = (),
    top_k: int = TOP_K,
    vocabulary: Iterable[str] = SPATIAL_PREPOSITIONS,
    subject: str = SCORING_SUBJECT,
) -> list[Foil | None]:
    """The whole pipeline over a caption set: one distribution-matched foil per caption.

    ``filters`` are applied in order to each caption's ranked candidates
    (e.g. ``NLIFilter(...)`` then ``GrammaticalityFilter(...)``).
    """
    counts = spatial_prepositions(captions, vocabulary)
    ranked = []
    for caption in captions:
        candidates = rank_by_t5(
            caption,
            preposition_candidates(caption, counts),
            model,
            tokenizer,
            top_k=top_k,
            subject=subject,
        )
        for keep in filters:
            candidates = keep(caption, candidates) if candidates else []
        ranked.append(candidates)
    return match_caption_distribution(ranked, counts)
