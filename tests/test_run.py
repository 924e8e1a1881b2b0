"""``foilkit.run``: one module owns a run folder's layout and its ``results.json``.

``tests/e2e/fixtures/run-format-1/`` holds two run folders (``clip``, ``xclip``: results.json,
report.md, scores/all.parquet) that ``foilkit demo --n-resamples 100`` wrote at commit 9f43985,
before tie policies were recorded: results format 1 as users' folders hold it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from foilkit.run import RESULTS_FORMAT, RunFolder, RunResults, SavedMatrix, find_runs

FORMAT_1 = Path(__file__).parent / "e2e" / "fixtures" / "run-format-1"


def test_the_folder_names_every_file_of_a_run(tmp_path: Path):
    folder = RunFolder(tmp_path)
    assert folder.results == tmp_path / "results.json"
    assert (folder.report, folder.html) == (tmp_path / "report.md", tmp_path / "report.html")
    assert folder.plot("accuracy") == tmp_path / "accuracy.png"
    assert folder.scores("all") == tmp_path / "scores" / "all.parquet"
    assert folder.matrix("hard") == tmp_path / "scores" / "hard-matrix.npy"
    assert folder.matrix_index("hard") == tmp_path / "scores" / "hard-matrix.json"
    assert folder.scoring("all") == tmp_path / "scoring" / "all"
    assert folder.scoring("hard", matrix=True) == tmp_path / "scoring" / "hard-matrix"
    assert folder.scoring_record("all") == tmp_path / "scoring" / "all" / "run.json"
    assert folder.relative(folder.scores("all")) == "scores/all.parquet"
    assert not folder.is_run() and folder.load_scores("all") is None
    assert folder.load_matrix("hard") is None


def test_a_retrieval_matrix_reads_back_as_written(tmp_path: Path):
    import numpy as np

    folder = RunFolder(tmp_path)
    matrix = SavedMatrix(
        np.array([[0.5, np.nan], [0.1, 0.9]]), ["a", "b"], ["x", "y"], "similarity"
    )
    assert folder.write_matrix("hard", matrix) == folder.matrix("hard")
    loaded = folder.load_matrix("hard")
    np.testing.assert_array_equal(loaded.scores, matrix.scores)
    assert (loaded.ids, loaded.texts, loaded.score_kind) == (["a", "b"], ["x", "y"], "similarity")
    assert folder.load_scores("hard") is None  # a pool has no per-sample rows


def test_run_folders_are_found_by_name_or_at_any_depth_below(tmp_path: Path):
    """``runs/`` finds the runs inside folders of run folders too (``evaluate --tasks`` writes
    ``<out>/<benchmark>/``, the demo ``<out>/runs/<model>/``), not only one level down."""
    for name in ("b", "a", "tasks/vitatecs", "demo/runs/xclip", "demo/runs/xclip-reversed"):
        shutil.copytree(FORMAT_1 / "clip", tmp_path / "runs" / name)
    (tmp_path / "runs" / "not-a-run").mkdir()
    (tmp_path / "runs" / ".hidden" / "old").mkdir(parents=True)
    shutil.copytree(FORMAT_1 / "clip", tmp_path / "runs" / ".hidden" / "old" / "run")
    found = find_runs([tmp_path / "runs", FORMAT_1 / "xclip"])
    assert [f.root for f in found] == [
        tmp_path / "runs" / "a",
        tmp_path / "runs" / "b",
        tmp_path / "runs" / "demo" / "runs" / "xclip",
        tmp_path / "runs" / "demo" / "runs" / "xclip-reversed",
        tmp_path / "runs" / "tasks" / "vitatecs",
        FORMAT_1 / "xclip",
    ]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory):
    """The tiny CLIP on the demo benchmark's ``order`` config, frames reversed."""
    from foilkit.demo import write_demo_benchmark
    from foilkit.evaluation import evaluate
    from foilkit.scorers.api import ScoreOptions
    from foilkit.synthetic.models import tiny_model_path

    benchmark = write_demo_benchmark(tmp_path_factory.mktemp("benchmark"))
    options = ScoreOptions(
        num_frames=4, control="reversed", num_workers=0, progress=False, use_cache=False
    )
    return evaluate(
        "synthetic",
        str(tiny_model_path("clip")),
        config="order",
        dataset=benchmark,
        videos=benchmark / "videos",
        out_dir=tmp_path_factory.mktemp("run") / "clip",
        n_resamples=20,
        label="clip",
        score_options=options,
    )


def test_evaluate_returns_what_its_folder_holds(tiny_run):
    results, folder = tiny_run.results, tiny_run.folder
    assert RunResults.load(folder.root) == results
    assert RunResults.from_record(results.to_record()) == results
    assert json.loads(folder.results.read_text()) == results.to_record()
    assert results.to_record()["format"] == RESULTS_FORMAT == 1
    assert results.control == "reversed" and results.label == "clip"
    entry = results.configs["order"]
    # the scorer's record comes back from the scoring call, and it is what it wrote as run.json
    assert entry.score is not None and entry.score_matrix is None
    assert entry.score.to_record() == json.loads(folder.scoring_record("order").read_text())
    assert (entry.score.num_frames, entry.score.decoder) == (4, "torchcodec")
    assert results.protocol == entry.score.protocol and results.protocol.name == "paper"
    assert results.protocol.overrides["num_frames"]["given"] == 4
    # the tie policy each metric ran with, recorded at evaluate time
    assert entry.metrics["pairwise_foil_accuracy"].ties == "strict"
    assert results.tie_policies() == {"pairwise_foil_accuracy": "strict"}
    coverage = entry.coverage
    assert coverage.benchmark_rows is None and coverage.scored == entry.num_rows == 12
    assert folder.load_scores("order").num_rows == 12


def test_evaluate_leaves_the_run_fields_of_score_options_to_itself(tmp_path: Path):
    from foilkit.evaluation import evaluate
    from foilkit.scorers.api import ScoreOptions

    with pytest.raises(ValueError, match="video_root, out_dir itself"):
        evaluate(
            "synthetic",
            "unused",
            out_dir=tmp_path,
            dataset=tmp_path,
            score_options=ScoreOptions(out_dir="x", video_root="y"),
        )


@pytest.mark.parametrize("model", ["clip", "xclip"])
def test_a_format_1_folder_loads_and_rebuilds_its_report(model: str, tmp_path: Path):
    from foilkit.report import write_run_report

    run = tmp_path / model
    shutil.copytree(FORMAT_1 / model, run)
    raw = json.loads((run / "results.json").read_text())
    assert (
        raw["format"] == 1
        and "ties" not in raw["configs"]["all"]["metrics"]["pairwise_foil_accuracy"]
    )
    results = RunResults.load(run)
    # written before tie policies were recorded: the benchmark spec's policy
    assert results.configs["all"].metrics["pairwise_foil_accuracy"].ties == "strict"
    written = results.to_record()
    for entry in written["configs"].values():
        for metric in entry["metrics"].values():
            metric.pop("ties")
    assert written == raw  # nothing else lost or changed
    write_run_report(results, run)
    assert (run / "report.md").read_text() == (FORMAT_1 / model / "report.md").read_text()


def test_format_1_folders_work_with_compare_upload_and_leaderboard(tmp_path: Path):
    from foilkit.compare import compare_runs
    from foilkit.hub_results import prepare_upload
    from foilkit.leaderboard import local_entries

    clip, xclip = FORMAT_1 / "clip", FORMAT_1 / "xclip"
    tests = compare_runs(clip, xclip, n_resamples=20, seed=0)
    assert set(tests["all"]["pairwise_foil_accuracy"]) == {"all", "direction", "order", "speed"}
    upload = prepare_upload(clip, "me/r", model_repo="me/clip", dataset_id="me/synthetic")
    assert sorted(upload.files) == ["report.md", "results.json", "scores/all.parquet"]
    assert (
        "config_name: all" in upload.card and ".eval_results/synthetic.yaml" in upload.model_files
    )
    entries = local_entries([clip, xclip])
    assert {e.task for e in entries} == {"direction", "order", "speed", "average"}


@pytest.mark.parametrize("failed_there", [True, False])
def test_compare_leaves_out_items_one_run_lacks_only_where_the_other_failed_them(
    tmp_path: Path, failed_there: bool
):
    """An item one run does not hold (a video it skipped) pairs with nothing: left out where the
    other run failed it too (an import's row without an answer), an error where it scored it."""
    from foilkit.compare import compare_runs, paired_rows

    a, b = (RunFolder(shutil.copytree(FORMAT_1 / m, tmp_path / m)) for m in ("clip", "xclip"))
    rows_b = b.load_scores("all")
    lacking = rows_b["id"][:3]
    b.write_scores("all", rows_b.select(range(3, rows_b.num_rows)))
    if failed_there:
        rows_a = a.load_scores("all")
        errors = [
            e if i not in lacking else "no imported answer"
            for i, e in zip(rows_a["id"], rows_a["error"], strict=True)
        ]
        a.write_scores("all", rows_a.remove_columns("error").add_column("error", errors))
        paired = paired_rows(a, b, "all")
        assert paired[0]["id"] == paired[1]["id"] == rows_b["id"][3:]
        assert compare_runs(a.root, b.root, n_resamples=20)["all"]
    else:
        with pytest.raises(ValueError, match=r"scored different items: 3 only in .*clip \(e\.g\."):
            compare_runs(a.root, b.root, n_resamples=20)


def test_results_written_before_coverage_was_recorded_load(tmp_path: Path):
    from foilkit.report import write_run_report

    run = tmp_path / "clip"
    shutil.copytree(FORMAT_1 / "clip", run)
    raw = json.loads((run / "results.json").read_text())
    del raw["configs"]["all"]["coverage"]
    (run / "results.json").write_text(json.dumps(raw))
    results = RunResults.load(run)
    assert results.configs["all"].coverage is None
    assert "- `all`: 36 rows; adapter `dual-encoder`" in write_run_report(results, run).read_text()


def test_what_is_not_a_readable_run_is_named(tmp_path: Path):
    with pytest.raises(
        FileNotFoundError, match=f"{tmp_path} is not a foilkit evaluation run folder"
    ):
        RunResults.load(tmp_path)
    raw = json.loads((FORMAT_1 / "clip" / "results.json").read_text())
    (tmp_path / "results.json").write_text(json.dumps({**raw, "format": 2}))
    with pytest.raises(ValueError, match="results.json is not a foilkit results file .* format 2"):
        RunResults.load(tmp_path)
    del raw["configs"]
    (tmp_path / "results.json").write_text(json.dumps(raw))
    with pytest.raises(
        ValueError, match=r"results.json is not a foilkit results file .*: no 'configs'"
    ):
        RunResults.load(tmp_path)


def test_run_results_from_json_still_reads_a_record():
    """``RunResults.from_json`` was on the API page: it stays, as ``from_record``."""
    assert RunResults.from_json.__func__ is RunResults.from_record.__func__
