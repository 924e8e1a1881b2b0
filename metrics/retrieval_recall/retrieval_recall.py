"""Retrieval recall: T2V and V2T recall@K, median and mean rank of a views x texts score matrix."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from ._citations import RTIME
from ._common import ExactInputs, check_lengths, with_intervals
from ._ranking import (
    Ranking,
    Targets,
    as_score_array,
    check_ks,
    owned_mean,
    rank_targets,
    weighted_median,
)

try:  # the pure function below needs neither; the evaluate module does
    import datasets
    import evaluate
except ImportError:  # pragma: no cover - exercised only where evaluate is absent
    evaluate = None

_CITATION = RTIME

_DESCRIPTION = """\
Video-text retrieval over a pool: given a views x texts score matrix and, for each view (a video,
or its time-reversed copy), the texts that describe it, rank every text against every view.
Text-to-video (T2V): each text queries all views; video-to-text (V2T): each view queries all
texts. A query's rank is the 1-based position of its best-placed ground-truth match; R@K is the
fraction of queries ranked within the top K (RTime Sec. 3.3, Tab. 2-4: R@1/5/10 on RTime-Origin
and RTime-Hard, where each video is pooled with its reversed copy and both captions), MdR and
MnR the median and mean rank. Several texts per view and several views per text are allowed.

Ties are explicit (`ties`): `pessimistic` (the default) places a target after every non-target
that scores the same, `optimistic` before them, `average` at its expected rank under a random
order of the tie. The default is pessimistic because a model that pools frames without order
scores a video and its reversal identically: on RTime-Hard every caption then ties between the
two, and an optimistic rank would credit the model with exactly the temporal distinction RTime
measures and it cannot make. `t2v_tied`/`v2t_tied` count the queries a tie touched.

Ranks are counted, not sorted: the matrix is read in blocks of rows, so a 100k x 100k pool needs
memory for one block, never a dense rank matrix; torch tensors on a GPU are ranked there.
Confidence intervals are percentile bootstraps over views (or over `cluster`s of views, e.g. a
video and its reversed copy); each text query is drawn with the first view it describes.
"""

_KWARGS_DESCRIPTION = """
Args:
    scores (`list[list[float]]`, numpy array or torch tensor): views x texts scores, row i the
        scores of view i against every text (`predictions` in the evaluate module).
    ground_truth (`list[list[int]]`, optional): for each view, the indices of the texts that
        describe it (one or more; `references` in the evaluate module). Every text must describe
        at least one view. Default: the diagonal (view i matches text i; square scores only).
    score_kind (`str`): `similarity`, `probability`, `log_probability`, `logit` (higher is better),
        `perplexity` or `loss` (lower is better). Default `similarity`.
    ties (`str`): `pessimistic` (default), `optimistic` or `average`.
    ks (`tuple[int, ...]`): the recall cut-offs K. Default (1, 5, 10).
    cluster (`list[str]`, optional): each view's cluster (its source video); the bootstrap
        resamples clusters, not views.
    n_resamples (`int`): bootstrap resamples for the confidence intervals (0: none). Default 1000.
    seed (`int`): the bootstrap's seed. Default 0.
    confidence (`float`): the interval's coverage. Default 0.95.
    chunk_size (`int`, optional): score rows compared at once (memory bound); automatic by default.
Returns:
    t2v_r<K>, v2t_r<K> (`float`): recall@K in [0, 1] per direction, each with `<key>_ci`.
    t2v_median_rank, v2t_median_rank (`float`): median rank (MdR), with `_ci`.
    t2v_mean_rank, v2t_mean_rank (`float`): mean rank (MnR), with `_ci`.
    t2v_tied, v2t_tied (`int`): queries whose target tied with a non-target.
    n_videos (`int`): rows of scores (views: a video and its reversed copy count twice).
    n_texts (`int`): columns of scores. n (`int`): the bootstrap's items, the views.
Examples:
    >>> from foilkit.metrics.retrieval_recall.retrieval_recall import retrieval_recall
    >>> scores = [[0.9, 0.2, 0.1], [0.3, 0.8, 0.4], [0.5, 0.6, 0.4]]
    >>> result = retrieval_recall(scores, ks=(1, 2), n_resamples=0)
    >>> result["t2v_r1"], result["v2t_r1"], result["v2t_r2"], result["v2t_median_rank"]
    (0.6666666666666666, 0.6666666666666666, 0.6666666666666666, 1.0)
    >>> # a video and its reversed copy scored alike (order-blind pooling): every caption ties
    >>> tied = [[0.8, 0.6], [0.8, 0.6]]
    >>> pessimistic = retrieval_recall(tied, [[0], [1]], ks=(1,), n_resamples=0)
    >>> pessimistic["t2v_r1"], pessimistic["t2v_tied"], pessimistic["v2t_r1"]
    (0.0, 2, 0.5)
    >>> retrieval_recall(tied, [[0], [1]], ks=(1,), ties="optimistic", n_resamples=0)["t2v_r1"]
    1.0
    >>> retrieval_recall(tied, [[0], [1]], ks=(1,), ties="average", n_resamples=0)["t2v_mean_rank"]
    1.5
    >>> # two captions for view 0; losses: lower is better
    >>> result = retrieval_recall([[0.1, 0.5, 0.9], [0.7, 0.2, 0.3]], [[0, 2], [1]],
    ...                           score_kind="loss", ks=(1,), n_resamples=0)
    >>> result["v2t_r1"], result["t2v_r1"], result["n_videos"], result["n_texts"]
    (1.0, 0.6666666666666666, 2, 3)
"""


def retrieval_recall(
    scores: Any,
    ground_truth: Sequence[Sequence[int]] | None = None,
    *,
    score_kind: str = "similarity",
    ties: str = "pessimistic",
    ks: Sequence[int] = (1, 5, 10),
    cluster: Sequence[Hashable] | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    chunk_size: int | None = None,
) -> dict[str, Any]:
    """T2V and V2T recall@K, median and mean rank of a views x texts score matrix, with
    bootstrap CIs over views (see the module's ``_DESCRIPTION``)."""
    ks = check_ks(ks)
    scores = as_score_array(scores)
    n_views, n_texts = (int(size) for size in scores.shape)
    if ground_truth is None:
        ground_truth = [[i] for i in range(_square(scores))]
    check_lengths(scores=scores, ground_truth=ground_truth, cluster=cluster)
    by_view = Targets.from_lists(ground_truth, n_texts, name="ground_truth", candidates="texts")
    by_text = by_view.transpose()
    unmatched = np.flatnonzero(by_text.lengths() == 0)
    if unmatched.size:
        raise ValueError(
            f"text {unmatched[0]} (column {unmatched[0]} of scores) is in no view's ground_truth: "
            "text-to-video retrieval needs at least one matching view for every text"
        )
    options = {"score_kind": score_kind, "ties": ties, "chunk_size": chunk_size}
    # per direction: the ranking of its queries, and the view each query is resampled with
    rankings: dict[str, tuple[Ranking, np.ndarray]] = {
        "t2v": (
            rank_targets(scores, by_text, query_axis=1, **options),
            by_text.indices[by_text.indptr[:-1]],  # a text follows the first view it describes
        ),
        "v2t": (rank_targets(scores, by_view, query_axis=0, **options), np.arange(n_views)),
    }

    def statistic(weights: np.ndarray) -> dict[str, np.ndarray]:
        out = {}
        for name, (ranking, owners) in rankings.items():
            for k in ks:
                out[f"{name}_r{k}"] = owned_mean(weights, ranking.ranks <= k, owners)
            out[f"{name}_median_rank"] = weighted_median(weights, ranking.ranks, owners)
            out[f"{name}_mean_rank"] = owned_mean(weights, ranking.ranks, owners)
        return out

    result = with_intervals(
        statistic,
        n_views,
        cluster=cluster,
        n_resamples=n_resamples,
        seed=seed,
        confidence=confidence,
    )
    result.update({f"{name}_tied": int(r.tied.sum()) for name, (r, _) in rankings.items()})
    result.update(n_videos=n_views, n_texts=n_texts, n=n_views)
    return result


def _square(scores: Any) -> int:
    """The number of views of a square ``scores``; else the error :func:`retrieval_recall` gives
    without ``ground_truth``."""
    n_views, n_texts = (int(size) for size in as_score_array(scores).shape)
    if n_views != n_texts:
        raise ValueError(
            f"scores is {n_views} views x {n_texts} texts: without ground_truth (references) view "
            "i matches text i, which needs a square matrix"
        )
    return n_views


#: doctest runs the examples above (``doctest.testmod`` reads ``__test__``).
__test__ = {"examples": _KWARGS_DESCRIPTION}

if evaluate is not None:

    @evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
    class RetrievalRecall(ExactInputs, evaluate.Metric):
        """``evaluate.load("retrieval_recall")``: :func:`retrieval_recall` as a metric; each
        example is a view: its row of scores (``predictions``) and its texts (``references``)."""

        def _info(self) -> evaluate.MetricInfo:
            return evaluate.MetricInfo(
                description=_DESCRIPTION,
                citation=_CITATION,
                inputs_description=_KWARGS_DESCRIPTION,
                features=datasets.Features(
                    {
                        "predictions": datasets.Sequence(datasets.Value("float64")),
                        "references": datasets.Sequence(datasets.Value("int64")),
                    }
                ),
                reference_urls=["https://github.com/qyr0403/Reversed-in-Time"],
            )

        def compute(self, *, predictions: Any = None, references: Any = None, **kwargs: Any):
            """``evaluate.Metric.compute``, with ``references`` optional as the function's
            ``ground_truth`` is: omitted (with no examples added before), view i matches text i,
            which needs a square ``predictions``."""
            if references is None and predictions is not None:
                references = [[view] for view in range(_square(predictions))]
            return super().compute(predictions=predictions, references=references, **kwargs)

        def _compute(
            self,
            predictions: list[list[float]],
            references: list[list[int]],
            **options: Any,
        ) -> dict[str, Any]:
            # the keyword options (tie policy, bootstrap, ...) as the function takes them
            return retrieval_recall(predictions, references, **options)
