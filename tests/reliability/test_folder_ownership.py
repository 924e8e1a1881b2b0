"""foilkit deletes and writes only what it made: every command that writes or replaces a folder
refuses a folder of someone else's files, touching nothing (the audit's ``--out ~ --overwrite``
emptied a home folder with exit 0); a folder it made can still be written again, resumed or
replaced, and replacing one deletes only foilkit's files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from foilkit.cli import main
from foilkit.folders import (
    DRY_RUN,
    KINDS,
    MARK_FILE,
    RUN,
    SCORES,
    TASKS,
    ForeignFolderError,
    check_folder,
    claim_folder,
    folder_kind,
    replace_folder,
)

FIXTURES = Path(__file__).resolve().parents[1] / "e2e" / "fixtures" / "run-format-1"


def _home(root: Path) -> Path:
    """A folder of a user's own files, as a home or a project holds them."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "thesis.tex").write_text("\\documentclass{article}\n")
    (root / "Documents").mkdir()
    (root / "Documents" / "notes.txt").write_text("do not lose me\n")
    (root / "results.json").write_text('{"mine": true}\n')  # a user's own file of the same name
    return root


def _snapshot(root: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def _legacy_run(tmp_path: Path) -> Path:
    """A run folder written by a foilkit from before folders were marked."""
    return Path(shutil.copytree(FIXTURES / "clip", tmp_path / "old-run"))


# --- the rule ------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(KINDS.values()), ids=list(KINDS))
def test_a_folder_of_other_files_is_refused_untouched(kind, tmp_path):
    home = _home(tmp_path / "home")
    before = _snapshot(home)
    for write in (claim_folder, replace_folder):
        with pytest.raises(ForeignFolderError, match=r"not made by foilkit.*choose another --out"):
            write(home, kind)
    assert _snapshot(home) == before


@pytest.mark.parametrize("kind", list(KINDS.values()), ids=list(KINDS))
def test_a_new_or_empty_folder_is_claimed_and_marked(kind, tmp_path):
    (tmp_path / "empty").mkdir()
    for root in (tmp_path / "new" / "nested", tmp_path / "empty"):
        assert check_folder(root, kind) is False
        assert claim_folder(root, kind) == root
        assert folder_kind(root) == kind.name
        assert check_folder(root, kind) is True  # foilkit's now: written again without a word
        assert claim_folder(root, kind) == root


def test_a_folder_another_process_is_claiming_is_not_refused(tmp_path, monkeypatch):
    """Under ``accelerate launch`` every process checks the folder while the main one claims
    it: neither the mark being written nor the files written after it (read before the mark
    landed) make it a stranger's. The same files without a mark still do."""
    import foilkit.folders as folders

    writing = tmp_path / "writing"
    writing.mkdir()
    (writing / f".{MARK_FILE}.0123456789ab.tmp").write_text("{")
    assert check_folder(writing, SCORES) is False

    claimed = claim_folder(tmp_path / "claimed", SCORES)
    (claimed / "run.lock").write_text("1234")
    reads = iter([None])  # the first read of the mark came before it was written
    real = folders.folder_kind
    monkeypatch.setattr(folders, "folder_kind", lambda root: next(reads, real(root)))
    assert check_folder(claimed, SCORES) is True

    (claimed / MARK_FILE).unlink()
    with pytest.raises(ForeignFolderError, match="not made by foilkit"):
        check_folder(claimed, SCORES)


def test_a_file_or_another_kind_of_foilkit_folder_is_refused(tmp_path):
    afile = tmp_path / "a-file"
    afile.write_text("x")
    with pytest.raises(ForeignFolderError, match="is a file"):
        claim_folder(afile, RUN)
    claim_folder(tmp_path / "dry", DRY_RUN)
    with pytest.raises(ForeignFolderError, match="holds a foilkit push-results dry run"):
        replace_folder(tmp_path / "dry", RUN)


def test_replacing_deletes_only_foilkits_files(tmp_path):
    run = claim_folder(tmp_path / "run", RUN)
    for name in ("results.json", "report.md", "report.html", "accuracy.png", "recall.png"):
        (run / name).write_text("old")
    for folder in ("scores", "scoring/all"):
        (run / folder).mkdir(parents=True)
        (run / folder / "x").write_text("old")
    (run / "my-notes.txt").write_text("mine")
    (run / "my-figure.png").write_text("mine")  # a .png, but not one of the run's plots
    (run / "analysis").mkdir()
    (run / "analysis" / "plot.py").write_text("mine")
    replace_folder(run, RUN)
    assert sorted(p.name for p in run.iterdir()) == [
        MARK_FILE,
        "analysis",
        "my-figure.png",
        "my-notes.txt",
    ]
    assert (run / "analysis" / "plot.py").read_text() == "mine"


def test_evaluate_overwrite_keeps_a_users_png_and_shows_only_the_runs_plots(tmp_path, capsys):
    """``evaluate --overwrite`` deleted every ``*.png`` of the run folder (the run kind's
    pattern): a user's figure beside the run is kept, and neither report.html nor the run's
    plots (which push-results uploads) take it for one of the run's."""
    from foilkit.demo import write_demo_benchmark
    from foilkit.run import RunFolder
    from foilkit.synthetic.models import tiny_model_path

    benchmark = write_demo_benchmark(tmp_path / "benchmark")
    out = tmp_path / "run"
    argv = ["evaluate", "--benchmark", "synthetic", "--config", "order", "--dataset"]
    argv += [str(benchmark), "--video-root", str(benchmark / "videos"), "--model"]
    argv += [str(tiny_model_path("clip")), "--out", str(out), "--n-resamples", "5"]
    argv += ["--num-workers", "0", "--no-cache", "--no-progress"]
    assert main(argv) == 0
    figure = b"\x89PNG\r\n\x1a\n my own figure"
    (out / "my-figure.png").write_bytes(figure)
    assert main([*argv, "--overwrite"]) == 0
    assert (out / "my-figure.png").read_bytes() == figure
    assert [p.name for p in RunFolder(out).plots()] == ["accuracy.png"]
    assert "my-figure" not in (out / "report.html").read_text()


def test_build_never_takes_a_hub_datasets_clone_for_an_export(tmp_path, capsys):
    """A clone of any Hub dataset has a README.md with ``configs:``: ``build --out`` took it
    for an old foilkit export and replaced its README.md and eval.yaml. Only a folder foilkit
    marked as an export is one; a new one is marked and exported into again."""
    clone = tmp_path / "clone"
    (clone / "data").mkdir(parents=True)
    (clone / "README.md").write_text(
        "---\nlicense: mit\nconfigs:\n- config_name: default\n  data_files:\n"
        "  - split: test\n    path: data/test-*.parquet\n---\n# Someone's dataset\n"
    )
    (clone / "eval.yaml").write_text("name: someone's tasks\n")
    (clone / "data" / "test-00000-of-00001.parquet").write_bytes(b"PAR1 their rows")
    (clone / ".gitattributes").write_text("*.parquet filter=lfs\n")
    annotations = tmp_path / "annotations"
    annotations.mkdir()
    (annotations / "Direction.jsonl").write_text(
        json.dumps(
            {
                "src_dataset": "MSRVTT",
                "video_name": "video1.mp4",
                "caption": "a man opens a door",
                "counterfactual": "a man closes a door",
                "aspect": "Direction",
            }
        )
        + "\n"
    )
    argv = ["build", "vitatecs", "--config", "direction", "--annotations", str(annotations)]
    argv += ["--on-missing", "keep", "--datasets-cache", str(tmp_path / "datasets-cache")]
    before = _snapshot(clone)
    assert main([*argv, "--out", str(clone)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(clone) in err[0] and "not made by foilkit" in err[0], err
    assert _snapshot(clone) == before
    export = tmp_path / "export"
    assert main([*argv, "--out", str(export)]) == 0
    assert folder_kind(export) == "dataset export"
    assert main([*argv, "--out", str(export)]) == 0  # foilkit's own export: written again


def test_replacing_a_multi_benchmark_folder_deletes_its_run_folders_not_a_users(tmp_path):
    """``evaluate --tasks --overwrite``: the summary and the benchmarks' run folders (marked as
    runs) go; a user's folder or file beside them stays, whatever its name."""
    parent = claim_folder(tmp_path / "out", TASKS)
    claim_folder(parent / "vitatecs", RUN)
    (parent / "vitatecs" / "results.json").write_text("old")
    for name in ("summary.md", "summary.json", "notes.txt"):
        (parent / name).write_text("x")
    (parent / "analysis").mkdir()
    (parent / "analysis" / "plot.py").write_text("mine")
    replace_folder(parent, TASKS)
    assert sorted(p.name for p in parent.iterdir()) == [MARK_FILE, "analysis", "notes.txt"]
    with pytest.raises(ForeignFolderError, match="holds a foilkit multi-benchmark evaluation"):
        claim_folder(parent, RUN)


def test_a_folder_from_before_marks_is_still_foilkits(tmp_path):
    old = _legacy_run(tmp_path)
    (old / "my-notes.txt").write_text("mine")
    assert check_folder(old, RUN) is True
    replace_folder(old, RUN)
    assert sorted(p.name for p in old.iterdir()) == [MARK_FILE, "my-notes.txt"]
    interrupted = tmp_path / "interrupted-score"  # killed before its run.json: only the lock
    interrupted.mkdir()
    (interrupted / ".foilkit.lock").write_text(json.dumps({"pid": 1}))
    assert check_folder(interrupted, SCORES) is True


# --- every command that writes a folder -----------------------------------------------------------


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    """Each command that writes a folder, with ``{out}`` where the folder goes; inputs are cheap
    (the refusal comes before any model, dataset or upload is touched) or real where needed."""
    run = str(_legacy_run(tmp_path))
    evaluate = [
        "evaluate",
        "--benchmark",
        "synthetic",
        "--dataset",
        str(tmp_path / "no-dataset"),
        "--model",
        "someone/model",
        "--out",
        "{out}",
    ]
    return {
        "evaluate --overwrite": [*evaluate, "--overwrite"],
        "evaluate": evaluate,
        "score": [
            "score",
            "--model",
            "someone/model",
            "--dataset",
            str(tmp_path / "no-dataset"),
            "--out",
            "{out}",
        ],
        "finetune --overwrite": [
            "finetune",
            "--model",
            "someone/model",
            "--dataset",
            str(tmp_path / "no-dataset"),
            "--out",
            "{out}",
            "--overwrite",
        ],
        "push-results --dry-run": [
            "push-results",
            run,
            "--repo",
            "me/results",
            "--dry-run",
            "{out}",
        ],
        "build": ["build", "vitatecs", "--out", "{out}", "--annotations", str(tmp_path / "none")],
        "compare": ["compare", run, run, "--out", "{out}"],
        "report --out": ["report", run, run, "--out", "{out}"],
        "leaderboard": ["leaderboard", run, "--out", "{out}"],
        "metrics push --dry-run": [
            "metrics",
            "push",
            "pairwise_foil_accuracy",
            "me/pfa",
            "--dry-run",
            "{out}",
        ],
        "demo": ["demo", "--out", "{out}"],
        "power": ["power", "--benchmark", "vitatecs", "--out", "{out}"],
        "generate contrast person-id": [
            "generate",
            "contrast",
            "person-id",
            "--captions",
            str(tmp_path / "none.jsonl"),
            "-o",
            "{out}",
        ],
        "generate vilma counting": [
            "generate",
            "vilma",
            "counting",
            "-i",
            str(tmp_path / "none.jsonl"),
            "-o",
            "{out}",
        ],
    }


COMMANDS = [
    "evaluate --overwrite",
    "evaluate",
    "score",
    "finetune --overwrite",
    "push-results --dry-run",
    "build",
    "compare",
    "report --out",
    "leaderboard",
    "metrics push --dry-run",
    "demo",
    "power",
    "generate contrast person-id",
    "generate vilma counting",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_no_command_writes_into_or_deletes_a_folder_it_did_not_make(command, tmp_path, capsys):
    home = _home(tmp_path / "home")
    before = _snapshot(home)
    argv = [arg.replace("{out}", str(home)) for arg in _commands(tmp_path)[command]]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert str(home) in err[0] and "not made by foilkit" in err[0] and "another --out" in err[0]
    assert _snapshot(home) == before


def test_a_dry_run_is_repeated_into_its_own_folder(tmp_path, capsys):
    argv = _commands(tmp_path)["push-results --dry-run"]
    out = tmp_path / "dry"
    argv = [arg.replace("{out}", str(out)) for arg in argv]
    assert main(argv) == 0
    first = _snapshot(out)
    (out / "my-notes.txt").write_text("mine")
    assert main(argv) == 0
    assert _snapshot(out) == {**first, "my-notes.txt": b"mine"}
