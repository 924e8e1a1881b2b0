"""``foilkit evaluate`` and ``foilkit compare`` from the command line on the demo's synthetic
benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from launch import accelerate_launch, evaluate_argv, run_to_success

from foilkit.cli import main


@pytest.fixture
def order_args(demo_dir: Path, clip_model: str, n_resamples: int) -> list[str]:
    """``foilkit evaluate`` arguments: the tiny CLIP on the demo benchmark's ``order`` config."""
    benchmark = demo_dir / "benchmark"
    videos = ("--videos", str(benchmark / "videos"))
    return evaluate_argv(benchmark, clip_model, *videos, n_resamples=n_resamples)


def test_evaluate_one_config_agrees_with_the_demo_run_of_all(
    demo_dir: Path, order_args: list[str], tmp_path: Path, is_png, capsys
):
    out = tmp_path / "run"
    assert main([*order_args, "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text())
    assert list(results["configs"]) == ["order"]
    (order,) = results["configs"]["order"]["metrics"]["pairwise_foil_accuracy"]["groups"].values()
    demo = json.loads((demo_dir / "runs" / "clip" / "results.json").read_text())
    in_all = demo["configs"]["all"]["metrics"]["pairwise_foil_accuracy"]["groups"]["order"]
    assert order["accuracy"] == pytest.approx(in_all["accuracy"])
    assert is_png(out / "accuracy.png") and (out / "scores" / "order.parquet").is_file()
    capsys.readouterr()
    assert main([*order_args, "--out", str(out)]) == 2  # a user error: one line naming the fix
    assert "--overwrite" in capsys.readouterr().err
    (out / "my-notes.txt").write_text("mine")  # a user's file beside the run: --overwrite keeps it
    assert main([*order_args, "--out", str(out), "--overwrite"]) == 0
    assert (out / "my-notes.txt").read_text() == "mine" and (out / "results.json").is_file()


def test_compare_an_order_invariant_model_with_its_reversed_frames(
    demo_dir: Path, tmp_path: Path, n_resamples: int, is_png
):
    """CLIP's mean-pooled frames ignore order: reversing them changes no item, so the paired
    difference is exactly zero and McNemar's test finds nothing."""
    runs = demo_dir / "runs"
    out = tmp_path / "compare"
    assert (
        main(
            [
                "compare",
                str(runs / "clip"),
                str(runs / "clip-reversed"),
                "--out",
                str(out),
                "--n-resamples",
                str(n_resamples),
            ]
        )
        == 0
    )
    comparison = json.loads((out / "comparison.json").read_text())
    scopes = comparison["tests"]["all"]["pairwise_foil_accuracy"]
    assert set(scopes) == {"all", "direction", "order", "speed"}
    for test in scopes.values():
        assert test["mcnemar"]["p_value"] == pytest.approx(1.0)
        assert test["bootstrap"]["difference"] == pytest.approx(0.0)
    report = (out / "report.md").read_text()
    assert (
        "## Paired tests" in report
        and "| run | direction (n=16) | order (n=12) | speed (n=8) | all (n=36) |" in report
        and "\n| clip | " in report
        and "\n| clip (reversed) | " in report
    )
    assert is_png(out / "side_by_side_accuracy.png")


@pytest.mark.slow
def test_two_accelerate_processes_give_the_results_of_one(order_args: list[str], tmp_path: Path):
    """``accelerate launch -m foilkit evaluate``: each process scores its share, the main one
    reports."""
    launch = [*accelerate_launch(2), "-m", "foilkit"]
    done = run_to_success([*launch, *order_args, "--out", str(tmp_path / "two")])
    assert done.stdout.count("report:") == 1
    assert sorted(p.name for p in (tmp_path / "two/scoring/order/shards").iterdir()) == [
        "rank-00000.jsonl",
        "rank-00001.jsonl",
    ]
    one = tmp_path / "one"
    assert main([*order_args, "--out", str(one)]) == 0
    two_results = json.loads((tmp_path / "two/results.json").read_text())
    one_results = json.loads((one / "results.json").read_text())
    assert two_results["configs"]["order"]["metrics"] == one_results["configs"]["order"]["metrics"]
    assert (tmp_path / "two/report.md").read_text() == (one / "report.md").read_text()


@pytest.fixture(scope="module")
def small_benchmark(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's synthetic benchmark (its videos and exported folder), without the demo run."""
    from foilkit.demo import write_demo_benchmark

    return write_demo_benchmark(tmp_path_factory.mktemp("benchmark"))


def test_several_configs_and_a_limit_make_one_partial_run(
    small_benchmark: Path, clip_model: str, tmp_path: Path, n_resamples: int, capsys
):
    """``--config a,b --config c`` evaluates all three (never the last only); ``--limit 3``
    scores the first 3 rows of each, records it and says "partial" wherever the run is shown;
    its coverage is of the rows selected (3 / 3) everywhere, the rows left out counted apart."""
    from foilkit.hub_results import run_notes
    from foilkit.run import RunResults

    out = tmp_path / "run"
    argv = evaluate_argv(
        small_benchmark,
        clip_model,
        *("--config", "speed", "--limit", "3", "--video-root", str(small_benchmark / "videos")),
        *("--out", str(out)),
        config="direction,order",
        n_resamples=n_resamples,
    )
    assert main(argv) == 0, capsys.readouterr().err
    data = json.loads((out / "results.json").read_text())
    assert list(data["configs"]) == ["direction", "order", "speed"] and data["limit"] == 3
    for name, total in {"direction": 16, "order": 12, "speed": 8}.items():
        config = data["configs"][name]
        assert (config["num_rows"], config["limited_from"]) == (3, total), name
        assert config["metrics"]["pairwise_foil_accuracy"]["overall"]["n"] == 3
        assert config["coverage"]["scored"] == 3 and config["coverage"]["not_selected"] == total - 3
    partial = "partial run (--limit 3): the first 3 rows of each config"
    report = (out / "report.md").read_text()
    assert (
        f"**P{partial[1:]}" in report
        and "direction 3 of 16 rows, order 3 of 12 rows, speed 3 of 8 rows" in report
    )
    assert "coverage 3 / 3 (100%): 3 of 16 rows selected (--limit)" in report
    assert f"P{partial[1:]}" in (out / "report.html").read_text()
    assert partial in run_notes(RunResults.load(out))
    from foilkit.leaderboard import local_entries, rank

    (direction,) = [e for e in local_entries([out]) if e.task == "direction"]
    rank([direction])
    assert direction.coverage == "3 / 3"  # the run's coverage, as everywhere
    assert "partial: 13 rows not selected (--limit)" in direction.notes and not direction.ranked
    from foilkit.errors import UserError
    from foilkit.hub_results import prepare_upload

    upload = {"model_repo": "me/clip", "dataset_id": "me/synthetic"}
    with pytest.raises(UserError, match=r"is a partial run \(--limit 3\)"):
        prepare_upload(out, "me/clip-results", **upload)  # no leaderboard result
    published = prepare_upload(out, "me/clip-results", **upload, min_coverage=0).model_files
    (eval_results,) = published.values()
    notes = [entry["notes"] for entry in yaml.safe_load(eval_results)]
    assert notes and all(partial in note and "coverage 3 / 3 rows" in note for note in notes)


def test_a_limit_beyond_every_config_is_a_complete_run(
    small_benchmark: Path, clip_model: str, tmp_path: Path
):
    from foilkit.evaluation import evaluate

    result = evaluate(
        "synthetic",
        clip_model,
        config=["speed"],
        limit=100,
        out_dir=tmp_path / "run",
        dataset=small_benchmark,
        videos=small_benchmark / "videos",
        n_resamples=20,
    )
    assert result.results.partial() is None and result.results.limit == 100
    assert result.results.configs["speed"].limited_from is None
    assert "partial" not in result.report.read_text()
