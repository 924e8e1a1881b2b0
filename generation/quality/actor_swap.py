"""The ViLMA actor-swap generator's quality on captions its rules were not tuned on.

The rules (:mod:`foilkit.generation.vilma.actor_swap`) were tuned on ViLMA's 452 published
items and the first :data:`TUNING_CAPTIONS` (600) of VITATECS' distinct captions in sorted order
(the ``tuning`` split); the ``heldout`` split is the other VITATECS captions
(``shared/data/vitatecs/*.jsonl``). On it, the generator is offered:

* ``keep``: captions whose swap a person labelled a valid foil (two people trade roles, the
  sentence is grammatical and means something else): :data:`LABELS_FILE`, 45 captions drawn
  by seed 0, each with the swap the rules made before issue 36 and its label;
* ``reject``: the labelled swaps that are ungrammatical ("Two young girls help a man shoots
  arrows") or keep the meaning ("a person" and "a man" trading places); held-out captions where
  the viewer is addressed ("shows *you* how to ...", found by the word "you"), where a swap that
  moves "you" is the failure; and captions with a reciprocal predicate ("fights with", "is
  chatting with", "shakes hands with", found by :data:`RECIPROCAL_PATTERN`, a pattern written
  for this report, not the rules' verb list), where any swap keeps the meaning.

A labelled caption whose swap is no longer the one labelled is counted apart (``changed since
labelled``): its new swap needs a new label.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from foilkit.generation.quality.report import KEEP, REJECT, SPLITS, QualityReport, sample

TUNING_CAPTIONS = 600
LABELS_FILE = Path(__file__).parent / "data" / "actor_swap_heldout_labels.jsonl"
LABEL_KINDS = {
    "valid": ("labelled valid swap", KEEP),
    "ungrammatical": ("labelled ungrammatical swap", REJECT),
    "same_meaning": ("labelled same-meaning swap", REJECT),
}
VIEWER = "viewer 'you' in the caption (swap must not move it)"
RECIPROCAL = "reciprocal predicate ('fights with': any swap keeps the meaning)"
CHANGED = "changed since labelled"
RECIPROCAL_PATTERN = re.compile(
    r"\b(?:fight|fights|fighting|argue|argues|arguing|chat|chats|chatting|wrestle|wrestles|"
    r"wrestling|quarrel|quarrels|quarreling|converse|converses|conversing|talks|talking|"
    r"(?:shake|shakes|shaking) hands) with (?:a|an|the|some|another|other|two|his|her|their)\b",
    re.IGNORECASE,
)
_VIEWER_WORDS = re.compile(r"\b(?:you|your|yourself)\b", re.IGNORECASE)


def vitatecs_captions(data_dir: str | os.PathLike, split: str) -> list[str]:
    """VITATECS' distinct captions of ``split``, sorted (``data_dir``: its folder)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    files = sorted(Path(data_dir).glob("*.jsonl"))
    if not files:
        raise ValueError(f"{data_dir}: no VITATECS *.jsonl files")
    captions = set()
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                try:
                    captions.add(json.loads(line)["caption"])
                except (json.JSONDecodeError, KeyError, TypeError):
                    raise ValueError(
                        f"{path}:{number}: not a VITATECS row with a caption"
                    ) from None
    ordered = sorted(captions)
    return ordered[:TUNING_CAPTIONS] if split == "tuning" else ordered[TUNING_CAPTIONS:]


def read_labels(path: str | os.PathLike = LABELS_FILE) -> list[dict[str, Any]]:
    """The hand-labelled swaps: ``caption``, ``foil``, ``label`` (a key of ``LABEL_KINDS``)."""
    rows = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        row = json.loads(line)
        if row.get("label") not in LABEL_KINDS:
            raise ValueError(f"{path}:{number}: label must be one of {sorted(LABEL_KINDS)}")
        rows.append(row)
    return rows


def actor_swap_quality(
    data_dir: str | os.PathLike,
    nlp: Any,
    *,
    split: str,
    size: int | None = None,
    seed: int = 0,
    labels: str | os.PathLike = LABELS_FILE,
) -> QualityReport:
    """Run the actor-swap rules on the labelled captions (heldout split only) and on ``size``
    (all without it) of the split's viewer and reciprocal captions, drawn by ``seed``."""
    from foilkit.generation.vilma.actor_swap import actor_swap

    captions = vitatecs_captions(data_dir, split)
    report = QualityReport(
        "ViLMA actor swap", split, {"captions_in_split": len(captions), "seed": seed}
    )
    if split == "heldout":
        for row in read_labels(labels):
            foils = actor_swap(row["caption"], nlp=nlp)
            kind, label = LABEL_KINDS[row["label"]]
            if foils and foils[0].text != row["foil"]:
                report.description.setdefault(CHANGED, []).append(
                    {"caption": row["caption"], "labelled": row["foil"], "now": foils[0].text}
                )
                continue
            report.add(kind, label, bool(foils), f"{row['caption']} -> {row['foil']}")
    viewer = sample([c for c in captions if _VIEWER_WORDS.search(c)], size, seed)
    for caption in viewer:
        foils = actor_swap(caption, nlp=nlp)
        moved = any(
            _VIEWER_WORDS.search(f.source["subject"] + " " + f.source["participant"]) for f in foils
        )
        report.add(VIEWER, REJECT, moved, f"{caption} -> {foils[0].text if foils else ''}")
    reciprocal = sample([c for c in captions if RECIPROCAL_PATTERN.search(c)], size, seed)
    for caption in reciprocal:
        foils = actor_swap(caption, nlp=nlp)
        report.add(
            RECIPROCAL, REJECT, bool(foils), f"{caption} -> {foils[0].text if foils else ''}"
        )
    return report
