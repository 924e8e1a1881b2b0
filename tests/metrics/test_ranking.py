"""The shared ranking core (``metrics/_ranking.py``): exact ranks of ground-truth targets in
chunks, every tie policy, several targets per query, numpy and torch, resample statistics."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from foilkit.metrics import _ranking
from foilkit.metrics._ranking import (
    Targets,
    owned_mean,
    rank_targets,
    weighted_median,
)


def dense_first_target_ranks(scores: np.ndarray, targets: list[list[int]]) -> np.ndarray:
    """The CLIP4Clip way: sort every row (descending), find where each target landed, keep the
    best-placed target. Only meaningful without ties."""
    order = np.argsort(-scores, axis=1)
    position = np.empty_like(order)
    np.put_along_axis(position, order, np.arange(scores.shape[1])[None, :], axis=1)
    return np.array([1 + position[q, row].min() for q, row in enumerate(targets)], float)


def random_targets(rng: np.random.Generator, n_queries: int, n_candidates: int) -> list[list[int]]:
    return [
        rng.choice(n_candidates, size=rng.integers(1, 4), replace=False).tolist()
        for _ in range(n_queries)
    ]


@pytest.mark.parametrize("shape", [(1, 1), (5, 3), (40, 60), (60, 40)])
@pytest.mark.parametrize("ties", sorted(_ranking.TIE_RANKS))
def test_equals_dense_argsort_on_tie_free_matrices(shape: tuple[int, int], ties: str) -> None:
    rng = np.random.default_rng(sum(shape))
    scores = rng.normal(size=shape)
    targets = random_targets(rng, shape[0], shape[1]) if shape[1] > 3 else [[0]] * shape[0]
    ranking = rank_targets(scores, targets, ties=ties)
    np.testing.assert_array_equal(ranking.ranks, dense_first_target_ranks(scores, targets))
    assert not ranking.tied.any()


def test_columns_as_queries_equal_the_transpose() -> None:
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(30, 45))
    targets = random_targets(rng, 45, 30)  # per column: the rows that match it
    by_columns = rank_targets(
        scores, Targets.from_lists(targets, 30), query_axis=1, chunk_size=4
    ).ranks
    np.testing.assert_array_equal(by_columns, dense_first_target_ranks(scores.T, targets))


# Hand-built ties: row 0's target (column 0) ties with two non-targets; row 1's best target
# (column 1) shares 0.9 with the other target (column 2) and one non-target (column 3); row 2's
# target is beaten by one candidate and ties with one.
TIED = np.array(
    [
        [1.0, 1.0, 1.0, 0.5],
        [0.2, 0.9, 0.9, 0.9],
        [0.3, 0.7, 0.3, 0.1],
    ]
)
TIED_TARGETS = [[0], [1, 2], [0]]
EXPECTED = {
    "optimistic": [1.0, 1.0, 2.0],
    "pessimistic": [3.0, 2.0, 3.0],
    # expected rank of the first target in a random order of the tied block: 1 + m / (t + 1)
    "average": [2.0, 1 + 1 / 3, 2.5],
}


@pytest.mark.parametrize("ties", sorted(EXPECTED))
def test_tie_policies_on_a_hand_built_matrix(ties: str) -> None:
    ranking = rank_targets(TIED, TIED_TARGETS, ties=ties)
    np.testing.assert_allclose(ranking.ranks, EXPECTED[ties])
    np.testing.assert_array_equal(ranking.tied, [True, True, True])


def test_average_is_the_expected_rank_under_random_tie_breaking() -> None:
    """Brute force over every order of the tied candidates."""
    scores = np.array([[0.9, 0.5, 0.5, 0.5, 0.5, 0.1, 0.5]])
    targets = [[1, 3]]  # two targets tied with three non-targets, one candidate above
    tied = [1, 2, 3, 4, 6]
    ranks = [1 + 1 + min(order.index(1), order.index(3)) for order in itertools.permutations(tied)]
    assert rank_targets(scores, targets, ties="average").ranks[0] == pytest.approx(np.mean(ranks))
    assert rank_targets(scores, targets, ties="optimistic").ranks[0] == min(ranks)
    assert rank_targets(scores, targets, ties="pessimistic").ranks[0] == max(ranks)


def test_ties_between_targets_only_are_no_ties() -> None:
    ranking = rank_targets(np.array([[0.1, 0.8, 0.8, 0.3]]), [[1, 2]], ties="pessimistic")
    assert ranking.ranks.tolist() == [1.0] and ranking.tied.tolist() == [False]


def test_several_targets_rank_the_best_placed_one() -> None:
    scores = np.array([[0.9, 0.1, 0.5, 0.7], [0.2, 0.4, 0.6, 0.8]])
    assert rank_targets(scores, [[1, 3], [0, 1]]).ranks.tolist() == [2.0, 3.0]
    # duplicates in a target list change nothing
    assert rank_targets(scores, [[3, 1, 3], [1, 0, 0]]).ranks.tolist() == [2.0, 3.0]


@pytest.mark.parametrize("score_kind", ["perplexity", "loss"])
def test_lower_is_better_kinds_reverse_the_order(score_kind: str) -> None:
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(12, 9))
    targets = random_targets(rng, 12, 9)
    np.testing.assert_array_equal(
        rank_targets(scores, targets, score_kind=score_kind).ranks,
        rank_targets(-scores, targets).ranks,
    )


@pytest.mark.parametrize("ties", sorted(EXPECTED))
@pytest.mark.parametrize("query_axis", [0, 1])
def test_chunk_size_changes_nothing(ties: str, query_axis: int) -> None:
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 4, size=(23, 23)).astype(np.float64)  # many ties
    targets = random_targets(rng, 23, 23)
    results = [
        rank_targets(scores, targets, query_axis=query_axis, ties=ties, chunk_size=size)
        for size in (1, 7, 23, None)
    ]
    for result in results[1:]:
        np.testing.assert_array_equal(result.ranks, results[0].ranks)
        np.testing.assert_array_equal(result.tied, results[0].tied)


@pytest.mark.parametrize("kernel", ["numpy view", "torch"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.int64])
@pytest.mark.parametrize("query_axis", [0, 1])
def test_torch_tensors_equal_numpy(
    monkeypatch: pytest.MonkeyPatch, kernel: str, dtype: torch.dtype, query_axis: int
) -> None:
    """A CPU tensor goes through numpy on its memory; forcing the torch kernel (what CUDA
    tensors use) gives the same ranks."""
    if kernel == "torch":
        monkeypatch.setattr(_ranking, "NUMPY_DEVICES", set())
    rng = np.random.default_rng(4)
    scores = rng.integers(-3, 4, size=(17, 17)).astype(np.float64)
    targets = random_targets(rng, 17, 17)
    tensor = torch.tensor(scores, dtype=dtype, requires_grad=dtype.is_floating_point)
    for ties in EXPECTED:
        expected = rank_targets(scores, targets, query_axis=query_axis, ties=ties)
        got = rank_targets(tensor, targets, query_axis=query_axis, ties=ties, chunk_size=5)
        np.testing.assert_array_equal(got.ranks, expected.ranks)
        np.testing.assert_array_equal(got.tied, expected.tied)


def test_bfloat16_and_perplexity_tensors(monkeypatch: pytest.MonkeyPatch) -> None:
    scores = torch.tensor([[3.0, 1.0, 2.0], [1.0, 1.0, 5.0]], dtype=torch.bfloat16)
    for devices in ({"cpu"}, set()):
        monkeypatch.setattr(_ranking, "NUMPY_DEVICES", devices)
        assert rank_targets(scores, [[2], [0]], score_kind="perplexity").ranks.tolist() == [
            2.0,
            1.0,
        ]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.gpu
def test_cuda_tensors_rank_on_their_device() -> None:
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 5, size=(300, 200)).astype(np.float32)
    targets = random_targets(rng, 300, 200)
    for ties in EXPECTED:
        expected = rank_targets(scores, targets, ties=ties)
        got = rank_targets(torch.tensor(scores, device="cuda"), targets, ties=ties, chunk_size=64)
        np.testing.assert_array_equal(got.ranks, expected.ranks)
        np.testing.assert_array_equal(got.tied, expected.tied)


def test_targets_transpose() -> None:
    targets = Targets.from_lists([[2, 0], [2], [1, 2]], 4)
    flipped = targets.transpose()
    as_lists = [
        flipped.indices[flipped.indptr[c] : flipped.indptr[c + 1]].tolist() for c in range(4)
    ]
    assert as_lists == [[0], [2], [0, 1, 2], []]
    assert (flipped.n_queries, flipped.n_candidates) == (4, 3)
    back = flipped.transpose()
    np.testing.assert_array_equal(back.indptr, targets.indptr)
    np.testing.assert_array_equal(back.indices, targets.indices)
    assert back.n_candidates == 4


def test_weighted_median_is_the_median_of_the_drawn_sample() -> None:
    rng = np.random.default_rng(6)
    values = rng.integers(1, 9, size=11).astype(float)
    weights = rng.integers(0, 3, size=(50, 11)).astype(float)
    weights[0] = 0  # an empty resample
    expected = [np.median(np.repeat(values, w.astype(int))) if w.sum() else np.nan for w in weights]
    np.testing.assert_array_equal(weighted_median(weights, values), expected)


def test_owned_statistics_follow_their_owners_weights() -> None:
    """Queries belonging to resampled items: equal to expanding each item's queries."""
    rng = np.random.default_rng(7)
    values = rng.integers(1, 20, size=9).astype(float)
    owners = np.array([0, 0, 1, 2, 2, 2, 4, 4, 1])  # item 3 owns no query
    weights = rng.integers(0, 3, size=(40, 5)).astype(float)
    expanded = weights[:, owners]
    np.testing.assert_allclose(
        owned_mean(weights, values, owners),
        [np.average(values, weights=w) if w.sum() else np.nan for w in expanded],
    )
    np.testing.assert_array_equal(
        weighted_median(weights, values, owners), weighted_median(expanded, values)
    )


@pytest.mark.parametrize(
    ("scores", "targets", "options", "message"),
    [
        (np.ones(3), [[0]], {}, r"must be 2-D"),
        (np.ones((0, 3)), [], {}, r"is empty"),
        ([[1.0, 2.0], 3.0], [[0], [0]], {}, r"scores\[1\] = 3.0 is not a row of scores"),
        ([[1.0, "a"], [1.0, 2.0]], [[0], [0]], {}, r"scores must be a matrix of numbers"),
        (np.array([["a", "b"]]), [[0]], {}, r"scores has dtype <U1"),
        ([[1.0, 2.0], [1.0]], [[0], [0]], {}, r"scores\[1\] has 1 scores, scores\[0\] has 2"),
        (np.array([[1.0, np.nan], [0.0, 1.0]]), [[0], [1]], {}, r"scores\[0, 1\] = nan"),
        (
            np.array([[1.0, 2.0], [np.inf, 1.0]]),
            [[1], [0]],
            {"query_axis": 1},
            r"scores\[1, 0\] = inf",
        ),
        (np.ones((2, 3)), [[0], [3]], {}, r"targets\[1\] holds 3, outside the 3 candidates"),
        (np.ones((2, 3)), [[0], []], {}, r"targets\[1\] is empty"),
        (np.ones((2, 3)), [[0], [1.5]], {}, r"targets\[1\] = \[1.5\] must hold integer"),
        (np.ones((2, 3)), [[0], 1], {}, r"targets\[1\] = 1 must be a list"),
        (np.ones((2, 3)), [[0], [[1]]], {}, r"targets\[1\] = \[\[1\]\] must hold integer"),
        (np.ones((2, 3)), [[0]], {}, r"targets cover 1 queries x 3 candidates, scores has 2 x 3"),
        (np.ones((2, 3)), [[0], [1]], {"chunk_size": 0}, r"chunk_size=0"),
        (np.ones((2, 3)), [[0], [1]], {"ties": "random"}, r"ties='random'"),
        (np.ones((2, 3)), [[0], [1]], {"score_kind": "distance"}, r"score_kind='distance'"),
    ],
)
def test_bad_inputs_name_the_problem(scores, targets, options, message) -> None:
    with pytest.raises(ValueError, match=message):
        rank_targets(scores, targets, **options)


def test_a_nan_in_a_tensor_names_its_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    scores = torch.zeros(4, 5)
    scores[3, 2] = float("nan")
    for devices in ({"cpu"}, set()):
        monkeypatch.setattr(_ranking, "NUMPY_DEVICES", devices)
        with pytest.raises(ValueError, match=r"scores\[3, 2\] = nan"):
            rank_targets(scores, [[0]] * 5, query_axis=1, chunk_size=2)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32])
def test_integer_scores_with_lower_is_better(dtype: type) -> None:
    """Unsigned integers must not wrap when a loss is turned into higher-is-better."""
    scores = np.array([[3, 1, 2], [0, 5, 4]], dtype=dtype)
    assert rank_targets(scores, [[1], [1]], score_kind="loss").ranks.tolist() == [1.0, 3.0]
    assert rank_targets(torch.from_numpy(scores), [[1], [1]], score_kind="loss").ranks.tolist() == [
        1.0,
        3.0,
    ]
