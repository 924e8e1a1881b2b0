"""A filter's quality as counts: how many labelled items of each kind it accepted.

Every report tallies items of named *kinds* ("published paraphrase", "before/after swapped"),
each labelled ``keep`` (a good foil or paraphrase the filter must accept) or ``reject`` (a
negative it must stop). From the counts: each kind's accept rate, and for the filter's
rejections, *recall* (negatives rejected / negatives) and *precision* (negatives among the
rejected). Precision depends on how many positives and negatives were offered, so the counts are
always reported with it.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

KEEP, REJECT = "keep", "reject"
LABELS = (KEEP, REJECT)
SPLITS = ("heldout", "tuning")

T = TypeVar("T")


@dataclass
class KindCount:
    """Items of one kind: their label, how many were offered and how many accepted."""

    label: str
    offered: int = 0
    accepted: int = 0
    examples: list[str] = field(default_factory=list)  # a few wrongly judged items

    @property
    def accept_rate(self) -> float:
        return self.accepted / self.offered if self.offered else float("nan")


@dataclass
class QualityReport:
    """The tally of one filter on one split: per kind, and precision/recall of rejections."""

    name: str
    split: str
    description: dict[str, Any] = field(default_factory=dict)
    kinds: dict[str, KindCount] = field(default_factory=dict)
    max_examples: int = 3
    #: Lines the table prints after the totals (a report's own figures, in words).
    notes: list[str] = field(default_factory=list)

    def add(self, kind: str, label: str, accepted: bool, text: str = "") -> None:
        """Count one item of ``kind`` (label ``keep`` or ``reject``) the filter judged."""
        if label not in LABELS:
            raise ValueError(f"label must be one of {LABELS}, got {label!r}")
        count = self.kinds.setdefault(kind, KindCount(label))
        if count.label != label:
            raise ValueError(f"kind {kind!r} is labelled {count.label!r}, not {label!r}")
        count.offered += 1
        count.accepted += bool(accepted)
        wrong = accepted != (label == KEEP)
        if wrong and text and len(count.examples) < self.max_examples:
            count.examples.append(text)

    def totals(self) -> dict[str, Any]:
        """Precision and recall of the rejections over every kind, with the counts."""
        positives = sum(c.offered for c in self.kinds.values() if c.label == KEEP)
        negatives = sum(c.offered for c in self.kinds.values() if c.label == REJECT)
        kept = sum(c.accepted for c in self.kinds.values() if c.label == KEEP)
        stopped = sum(c.offered - c.accepted for c in self.kinds.values() if c.label == REJECT)
        rejected = (positives - kept) + stopped
        return {
            "positives": positives,
            "negatives": negatives,
            "positives_kept": kept,
            "negatives_rejected": stopped,
            "keep_rate": kept / positives if positives else float("nan"),
            "rejection_recall": stopped / negatives if negatives else float("nan"),
            "rejection_precision": stopped / rejected if rejected else float("nan"),
        }

    def to_record(self) -> dict[str, Any]:
        return {
            "report": self.name,
            "split": self.split,
            **self.description,
            "kinds": {
                kind: {
                    "label": c.label,
                    "offered": c.offered,
                    "accepted": c.accepted,
                    "accept_rate": c.accept_rate,
                    "wrongly_judged_examples": c.examples,
                }
                for kind, c in self.kinds.items()
            },
            "totals": self.totals(),
        }

    def table(self) -> str:
        """The report as a plain-text table (one line per kind, then the totals)."""
        lines = [f"{self.name} on the {self.split} split", f"{'kind':44s} label   accepted"]
        for kind, c in self.kinds.items():
            lines.append(
                f"{kind:44s} {c.label:7s} {c.accepted:>5d}/{c.offered:<5d} {c.accept_rate:6.1%}"
            )
        t = self.totals()
        lines.append(
            f"positives kept {t['positives_kept']}/{t['positives']} ({t['keep_rate']:.1%}); "
            f"negatives rejected {t['negatives_rejected']}/{t['negatives']} "
            f"(recall {t['rejection_recall']:.1%}); precision of rejections "
            f"{t['rejection_precision']:.1%}"
        )
        return "\n".join(lines + self.notes)


def sample(items: Sequence[T], size: int | None, seed: int) -> list[T]:
    """``size`` items drawn without replacement by ``random.Random(seed)``, in their order;
    all of them when ``size`` is ``None`` or not smaller."""
    if size is None or size >= len(items):
        return list(items)
    if size < 1:
        raise ValueError(f"the sample size must be >= 1, got {size}")
    chosen = sorted(random.Random(seed).sample(range(len(items)), size))
    return [items[index] for index in chosen]
