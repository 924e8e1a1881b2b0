"""Winoground's text, video and group scores of 2x2 items: two videos, two captions (Vinoground)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from ._citations import VINOGROUND
from ._common import (
    ExactInputs,
    add_counts,
    block_matrix,
    oriented,
    weighted_mean,
    winoground_credits,
    with_intervals,
)

try:  # the pure functions below need neither; the evaluate module does
    import datasets
    import evaluate
except ImportError:  # pragma: no cover - exercised only where evaluate is absent
    evaluate = None

_CITATION = VINOGROUND

_DESCRIPTION = """\
An item is two videos and two captions, video i matching caption i: Vinoground's pairs (Zhang et
al. 2024), whose captions are temporal swaps of each other ("a man waves, then jumps" / "a man
jumps, then waves") and whose videos show the two orders. From the 2x2 scores s(video, caption)
the item earns Winoground's three scores: the **text score** when each video scores its own
caption above the other (s(v0,c0) > s(v0,c1) and s(v1,c1) > s(v1,c0)), the **video score** when
each caption scores its own video above the other (s(v0,c0) > s(v1,c0) and s(v1,c1) >
s(v0,c1)), the **group score** when all four hold. Vinoground reports the three in percent,
overall and per category (major: action, object, viewpoint; minor: interaction, cyclical,
spatial, contextual; an item may have several minor categories). Ties are explicit: `strict`
(Vinoground's `>`) counts a tied comparison wrong. A model that answers questions is asked two
(Vinoground's video LLM protocol): which caption fits each video (the text score's 2x2 block)
and which of the two videos, shown one after the other, a caption describes (the video score's
block, `video_pair_scores`).
"""

_KWARGS_DESCRIPTION = """
Args:
    pair_scores (`list[[[float, float], [float, float]]]`): per item the 2x2 block
        `[[s(v0, c0), s(v0, c1)], [s(v1, c0), s(v1, c1)]]`, video i matching caption i.
    video_pair_scores (`list[[[float, float], [float, float]]]`, optional): the blocks the video
        score compares, in the same layout, where they come from another question than the text
        score's (Vinoground's video-score question: s(v, c) = the answer naming video v when
        asked about caption c); default: `pair_scores`.
    categories (`list[list[str]]`, optional): each item's categories (Vinoground: its major
        category, then its minor ones); adds the three scores per category.
    cluster (`list[str]`, optional): each item's cluster; the bootstrap resamples clusters.
    score_kind (`str`): `similarity`, `probability`, `log_probability`, `logit` (higher is better),
        `perplexity` or `loss` (lower is better). Default `similarity`.
    ties (`str`): `strict` (default: a tied comparison fails), `half` (it earns half) or `first`
        (it passes).
    n_resamples (`int`): bootstrap resamples for the confidence intervals (0: none). Default 1000.
    seed (`int`): the bootstrap's seed. Default 0.
    confidence (`float`): the interval's coverage. Default 0.95.
Returns:
    text_score, video_score, group_score (`float`): mean credits over items, each with `_ci`.
    n (`int`): the number of items. n_tied (`int`): items with a tied comparison.
    text_score_<category>, video_score_<category>, group_score_<category> (`float`) with their
        `_ci`, and n_<category>: per category, when `categories` is given.
Examples:
    >>> from foilkit.metrics.winoground_score.winoground_score import winoground_score
    >>> result = winoground_score([[[0.9, 0.1], [0.2, 0.8]], [[0.6, 0.4], [0.7, 0.5]]],
    ...                           n_resamples=0)
    >>> result["text_score"], result["video_score"], result["group_score"]
    (0.5, 0.5, 0.5)
    >>> # a tie: video 1 scores both captions alike
    >>> result = winoground_score([[[0.9, 0.1], [0.5, 0.5]]], n_resamples=0)
    >>> result["text_score"], result["video_score"], result["n_tied"]
    (0.0, 1.0, 1)
    >>> winoground_score([[[0.9, 0.1], [0.5, 0.5]]], ties="half", n_resamples=0)["text_score"]
    0.5
    >>> # perplexities: lower is better
    >>> winoground_score([[[3.0, 9.0], [8.0, 2.0]]], score_kind="perplexity",
    ...                  n_resamples=0)["group_score"]
    1.0
    >>> result = winoground_score([[[0.9, 0.1], [0.2, 0.8]], [[0.6, 0.4], [0.7, 0.5]]],
    ...     categories=[["action", "interaction"], ["object", "interaction"]], n_resamples=0)
    >>> result["text_score_action"], result["group_score_interaction"], result["n_interaction"]
    (1.0, 0.5, 2)
    >>> # a video question answered apart: the video score compares its blocks
    >>> result = winoground_score([[[0.9, 0.1], [0.2, 0.8]]],
    ...     video_pair_scores=[[[0.3, 0.6], [0.7, 0.4]]], n_resamples=0)
    >>> result["text_score"], result["video_score"], result["group_score"]
    (1.0, 0.0, 0.0)
"""


def item_credits(
    pair_scores: Sequence[Sequence[Sequence[float]]],
    *,
    video_pair_scores: Sequence[Sequence[Sequence[float]]] | None = None,
    score_kind: str = "similarity",
    ties: str = "strict",
) -> dict[str, np.ndarray]:
    """Per item its ``text``, ``video`` and ``group`` credits and whether a tie decided any of its
    four comparisons (``tied``). Validates the inputs."""
    blocks = oriented(block_matrix("pair_scores", pair_scores), score_kind)
    videos = blocks
    if video_pair_scores is not None:
        videos = oriented(block_matrix("video_pair_scores", video_pair_scores), score_kind)
        if len(videos) != len(blocks):
            raise ValueError(
                f"video_pair_scores has {len(videos)} blocks for {len(blocks)} in pair_scores"
            )
    credits = winoground_credits(blocks, ties, videos)  # checks ``ties``
    # the four comparisons: each video's two captions, each caption's two videos
    tied = (
        (blocks[:, 0, 0] == blocks[:, 0, 1])
        | (blocks[:, 1, 1] == blocks[:, 1, 0])
        | (videos[:, 0, 0] == videos[:, 1, 0])
        | (videos[:, 1, 1] == videos[:, 0, 1])
    )
    return {**credits, "tied": tied}


def category_masks(categories: Sequence[Sequence[Hashable]] | None, n: int) -> dict[str, Any]:
    """Category name -> boolean mask over items, in first-seen order (an item may carry several
    categories, each counted once); a ``ValueError`` names a bad entry."""
    if categories is None:
        return {}
    if len(categories) != n:
        raise ValueError(f"categories has {len(categories)} entries for {n} items")
    masks: dict[str, np.ndarray] = {}
    for index, names in enumerate(categories):
        if isinstance(names, (str, bytes)) or not hasattr(names, "__iter__"):
            raise ValueError(
                f"categories[{index}] = {names!r} is not a list of category names "
                "(pass [major, *minors] per item)"
            )
        for name in names:
            if name is None or str(name) == "":
                raise ValueError(f"categories[{index}] holds {name!r}, not a category name")
            masks.setdefault(str(name), np.zeros(n, dtype=bool))[index] = True
    return masks


def winoground_score(
    pair_scores: Sequence[Sequence[Sequence[float]]],
    *,
    video_pair_scores: Sequence[Sequence[Sequence[float]]] | None = None,
    categories: Sequence[Sequence[Hashable]] | None = None,
    cluster: Sequence[Hashable] | None = None,
    score_kind: str = "similarity",
    ties: str = "strict",
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Text, video and group scores of 2x2 items, overall and per category, with bootstrap CIs."""
    credits = item_credits(
        pair_scores, video_pair_scores=video_pair_scores, score_kind=score_kind, ties=ties
    )
    n = len(credits["tied"])
    if n == 0:
        raise ValueError("pair_scores is empty: there is no item to score")
    masks = category_masks(categories, n)
    columns = {f"{name}_score": credits[name] for name in ("text", "video", "group")}

    def statistic(weights: np.ndarray) -> dict[str, np.ndarray]:
        out = {key: weighted_mean(weights, values) for key, values in columns.items()}
        for category, mask in masks.items():
            for key, values in columns.items():
                out[f"{key}_{category}"] = weighted_mean(weights[:, mask], values[mask])
        return out

    result = with_intervals(
        statistic, n, cluster=cluster, n_resamples=n_resamples, seed=seed, confidence=confidence
    )
    add_counts(result, {"n": n, "n_tied": int(credits["tied"].sum())})
    return add_counts(result, {f"n_{name}": int(mask.sum()) for name, mask in masks.items()})


#: doctest runs the examples above (``doctest.testmod`` reads ``__test__``).
__test__ = {"examples": _KWARGS_DESCRIPTION}

if evaluate is not None:

    @evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
    class WinogroundScore(ExactInputs, evaluate.Metric):
        """``evaluate.load("winoground_score")``: :func:`winoground_score` as a metric."""

        def _info(self) -> evaluate.MetricInfo:
            return evaluate.MetricInfo(
                description=_DESCRIPTION,
                citation=_CITATION,
                inputs_description=_KWARGS_DESCRIPTION,
                features=datasets.Features(
                    {"pair_scores": datasets.List(datasets.List(datasets.Value("float64")))}
                ),
                reference_urls=["https://github.com/Vinoground/Vinoground"],
            )

        def _compute(self, pair_scores: list[list[list[float]]], **options: Any) -> dict[str, Any]:
            # the keyword options (categories, tie policy, bootstrap, ...) as the function takes
            return winoground_score(pair_scores, **options)
