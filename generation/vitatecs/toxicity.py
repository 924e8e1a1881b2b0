"""The safety filter hook: drop generated texts a toxicity scorer rates above a threshold.

VITATECS (appendix F) scored every generated sentence with the Perspective API (toxicity, severe
toxicity, identity attack, insult, profanity, threat, sexually explicit) and discarded samples
with any score above 0.9. That API needs a network key, so the scorer is pluggable: any callable
``texts -> scores in [0, 1]`` works, and :class:`TransformersToxicityScorer` runs a local
text-classification model (by default ``unitary/toxic-bert``, whose six labels mirror
Perspective's attributes) and takes, per text, the highest score among its toxic labels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

DEFAULT_TOXICITY_MODEL = "unitary/toxic-bert"
PAPER_THRESHOLD = 0.9
# Label names that mean "not toxic" in common toxicity classifiers; never counted as toxic.
NON_TOXIC_LABELS = frozenset({"non-toxic", "non_toxic", "not toxic", "nontoxic", "neutral", "ok"})

ToxicityScorer = Callable[[Sequence[str]], Sequence[float]]


class TransformersToxicityScorer:
    """Toxicity scores from a local ``transformers`` text-classification model.

    Args:
        model_id: a Hub id or a local folder.
        labels: the labels that count as toxic; every label but :data:`NON_TOXIC_LABELS` by
            default. A text's score is its highest probability among them.
        batch_size: texts per forward pass.
        device: passed to the pipeline (``-1`` CPU, ``0`` first GPU; the GPU when there is one).
    """

    def __init__(
        self,
        model_id: str = DEFAULT_TOXICITY_MODEL,
        *,
        labels: Sequence[str] | None = None,
        batch_size: int = 32,
        device: int | str | None = None,
    ) -> None:
        import torch
        from transformers import pipeline

        if device is None:
            device = 0 if torch.cuda.is_available() else -1
        self.pipeline = pipeline("text-classification", model=model_id, top_k=None, device=device)
        self.model_id = model_id
        known = set(self.pipeline.model.config.id2label.values())
        if labels is None:
            labels = [label for label in known if label.lower() not in NON_TOXIC_LABELS]
        unknown = sorted(set(labels) - known)
        if unknown:
            raise ValueError(
                f"toxicity model {model_id!r} has no label(s) {unknown}; it has {sorted(known)}"
            )
        self.labels = frozenset(labels)
        self.batch_size = batch_size

    def __call__(self, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        outputs = self.pipeline(list(texts), batch_size=self.batch_size, truncation=True)
        return [
            max((entry["score"] for entry in scores if entry["label"] in self.labels), default=0.0)
            for scores in outputs
        ]


class ToxicityFilter:
    """Scores texts and says which to drop: those scoring above ``threshold`` (paper: 0.9)."""

    def __init__(
        self, scorer: ToxicityScorer, *, threshold: float = PAPER_THRESHOLD, name: str = ""
    ) -> None:
        self.scorer = scorer
        self.threshold = threshold
        self.name = name or getattr(scorer, "model_id", getattr(scorer, "__name__", "scorer"))

    def scores(self, texts: Sequence[str]) -> list[float]:
        scores = [float(score) for score in self.scorer(texts)]
        if len(scores) != len(texts):
            raise ValueError(
                f"toxicity scorer {self.name!r} returned {len(scores)} scores "
                f"for {len(texts)} texts"
            )
        return scores

    def is_toxic(self, score: float) -> bool:
        return score > self.threshold

    def record(self, score: float) -> dict[str, Any]:
        return {"score": score, "threshold": self.threshold, "scorer": self.name}
