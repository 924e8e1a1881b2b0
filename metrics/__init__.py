"""foilkit's evaluate modules (``foilkit.metrics``), one folder per metric.

Every ``metrics/<name>/<name>.py`` is at once an ``evaluate`` module (``evaluate.load`` of the
folder; pushable to the Hub as a Space, see ``foilkit metrics push``) and a plain Python module
whose pure function ``<name>(...)`` needs only numpy. This package adds what spans metrics:
loading an installed module without a checkout (:func:`load`), the pure functions by name
(:func:`metric_function`), one model's per-item credits (:func:`item_credits`), paired
comparisons of two models on the same items (:func:`paired_comparison`), what reports say
about scores (:func:`score_direction`, :func:`tie_meanings`), and the papers' BibTeX by
benchmark (:data:`CITATIONS`).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._citations import CITATIONS as CITATIONS

#: metric name -> the result keys a paired comparison tests, headline first, each with the
#: ``item_credits`` output holding that key's per-item credit.
PAIRED_OUTCOMES: dict[str, dict[str, str]] = {
    "pairwise_foil_accuracy": {"accuracy": "credit"},
    "proficiency_combined_accuracy": {
        "combined_accuracy": "combined",
        "proficiency_accuracy": "proficiency",
        "main_accuracy": "main",
    },
    "multiple_choice_accuracy": {"accuracy": "credit"},
    "binary_retrieval_accuracy": {"t2v_accuracy": "t2v", "v2t_accuracy": "v2t"},
    "winoground_score": {"group_score": "group", "text_score": "text", "video_score": "video"},
}
#: every metric foilkit ships, in the order the benchmarks introduce them. A plain tuple, not a
#: :class:`foilkit.registry.Registry`: this package imports nothing else of foilkit (each folder
#: is a self-contained evaluate module); the lookups below word their errors as a registry does.
METRICS: tuple[str, ...] = (*PAIRED_OUTCOMES, "retrieval_recall")


def list_metrics() -> list[str]:
    """Names of foilkit's ``evaluate`` modules."""
    return list(METRICS)


def _check_name(name: str) -> None:
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}; choose from: {', '.join(METRICS)}")


def metric_dir(name: str) -> Path:
    """The folder of metric ``name``: an evaluate module, in a checkout or an installed wheel."""
    _check_name(name)
    return Path(__file__).resolve().parent / name


def metric_module(name: str) -> Any:
    """The Python module ``foilkit.metrics.<name>.<name>`` (imports numpy, not evaluate)."""
    _check_name(name)
    return importlib.import_module(f"{__name__}.{name}.{name}")


def metric_function(name: str) -> Callable[..., dict[str, Any]]:
    """The pure function of metric ``name``: inputs and options as keyword arguments, a flat
    dict of named results."""
    return getattr(metric_module(name), name)


def load(name: str, **kwargs: Any) -> Any:
    """``evaluate.load`` of an installed foilkit metric: no checkout and no network needed."""
    import evaluate

    return evaluate.load(str(metric_dir(name)), **kwargs)


def tie_meanings() -> dict[str, str]:
    """What each ``ties`` option of foilkit's metrics does with a tie, in words (reports state
    it under their tables): the pairwise policies and the ranking ones."""
    from ._common import TIE_POLICY_MEANINGS
    from ._ranking import TIE_RANK_MEANINGS

    return {**TIE_POLICY_MEANINGS, **TIE_RANK_MEANINGS}


def score_direction(score_kind: str) -> int:
    """+1 if higher scores of ``score_kind`` are better (similarity, log-probability), -1 if
    lower ones are (distance, loss); a ``ValueError`` names an unknown kind."""
    from ._common import direction

    return direction(score_kind)


def scored_arguments(name: str) -> tuple[str, ...]:
    """The data arguments metric ``name``'s per-item credit is computed from: the positional
    parameters of its ``item_credits``, which are its evaluate module's declared features
    (``caption_scores``, ``foil_scores``; ``scores``, ``labels``; ...)."""
    parameters = inspect.signature(metric_module(name).item_credits).parameters.values()
    return tuple(p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD)


def item_credits(
    name: str, inputs: Mapping[str, Any], score_kind: str, options: Mapping[str, Any]
) -> Mapping[str, Any]:
    """Per-item credits of one model: ``item_credits`` of the metric's module, from the scored
    arguments (:func:`scored_arguments`). The metric's other arguments (groups, dimensions,
    categories, cluster, question sets, another outcome's scores) describe the items or feed
    outcomes that are not paired: left out. An argument the metric does not take is refused,
    named, never silently dropped or passed on."""
    scored = scored_arguments(name)
    missing = [key for key in scored if key not in inputs]
    if missing:
        raise ValueError(f"{name}'s paired comparison needs {missing}; got {sorted(inputs)}")
    function = inspect.signature(metric_function(name)).parameters
    unknown = [key for key in inputs if key not in function]
    if unknown:
        raise ValueError(
            f"{name} takes no argument {', '.join(map(repr, unknown))}; its arguments: "
            f"{', '.join(function)}"
        )
    accepted = inspect.signature(metric_module(name).item_credits).parameters
    chosen = {k: v for k, v in options.items() if k in accepted}
    return metric_module(name).item_credits(
        **{key: inputs[key] for key in scored}, score_kind=score_kind, **chosen
    )


def paired_comparison(
    metric: str,
    inputs_a: Mapping[str, Any],
    inputs_b: Mapping[str, Any],
    *,
    score_kind_a: str = "similarity",
    score_kind_b: str = "similarity",
    options: Mapping[str, Any] | None = None,
    cluster: Sequence[Hashable] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Model A against model B on the same items, for each outcome of ``metric``.

    ``inputs_a``/``inputs_b`` are the metric's data arguments for each model, items aligned.
    Per outcome (the headline as ``mcnemar``/``bootstrap``, the others as ``mcnemar (<key>)``
    / ``bootstrap (<key>)``): the exact McNemar test on items each model gets right (credit 1;
    an item a ``half`` tie credited counts as not right) and the paired bootstrap of the mean
    credit difference B - A, resampling the same items (or ``cluster`` units) for both.
    """
    from ._common import mcnemar_exact, paired_bootstrap

    if metric not in PAIRED_OUTCOMES:
        raise ValueError(
            f"{metric!r} has no per-item outcome to pair; paired metrics: {list(PAIRED_OUTCOMES)}"
        )
    options = dict(options or {})
    credits_a = item_credits(metric, inputs_a, score_kind_a, options)
    credits_b = item_credits(metric, inputs_b, score_kind_b, options)
    result: dict[str, Any] = {"metric": metric}
    for position, (key, column) in enumerate(PAIRED_OUTCOMES[metric].items()):
        a, b = credits_a[column], credits_b[column]
        if len(a) != len(b):
            raise ValueError(
                f"model A has {len(a)} items and model B {len(b)}: pair the same items"
            )
        suffix = "" if position == 0 else f" ({key})"
        result[f"mcnemar{suffix}"] = mcnemar_exact(a == 1, b == 1)
        result[f"bootstrap{suffix}"] = paired_bootstrap(
            a, b, cluster=cluster, n_resamples=n_resamples, seed=seed, confidence=confidence
        )
    return result
