"""The four per-item metrics against the reference computations of their papers' code."""

from __future__ import annotations

import math

import numpy as np
import pytest

from foilkit.metrics import metric_function

pairwise = metric_function("pairwise_foil_accuracy")
proficiency = metric_function("proficiency_combined_accuracy")
multiple_choice = metric_function("multiple_choice_accuracy")
binary = metric_function("binary_retrieval_accuracy")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(7)


# --- pairwise_foil_accuracy ---------------------------------------------------------------------


def test_strict_equals_vitatecs_caption_greater_than_counterfactual(rng):
    """VITATECS' scripts count ``caption > counterfactual``; scores rounded so ties occur."""
    captions = np.round(rng.random(500), 1)
    foils = np.round(rng.random(500), 1)
    reference = sum(c > f for c, f in zip(captions, foils)) / len(captions)
    result = pairwise(captions.tolist(), [[f] for f in foils], ties="strict", n_resamples=0)
    assert (captions == foils).sum() > 0
    assert result["accuracy"] == pytest.approx(reference)
    assert result["n_tied"] == int((captions == foils).sum())


def test_first_equals_vilma_argmax_over_caption_and_foils(rng):
    """ViLMA takes ``argmax([caption, *foils]) == 0``; numpy's argmax returns the first maximum."""
    captions = np.round(rng.random(300), 1)
    foils = [np.round(rng.random(rng.integers(1, 4)), 1) for _ in range(300)]
    reference = np.mean([np.argmax([c, *f]) == 0 for c, f in zip(captions, foils)])
    result = pairwise(captions.tolist(), [f.tolist() for f in foils], ties="first", n_resamples=0)
    assert result["accuracy"] == pytest.approx(reference)


@pytest.mark.parametrize(
    ("ties", "expected"),
    [("strict", 1 / 4), ("half", (1 + 1 / 2 + 1 / 3) / 4), ("first", 3 / 4)],
)
def test_tie_policies(ties, expected):
    # right; tied with one foil; tied with two foils (the third foil below); beaten
    captions = [0.9, 0.5, 0.5, 0.2]
    foils = [[0.1, 0.2], [0.5, 0.1], [0.5, 0.5, 0.4], [0.2, 0.7]]
    result = pairwise(captions, foils, ties=ties, n_resamples=0)
    assert result["accuracy"] == pytest.approx(expected)
    assert result["n_tied"] == 2  # the beaten item's tie with 0.2 decides nothing


@pytest.mark.parametrize("score_kind", ["perplexity", "loss"])
def test_lower_is_better_kinds_invert_the_comparison(score_kind):
    similarity = pairwise([0.9, 0.1], [[0.5, 0.2], [0.3]], n_resamples=0)
    lower = pairwise([-0.9, -0.1], [[-0.5, -0.2], [-0.3]], score_kind=score_kind, n_resamples=0)
    assert similarity["accuracy"] == lower["accuracy"] == 0.5
    # a shorter foil list is padded: the padding never beats a lower-is-better caption
    assert pairwise([10.0], [[20.0]], score_kind=score_kind, n_resamples=0)["accuracy"] == 1.0


def test_groups_give_per_group_macro_and_micro_averages():
    result = pairwise(
        [1, 1, 1, 0, 1], [[0], [0], [2], [1], [0]], groups=["a", "a", "a", "b", "b"], n_resamples=0
    )
    assert result["accuracy_a"] == pytest.approx(2 / 3) and result["accuracy_b"] == 0.5
    assert result["macro_accuracy"] == pytest.approx((2 / 3 + 0.5) / 2)
    assert result["accuracy"] == pytest.approx(3 / 5)  # micro
    assert (result["n_a"], result["n_b"]) == (3, 2)


def test_winoground_scores_from_two_by_two_blocks():
    blocks = [
        [[0.9, 0.1], [0.2, 0.8]],  # all right
        [[0.9, 0.1], [0.95, 0.96]],  # texts right; text 0 prefers video 1 -> video score 0
        [[0.1, 0.9], [0.2, 0.8]],  # video 0 prefers text 1 -> text score 0
    ]
    result = pairwise(None, None, pair_scores=blocks, n_resamples=0)
    assert result["text_score"] == pytest.approx(2 / 3)
    assert result["video_score"] == pytest.approx(1 / 3)
    assert result["group_score"] == pytest.approx(1 / 3)
    assert result["accuracy"] == pytest.approx(2 / 3)  # caption t0 vs foil t1 on video 0


def test_vitatecs_recall_at_k_equals_sorting_each_video_row(rng):
    """Tab. 7: rank every caption and counterfactual of the benchmark for each item's video."""
    n_items, k = 40, 10
    texts = rng.random((n_items, 2 * n_items))  # columns: caption i at 2i, counterfactual at 2i+1
    targets = [[2 * i, 2 * i + 1] for i in range(n_items)]
    order = np.argsort(-texts, axis=1)
    top = [set(order[i, :k]) for i in range(n_items)]
    expected_caption = np.mean([2 * i in top[i] for i in range(n_items)])
    expected_foil = np.mean([2 * i + 1 in top[i] for i in range(n_items)])
    result = pairwise(
        [0.5] * n_items,
        [[0.0]] * n_items,
        retrieval_scores=texts,
        retrieval_targets=targets,
        n_resamples=0,
    )
    assert result["caption_recall_at_10"] == pytest.approx(expected_caption)
    assert result["foil_recall_at_10"] == pytest.approx(expected_foil)
    assert result["all_recall_at_10"] == pytest.approx((expected_caption + expected_foil) / 2)
    with pytest.raises(ValueError, match=r"retrieval_targets\[1\] = \[3\] must be"):
        pairwise(
            [0.1, 0.2], [[0.0], [0.0]], retrieval_scores=texts[:2], retrieval_targets=[[0, 1], [3]]
        )


# --- proficiency_combined_accuracy ---------------------------------------------------------------


def test_p_t_and_combined_equal_vilma_two_file_evaluation(rng):
    """ViLMA evaluates the main and the proficiency results files separately and joins them by
    id: P+T counts an item when both argmaxes pick the caption."""
    n = 200
    ids = [f"item-{i}" for i in rng.permutation(n)]
    main = {i: (rng.random(), rng.random(rng.integers(1, 3))) for i in ids}
    prof = {i: (rng.random(), rng.random(1)) for i in reversed(ids)}  # another file order

    def argmax_right(entry):
        caption, foils = entry
        return np.argmax([caption, *foils]) == 0

    expected_t = np.mean([argmax_right(main[i]) for i in ids])
    expected_p = np.mean([argmax_right(prof[i]) for i in ids])
    expected_pt = np.mean([argmax_right(main[i]) and argmax_right(prof[i]) for i in ids])
    result = proficiency(
        [main[i][0] for i in ids],
        [main[i][1].tolist() for i in ids],
        [prof[i][0] for i in ids],
        [prof[i][1].tolist() for i in ids],
        n_resamples=0,
    )
    assert result["main_accuracy"] == pytest.approx(expected_t)
    assert result["proficiency_accuracy"] == pytest.approx(expected_p)
    assert result["combined_accuracy"] == pytest.approx(expected_pt)


def test_tests_average_their_subtests_and_macro_averages_the_tests():
    """Table 2: a test's score averages its subtests; the summary averages the tests' P+T."""
    right, wrong = ([1.0], [[0.0]]), ([0.0], [[1.0]])
    items = [  # (subtest, test, main, proficiency)
        ("count_easy", "count", right, right),
        ("count_easy", "count", right, right),
        ("count_hard", "count", wrong, right),
        ("spatial", "spatial", right, wrong),
    ]
    result = proficiency(
        [m[0][0] for _, _, m, _ in items],
        [m[1][0] for _, _, m, _ in items],
        [p[0][0] for _, _, _, p in items],
        [p[1][0] for _, _, _, p in items],
        groups=[s for s, *_ in items],
        tests=[t for _, t, *_ in items],
        n_resamples=0,
    )
    assert result["combined_accuracy_count_easy"] == 1.0
    assert result["combined_accuracy_count_hard"] == 0.0
    assert result["combined_accuracy_count"] == 0.5  # subtest average, not the pooled 2/3
    assert result["main_accuracy_spatial"] == 1.0 and result["combined_accuracy_spatial"] == 0.0
    assert result["macro_combined_accuracy"] == pytest.approx(0.25)
    assert result["combined_accuracy"] == pytest.approx(0.5)  # pooled over items


def _reference_auroc(positives, negatives):
    pairs = [(p > q) + 0.5 * (p == q) for p in positives for q in negatives]
    return sum(pairs) / len(pairs)


def test_probability_mode_extras_match_the_vilma_script_definitions(rng):
    n = 120
    captions = np.round(rng.random(n), 2)
    foils = [np.round(rng.random(rng.integers(1, 4)), 2) for _ in range(n)]
    prof_captions, prof_foils = rng.random(n), [[f] for f in rng.random(n)]
    result = proficiency(
        captions.tolist(),
        [f.tolist() for f in foils],
        prof_captions.tolist(),
        prof_foils,
        score_kind="probability",
        n_resamples=0,
    )
    all_foils = np.concatenate(foils)
    p_c = np.mean(captions > 0.5)
    p_f = np.mean(all_foils <= 0.5)
    assert result["p_c"] == pytest.approx(p_c)
    assert result["p_f"] == pytest.approx(p_f)
    assert result["min_p_c_p_f"] == pytest.approx(min(p_c, p_f))
    assert result["binary_accuracy"] == pytest.approx(
        ((captions > 0.5).sum() + (all_foils <= 0.5).sum()) / (n + len(all_foils))
    )
    assert result["auroc"] == pytest.approx(_reference_auroc(captions, all_foils))
    passed = prof_captions > np.asarray(prof_foils)[:, 0]
    assert result["combined_p_c"] == pytest.approx(np.mean((captions > 0.5) & passed))
    combined_foils = sum(int((f <= 0.5).sum()) for f, ok in zip(foils, passed) if ok)
    assert result["combined_p_f"] == pytest.approx(combined_foils / len(all_foils))


def test_probability_mode_rejects_scores_outside_zero_one():
    with pytest.raises(ValueError, match=r"foil_scores\[1\]\[0\] = 1.5 is not a probability"):
        proficiency(
            [0.5, 0.5], [[0.1], [1.5]], [0.5, 0.5], [[0.1], [0.1]], score_kind="probability"
        )


# --- multiple_choice_accuracy --------------------------------------------------------------------


def test_multiple_choice_equals_argmax_on_tie_free_scores(rng):
    scores = rng.random((400, 5))
    labels = rng.integers(0, 5, 400)
    result = multiple_choice(scores.tolist(), labels.tolist(), n_resamples=0)
    assert result["accuracy"] == pytest.approx(np.mean(scores.argmax(axis=1) == labels))
    assert result["chance"] == pytest.approx(0.2) and result["n_tied"] == 0


@pytest.mark.parametrize(("ties", "expected"), [("strict", 0.0), ("half", 1 / 3), ("first", 1.0)])
def test_multiple_choice_tie_does_not_depend_on_the_label_position(ties, expected):
    for label in (0, 2, 4):
        scores = [0.1] * 5
        for index in {label, (label + 1) % 5, (label + 2) % 5}:
            scores[index] = 0.7
        result = multiple_choice([scores], [label], ties=ties, n_resamples=0)
        assert result["accuracy"] == pytest.approx(expected)


def test_multiple_choice_breakdown_by_foil_type():
    result = multiple_choice(
        [[1, 0], [0, 1], [1, 0]], [0, 0, 0], groups=["verb", "verb", "gender"], n_resamples=0
    )
    assert (result["accuracy_verb"], result["accuracy_gender"]) == (0.5, 1.0)


# --- binary_retrieval_accuracy -------------------------------------------------------------------


def test_binary_equals_per_query_choice_on_tie_free_blocks(rng):
    blocks = rng.random((300, 2, 2))
    t2v = np.mean([blocks[:, 0, 0] > blocks[:, 1, 0], blocks[:, 1, 1] > blocks[:, 0, 1]])
    v2t = np.mean([blocks[:, 0, 0] > blocks[:, 0, 1], blocks[:, 1, 1] > blocks[:, 1, 0]])
    result = binary(blocks.tolist(), n_resamples=0)
    assert result["t2v_accuracy"] == pytest.approx(t2v)
    assert result["v2t_accuracy"] == pytest.approx(v2t)


@pytest.mark.parametrize(("ties", "expected"), [("half", 0.5), ("strict", 0.0), ("first", 1.0)])
def test_reversal_invariant_model_scores_chance_under_half_ties(ties, expected):
    """Mean-pooled frames score a video and its reversal alike: every T2V query ties."""
    blocks = [[[0.7, 0.3], [0.7, 0.3]], [[0.2, 0.6], [0.2, 0.6]]]
    result = binary(blocks, ties=ties, n_resamples=0)
    assert result["t2v_accuracy"] == expected and result["t2v_tied"] == 4
    assert result["v2t_accuracy"] == 0.5 and result["v2t_tied"] == 0


# --- shared behaviour ----------------------------------------------------------------------------

CALLS = {
    "pairwise": lambda **o: pairwise([0.9, 0.1, 0.5, 0.7], [[0.2], [0.3], [0.4], [0.1]], **o),
    "proficiency": lambda **o: proficiency(
        [0.9, 0.1, 0.5, 0.7],
        [[0.2], [0.3], [0.4], [0.1]],
        [0.9, 0.9, 0.1, 0.7],
        [[0.2], [0.3], [0.4], [0.1]],
        **o,
    ),
    "multiple_choice": lambda **o: multiple_choice(
        [[0.9, 0.2], [0.1, 0.3], [0.5, 0.4], [0.7, 0.1]], [0, 0, 0, 0], **o
    ),
    "binary": lambda **o: binary(
        [
            [[0.9, 0.2], [0.3, 0.8]],
            [[0.1, 0.2], [0.3, 0.8]],
            [[0.9, 0.2], [0.3, 0.1]],
            [[0.5, 0.2], [0.3, 0.8]],
        ],
        **o,
    ),
}


@pytest.mark.parametrize("name", CALLS)
def test_intervals_are_seeded_and_contain_the_estimate(name):
    first = CALLS[name](n_resamples=300, seed=3)
    assert first == CALLS[name](n_resamples=300, seed=3)
    intervals = {k[:-3]: v for k, v in first.items() if k.endswith("_ci")}
    assert intervals
    for key, (low, high) in intervals.items():
        assert low <= first[key] <= high, key
    none = CALLS[name](n_resamples=0)
    assert all(none[f"{key}_ci"] is None for key in intervals)


def test_clustered_bootstrap_resamples_whole_videos():
    """Ten videos with ten identical items each: resampling items pretends there are 100
    independent observations and gives a far narrower interval than resampling videos."""
    right = [1, 0, 1, 1, 0, 0, 1, 0, 1, 0]
    captions = [float(r) for r in right for _ in range(10)]
    foils = [[0.5]] * 100
    videos = [f"video{v}" for v in range(10) for _ in range(10)]
    items = pairwise(captions, foils, n_resamples=2000, seed=0)["accuracy_ci"]
    clustered = pairwise(captions, foils, cluster=videos, n_resamples=2000, seed=0)["accuracy_ci"]
    assert (clustered[1] - clustered[0]) > 2 * (items[1] - items[0])
    # a video's items always move together: every clustered resample is a multiple of 1/10
    assert all(math.isclose(10 * bound, round(10 * bound)) for bound in clustered)


BAD_INPUTS = [
    (lambda: pairwise([0.1, 0.2], [[0.1]]), r"different lengths: caption_scores=2, foil_scores=1"),
    (lambda: pairwise([0.1, float("nan")], [[0.1], [0.2]]), r"caption_scores\[1\] = nan"),
    (lambda: pairwise([0.1, 0.2], [[0.1], [0.2, float("inf")]]), r"foil_scores\[1\]\[1\] = inf"),
    (lambda: pairwise([], []), r"empty input"),
    (lambda: pairwise([0.1, 0.2], [[0.1], []]), r"foil_scores\[1\] is empty"),
    (lambda: pairwise([0.1], [0.3]), r"foil_scores\[0\] = 0.3 must be a list"),
    (lambda: pairwise([0.1], ["0.3"]), r"foil_scores\[0\] = '0.3' must be a list"),
    (lambda: pairwise([0.1], [[0.3]], ties="random"), r"ties='random' is not one of"),
    (lambda: pairwise([0.1], [[0.3]], score_kind="distance"), r"score_kind='distance'"),
    (lambda: pairwise([0.1], [[0.3]], groups=["a", "b"]), r"groups has 2 values for 1 items"),
    (lambda: pairwise([0.1], [[0.3]], cluster=[None]), r"cluster\[0\] is None"),
    (lambda: pairwise([0.1], [[0.3]], cluster=["a", "b"], n_resamples=0), r"cluster has 2 values"),
    (lambda: pairwise([0.1, 0.2], [[0.3], [0.1]], groups=["tied", "x"]), r"\['n_tied'\] clash"),
    (lambda: pairwise([0.1, 0.2], [[0.3], [0.1]], groups=["ci", "x"]), r"\['accuracy'\] clash"),
    (lambda: multiple_choice([[0.1, 0.2]], [0], groups=["tied"]), r"\['n_tied'\] clash"),
    (
        lambda: proficiency(
            [0.1] * 2, [[0.2]] * 2, [0.1] * 2, [[0.1]] * 2, groups=["a", "b"], tests=["a", "a"]
        ),
        r"\['a'\] name\(s\) both a subtest and a test",
    ),
    (
        lambda: pairwise(None, None, pair_scores=[[[1, 2, 3], [4, 5]]]),
        r"pair_scores\[0\] = .* not a 2x2",
    ),
    (lambda: proficiency([0.1], [[0.2]], [0.1, 0.2], [[0.1]]), r"proficiency_caption_scores=2"),
    (
        lambda: multiple_choice([[0.1, 0.2]], [2]),
        r"labels\[0\] = 2 is outside the item's 2 options",
    ),
    (lambda: multiple_choice([[0.1, 0.2]], [0.0]), r"labels\[0\] = 0.0 is not an option index"),
    (lambda: binary([[[0.1, float("nan")], [0.2, 0.3]]]), r"scores\[0\]\[0\]\[1\] = nan"),
    (lambda: binary([]), r"empty input"),
]


@pytest.mark.parametrize(("call", "message"), BAD_INPUTS)
def test_bad_input_names_the_offending_index_and_value(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_every_tie_policy_is_described_for_reports():
    from foilkit.metrics._common import TIE_POLICIES, TIE_POLICY_MEANINGS
    from foilkit.metrics._ranking import TIE_RANK_MEANINGS, TIE_RANKS

    assert set(TIE_POLICY_MEANINGS) == set(TIE_POLICIES)
    assert set(TIE_RANK_MEANINGS) == set(TIE_RANKS)
