"""Grammaticality filter: a CoLA acceptability classifier in place of GRUEN.

ViLMA keeps foils whose GRUEN score (Zhu & Bhat, 2020) reaches 0.8. GRUEN is not installable
(no PyPI package; its code pins old libraries), but its grammaticality component is a BERT
model fine-tuned on CoLA, so this filter uses a CoLA sequence classifier through transformers
and keeps a foil when P(acceptable) >= ``threshold`` (0.8, ViLMA's GRUEN threshold). The score
is therefore grammaticality only, not GRUEN's aggregate with redundancy, focus and coherence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from foilkit.generation.foil import Foil

DEFAULT_COLA_MODEL = "textattack/roberta-base-CoLA"  # LABEL_1 = acceptable
THRESHOLD = 0.8


def acceptable_index(model: Any, acceptable_label: str | int | None = None) -> int:
    """Output index of the "acceptable" class: ``acceptable_label`` (an index or a label name),
    else the config's ``acceptable`` label."""
    if isinstance(acceptable_label, int):
        return acceptable_label
    name = (acceptable_label or "acceptable").lower()
    label2id = {str(k).lower(): int(v) for k, v in model.config.label2id.items()}
    if name not in label2id:
        raise ValueError(
            f"config of {model.config.name_or_path!r} has labels {sorted(label2id)}, no {name!r}; "
            "pass acceptable_label= (e.g. 1 for textattack/roberta-base-CoLA)"
        )
    return label2id[name]


class GrammaticalityFilter:
    """Keeps foils a CoLA classifier finds acceptable with probability >= ``threshold``."""

    name = "grammaticality"

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        threshold: float = THRESHOLD,
        acceptable_label: str | int | None = None,
        model_id: str | None = None,
        batch_size: int = 32,
    ) -> None:
        self.model, self.tokenizer, self.threshold = model.eval(), tokenizer, threshold
        self.index = acceptable_index(model, acceptable_label)
        self.model_id = model_id or str(model.config.name_or_path)
        self.batch_size = batch_size

    def scores(self, texts: Sequence[str]) -> list[float]:
        """P(acceptable) of each text."""
        import torch

        out: list[float] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            encoded = self.tokenizer(batch, return_tensors="pt", padding=True, truncation=True)
            with torch.inference_mode():
                logits = self.model(**encoded.to(self.model.device)).logits
            out += logits.softmax(-1)[:, self.index].tolist()
        return out

    def __call__(self, caption: str, foils: Sequence[Foil]) -> list[Foil]:
        """The acceptable foils (``caption`` is unused: the check is on the foil alone)."""
        del caption
        return [
            foil.passed(self.name, score, model_id=self.model_id, threshold=self.threshold)
            for foil, score in zip(foils, self.scores([f.text for f in foils]), strict=True)
            if score >= self.threshold
        ]
