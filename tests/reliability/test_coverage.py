"""A run that mostly failed never passes for a result: ``score`` and ``evaluate`` end with a
summary line and exit status 3 below ``--min-coverage`` (everything still written), coverage
(``scored / total`` with the causes counted) is in every place results are read, the leaderboard
ranks an incomplete run below every complete one, and ``push-results`` refuses it as a
leaderboard entry."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from launch import evaluate_argv, score_argv

from foilkit.cli import main
from foilkit.errors import LOW_COVERAGE_EXIT
from foilkit.leaderboard import Entry, markdown, rank
from foilkit.run import Coverage, RunResults


@pytest.fixture(scope="module")
def benchmark(tmp_path_factory) -> Path:
    """The demo's synthetic benchmark (exported layout, its videos under ``videos/``)."""
    from foilkit.demo import write_demo_benchmark

    return write_demo_benchmark(tmp_path_factory.mktemp("coverage") / "benchmark")


def _video_root(benchmark: Path, folder: Path, keep: int) -> Path:
    """A video root holding only the first ``keep`` videos of the ``order`` config."""
    videos = sorted((benchmark / "videos" / "order").glob("*.mp4"))
    (folder / "order").mkdir(parents=True)
    for video in videos[:keep]:
        shutil.copy(video, folder / "order" / video.name)
    return folder


def _score(benchmark: Path, tiny_clip: str, root: Path, out: Path, *extra: str) -> list[str]:
    quick = ("--config", "order", "--num-workers", "0", "--no-cache", "--no-progress")
    return score_argv(tiny_clip, benchmark, out, "--video-root", str(root), *quick, *extra)


def _rows(benchmark: Path) -> int:
    return len(list((benchmark / "videos" / "order").glob("*.mp4")))


@pytest.mark.parametrize("keep", [0, 2])
def test_score_below_the_minimum_exits_3_with_one_summary_line(
    benchmark, tiny_clip, tmp_path, capsys, keep
):
    root = _video_root(benchmark, tmp_path / "videos", keep)
    out = tmp_path / "out"
    total = _rows(benchmark)
    assert main(_score(benchmark, tiny_clip, root, out)) == LOW_COVERAGE_EXIT
    lines = capsys.readouterr().err.strip().splitlines()
    summary = [line for line in lines if "incomplete" in line]
    assert len(summary) == 1
    assert f"{keep} / {total} rows scored" in summary[0]
    assert f"{total - keep} video missing" in summary[0] and "--min-coverage 0.9" in summary[0]
    run = json.loads((out / "run.json").read_text())  # everything is written all the same
    assert run["errors"]["causes"] == {"video missing": total - keep}
    assert len((out / "scores.jsonl").read_text().splitlines()) == total


def test_score_at_or_above_the_minimum_exits_0(benchmark, tiny_clip, tmp_path):
    total = _rows(benchmark)
    root = _video_root(benchmark, tmp_path / "videos", 2)
    low = f"{int(2 / total * 1000) / 1000}"  # just below 2 of the rows
    assert main(_score(benchmark, tiny_clip, root, tmp_path / "a", "--min-coverage", low)) == 0
    # nothing scored is never a result, whatever the minimum
    empty = _video_root(benchmark, tmp_path / "none", 0)
    argv = _score(benchmark, tiny_clip, empty, tmp_path / "b", "--min-coverage", "0")
    assert main(argv) == LOW_COVERAGE_EXIT


def test_min_coverage_must_be_a_fraction(benchmark, tiny_clip, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(_score(benchmark, tiny_clip, tmp_path, tmp_path / "o", "--min-coverage", "90"))
    assert exit_.value.code == 2
    assert "not a fraction from 0 to 1" in capsys.readouterr().err


@pytest.fixture(scope="module")
def incomplete_run(benchmark, tmp_path_factory) -> Path:
    """``foilkit evaluate`` of the tiny CLIP with all but 2 of the ``order`` videos missing."""
    from foilkit.synthetic.models import tiny_model_path

    folder = tmp_path_factory.mktemp("incomplete")
    root = _video_root(benchmark, folder / "videos", 2)
    out = folder / "run"
    argv = evaluate_argv(
        benchmark, tiny_model_path("clip"), "--video-root", str(root), "--out", str(out)
    )
    assert main(argv) == LOW_COVERAGE_EXIT
    return out


def test_evaluate_below_the_minimum_writes_everything_and_says_so(incomplete_run, benchmark):
    total = _rows(benchmark)
    results = RunResults.load(incomplete_run)
    coverage = results.configs["order"].coverage
    assert (coverage.scored, coverage.total) == (2, total)
    assert coverage.causes == {"video missing": total - 2}
    page = (incomplete_run / "report.html").read_text()
    assert f"2 / {total}" in page and "incomplete, below 90%" in page
    assert f"{total - 2} video missing" in page
    assert f"coverage 2 / {total}" in (incomplete_run / "report.md").read_text()


def test_push_results_refuses_an_incomplete_run_as_a_leaderboard_entry(
    incomplete_run, tmp_path, capsys
):
    argv = ["push-results", str(incomplete_run), "--repo", "me/r", "--model-repo", "me/m"]
    argv += ["--dataset-id", "me/synthetic"]
    assert main([*argv, "--dry-run", str(tmp_path / "refused")]) == 2
    assert "incomplete" in capsys.readouterr().err
    assert not (tmp_path / "refused").exists()
    out = tmp_path / "accepted"
    assert main([*argv, "--dry-run", str(out), "--min-coverage", "0"]) == 0
    entries = next((out / "model" / ".eval_results").glob("*.yaml")).read_text()
    assert "coverage 2 / " in entries
    assert "coverage 2 / " in (out / "dataset" / "README.md").read_text()


def test_the_leaderboard_ranks_an_incomplete_run_below_every_complete_one(incomplete_run, capsys):
    low = Entry("synthetic", "order", "two rows", 100.0, scored=2, rows=20)
    full = Entry("synthetic", "order", "all rows", 40.0, scored=20, rows=20)
    almost = Entry("synthetic", "order", "19 of 20", 30.0, scored=19, rows=20)
    (table,) = rank([low, full, almost], n_resamples=10).values()
    assert [e.model for e in table] == ["all rows", "19 of 20", "two rows"]
    assert [e.coverage for e in table] == ["20 / 20", "19 / 20", "2 / 20 (incomplete)"]
    assert "| 2 / 20 (incomplete) |" in markdown({("synthetic", "order"): table})
    # the command line reads each run's coverage
    out = incomplete_run.parent / "board"
    assert main(["leaderboard", str(incomplete_run), "--out", str(out), "--n-resamples", "5"]) == 0
    assert "(incomplete)" in (out / "leaderboard.md").read_text()
    assert "(incomplete)" in (out / "leaderboard.html").read_text()


def test_coverage_of_a_run_from_before_causes_loads():
    old = {"benchmark_rows": None, "dropped_missing_video": None, "failed": 3, "scored": 7}
    coverage = Coverage.from_record(old)
    assert (coverage.label, coverage.causes, coverage.why()) == (
        "7 / 10",
        None,
        "3 failed to score",
    )
    assert not coverage.below(0.7) and coverage.below(0.71)


def test_evaluate_takes_the_benchmark_from_an_exports_card(benchmark, tiny_clip, tmp_path, capsys):
    """``--benchmark`` may be left out for a foilkit export: its card names it; a folder whose
    card does not is one line asking for it."""
    root = _video_root(benchmark, tmp_path / "videos", _rows(benchmark))
    argv = ["evaluate", "--dataset", str(benchmark), "--config", "order", "--model", tiny_clip]
    argv += ["--video-root", str(root), "--n-resamples", "5", "--num-workers", "0"]
    argv += ["--no-cache", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path / "run")]) == 0
    assert RunResults.load(tmp_path / "run").benchmark == "synthetic"
    plain = shutil.copytree(
        benchmark, tmp_path / "no-card", ignore=shutil.ignore_patterns("videos")
    )
    (plain / "README.md").write_text("# a dataset\n")
    other = [arg if arg != str(benchmark) else str(plain) for arg in argv]
    assert main([*other, "--out", str(tmp_path / "refused")]) == 2
    assert "--benchmark NAME" in capsys.readouterr().err
