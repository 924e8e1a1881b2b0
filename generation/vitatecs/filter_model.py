"""Stage 2b: the 7-way filter model of VITATECS (§3.3, appendix E).

A sentence-pair classifier with classes ``invalid`` (category 0, a disqualified pair) and the six
aspects (categories 1-6). As in the paper it is initialised from the NLI cross-encoder
(``cross-encoder/nli-deberta-v3-base``; a new 7-way head on its encoder), fine-tuned on the
positive and negative exemplars augmented by synonym replacement, with Adam, learning rate 5e-5,
batch size 16, five epochs (all of it :class:`FilterTraining`, configurable).

The decision is deliberately strict, for precision: a pair (t1, t2) is fed in both orders, the
two probability vectors are multiplied, and the pair is classified into an aspect only when that
aspect's product beats every other class's by the margin (0.3 in the paper); everything else is
``invalid``. :func:`evaluate_filter` gives the macro precision, recall and F1 of Tab. 12.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foilkit.generation.nli import VITATECS_NLI_MODEL
from foilkit.generation.vitatecs.exemplars import (
    FILTER_CLASSES,
    INVALID,
    PAPER_HELDOUT_PER_CLASS,
    PairExemplar,
)
from foilkit.generation.vitatecs.synonyms import SynonymSource, replace_synonym

if TYPE_CHECKING:
    import numpy as np

PAPER_MARGIN = 0.3


@dataclass(frozen=True)
class FilterTraining:
    """Fine-tuning settings; the defaults are the paper's (appendix E).

    Attributes:
        init_model: the NLI checkpoint the filter starts from.
        learning_rate, batch_size, epochs: Adam's learning rate, pairs per step, passes.
        augment_copies: synonym-replaced copies added per training pair (0: no augmentation).
        synonyms: the synonym source, a name in :data:`.synonyms.SYNONYM_SOURCES`.
        both_orders: also train on (counterfactual, caption); the paper does not say it does.
        max_length: tokens per pair.
        margin: the decision margin (see module docstring).
        heldout_per_class: pairs held out per filter class for evaluation (the paper's 100);
            see :func:`.exemplars.split_heldout`.
        heldout_max_share: the most of one class held out, so the filter keeps training data.
        heldout: an exemplar-sets file to evaluate on instead (an independently annotated set,
            as the paper's 100 samples per class); then nothing is held out of the exemplars.
    """

    init_model: str = VITATECS_NLI_MODEL
    learning_rate: float = 5e-5
    batch_size: int = 16
    epochs: int = 5
    augment_copies: int = 1
    synonyms: str = "auto"
    both_orders: bool = False
    max_length: int = 128
    margin: float = PAPER_MARGIN
    heldout_per_class: int = PAPER_HELDOUT_PER_CLASS
    heldout_max_share: float = 0.5
    heldout: str | None = None


@dataclass(frozen=True)
class FilterDecision:
    """The filter's verdict on one pair.

    ``label`` is the accepted class (an aspect, or ``invalid`` when no aspect wins by the
    margin); ``best`` the class with the highest product, ``margin`` its lead over the runner-up.
    """

    label: str
    best: str
    margin: float
    product: Mapping[str, float]
    forward: Mapping[str, float]
    backward: Mapping[str, float]

    def to_record(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "best": self.best,
            "margin": self.margin,
            "product": dict(self.product),
            "forward": dict(self.forward),
            "backward": dict(self.backward),
        }


def decide(product: Mapping[str, float], margin: float = PAPER_MARGIN) -> tuple[str, str, float]:
    """(label, best class, its lead) for the multiplied probabilities of one pair.

    An aspect is accepted only when its score exceeds every other class's by at least
    ``margin``; ``invalid`` otherwise (also when ``invalid`` itself is the best class).
    """
    ranked = sorted(product.items(), key=lambda item: item[1], reverse=True)
    (best, top), (_, runner_up) = ranked[0], ranked[1]
    lead = top - runner_up
    label = best if best != INVALID and lead >= margin else INVALID
    return label, best, lead


def _device(device: str | None) -> str:
    import torch

    return device or ("cuda" if torch.cuda.is_available() else "cpu")


class AspectFilter:
    """The 7-way classifier and its decision rule.

    Args:
        model: a transformers sequence-classification model with the classes
            :data:`FILTER_CLASSES` in ``config.id2label``.
        tokenizer: its tokenizer.
        model_id: recorded in provenance (the folder it was loaded from or saved to).
        margin: the decision margin.
        batch_size: pairs per forward pass at prediction.
        max_length: tokens per pair.
        device: ``"cuda"``/``"cpu"``; the GPU when there is one by default.
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        model_id: str,
        margin: float = PAPER_MARGIN,
        batch_size: int = 32,
        max_length: int = 128,
        device: str | None = None,
    ) -> None:
        labels = [model.config.id2label[i] for i in range(len(model.config.id2label))]
        if tuple(labels) != FILTER_CLASSES:
            raise ValueError(
                f"filter model {model_id!r} has classes {labels}, expected {list(FILTER_CLASSES)}"
            )
        self.device = _device(device)
        self.model = model.to(self.device).eval()
        self.tokenizer = tokenizer
        self.model_id = model_id
        self.margin = margin
        self.batch_size = batch_size
        self.max_length = max_length

    @classmethod
    def from_nli(
        cls, nli_model: str = VITATECS_NLI_MODEL, *, seed: int = 0, **options: Any
    ) -> AspectFilter:
        """A filter whose encoder is the NLI checkpoint's and whose 7-way head is new
        (initialised from ``seed``, so a fine-tuning run is reproducible)."""
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            model = AutoModelForSequenceClassification.from_pretrained(
                nli_model,
                id2label=dict(enumerate(FILTER_CLASSES)),
                label2id={name: i for i, name in enumerate(FILTER_CLASSES)},
                ignore_mismatched_sizes=True,
            )
        return cls(model, AutoTokenizer.from_pretrained(nli_model), model_id=nli_model, **options)

    @classmethod
    def load(cls, path: str | Path, **options: Any) -> AspectFilter:
        """A filter saved by :meth:`save`."""
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        return cls(
            AutoModelForSequenceClassification.from_pretrained(path),
            AutoTokenizer.from_pretrained(path),
            model_id=str(path),
            **options,
        )

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        self.model.save_pretrained(path)
        self.tokenizer.save_pretrained(path)
        self.model_id = str(path)
        return path

    # -- training ------------------------------------------------------------------------------

    def fine_tune(
        self,
        pairs: Sequence[PairExemplar],
        training: FilterTraining,
        *,
        synonyms: SynonymSource | None,
        seed: int = 0,
    ) -> dict[str, Any]:
        """Fine-tune on labelled pairs (augmented); returns the mean loss of every epoch."""
        import torch

        if not pairs:
            raise ValueError("no labelled pairs to fine-tune the filter model on")
        rng = random.Random(seed)
        examples = [(p.caption, p.counterfactual, p.label) for p in pairs]
        augmented = []
        if synonyms is not None:
            for first, second, label in examples:
                for _ in range(training.augment_copies):
                    replaced = replace_synonym(first, second, rng=rng, source=synonyms)
                    if replaced is not None:
                        augmented.append((*replaced, label))
        examples += augmented
        if training.both_orders:
            examples += [(second, first, label) for first, second, label in examples]
        label_ids = {name: i for i, name in enumerate(FILTER_CLASSES)}
        devices = [self.device] if self.device.startswith("cuda") else []
        losses = []
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(seed)
            generator = torch.Generator().manual_seed(seed)
            optimizer = torch.optim.Adam(self.model.parameters(), lr=training.learning_rate)
            self.model.train()
            for _ in range(training.epochs):
                order = torch.randperm(len(examples), generator=generator).tolist()
                total, steps = 0.0, 0
                for start in range(0, len(order), training.batch_size):
                    batch = [examples[i] for i in order[start : start + training.batch_size]]
                    inputs = self._encode([(a, b) for a, b, _ in batch])
                    labels = torch.tensor([label_ids[label] for *_, label in batch])
                    loss = self.model(**inputs, labels=labels.to(self.device)).loss
                    loss.backward()
                    optimizer.step()
                    optimizer.zero_grad()
                    total += float(loss.detach())
                    steps += 1
                losses.append(total / steps)
            self.model.eval()
        return {"examples": len(examples), "augmented": len(augmented), "epoch_losses": losses}

    # -- prediction ----------------------------------------------------------------------------

    def _encode(self, pairs: Sequence[tuple[str, str]]) -> Any:
        inputs = self.tokenizer(
            [a for a, _ in pairs],
            [b for _, b in pairs],
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        )
        return {name: tensor.to(self.device) for name, tensor in inputs.items()}

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Class probabilities (rows: pairs, columns: :data:`FILTER_CLASSES`), one order."""
        import numpy as np
        import torch

        rows = []
        with torch.inference_mode():
            for start in range(0, len(pairs), self.batch_size):
                logits = self.model(**self._encode(pairs[start : start + self.batch_size])).logits
                rows.append(torch.softmax(logits.float(), dim=-1).cpu().numpy())
        return np.concatenate(rows) if rows else np.zeros((0, len(FILTER_CLASSES)))

    def decide(self, pairs: Sequence[tuple[str, str]]) -> list[FilterDecision]:
        """The decision on every (t1, t2): both orders, probabilities multiplied, margin rule."""
        forward = self.probabilities(pairs)
        backward = self.probabilities([(b, a) for a, b in pairs])
        decisions = []
        for row_f, row_b in zip(forward, backward, strict=True):
            product = _by_class(row_f * row_b)
            label, best, lead = decide(product, self.margin)
            decisions.append(
                FilterDecision(label, best, lead, product, _by_class(row_f), _by_class(row_b))
            )
        return decisions


def _by_class(row: Sequence[float]) -> dict[str, float]:
    return {name: float(p) for name, p in zip(FILTER_CLASSES, row, strict=True)}


@dataclass(frozen=True)
class FilterMetrics:
    """Macro precision, recall and F1 over the classes present in truth or predictions."""

    precision: float
    recall: float
    f1: float
    per_class: Mapping[str, Mapping[str, float]]
    n: int

    def to_record(self) -> dict[str, Any]:
        return asdict(self)


def macro_scores(truth: Sequence[str], predicted: Sequence[str]) -> FilterMetrics:
    """Macro-averaged precision/recall/F1 (a class with no prediction has precision 0)."""
    if len(truth) != len(predicted):
        raise ValueError(f"{len(truth)} true labels but {len(predicted)} predictions")
    classes = [c for c in FILTER_CLASSES if c in set(truth) | set(predicted)]
    per_class = {}
    for name in classes:
        hits = sum(t == p == name for t, p in zip(truth, predicted))
        guessed = sum(p == name for p in predicted)
        actual = sum(t == name for t in truth)
        precision = hits / guessed if guessed else 0.0
        recall = hits / actual if actual else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        per_class[name] = {"precision": precision, "recall": recall, "f1": f1, "support": actual}

    def mean(key: str) -> float:
        return (
            sum(scores[key] for scores in per_class.values()) / len(per_class) if per_class else 0.0
        )

    return FilterMetrics(mean("precision"), mean("recall"), mean("f1"), per_class, len(truth))


def evaluate_filter(model: AspectFilter, pairs: Sequence[PairExemplar]) -> FilterMetrics:
    """The filter's decisions on labelled pairs, scored against their labels."""
    decisions = model.decide([(p.caption, p.counterfactual) for p in pairs])
    return macro_scores([p.label for p in pairs], [d.label for d in decisions])
