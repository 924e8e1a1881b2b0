"""Every metric loads three ways offline (checkout, installed package, pushed Space), its doctests
pass, and paired comparisons test what they claim."""

from __future__ import annotations

import doctest
import json
from pathlib import Path

import numpy as np
import pytest

from foilkit.cli import main
from foilkit.metrics import (
    METRICS,
    PAIRED_OUTCOMES,
    load,
    metric_dir,
    metric_function,
    metric_module,
    paired_comparison,
    scored_arguments,
)

REPO = Path(__file__).resolve().parents[2]

#: a small valid call per metric: keyword arguments of its pure function and evaluate module.
EXAMPLES = {
    "pairwise_foil_accuracy": {
        "caption_scores": [0.9, 0.2, 0.5],
        "foil_scores": [[0.1], [0.3, 0.1], [0.4]],
    },
    "proficiency_combined_accuracy": {
        "caption_scores": [0.9, 0.2],
        "foil_scores": [[0.1], [0.3]],
        "proficiency_caption_scores": [0.8, 0.7],
        "proficiency_foil_scores": [[0.1], [0.9]],
    },
    "multiple_choice_accuracy": {"scores": [[0.1, 0.9, 0.3], [0.5, 0.4, 0.6]], "labels": [1, 0]},
    "binary_retrieval_accuracy": {"scores": [[[0.9, 0.2], [0.3, 0.8]], [[0.5, 0.6], [0.4, 0.3]]]},
    "retrieval_recall": {
        "scores": [[0.9, 0.1, 0.3], [0.2, 0.8, 0.1], [0.3, 0.4, 0.2]],
        "ground_truth": [[0], [1], [2]],
    },
    "winoground_score": {"pair_scores": [[[0.9, 0.2], [0.3, 0.8]], [[0.5, 0.6], [0.4, 0.3]]]},
}


#: evaluate feature names that differ from the pure function's argument names.
FEATURE_NAMES = {"retrieval_recall": {"scores": "predictions", "ground_truth": "references"}}


def _compute_with(module, name: str) -> dict:
    """``module.compute`` with the example's feature columns as inputs (evaluate's way)."""
    renamed = FEATURE_NAMES.get(name, {})
    inputs = {renamed.get(key, key): value for key, value in EXAMPLES[name].items()}
    return module.compute(**inputs, n_resamples=50, seed=1)


def test_every_shipped_metric_has_an_example():
    assert set(EXAMPLES) == set(METRICS)


@pytest.mark.parametrize("name", METRICS)
def test_doctests_of_the_module_pass(name):
    result = doctest.testmod(metric_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("name", METRICS)
def test_evaluate_load_from_a_checkout_equals_the_pure_function(name):
    import evaluate

    module = evaluate.load(str(REPO / "metrics" / name))
    expected = metric_function(name)(**EXAMPLES[name], n_resamples=50, seed=1)
    assert _compute_with(module, name) == expected


@pytest.mark.parametrize("name", METRICS)
def test_foilkit_metrics_load_finds_the_packaged_module(name):
    assert metric_dir(name).is_dir()
    expected = metric_function(name)(**EXAMPLES[name], n_resamples=50, seed=1)
    assert _compute_with(load(name), name) == expected


@pytest.mark.parametrize("name", METRICS)
def test_space_dry_run_is_a_self_contained_evaluate_module(name, tmp_path):
    """``foilkit metrics push --dry-run``: the files a Space gets load on their own, shared files
    (links in the checkout) included as real files."""
    import evaluate

    assert main(["metrics", "push", name, f"someone/{name}", "--dry-run", str(tmp_path)]) == 0
    space = tmp_path / name
    commit = json.loads((tmp_path / f"{name}_commit.json").read_text())
    assert commit["repo_type"] == "space" and commit["create_repo"] == {"space_sdk": "gradio"}
    sent = {op["path_in_repo"] for op in commit["operations"]}
    assert {f"{name}.py", "README.md", "app.py", "requirements.txt", "_common.py"} <= sent
    assert not any(path.is_symlink() for path in space.iterdir())
    assert (space / "_common.py").read_text() == (REPO / "metrics" / "_common.py").read_text()
    assert sent == {p.name for p in space.iterdir()}
    expected = metric_function(name)(**EXAMPLES[name], n_resamples=50, seed=1)
    assert _compute_with(evaluate.load(str(space)), name) == expected


#: per metric with an integer feature: its example with a non-integer there, and the error.
NON_INTEGER_INPUTS = {
    "multiple_choice_accuracy": (
        {"scores": [[0.1, 0.9], [0.8, 0.2]], "labels": [1.9, 0.7]},
        r"labels\[0\] = 1\.9 is not an integer index",
    ),
    "retrieval_recall": (
        {"scores": [[0.9, 0.1], [0.2, 0.8]], "ground_truth": [[0], [1.2]]},
        r"references\[1\]\[0\] = 1\.2 is not an integer index",
    ),
}


@pytest.mark.parametrize("name", NON_INTEGER_INPUTS)
def test_evaluate_load_refuses_float_indices_as_the_pure_function_does(name):
    """evaluate casts an int64 feature with ``int()``: labels [1.9, 0.7] reached the function as
    [1, 0] and scored 1.0. compute, add_batch and add now refuse them before the cast."""
    import evaluate

    inputs, message = NON_INTEGER_INPUTS[name]
    with pytest.raises(ValueError, match=r"1\.[29]"):  # the pure function's own message
        metric_function(name)(**inputs, n_resamples=0)
    renamed = FEATURE_NAMES.get(name, {})
    features = {renamed.get(key, key): value for key, value in inputs.items()}
    module = evaluate.load(str(REPO / "metrics" / name))
    with pytest.raises(ValueError, match=message):
        module.compute(**features, n_resamples=0)
    with pytest.raises(ValueError, match=message):
        module.add_batch(**features)
    with pytest.raises(ValueError, match="is not an integer index"):  # a float array
        module.add_batch(**{key: np.asarray(value) for key, value in features.items()})
    singular = {"predictions": "prediction", "references": "reference"}
    example = {singular.get(key, key): value[1] for key, value in features.items()}
    with pytest.raises(ValueError, match="is not an integer index"):
        module.add(**example)
    # whole numbers still pass, as numpy integers too
    whole = {
        key: np.asarray(value).astype(int) if key in {"labels", "references"} else value
        for key, value in features.items()
    }
    assert module.compute(**whole, n_resamples=0)["n"] == 2


def test_unknown_metric_names_the_choices():
    with pytest.raises(ValueError, match=r"unknown metric 'accuracy'; choose from: pairwise_foil_"):
        metric_function("accuracy")


def test_metrics_cli_lists_and_computes(tmp_path, capsys):
    assert main(["metrics", "list"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in METRICS)
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps({**EXAMPLES["pairwise_foil_accuracy"], "n_resamples": 0}))
    assert main(["metrics", "compute", "pairwise_foil_accuracy", str(inputs)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["accuracy"] == pytest.approx(2 / 3) and printed["accuracy_ci"] is None


# --- paired comparisons -----------------------------------------------------------------------


@pytest.mark.parametrize("name", PAIRED_OUTCOMES)
def test_a_model_against_itself_differs_by_nothing(name):
    result = paired_comparison(name, EXAMPLES[name], EXAMPLES[name], n_resamples=200)
    for key in result:
        if key.startswith("mcnemar"):
            assert result[key]["p_value"] == 1.0 and result[key]["a_only"] == 0
        if key.startswith("bootstrap"):
            assert result[key]["difference"] == 0.0 and result[key]["difference_ci"] == [0.0, 0.0]
    assert sum(key.startswith("mcnemar") for key in result) == len(PAIRED_OUTCOMES[name])


def test_mcnemar_is_the_exact_binomial_test_on_discordant_items():
    from scipy.stats import binomtest

    rng = np.random.default_rng(0)
    captions = rng.random(60)
    a = {"caption_scores": captions.tolist(), "foil_scores": [[0.5]] * 60}
    b = {
        "caption_scores": (captions + rng.normal(0, 0.3, 60)).tolist(),
        "foil_scores": [[0.5]] * 60,
    }
    result = paired_comparison("pairwise_foil_accuracy", a, b, n_resamples=500, seed=2)
    right_a, right_b = captions > 0.5, np.asarray(b["caption_scores"]) > 0.5
    a_only, b_only = int((right_a & ~right_b).sum()), int((~right_a & right_b).sum())
    assert (result["mcnemar"]["a_only"], result["mcnemar"]["b_only"]) == (a_only, b_only)
    assert a_only + b_only > 0
    expected = binomtest(min(a_only, b_only), a_only + b_only, 0.5).pvalue
    assert result["mcnemar"]["p_value"] == pytest.approx(expected)
    difference = right_b.mean() - right_a.mean()
    low, high = result["bootstrap"]["difference_ci"]
    assert (
        result["bootstrap"]["difference"] == pytest.approx(difference) and low <= difference <= high
    )


@pytest.mark.parametrize("name", PAIRED_OUTCOMES)
def test_paired_comparison_scores_the_metrics_declared_features(name):
    """What a paired comparison scores is what the evaluate module declares as its inputs, so a
    metric's new argument needs no list kept by hand."""
    assert set(scored_arguments(name)) == set(load(name).features)


#: per paired metric: per-item arguments its pure function takes besides the scores
ITEM_DESCRIPTIONS = {
    "pairwise_foil_accuracy": {"groups": ["a", "b", "a"], "question_sets": [0, 0, 1]},
    "proficiency_combined_accuracy": {"groups": ["a", "b"], "tests": ["t", "t"]},
    "multiple_choice_accuracy": {"groups": ["a", "b"], "dimensions": ["d", "e"]},
    "binary_retrieval_accuracy": {"cluster": ["v", "w"]},
    "winoground_score": {"categories": [["object"], ["action", "viewpoint"]]},
}


@pytest.mark.parametrize("name", PAIRED_OUTCOMES)
def test_paired_comparison_leaves_out_item_descriptions_and_names_unknown_arguments(name):
    inputs = {**EXAMPLES[name], **ITEM_DESCRIPTIONS[name]}
    expected = paired_comparison(name, EXAMPLES[name], EXAMPLES[name], n_resamples=0)
    assert paired_comparison(name, inputs, inputs, n_resamples=0) == expected
    with pytest.raises(ValueError, match=f"{name} takes no argument 'grups'"):
        paired_comparison(name, {**inputs, "grups": ["a"]}, inputs, n_resamples=0)
    scored = scored_arguments(name)[0]
    missing = {key: value for key, value in inputs.items() if key != scored}
    with pytest.raises(ValueError, match=f"needs \\['{scored}'\\]"):
        paired_comparison(name, missing, inputs, n_resamples=0)


def test_paired_comparison_refuses_unaligned_items_and_unpaired_metrics():
    a = EXAMPLES["pairwise_foil_accuracy"]
    b = {"caption_scores": [0.1], "foil_scores": [[0.2]]}
    with pytest.raises(ValueError, match="model A has 3 items and model B 1"):
        paired_comparison("pairwise_foil_accuracy", a, b)
    with pytest.raises(ValueError, match="'retrieval_recall' has no per-item outcome"):
        paired_comparison(
            "retrieval_recall", EXAMPLES["retrieval_recall"], EXAMPLES["retrieval_recall"]
        )


def test_pure_functions_work_without_evaluate_installed():
    """The logic outlives ``evaluate``: with evaluate and datasets unimportable, every module
    imports and its pure function computes."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "sys.modules['evaluate'] = None; sys.modules['datasets'] = None  # import fails\n"
        "from foilkit.metrics import METRICS, metric_function\n"
        "from tests.metrics.test_loading import EXAMPLES\n"
        "for name in METRICS:\n"
        "    result = metric_function(name)(**EXAMPLES[name], n_resamples=10)\n"
        "    assert result['n'] > 0, name\n"
        "assert sys.modules['evaluate'] is None\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
