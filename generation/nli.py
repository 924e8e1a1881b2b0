"""NLI filtering of foils: a foil the caption entails is not false of the video, so it goes.

Both papers that filter with NLI run a sentence-pair classifier on (caption, foil) and differ
in the rule:

* ViLMA (appendix C) keeps a foil the model labels *neutral* or *contradiction* with the caption
  as premise and the foil as hypothesis (``policy="vilma"``); its checkpoints are ynie's
  ALBERT/RoBERTa SNLI+MNLI+FEVER+ANLI models.
* VITATECS (§3.2, criterion (a)) requires that the counterfactual "neither entail nor be entailed
  by the caption": a pair is rejected when either direction is labelled *entailment*
  (``policy="vitatecs"``); its model is Sentence-BERT's ``cross-encoder/nli-deberta-v3-base``.

The model is a sentence-transformers ``CrossEncoder`` (which loads any sequence-classification
checkpoint); steps receive it, :func:`load_nli_model` is the one place that loads it by id. The
label order differs between checkpoints, so it is read from the model config's ``id2label``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from foilkit.generation.foil import Foil

if TYPE_CHECKING:
    from sentence_transformers import CrossEncoder

ENTAILMENT, NEUTRAL, CONTRADICTION = "entailment", "neutral", "contradiction"
NLI_LABELS = (ENTAILMENT, NEUTRAL, CONTRADICTION)

VILMA_NLI_MODEL = "ynie/albert-xxlarge-v2-snli_mnli_fever_anli_R1_R2_R3-nli"
VITATECS_NLI_MODEL = "cross-encoder/nli-deberta-v3-base"
DEFAULT_NLI_MODEL = VILMA_NLI_MODEL

# Spellings of the three classes found in NLI checkpoints' id2label.
_LABEL_ALIASES = {
    "entailment": ENTAILMENT,
    "entail": ENTAILMENT,
    "entailed": ENTAILMENT,
    "neutral": NEUTRAL,
    "contradiction": CONTRADICTION,
    "contradict": CONTRADICTION,
}


@dataclass(frozen=True)
class NLIScores:
    """Label probabilities of one (caption, foil) pair in both directions.

    ``forward`` has the caption as premise and the foil as hypothesis, ``backward`` the reverse.
    """

    forward: Mapping[str, float]
    backward: Mapping[str, float]

    @property
    def forward_label(self) -> str:
        return max(self.forward, key=self.forward.__getitem__)

    @property
    def backward_label(self) -> str:
        return max(self.backward, key=self.backward.__getitem__)

    def to_record(self) -> dict[str, dict[str, float]]:
        return {"forward": dict(self.forward), "backward": dict(self.backward)}


def _keep_vilma(scores: NLIScores) -> bool:
    """ViLMA: the caption must not entail the foil (neutral or contradiction is kept)."""
    return scores.forward_label != ENTAILMENT


def _keep_vitatecs(scores: NLIScores) -> bool:
    """VITATECS: neither text may entail the other."""
    return ENTAILMENT not in (scores.forward_label, scores.backward_label)


POLICIES: dict[str, Callable[[NLIScores], bool]] = {
    "vilma": _keep_vilma,
    "vitatecs": _keep_vitatecs,
}


def load_nli_model(model_id: str = DEFAULT_NLI_MODEL, *, device: str | None = None) -> CrossEncoder:
    """A ``CrossEncoder`` for ``model_id`` (a Hub id or a local folder)."""
    from sentence_transformers import CrossEncoder

    return CrossEncoder(model_id, device=device)


def label_names(model: CrossEncoder, labels: Sequence[str] | None = None) -> list[str]:
    """The canonical NLI label of each output index of ``model``.

    Read from ``model.config.id2label``; ``labels`` overrides it for checkpoints whose config
    only has generic ``LABEL_0``-style names.
    """
    if labels is None:
        id2label = model.config.id2label
        labels = [id2label[i] for i in range(len(id2label))]
        origin = f"config.id2label of {model.config.name_or_path!r}"
    else:
        origin = "labels="
    names = [_LABEL_ALIASES.get(str(label).lower()) for label in labels]
    if sorted(filter(None, names)) != sorted(NLI_LABELS) or len(names) != len(NLI_LABELS):
        raise ValueError(
            f"{origin} gives {list(labels)}, which is not one each of {list(NLI_LABELS)}; "
            "pass labels=[...] in the model's output order"
        )
    return names  # type: ignore[return-value]


def nli_scores(
    model: CrossEncoder,
    pairs: Sequence[tuple[str, str]],
    *,
    labels: Sequence[str] | None = None,
    batch_size: int = 32,
) -> list[NLIScores]:
    """Label probabilities of every (caption, foil) pair, in both directions, in one batch run."""
    if not pairs:
        return []
    names = label_names(model, labels)
    both = [(caption, foil) for caption, foil in pairs] + [
        (foil, caption) for caption, foil in pairs
    ]
    probabilities = model.predict(
        both, apply_softmax=True, batch_size=batch_size, show_progress_bar=False
    )
    rows = [{name: float(p) for name, p in zip(names, row, strict=True)} for row in probabilities]
    n = len(pairs)
    return [NLIScores(forward=rows[i], backward=rows[n + i]) for i in range(n)]


class NLIFilter:
    """Keeps the foils an NLI model does not find entailed, recording the scores they passed with.

    Args:
        model: a ``CrossEncoder`` over an NLI checkpoint.
        model_id: the id recorded in each foil's provenance (defaults to the model's own path).
        policy: ``"vilma"`` (caption must not entail foil) or ``"vitatecs"`` (no entailment in
            either direction).
        labels: label names in output order, for checkpoints without meaningful ``id2label``.
        batch_size: pairs per forward pass.
    """

    name = "nli"

    def __init__(
        self,
        model: CrossEncoder,
        *,
        model_id: str | None = None,
        policy: str = "vilma",
        labels: Sequence[str] | None = None,
        batch_size: int = 32,
    ) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown NLI policy {policy!r}; choose one of {sorted(POLICIES)}")
        self.model = model
        self.model_id = model_id or str(model.config.name_or_path)
        self.policy = policy
        self.labels = labels
        self.batch_size = batch_size
        label_names(model, labels)  # fail now, not on the first batch

    def scores(self, caption: str, foils: Sequence[Foil]) -> list[NLIScores]:
        return nli_scores(
            self.model,
            [(caption, foil.text) for foil in foils],
            labels=self.labels,
            batch_size=self.batch_size,
        )

    def __call__(self, caption: str, foils: Sequence[Foil]) -> list[Foil]:
        """The foils the policy keeps; each records ``nli`` = its highest entailment probability
        over the directions the policy checks."""
        keep = POLICIES[self.policy]
        kept = []
        for foil, scores in zip(foils, self.scores(caption, foils), strict=True):
            if keep(scores):
                entailment = scores.forward[ENTAILMENT]
                if self.policy == "vitatecs":
                    entailment = max(entailment, scores.backward[ENTAILMENT])
                kept.append(
                    foil.passed(self.name, entailment, model_id=self.model_id, policy=self.policy)
                )
        return kept
