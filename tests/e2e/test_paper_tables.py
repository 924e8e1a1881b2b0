"""The overall rows ``foilkit evaluate`` reports are computed the way each paper's table is."""

from __future__ import annotations

import datasets
import pytest

from foilkit.builders import get_benchmark
from foilkit.evaluation import compute_metrics


def _rows(groups: dict[str, list[bool]], column: str, **extra) -> datasets.Dataset:
    """Scored rows: per group, one item per outcome (caption above or below its one foil)."""
    items = [(group, right) for group, outcomes in groups.items() for right in outcomes]
    n = len(items)
    return datasets.Dataset.from_dict(
        {
            "id": [f"item-{i}" for i in range(n)],
            "error": [None] * n,
            "score_kind": ["similarity"] * n,
            "video_path": [f"video-{i}.mp4" for i in range(n)],
            column: [group for group, _ in items],
            "caption_score": [1.0 if right else 0.0 for _, right in items],
            "foil_scores": [[0.5]] * n,
            **{name: [value] * n for name, value in extra.items()},
        }
    )


def _overall(benchmark: str, config: str, rows: datasets.Dataset) -> dict:
    spec = get_benchmark(benchmark)
    (metric,) = spec.metrics(config)
    computed = compute_metrics(spec, config, rows, None, n_resamples=0, seed=0)
    result = computed[metric.metric].overall
    return {label: result[key] for label, key in metric.columns.items()}


def test_vitatecs_all_is_the_mean_over_aspects():
    """Table 3's "Avg." averages the six aspects, whatever their sizes."""
    rows = _rows({"direction": [True, True, True, False], "sequence": [False, True]}, "aspect")
    assert _overall("vitatecs", "all", rows)["accuracy"] == pytest.approx((0.75 + 0.5) / 2)


@pytest.mark.parametrize(
    ("test", "expected_t"),
    [("situation_awareness", 3 / 5), ("change_of_state", (1.0 + 0.5) / 2)],
)
def test_vilma_tests_pool_items_except_change_of_state(test, expected_t):
    """Table 2 pools Situation Awareness' items but averages Change of State's subtests."""
    rows = _rows(
        {f"{test}_a": [True], f"{test}_b": [True, True, False, False]},
        "subtest",
        proficiency_caption_score=1.0,
        proficiency_foil_scores=[0.0],
    )
    overall = _overall("vilma", test, rows)
    assert overall["T"] == pytest.approx(expected_t)
    assert overall["P"] == 1.0 and overall["P+T"] == pytest.approx(expected_t)


def test_vilma_avg_row_is_the_mean_of_the_five_tests():
    """Table 2's "Avg.": each test weighs the same, whatever its item count; Spatial Relations'
    one subtest is its overall row."""
    from foilkit.report import markdown_table, run_table
    from foilkit.run import Bootstrap, ConfigResults, RunResults

    spec = get_benchmark("vilma")
    outcomes = {  # test -> subtest -> main-test outcomes (proficiency: all right)
        "action_counting": {"easy": [True, False], "difficult": [True]},
        "situation_awareness": {
            "action_replacement": [True, True, True],
            "actor_swapping": [False],
        },
        "change_of_state": {
            name: [True, False] for name in ("action", "pre_state", "post_state", "reverse")
        },
        "rare_actions": {"action_replacement": [False], "object_replacement": [True, True]},
        "spatial_relations": {"prepositions": [True, True, False, False, False]},
    }
    configs, expected = {}, []
    for test, subtests in outcomes.items():
        rows = _rows(
            {f"{test}_{subtest}": right for subtest, right in subtests.items()},
            "subtest",
            proficiency_caption_score=1.0,
            proficiency_foil_scores=[0.0],
        )
        computed = compute_metrics(spec, test, rows, None, n_resamples=0, seed=0)
        configs[test] = ConfigResults(rows.num_rows, computed)
        expected.append(_overall("vilma", test, rows))
    assert list(configs) == list(spec.all_configs)
    results = RunResults(
        benchmark="vilma",
        title="ViLMA",
        paper_table="",
        model="m",
        label="m",
        control=None,
        protocol=None,
        dataset=None,
        split="test",
        bootstrap=Bootstrap(0, 0),
        configs=configs,
    )
    table = run_table(results)
    avg = table.rows[-1]
    assert avg.label == "Avg." and avg.n == sum(
        len(r) for s in outcomes.values() for r in s.values()
    )
    for column in ("P", "T", "P+T"):
        assert avg.cells[column].value == pytest.approx(sum(e[column] for e in expected) / 5)
    assert "| Avg. |" in markdown_table(table)
    # a run without every test has no average
    del results.configs["rare_actions"]
    assert all(row.label != "Avg." for row in run_table(results).rows)
