"""Defect 5: one confidence interval per quantity in a run's results.json.

The overall result's per-group keys (``accuracy_order_ci``) and the group's own result
(``groups.order.accuracy_ci``) are one quantity; they used to come from two different
resamplings (all items vs the group's items) and disagree ([0.25, 0.778] vs [0.25, 0.75])."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.mark.parametrize("model", ["clip", "xclip"])
def test_per_group_numbers_agree_between_overall_and_groups(demo_runs: Path, model: str):
    _check(json.loads((demo_runs / model / "results.json").read_text()))


def _check(results: dict) -> None:
    checked = 0
    for config in results["configs"].values():
        for metric in config["metrics"].values():
            overall = metric["overall"]
            for group, result in metric.get("groups", {}).items():
                for key, value in result.items():
                    if key.endswith("_ci") or f"{key}_{group}" not in overall:
                        continue
                    assert overall[f"{key}_{group}"] == value, (group, key)
                    if f"{key}_ci" in result:
                        assert overall[f"{key}_{group}_ci"] == result[f"{key}_ci"], (group, key)
                        checked += 1
    assert checked >= 3  # the accuracy CI of each of the three aspects


def test_share_group_results_keeps_one_interval():
    from foilkit.evaluation import share_group_results

    overall = {
        "accuracy": 0.5,
        "accuracy_ci": [0.3, 0.7],
        "accuracy_order": 0.5,
        "accuracy_order_ci": [0.25, 0.778],
        "n_order": 12,
    }
    share_group_results(overall, {"order": {"accuracy": 0.5, "accuracy_ci": [0.25, 0.75], "n": 12}})
    assert overall["accuracy_order_ci"] == [0.25, 0.75] and overall["accuracy_ci"] == [0.3, 0.7]
