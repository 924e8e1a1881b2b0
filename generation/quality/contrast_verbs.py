"""The contrast-set verb filter's quality: published foils against same-meaning verb swaps.

On the published MSR-VTT contrast sets (``shared/data/contrast_sets``), labelled candidates
(:mod:`foilkit.generation.contrast.verb_calibration` builds and scores them):

* ``keep``: the published Verb-LM foils (T5 + the paper's filters) and Verb-Human foils;
* ``reject``: *near-synonym swaps*, the caption's verb replaced by a verb a reader calls the same
  action (:data:`~foilkit.generation.contrast.verb_calibration.NEAR_SYNONYM_SWAPS`: "walk" ->
  "stroll", "cut" -> "slice"), written by hand from the verbs of the published foils and **not**
  read from WordNet, the table the filter's synonym check reads: these are the independent
  negatives. The WordNet synonym swaps are shown too, marked circular: the check reads the same
  senses, so it rejects them by construction; they are not counted in the totals.

Splits: the items' clips by a stable hash (:func:`~foilkit.generation.contrast.
verb_calibration.is_heldout_clip`); ``tuning``, the half the cosine thresholds were chosen on
(``generation/calibration/contrast_verb_thresholds.py``), ``heldout`` the other half.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from foilkit.generation.contrast.multiple_choice import read_multiple_choice
from foilkit.generation.contrast.verb_calibration import (
    CONTRAST_FILES,
    is_heldout_clip,
    kept_mask,
    load_pairs,
)
from foilkit.generation.contrast.verb_phrases import VerbFoilSettings
from foilkit.generation.quality.report import KEEP, REJECT, SPLITS, QualityReport, sample

KINDS = {
    "lm": ("published Verb-LM foil", KEEP),
    "human": ("published Verb-Human foil", KEEP),
    "near_synonym": ("near-synonym swap (hand-written, not WordNet)", REJECT),
}
CIRCULAR = "WordNet synonym swaps (circular: the check's own table)"


def split_clips(data_dir: str | os.PathLike, split: str) -> list[str]:
    """The clips of both published contrast sets in ``split``, in file order."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    clips = {
        item.clip: None
        for name in CONTRAST_FILES.values()
        for item in read_multiple_choice(Path(data_dir) / name)
        if is_heldout_clip(item.clip) == (split == "heldout")
    }
    return list(clips)


def verb_filter_quality(
    data_dir: str | os.PathLike,
    nlp: Any,
    embedder: Any,
    *,
    split: str,
    size: int | None = None,
    seed: int = 0,
    config: VerbFoilSettings | None = None,
) -> QualityReport:
    """The filter of ``config`` (default :class:`VerbFoilSettings`'s thresholds and check) on
    ``size`` clips of ``split`` drawn by ``seed`` (all without ``size``)."""
    config = config or VerbFoilSettings()
    clips = sample(split_clips(data_dir, split), size, seed)
    pairs = load_pairs(
        data_dir, nlp, embedder, clips=set(clips), synonym_senses=config.synonym_senses
    )
    kept = kept_mask(
        pairs,
        config.word_cosine_max,
        config.sentence_cosine_max,
        synonym_check=config.synonym_check,
    )
    report = QualityReport(
        "contrast-set verb filter",
        split,
        {
            "clips": len(clips),
            "seed": seed,
            "word_cosine_max": config.word_cosine_max,
            "sentence_cosine_max": config.sentence_cosine_max,
            "synonym_check": config.synonym_check,
            "synonym_senses": config.synonym_senses,
        },
    )
    circular = [0, 0]
    for swap, accepted in zip(pairs.swaps, kept.tolist()):
        if swap.kind == "synonym":
            circular[0] += 1
            circular[1] += accepted
            continue
        name, label = KINDS[swap.kind]
        report.add(name, label, accepted, f"{swap.caption} -> {swap.candidate}")
    report.description[CIRCULAR] = {"offered": circular[0], "accepted": circular[1]}
    return report
