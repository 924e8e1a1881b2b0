"""``foilkit generate`` writes only what is new or its own, and never in place: a foils output
folder (``-o DIR``) follows the folder rule of every command (``foilkit/folders.py``), claimed
when the stage starts; a stage's file (``--output FILE``) is replaced only when foilkit's record
sits beside it; every file is written to a temporary file and renamed, the record last, so a
full disk, a file grown too large or a killed write leaves the previous output and its record
as they were, and the error names the file."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from foilkit.cli import main
from foilkit.folders import FOILS, MARK_FILE, SCORES, claim_folder, folder_kind

PERSON = {
    "id": "m1-1",
    "caption": "Jenko lowers his gun.",
    "video": "m1/1.mp4",
    "characters": {"Jenko": "M", "Schmidt": "M", "Molly": "F"},
}
CHANGE_OF_STATE = {
    "id": "c1",
    "argument": "the door",
    "pre_state": "closed",
    "verb": "opens",
    "post_state": "open",
    "reverse_verb": "closes",
}
CURATED = "keep,activity,opposite\nyes,open [something],close [something]\n"


def _snapshot(root: Path) -> dict[str, bytes | None]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def _jsonl(path: Path, *rows: dict) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _folder_stage(stage: str, tmp_path: Path, out: Path) -> list[str]:
    """A foils-output stage that needs no model, on one row, writing ``out``."""
    if stage == "contrast person-id":
        captions = _jsonl(tmp_path / "people.jsonl", PERSON)
        return ["generate", "contrast", "person-id", "--captions", str(captions), "-o", str(out)]
    source = _jsonl(tmp_path / "states.jsonl", CHANGE_OF_STATE)
    return ["generate", "vilma", "change-of-state", "-i", str(source), "-o", str(out)]


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "Traceback" not in err[0]
    return err[0]


# --- 5. a foils output folder: new, empty or foilkit's foils output -------------------------------


def _scoring_run(root: Path) -> Path:
    """``foilkit score``'s folder: its run.json (and its mark)."""
    claim_folder(root, SCORES)
    (root / "run.json").write_text(json.dumps({"identity": {"model": "m"}}) + "\n")
    (root / "scores.jsonl").write_text('{"id": "a"}\n')
    return root


def _legacy_scoring_run(root: Path) -> Path:
    """A scoring folder from before marks: its run.json only tells it."""
    root.mkdir(parents=True)
    (root / "run.json").write_text(json.dumps({"identity": {"model": "m"}}) + "\n")
    return root


def _users_folder(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "run.json").write_text('{"my": "experiment"}\n')
    (root / "notes.txt").write_text("do not lose me\n")
    return root


@pytest.mark.parametrize("stage", ["contrast person-id", "vilma change-of-state"])
@pytest.mark.parametrize("folder", [_scoring_run, _legacy_scoring_run, _users_folder])
def test_a_foils_output_never_goes_into_a_folder_foilkit_did_not_make_as_one(
    stage, folder, tmp_path, capsys
):
    """``-o DIR`` onto a scoring run's folder or a user's: one line naming it and the fix, exit
    2, nothing in it touched (its run.json was replaced before)."""
    out = folder(tmp_path / "out")
    before = _snapshot(out)
    assert main(_folder_stage(stage, tmp_path, out)) == 2
    line = _one_error_line(capsys)
    assert str(out) in line and "choose another --out" in line
    assert _snapshot(out) == before


@pytest.mark.parametrize("stage", ["contrast person-id", "vilma change-of-state"])
def test_a_foils_output_is_marked_and_written_again_keeping_a_users_file(stage, tmp_path):
    out = tmp_path / "out"
    argv = _folder_stage(stage, tmp_path, out)
    assert main(argv) == 0
    assert folder_kind(out) == FOILS.name
    (out / "my-notes.txt").write_text("mine")
    first = json.loads((out / "run.json").read_text())
    assert main(argv) == 0
    assert (out / "my-notes.txt").read_text() == "mine"
    assert json.loads((out / "run.json").read_text())["stage"] == first["stage"]


def test_a_foils_output_from_before_marks_is_still_foilkits(tmp_path):
    out = tmp_path / "old"
    assert main(_folder_stage("contrast person-id", tmp_path, out)) == 0
    (out / MARK_FILE).unlink()  # written by a foilkit from before marks: its run.json tells
    assert main(_folder_stage("contrast person-id", tmp_path, out)) == 0
    assert folder_kind(out) == FOILS.name


def test_vitatecs_finalize_claims_its_folder_before_writing_annotations(tmp_path):
    """``write_dataset`` wrote ``annotations/<Aspect>.jsonl`` into any folder before
    ``write_foils`` saw it; now the folder is refused first, with nothing written."""
    from foilkit.folders import ForeignFolderError
    from foilkit.generation.vitatecs.finalize import write_dataset
    from foilkit.generation.vitatecs.generate import SELECTED
    from tests.generation.vitatecs.vitatecs_candidates import make_candidate

    out = _users_folder(tmp_path / "mine")
    before = _snapshot(out)
    opens, closes = "a man opens a door", "a man closes a door"
    candidate = make_candidate(1, opens, closes, "direction", SELECTED)
    with pytest.raises(ForeignFolderError, match="not made by foilkit"):
        write_dataset([candidate], out)
    assert _snapshot(out) == before
    # the stage claims it at its start: before the loop, the captions or the LLM are touched
    from foilkit.generation.vitatecs import stages

    with pytest.raises(ForeignFolderError, match="not made by foilkit"):
        stages.finalize(None, tmp_path / "no-captions.jsonl", out, client=None)
    assert _snapshot(out) == before


# --- 5. a stage's file: new, or one foilkit wrote (its record beside it) --------------------------


def _file_stage(stage: str, tmp_path: Path, out: Path) -> list[str]:
    """A stage writing one file (``--output FILE``) and its ``FILE.run.json``, with no model."""
    if stage == "rtime curate-import":
        curated = tmp_path / "curated.csv"
        curated.write_text(CURATED)
        return ["generate", "rtime", "curate-import", str(curated), "-o", str(out)]
    rows = _jsonl(tmp_path / "rows.jsonl", {"caption": "a man opens", "foils": ["a man closes"]})
    return ["generate", "bias", "--rows", str(rows), "-o", str(out)]


def _users_file(out: Path) -> None:
    out.write_text("my own results\n")


def _users_record(out: Path) -> None:
    Path(f"{out}.run.json").write_text('{"my": "record"}\n')


def _users_file_and_record(out: Path) -> None:
    _users_file(out)
    _users_record(out)


@pytest.mark.parametrize("stage", ["rtime curate-import", "bias"])
@pytest.mark.parametrize("existing", [_users_file, _users_record, _users_file_and_record])
def test_a_stage_file_never_replaces_a_users_file_or_record(stage, existing, tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    out = folder / "results.jsonl"
    existing(out)
    before = _snapshot(folder)
    assert main(_file_stage(stage, tmp_path, out)) == 2
    line = _one_error_line(capsys)
    assert "was not written by foilkit" in line or "is not a foilkit run record" in line
    assert "choose another --output" in line
    assert _snapshot(folder) == before


@pytest.mark.parametrize("stage", ["rtime curate-import", "bias"])
def test_a_stage_file_foilkit_wrote_is_written_again(stage, tmp_path):
    out = tmp_path / "results.jsonl"
    argv = _file_stage(stage, tmp_path, out)
    assert main(argv) == 0
    first = out.read_bytes()
    assert main(argv) == 0
    assert out.read_bytes() == first
    assert json.loads(Path(f"{out}.run.json").read_text())["format"].startswith("foilkit.")


def test_a_stages_other_files_follow_the_same_rule(tmp_path):
    """``--rtime-json`` and ``--plot`` name files too: a user's one there is refused; one a
    stage wrote (its record beside it) is foilkit's."""
    from foilkit.generation.cli_io import ForeignFileError, claim_output_file

    plot = tmp_path / "fig10.png"
    plot.write_bytes(b"\x89PNG my figure")
    out = tmp_path / "rewrites.jsonl"
    with pytest.raises(ForeignFileError, match=r"fig10\.png exists .* choose another --plot"):
        claim_output_file(out, {"plot": plot, "rtime_json": None})
    from foilkit.generation.provenance import RunRecord, record_path

    RunRecord("rtime", "rewrite").write(record_path(plot))
    assert claim_output_file(out, {"plot": plot}) == out


# --- 6. written to a temporary file and renamed, the record last -------------------------------


def _previous_output(stage: str, tmp_path: Path) -> tuple[Path, list[str], dict]:
    """A stage's good output, the command that writes it again with more rows, and its files."""
    if stage == "contrast person-id":
        out = tmp_path / "foils"
        assert main(_folder_stage(stage, tmp_path, out)) == 0
        more = [dict(PERSON, id=f"m1-{i}") for i in range(50)]
        _jsonl(tmp_path / "people.jsonl", *more)
        argv = ["generate", "contrast", "person-id", "--captions", str(tmp_path / "people.jsonl")]
        return out / "foils.parquet", [*argv, "-o", str(out)], _snapshot(out)
    out = tmp_path / "pairs.jsonl"
    assert main(_file_stage("rtime curate-import", tmp_path, out)) == 0
    rows = "".join(f"yes,open [thing{i}],close [thing{i}]\n" for i in range(200))
    (tmp_path / "curated.csv").write_text(CURATED + rows)
    argv = ["generate", "rtime", "curate-import", str(tmp_path / "curated.csv"), "-o", str(out)]
    return out, argv, _snapshot(tmp_path)


STAGES = ["contrast person-id", "rtime curate-import"]


def _unchanged(stage: str, written: Path, before: dict) -> None:
    """The previous output and its record are as they were; no temporary file is left."""
    root = written.parent
    if stage == "contrast person-id":
        assert _snapshot(root) == before
    else:
        after = _snapshot(root)
        for name in (written.name, f"{written.name}.run.json"):
            assert after[name] == before[name], name
    assert not [p for p in root.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("stage", STAGES)
def test_a_full_disk_leaves_the_previous_output_whole_and_names_the_file(
    stage, tmp_path, capsys, monkeypatch
):
    """The new output's temporary file sits on a full disk (a link to /dev/full, whose every
    write fails with ENOSPC): exit 2, one line naming the file, its folder and the fix; the
    previous output and its record are untouched (a write in place destroyed them)."""
    import foilkit.files

    written, argv, before = _previous_output(stage, tmp_path)
    monkeypatch.setattr(foilkit.files.secrets, "token_hex", lambda n: "0" * 12)
    os.symlink("/dev/full", written.with_name(f".{written.name}.000000000000.tmp"))
    capsys.readouterr()
    assert main(argv) == 2
    line = _one_error_line(capsys)
    folder = written.parent.absolute()
    assert re.search(
        rf"\[Errno 28\] no space left on the device of {re.escape(str(folder))} \(writing "
        rf"{re.escape(written.name)}, [\d.]+ [KMGT]?i?B free\): free space there",
        line,
    ), line
    _unchanged(stage, written, before)


def _limit_file_size(size: int):
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


@pytest.mark.parametrize("stage", STAGES)
def test_a_file_grown_too_large_leaves_the_previous_output_whole_and_names_the_file(
    stage, tmp_path
):
    """The process may write no file past a size (``ulimit -f``: EFBIG, as a FAT32 disk's 4 GiB
    limit): exit 2, one line naming the file, its folder and the fix; the previous output and
    its record are untouched."""
    written, argv, before = _previous_output(stage, tmp_path)
    limit = written.stat().st_size + 64  # the new output, with more rows, is larger
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "HF_DATASETS_CACHE": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "foilkit", *argv],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=_limit_file_size(limit),
        timeout=300,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    folder = written.parent.absolute()
    assert "Traceback" not in done.stderr
    assert (
        f"file too large: {written.name} grew past the largest file allowed in {folder}" in last
    ), last
    _unchanged(stage, written, before)
