"""``foilkit evaluate --tasks`` end to end: two benchmarks built from the real annotation files,
a few synthetic videos each, one tiny CLIP; one run folder per benchmark and the summary."""

from __future__ import annotations

import json
from pathlib import Path

from annotated_videos import render_rows

from foilkit.cli import main
from foilkit.folders import RUN, TASKS, folder_kind
from foilkit.report import run_table
from foilkit.run import RunFolder, RunResults

TASKS_GIVEN = {"vitatecs": "direction", "vilma": "change_of_state_action"}


def test_two_benchmarks_one_run_folder_each_and_a_summary(
    shared_data: Path, clip_model: str, n_resamples: int, tmp_path: Path, capsys
):
    cache = str(tmp_path / "datasets-cache")
    # vitatecs in a folder of one sub-folder per benchmark, vilma's videos named on their own
    render_rows("vitatecs", "direction", 3, tmp_path / "videos" / "vitatecs", shared_data, cache)
    render_rows("vilma", "change_of_state_action", 2, tmp_path / "vilma-videos", shared_data, cache)
    out = tmp_path / "out"
    argv = [
        "evaluate",
        "--tasks",
        "vitatecs/direction",
        "--tasks",
        "vilma/change_of_state_action,vitatecs/direction",  # kept once
        "--model",
        clip_model,
        "--video-root",
        str(tmp_path / "videos"),
        "--video-root",
        f"vilma={tmp_path / 'vilma-videos'}",
        "--annotations",
        str(shared_data),
        "--on-missing",
        "skip",
        "--out",
        str(out),
        "--n-resamples",
        str(n_resamples),
        "--num-workers",
        "0",
        "--no-progress",
        "--json",
    ]
    # a few videos of each config: below the default --min-coverage, so exit status 3
    assert main(argv) == 3
    printed = json.loads(capsys.readouterr().out)
    assert printed["status"] == 3 and [r["benchmark"] for r in printed["runs"]] == list(TASKS_GIVEN)
    assert folder_kind(out) == TASKS.name
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == 3 and summary["model"] == clip_model
    assert [run["benchmark"] for run in summary["runs"]] == list(TASKS_GIVEN)
    markdown = (out / "summary.md").read_text()
    for run, (name, config) in zip(summary["runs"], TASKS_GIVEN.items(), strict=True):
        folder = RunFolder(out / name)
        assert run["run_dir"] == name and folder_kind(folder.root) == RUN.name
        results = RunResults.load(folder)
        assert results.benchmark == name and list(results.configs) == [config]
        coverage = results.configs[config].coverage
        assert 0 < coverage.scored < coverage.total and run["status"] == 3
        assert run["configs"][config]["coverage"] == coverage.to_record()
        headline = [row for row in run_table(results).rows if row.overall]
        assert [row["row"] for row in run["headline"]] == [row.label for row in headline]
        for row, table_row in zip(run["headline"], headline, strict=True):
            assert row["numbers"] and all(
                row["numbers"][column]["value"] == cell.value
                for column, cell in table_row.cells.items()
            )
        assert folder.report.is_file() and f"[{name}/report.md]({name}/report.md)" in markdown
        assert f"{coverage.label} rows scored" in markdown

    # once written, the same command is refused before any scoring, unless resumed
    assert main([*argv[:-1], "--min-coverage", "0"]) == 2
    assert "already holds an evaluation of vitatecs; pass --overwrite or --resume" in (
        capsys.readouterr().err
    )
    assert main([*argv, "--min-coverage", "0", "--resume"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["status"] == 0 and json.loads((out / "summary.json").read_text())["status"] == 0
