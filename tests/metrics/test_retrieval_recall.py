"""retrieval_recall: equals the CLIP4Clip-style sort on tie-free matrices, applies each tie
policy, handles several matches per view and per text, numpy = torch, chunking changes nothing,
a 20k x 20k pool in bounded memory, bad inputs, the evaluate module, doctests."""

from __future__ import annotations

import doctest
import runpy
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
import torch

import foilkit.metrics.retrieval_recall.retrieval_recall as module
from foilkit.builders.rtime import RECALL, _retrieval
from foilkit.evaluation import metric_function
from foilkit.metrics._common import resample_weights
from foilkit.metrics.retrieval_recall.retrieval_recall import retrieval_recall

METRIC_DIR = Path(module.__file__).resolve().parent
POLICIES = ("optimistic", "pessimistic", "average")


def clip4clip_metrics(similarity: np.ndarray) -> dict[str, float]:
    """Queries x candidates with the match on the diagonal, the CLIP4Clip way: sort each row
    (descending), the rank is where the diagonal score landed. Valid only without ties."""
    ordered = np.sort(-similarity, axis=1)
    diagonal = -np.diag(similarity)[:, None]
    rank = np.where(ordered - diagonal == 0)[1]
    assert len(rank) == len(similarity), "ties: the sort-based reference does not apply"
    return {
        "r1": np.mean(rank < 1),
        "r5": np.mean(rank < 5),
        "r10": np.mean(rank < 10),
        "median_rank": np.median(rank) + 1,
        "mean_rank": np.mean(rank) + 1,
    }


def dense_ranks(scores: np.ndarray, targets: list[list[int]]) -> np.ndarray:
    """Per query row: argsort the row, the best position of any target, 1-based (no ties)."""
    order = np.argsort(-scores, axis=1, kind="stable")
    return np.array([1 + np.isin(order[q], t).argmax() for q, t in enumerate(targets)], float)


def many_to_many(rng: np.random.Generator, n_views: int, n_texts: int) -> list[list[int]]:
    """Ground truth with every text matched by a view, some texts by several, some views with
    several texts."""
    truth: list[list[int]] = [[] for _ in range(n_views)]
    for text in range(n_texts):
        truth[rng.integers(n_views)].append(text)
    for row in truth:
        if not row or rng.random() < 0.3:
            row.append(int(rng.integers(n_texts)))
    return truth


@pytest.mark.parametrize("n", [1, 12, 150])
@pytest.mark.parametrize("ties", POLICIES)
def test_equals_clip4clip_on_tie_free_matrices(n: int, ties: str) -> None:
    similarity = np.random.default_rng(n).normal(size=(n, n))
    result = retrieval_recall(similarity, ties=ties, n_resamples=0)
    for direction, matrix in (("v2t", similarity), ("t2v", similarity.T)):
        for key, value in clip4clip_metrics(matrix).items():
            assert result[f"{direction}_{key}"] == pytest.approx(value), (direction, key)
            assert result[f"{direction}_{key}_ci"] is None
    assert (result["t2v_tied"], result["v2t_tied"]) == (0, 0)
    assert (result["n_videos"], result["n_texts"], result["n"]) == (n, n, n)


@pytest.mark.parametrize("shape", [(30, 45), (45, 30)])
def test_several_texts_per_view_and_views_per_text(shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    scores = rng.normal(size=shape)
    truth = many_to_many(rng, *shape)
    by_text = [[v for v, texts in enumerate(truth) if t in texts] for t in range(shape[1])]
    result = retrieval_recall(scores, truth, ks=(1, 3), n_resamples=0)
    for direction, ranks in (
        ("v2t", dense_ranks(scores, truth)),
        ("t2v", dense_ranks(scores.T, by_text)),
    ):
        assert result[f"{direction}_r1"] == pytest.approx(np.mean(ranks <= 1))
        assert result[f"{direction}_r3"] == pytest.approx(np.mean(ranks <= 3))
        assert result[f"{direction}_median_rank"] == pytest.approx(np.median(ranks))
        assert result[f"{direction}_mean_rank"] == pytest.approx(np.mean(ranks))
    assert "v2t_r5" not in result


def reversal_blind_pool(n_sources: int) -> tuple[np.ndarray, list[list[int]]]:
    """RTime-Hard as an order-blind model sees it: views 2i (forward) and 2i+1 (reversed) score
    alike against every text; text 2i is the forward caption (0.9), 2i+1 the reversed (0.8)."""
    rng = np.random.default_rng(0)
    scores = np.repeat(rng.uniform(0.0, 0.5, size=(n_sources, 2 * n_sources)), 2, axis=0)
    for source in range(n_sources):
        scores[2 * source : 2 * source + 2, 2 * source] = 0.9
        scores[2 * source : 2 * source + 2, 2 * source + 1] = 0.8
    return scores, [[view] for view in range(2 * n_sources)]


@pytest.mark.parametrize(
    ("ties", "t2v_r1", "t2v_rank"),
    [("pessimistic", 0.0, 2.0), ("optimistic", 1.0, 1.0), ("average", 0.0, 1.5)],
)
def test_tie_policies_on_a_reversal_blind_pool(ties: str, t2v_r1: float, t2v_rank: float) -> None:
    scores, truth = reversal_blind_pool(6)
    result = retrieval_recall(scores, truth, ties=ties, n_resamples=0)
    assert result["t2v_r1"] == t2v_r1 and result["t2v_r5"] == 1.0
    assert result["t2v_median_rank"] == result["t2v_mean_rank"] == t2v_rank
    assert result["t2v_tied"] == 12
    # video-to-text is untouched: the forward view finds its caption, the reversed one is beaten
    assert (result["v2t_r1"], result["v2t_r5"], result["v2t_tied"]) == (0.5, 1.0, 0)
    assert result["v2t_median_rank"] == 1.5 and result["v2t_mean_rank"] == 1.5


def test_default_policy_is_pessimistic() -> None:
    scores, truth = reversal_blind_pool(3)
    assert retrieval_recall(scores, truth, n_resamples=0) == retrieval_recall(
        scores, truth, ties="pessimistic", n_resamples=0
    )


@pytest.mark.parametrize("score_kind", ["perplexity", "loss"])
def test_lower_is_better_kinds(score_kind: str) -> None:
    scores = np.random.default_rng(3).normal(size=(20, 20))
    assert retrieval_recall(scores, score_kind=score_kind, n_resamples=0) == retrieval_recall(
        -scores, n_resamples=0
    )


def test_torch_tensors_and_chunk_sizes_give_the_same_result() -> None:
    rng = np.random.default_rng(4)
    scores = rng.integers(0, 6, size=(23, 31)).astype(np.float32)  # many ties
    truth = many_to_many(rng, 23, 31)
    for ties in POLICIES:
        expected = retrieval_recall(scores, truth, ties=ties, n_resamples=50)
        for data in (scores, torch.from_numpy(scores), scores.tolist()):
            for chunk_size in (1, 7, 23, 31):
                got = retrieval_recall(
                    data, truth, ties=ties, n_resamples=50, chunk_size=chunk_size
                )
                assert got == expected, (type(data), chunk_size, ties)


def test_bootstrap_resamples_views_and_texts_follow_their_view() -> None:
    """The intervals equal a naive bootstrap that expands each resample's views with their
    texts (each text drawn with the first view it describes) and recomputes the statistics."""
    rng = np.random.default_rng(5)
    scores = rng.normal(size=(8, 11))
    truth = many_to_many(rng, 8, 11)
    by_text = [[v for v, texts in enumerate(truth) if t in texts] for t in range(11)]
    owner = np.array([views[0] for views in by_text])
    ranks = {"v2t": dense_ranks(scores, truth), "t2v": dense_ranks(scores.T, by_text)}
    cluster = ["a", "a", "b", "c", "c", "c", "d", "e"]
    result = retrieval_recall(scores, truth, ks=(1,), cluster=cluster, n_resamples=300, seed=9)
    draws: dict[str, list[float]] = {}
    for block in resample_weights(8, cluster, 300, 9):
        for weights in block.astype(int):
            for direction, per_query in ranks.items():
                counts = weights if direction == "v2t" else weights[owner]
                sample = np.repeat(per_query, counts)
                draws.setdefault(f"{direction}_r1", []).append(np.mean(sample <= 1))
                draws.setdefault(f"{direction}_median_rank", []).append(np.median(sample))
                draws.setdefault(f"{direction}_mean_rank", []).append(np.mean(sample))
    for key, values in draws.items():
        expected = np.percentile(values, [2.5, 97.5])
        np.testing.assert_allclose(result[f"{key}_ci"], expected, err_msg=key)
        low, high = result[f"{key}_ci"]
        assert low <= result[key] <= high


def test_intervals_are_seeded_and_one_cluster_gives_no_spread() -> None:
    scores = np.random.default_rng(6).normal(size=(40, 40))
    first = retrieval_recall(scores, n_resamples=200, seed=1)
    assert first == retrieval_recall(scores, n_resamples=200, seed=1)
    assert first != retrieval_recall(scores, n_resamples=200, seed=2)
    single = retrieval_recall(scores, cluster=["video"] * 40, n_resamples=50)
    assert single["v2t_r1_ci"] == [single["v2t_r1"]] * 2
    assert single["t2v_mean_rank_ci"] == [single["t2v_mean_rank"]] * 2


def test_the_benchmark_contract_of_foilkit_evaluate() -> None:
    """What ``foilkit evaluate`` passes (RTime's views x texts matrix, ground truth from equal
    captions, score_kind / n_resamples / seed) gives every reported column with its interval."""
    scores, _ = reversal_blind_pool(4)
    texts = ["a", "b", "c", "d", "a", "e", "f", "g"]  # views 0 and 4 share a caption
    inputs = _retrieval({"scores": scores, "texts": texts, "ids": list(range(8))})
    assert metric_function("retrieval_recall") is retrieval_recall
    result = retrieval_recall(
        **inputs, score_kind="similarity", **RECALL.options, n_resamples=20, seed=0
    )
    for key in RECALL.columns.values():
        assert 0.0 <= result[key] <= 1.0
        assert len(result[f"{key}_ci"]) == 2
    assert result["n"] == 8


@pytest.mark.parametrize(
    ("scores", "truth", "options", "message"),
    [
        (np.ones(4), None, {}, r"scores must be 2-D"),
        (np.ones((2, 2, 2)), None, {}, r"scores must be 2-D"),
        (np.ones((0, 0)), None, {}, r"scores is empty"),
        ([[0.1, 0.2], [0.3]], [[0], [1]], {}, r"scores\[1\] has 1 scores"),
        ([[0.1, 0.2], [0.3, np.nan]], None, {}, r"scores\[1, 1\] = nan is not a finite"),
        ([[0.1, -np.inf], [0.3, 0.2]], None, {}, r"scores\[0, 1\] = -inf"),
        (np.eye(3), [[0], [5], [2]], {}, r"ground_truth\[1\] holds 5, outside the 3 texts"),
        (np.eye(3), [[0], [-1], [2]], {}, r"ground_truth\[1\] holds -1"),
        (np.eye(3), [[0], [], [1, 2]], {}, r"ground_truth\[1\] is empty"),
        (np.eye(3), [[0], [1]], {}, r"different lengths: scores=3, ground_truth=2"),
        (np.eye(3), [[0], [0], [1]], {}, r"text 2 \(column 2 of scores\) is in no view"),
        (np.ones((2, 3)), None, {}, r"2 views x 3 texts: without ground_truth"),
        (np.eye(3), None, {"cluster": ["a", "b"]}, r"different lengths: .*cluster=2"),
        (np.eye(3), None, {"ks": (1, 0)}, r"ks holds 0"),
        (np.eye(3), None, {"ks": ()}, r"ks is empty"),
        (np.eye(3), None, {"ties": "strict"}, r"ties='strict'"),
        (np.eye(3), None, {"score_kind": "distance"}, r"score_kind='distance'"),
        (np.eye(3), None, {"confidence": 1.5}, r"confidence=1.5"),
    ],
)
def test_bad_inputs_name_the_problem(scores, truth, options, message) -> None:
    with pytest.raises(ValueError, match=message):
        retrieval_recall(scores, truth, **options)


def test_a_20k_pool_runs_in_seconds_in_bounded_memory() -> None:
    """No dense rank or argsort matrix: a 20k x 20k float32 pool (a dense int64 argsort would
    take 3.2 GB) ranks both ways within a small, fixed working memory."""
    n = 20_000
    block = np.random.default_rng(7).random((500, n), dtype=np.float32)
    scores = np.tile(block, (n // 500, 1))  # random enough, and quick to make
    np.fill_diagonal(scores, 0.999)  # every view near the top for its own text
    tracemalloc.start()
    try:
        started = time.perf_counter()
        result = retrieval_recall(scores, n_resamples=0)
        elapsed = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    dense_argsort = n * n * np.dtype(np.int64).itemsize
    assert peak < dense_argsort / 50, f"peak {peak / 2**20:.0f} MiB"
    assert elapsed < 30, f"{elapsed:.1f} s"
    expected_rank = 1 + n * 0.001  # uniform scores above 0.999: about 20 per row and column
    del scores
    for direction in ("t2v", "v2t"):
        assert result[f"{direction}_mean_rank"] == pytest.approx(expected_rank, rel=0.05)


def test_evaluate_load_offline_computes_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    import evaluate

    monkeypatch.setenv("HF_EVALUATE_OFFLINE", "1")
    metric = evaluate.load(str(METRIC_DIR))
    rng = np.random.default_rng(8)
    scores = rng.integers(0, 5, size=(9, 12)).astype(float)
    truth = many_to_many(rng, 9, 12)
    options = {"ties": "average", "ks": (1, 2), "n_resamples": 30, "seed": 3}
    got = metric.compute(predictions=scores.tolist(), references=truth, **options)
    assert got == retrieval_recall(scores, truth, **options)
    for row, texts in zip(scores.tolist(), truth):  # example by example
        metric.add(predictions=row, references=texts)
    assert metric.compute(**options) == got


def test_app_launches_the_widget_over_the_module(monkeypatch: pytest.MonkeyPatch) -> None:
    import evaluate.utils

    launched = []
    monkeypatch.setattr(evaluate.utils, "launch_gradio_widget", launched.append)
    runpy.run_path(str(METRIC_DIR / "app.py"), run_name="__main__")
    (widget,) = launched
    assert widget.name == "retrieval_recall"
    assert (
        widget.compute(predictions=[[0.9, 0.1], [0.2, 0.8]], references=[[0], [1]], n_resamples=0)[
            "t2v_r1"
        ]
        == 1.0
    )


def test_the_module_and_its_card_examples_run() -> None:
    tests = doctest.testmod(module)
    assert tests.attempted >= 10 and tests.failed == 0
    card = doctest.testfile(str(METRIC_DIR / "README.md"), module_relative=False)
    assert card.attempted >= 3 and card.failed == 0


def test_the_folder_is_a_self_contained_module() -> None:
    """Shared code reaches the folder as relative links, so a Hub upload carries the files."""
    for name in ("_common.py", "_ranking.py"):
        link = METRIC_DIR / name
        assert link.is_symlink() and not Path(link.readlink()).is_absolute()
        assert link.resolve() == (METRIC_DIR.parent / name).resolve()
    for name in ("README.md", "app.py", "requirements.txt"):
        assert (METRIC_DIR / name).is_file()


def test_evaluate_module_takes_no_references_as_the_diagonal():
    """``references`` is optional in the evaluate module as ``ground_truth`` is in the function
    (issue 29): omitted, view i matches text i; a non-square matrix says so."""
    import evaluate

    metric = evaluate.load(str(Path(module.__file__).parent))
    scores = [[0.9, 0.1, 0.0], [0.2, 0.8, 0.1], [0.3, 0.4, 0.2]]
    expected = retrieval_recall(scores, n_resamples=20)
    assert metric.compute(predictions=scores, n_resamples=20) == expected
    with pytest.raises(ValueError, match="1 views x 3 texts: without ground_truth"):
        metric.compute(predictions=scores[:1], n_resamples=20)
