"""Multiple-choice accuracy: how often the true caption outscores every other option."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from ._citations import CONTRAST_SETS
from ._common import (
    ExactInputs,
    add_counts,
    check_lengths,
    group_codes,
    group_means,
    oriented_competitors,
    weighted_mean,
    win_credit,
    with_intervals,
)

try:  # the pure functions below need neither; the evaluate module does
    import datasets
    import evaluate
except ImportError:  # pragma: no cover - exercised only where evaluate is absent
    evaluate = None

_CITATION = CONTRAST_SETS

_DESCRIPTION = """\
The MSR-VTT contrast sets (Park et al., 2022, Sec. 4.1-4.2) turn each video into a 5-way multiple
choice: the true caption and four foils (verb phrases replaced by a language model or by people,
genders or person identities swapped). An item is right when the option at `label` outscores the
other options. The true option can sit at any index, so ties get an explicit policy instead of
whatever an argmax's position bias would give: `strict` (default: a tie is wrong), `half` (1/k for
k options sharing the top score) or `first` (a tie is right). With `groups` (the foil type) the
result adds each group's accuracy and the macro average; `chance` is the accuracy of guessing.
With `dimensions` as well (a finer breakdown: TempCompass' fine-grained dimensions under its
temporal aspects, as its official statistics report both) it adds each dimension's accuracy.
"""

_KWARGS_DESCRIPTION = """
Args:
    scores (`list[list[float]]`): each item's option scores in the published option order.
    labels (`list[int]`): the index of the true option of each item.
    groups (`list[str]`, optional): each item's group (foil type) for a per-group breakdown.
    dimensions (`list[str]`, optional): each item's dimension for a second breakdown (no macro
        average); a dimension named as a group must hold the same items and is reported once.
    cluster (`list[str]`, optional): each item's video, resampled as a unit by the bootstrap.
    score_kind (`str`): `similarity`, `probability`, `log_probability`, `logit` (higher is better),
        `perplexity` or `loss` (lower is better). Default `similarity`.
    ties (`str`): `strict` (default), `half` or `first`.
    n_resamples (`int`): bootstrap resamples (0: no intervals). Default 1000.
    seed (`int`): the bootstrap's seed. Default 0.
    confidence (`float`): the intervals' coverage. Default 0.95.
Returns:
    accuracy (`float`): mean credit over items, with `accuracy_ci`; `n`; `n_tied`; `chance`
        (the mean of 1/options).
    accuracy_<group>, accuracy_<group>_ci, n_<group>, macro_accuracy(_ci): with `groups`.
    accuracy_<dimension>, accuracy_<dimension>_ci, n_<dimension>: with `dimensions`.
Examples:
    >>> from foilkit.metrics.multiple_choice_accuracy.multiple_choice_accuracy import (
    ...     multiple_choice_accuracy)
    >>> result = multiple_choice_accuracy(
    ...     scores=[[0.1, 0.9, 0.3, 0.2, 0.0], [0.5, 0.6, 0.1, 0.2, 0.3],
    ...             [0.4, 0.4, 0.1, 0.1, 0.1]],
    ...     labels=[1, 0, 0], n_resamples=0)
    >>> result["accuracy"], result["n_tied"], round(result["chance"], 3)
    (0.3333333333333333, 1, 0.2)
    >>> multiple_choice_accuracy(scores=[[0.4, 0.4, 0.1]], labels=[1], ties="half",
    ...                          n_resamples=0)["accuracy"]
    0.5
    >>> result = multiple_choice_accuracy(
    ...     scores=[[0.9, 0.1], [0.2, 0.8], [0.3, 0.7]], labels=[0, 0, 1],
    ...     groups=["speed", "speed", "order"],
    ...     dimensions=["absolute_speed", "relative_speed", "order"], n_resamples=0)
    >>> result["accuracy_speed"], result["accuracy_relative_speed"], result["accuracy_order"]
    (0.5, 0.0, 1.0)
"""


def item_credits(
    scores: Sequence[Sequence[float]],
    labels: Sequence[int],
    *,
    score_kind: str = "similarity",
    ties: str = "strict",
) -> dict[str, np.ndarray]:
    """Per item: its ``credit``, whether a tie decided it (``tied``) and its number of
    ``options``. Validates the inputs."""
    n = check_lengths(scores=scores, labels=labels)
    options = oriented_competitors("scores", scores, score_kind)
    counts = np.isfinite(options).sum(axis=1)
    label_array = np.empty(n, dtype=np.int64)
    for index, label in enumerate(labels):
        if isinstance(label, bool) or not isinstance(label, (int, np.integer)):
            raise ValueError(f"labels[{index}] = {label!r} is not an option index")  # noqa: TRY004
        if not 0 <= label < counts[index]:
            raise ValueError(
                f"labels[{index}] = {label} is outside the item's {counts[index]} options"
            )
        if counts[index] < 2:
            raise ValueError(f"scores[{index}] has {counts[index]} option: a choice needs two")
        label_array[index] = label
    rows = np.arange(n)
    target = options[rows, label_array]
    others = options.copy()
    others[rows, label_array] = -np.inf
    credit, tied = win_credit(target, others, ties)
    return {"credit": credit, "tied": tied, "options": counts}


def multiple_choice_accuracy(
    scores: Sequence[Sequence[float]],
    labels: Sequence[int],
    *,
    groups: Sequence[Hashable] | None = None,
    dimensions: Sequence[Hashable] | None = None,
    cluster: Sequence[Hashable] | None = None,
    score_kind: str = "similarity",
    ties: str = "strict",
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Accuracy of the true options, per group and overall, with bootstrap CIs."""
    credits = item_credits(scores, labels, score_kind=score_kind, ties=ties)
    credit, tied, counts = credits["credit"], credits["tied"], credits["options"]
    n = len(credit)
    masks = group_codes(groups, n)
    finer = _dimension_masks(dimensions, masks, n)

    def statistic(weights: np.ndarray) -> dict[str, np.ndarray]:
        out = {"accuracy": weighted_mean(weights, credit)}
        out.update(group_means(weights, credit, masks, "accuracy"))
        return out | {
            f"accuracy_{name}": weighted_mean(weights[:, mask], credit[mask])
            for name, mask in finer.items()
        }

    result = with_intervals(
        statistic, n, cluster=cluster, n_resamples=n_resamples, seed=seed, confidence=confidence
    )
    add_counts(result, {"n": n, "n_tied": int(tied.sum()), "chance": float(np.mean(1.0 / counts))})
    counts = {f"n_{group}": int(mask.sum()) for group, mask in (masks | finer).items()}
    return add_counts(result, counts)


def _dimension_masks(
    dimensions: Sequence[Hashable] | None, masks: dict[str, np.ndarray], n: int
) -> dict[str, np.ndarray]:
    """Each dimension's items, less those named as a group (reported once, as the group); a
    ``ValueError`` when such a dimension holds other items than its group."""
    if dimensions is None:
        return {}
    try:
        finer = group_codes(dimensions, n)
    except ValueError as error:
        raise ValueError(str(error).replace("group", "dimension")) from None
    for name, mask in finer.items():
        if name in masks and not np.array_equal(mask, masks[name]):
            raise ValueError(
                f"dimension {name!r} is also a group but holds other items: rename one of them"
            )
    return {name: mask for name, mask in finer.items() if name not in masks}


#: doctest runs the examples above (``doctest.testmod`` reads ``__test__``).
__test__ = {"examples": _KWARGS_DESCRIPTION}

if evaluate is not None:

    @evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
    class MultipleChoiceAccuracy(ExactInputs, evaluate.Metric):
        """``evaluate.load("multiple_choice_accuracy")``: :func:`multiple_choice_accuracy`."""

        def _info(self) -> evaluate.MetricInfo:
            return evaluate.MetricInfo(
                description=_DESCRIPTION,
                citation=_CITATION,
                inputs_description=_KWARGS_DESCRIPTION,
                features=datasets.Features(
                    {
                        "scores": datasets.Sequence(datasets.Value("float64")),
                        "labels": datasets.Value("int64"),
                    }
                ),
                reference_urls=["https://github.com/jamespark3922/video-lang-contrast-set"],
            )

        def _compute(
            self,
            scores: list[list[float]],
            labels: list[int],
            **options: Any,
        ) -> dict[str, Any]:
            # the keyword options (tie policy, bootstrap, ...) as the function takes them
            return multiple_choice_accuracy(scores, labels, **options)
