"""RTime-Binary accuracy: pick the right one of a video and its reversal, or of two captions."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from ._citations import RTIME
from ._common import (
    ExactInputs,
    block_matrix,
    oriented,
    weighted_mean,
    win_credit,
    winoground_credits,
    with_intervals,
)

try:  # the pure functions below need neither; the evaluate module does
    import datasets
    import evaluate
except ImportError:  # pragma: no cover - exercised only where evaluate is absent
    evaluate = None

_CITATION = RTIME

_DESCRIPTION = """\
RTime-Binary (Du et al., Sec. 3.3): each source video comes with its time-reversed copy and a
caption for each. Text-to-video: given a caption, choose between the two videos; video-to-text:
given a video, choose between the two captions. Accuracy is over all queries (two per block and
direction), so random choice scores 50%. A model that ignores frame order (mean-pooled frames)
gives both videos the same score: the tie policy decides what that earns, and the default `half`
credits a tie as the coin flip it is, so such a model sits at chance as the paper's random
baseline does (`strict` counts it wrong, `first` right). Also reported: Winoground's text score
(both videos choose their caption), video score (both captions choose their video) and group score
(all four), and how many comparisons were tied.
"""

_KWARGS_DESCRIPTION = """
Args:
    scores (`list[[[float, float], [float, float]]]`): per source video a 2x2 block
        `[[s(forward video, forward caption), s(forward video, reverse caption)],
          [s(reversed video, forward caption), s(reversed video, reverse caption)]]`.
    cluster (`list[str]`, optional): a cluster per block for the bootstrap (blocks are
        independent source videos, so usually none).
    score_kind (`str`): `similarity`, `probability`, `log_probability`, `logit` (higher is better),
        `perplexity` or `loss` (lower is better). Default `similarity`.
    ties (`str`): `half` (default), `strict` or `first`.
    n_resamples (`int`): bootstrap resamples over blocks (0: no intervals). Default 1000.
    seed (`int`): the bootstrap's seed. Default 0.
    confidence (`float`): the intervals' coverage. Default 0.95.
Returns:
    t2v_accuracy, v2t_accuracy (`float`): with `_ci`.
    text_score, video_score, group_score (`float`): Winoground's scores per block, with `_ci`.
    n (`int`): blocks; t2v_tied, v2t_tied (`int`): queries a tie decided.
Examples:
    >>> from foilkit.metrics.binary_retrieval_accuracy.binary_retrieval_accuracy import (
    ...     binary_retrieval_accuracy)
    >>> result = binary_retrieval_accuracy(
    ...     scores=[[[0.9, 0.2], [0.3, 0.8]], [[0.5, 0.4], [0.5, 0.4]]], n_resamples=0)
    >>> result["t2v_accuracy"], result["v2t_accuracy"], result["t2v_tied"]
    (0.75, 0.75, 2)
    >>> result["group_score"]
    0.5
"""


def item_credits(
    scores: Sequence[Sequence[Sequence[float]]],
    *,
    score_kind: str = "similarity",
    ties: str = "half",
) -> dict[str, np.ndarray]:
    """Per block: t2v and v2t credits (mean of the block's two queries), Winoground's text, video
    and group credits, and how many of its t2v / v2t queries were tied. Validates the input."""
    blocks = oriented(block_matrix("scores", scores), score_kind)
    if len(blocks) == 0:
        raise ValueError("empty input: scores holds no 2x2 blocks")

    def query(target: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return win_credit(target, other[:, None], ties)

    forward_caption = query(blocks[:, 0, 0], blocks[:, 1, 0])  # which video for the forward caption
    reverse_caption = query(blocks[:, 1, 1], blocks[:, 0, 1])
    forward_video = query(blocks[:, 0, 0], blocks[:, 0, 1])  # which caption for the forward video
    reversed_video = query(blocks[:, 1, 1], blocks[:, 1, 0])
    return {
        "t2v": (forward_caption[0] + reverse_caption[0]) / 2,
        "v2t": (forward_video[0] + reversed_video[0]) / 2,
        "t2v_tied": forward_caption[1].astype(int) + reverse_caption[1],
        "v2t_tied": forward_video[1].astype(int) + reversed_video[1],
        **winoground_credits(blocks, ties),
    }


def binary_retrieval_accuracy(
    scores: Sequence[Sequence[Sequence[float]]],
    *,
    cluster: Sequence[Hashable] | None = None,
    score_kind: str = "similarity",
    ties: str = "half",
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """T2V and V2T binary accuracy and Winoground's scores over 2x2 blocks, with bootstrap CIs."""
    credits = item_credits(scores, score_kind=score_kind, ties=ties)
    columns = {
        "t2v_accuracy": credits["t2v"],
        "v2t_accuracy": credits["v2t"],
        "text_score": credits["text"],
        "video_score": credits["video"],
        "group_score": credits["group"],
    }
    n = len(credits["t2v"])
    result = with_intervals(
        lambda weights: {name: weighted_mean(weights, v) for name, v in columns.items()},
        n,
        cluster=cluster,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
    )
    result.update(
        n=n, t2v_tied=int(credits["t2v_tied"].sum()), v2t_tied=int(credits["v2t_tied"].sum())
    )
    return result


#: doctest runs the examples above (``doctest.testmod`` reads ``__test__``).
__test__ = {"examples": _KWARGS_DESCRIPTION}

if evaluate is not None:

    @evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
    class BinaryRetrievalAccuracy(ExactInputs, evaluate.Metric):
        """``evaluate.load("binary_retrieval_accuracy")``: :func:`binary_retrieval_accuracy`."""

        def _info(self) -> evaluate.MetricInfo:
            return evaluate.MetricInfo(
                description=_DESCRIPTION,
                citation=_CITATION,
                inputs_description=_KWARGS_DESCRIPTION,
                features=datasets.Features(
                    {"scores": datasets.Sequence(datasets.Sequence(datasets.Value("float64")))}
                ),
                reference_urls=["https://github.com/qyr0403/Reversed-in-Time"],
            )

        def _compute(
            self,
            scores: list[list[list[float]]],
            **options: Any,
        ) -> dict[str, Any]:
            # the keyword options (tie policy, bootstrap, ...) as the function takes them
            return binary_retrieval_accuracy(scores, **options)
