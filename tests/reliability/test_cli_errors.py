"""The command line ends an error with one line, not a traceback (issue 15, item 10): a user
error says what to change and exits 2, any other failure exits 1, ``--debug`` shows the
traceback."""

from __future__ import annotations

import errno
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from launch import ONE_THREAD, launched_score, run_to_success, score_argv
from upstream_formats import VITATECS

from foilkit.builders.annotations import AnnotationError
from foilkit.builders.videos import MissingVideosError
from foilkit.cli import main
from foilkit.errors import UserError, check_model_path, one_line


def _annotations(folder: Path, *records: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Direction.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def _build(tmp_path: Path, *options: str) -> list[str]:
    return [
        "build",
        "vitatecs",
        "--config",
        "direction",
        "--out",
        str(tmp_path / "out"),
        "--cache-dir",
        str(tmp_path / "datasets-cache"),
        *options,
    ]


def missing_video(tmp_path, saved):
    folder = _annotations(tmp_path / "a", VITATECS)
    argv = _build(tmp_path, "--annotations", str(folder), "--video-root", str(tmp_path))
    return argv, (
        rf"1 video\(s\) used by 1 of 1 rows of split 'test' are missing under {tmp_path}, "
        r"e\.g\. MSRVTT/video1\.mp4\. Put them there .* "
        r"--on-missing keep \(on_missing=.keep. in Python\) .*"
    )


def offline_download(tmp_path, saved):
    return _build(tmp_path, "--on-missing", "keep"), (
        r"could not download the annotation files from "
        r"https://github\.com/lscpku/VITATECS/tree/\w+ \(OfflineModeIsEnabled: .*\)\. "
        r"Without network access or with HF_DATASETS_OFFLINE=1, pass a local copy: "
        r"--annotations <folder> \(annotations=<folder> in Python\) holding Direction\.jsonl"
    )


def empty_annotations(tmp_path, saved):
    folder = tmp_path / "a"
    folder.mkdir()
    (folder / "Direction.jsonl").write_text("")
    argv = _build(tmp_path, "--annotations", str(folder), "--on-missing", "keep")
    return argv, rf"{folder / 'Direction.jsonl'}: the file is empty: it holds no JSON line"


def missing_annotations_folder(tmp_path, saved):
    argv = _build(tmp_path, "--annotations", str(tmp_path / "nowhere"), "--on-missing", "keep")
    return argv, rf"annotations folder {tmp_path / 'nowhere'} does not exist"


def traversal_embedded(tmp_path, saved):
    """``--embed-videos`` must not copy a file from outside the root into the parquet."""
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "outside.mp4").write_bytes(b"secret")
    folder = _annotations(tmp_path / "a", {**VITATECS, "video_name": "../../secret/outside.mp4"})
    argv = _build(
        tmp_path,
        "--annotations",
        str(folder),
        "--video-root",
        str(tmp_path / "root"),
        "--embed-videos",
        "--on-missing",
        "keep",
    )
    return argv, (
        rf"{folder / 'Direction.jsonl'}, row 1: field 'video_name' is "
        r"'\.\./\.\./secret/outside\.mp4': a video must be a relative path under the video root"
    )


def model_path_absent(tmp_path, saved):
    return score_argv("./not/a/path", saved, tmp_path / "o"), (
        rf"--model '\./not/a/path' looks like a local path, but {Path.cwd()}/not/a/path does not "
        r"exist: pass an existing model folder or a Hub id such as 'openai/clip-vit-base-patch32'"
    )


def model_id_offline(tmp_path, saved):
    argv = score_argv("nobody/no-such-model", saved, tmp_path / "o")
    return argv, (
        r"--model 'nobody/no-such-model' is no local folder and no model in the Hugging Face "
        r"cache \(.*\), and HF_HUB_OFFLINE=1 downloads nothing: pass an existing model folder, "
        r"check the Hub id, or run once with network access \(unset HF_HUB_OFFLINE\) .*"
    )


def dataset_absent(tmp_path, saved):
    argv = score_argv("nobody/model", tmp_path / "nowhere", tmp_path / "o")
    return argv, (
        rf"--dataset '{tmp_path / 'nowhere'}' looks like a local path, but {tmp_path / 'nowhere'} "
        r"does not exist: pass an exported folder \(foilkit build --out DIR\) or a Hub .*"
    )


def contrast_set_without_its_file(tmp_path, saved):
    argv = [
        "build",
        "contrast_sets",
        "--config",
        "gender",
        "--out",
        str(tmp_path / "out"),
        "--annotations",
        str(tmp_path),
        "--cache-dir",
        str(tmp_path / "datasets-cache"),
    ]
    return (
        argv,
        r"The 'gender' contrast set is not published as a file: .* multiple_choice_file=<path> .*",
    )


USER_ERRORS = [
    missing_video,
    offline_download,
    empty_annotations,
    missing_annotations_folder,
    traversal_embedded,
    model_path_absent,
    model_id_offline,
    dataset_absent,
    contrast_set_without_its_file,
]


@pytest.fixture(scope="module")
def saved_dataset(tmp_path_factory, motion_videos) -> Path:
    """A two-row scoring dataset saved with ``save_to_disk``."""
    import datasets

    path = tmp_path_factory.mktemp("dataset") / "saved"
    rows = [
        {
            "id": name,
            "video": str(video),
            "caption": f"a square moves {name}",
            "foils": ["x"],
            "start": None,
            "end": None,
            "reversed": False,
        }
        for name, video in motion_videos.items()
    ]
    datasets.Dataset.from_list(rows).cast_column("video", datasets.Video()).save_to_disk(str(path))
    return path


@pytest.mark.parametrize("case", USER_ERRORS, ids=[case.__name__ for case in USER_ERRORS])
def test_a_user_error_is_one_line_and_exit_status_2(tmp_path, capsys, saved_dataset, case):
    argv, message = case(tmp_path, saved_dataset)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.rstrip("\n").splitlines()[-1]  # progress bars of the build may come before it
    assert last.startswith(f"foilkit {argv[0]}: error: ")
    assert re.fullmatch(message, last.removeprefix(f"foilkit {argv[0]}: error: ")), last
    assert not list((tmp_path / "out").rglob("*.parquet"))  # nothing half-written or embedded


@pytest.mark.parametrize(
    ("case", "raised"),
    [
        (missing_video, MissingVideosError),
        (traversal_embedded, AnnotationError),
        (model_path_absent, UserError),
    ],
    ids=["missing_video", "traversal_embedded", "model_path_absent"],
)
def test_debug_raises_the_error_itself(tmp_path, saved_dataset, case, raised):
    argv, _ = case(tmp_path, saved_dataset)
    with pytest.raises(raised):
        main([*argv, "--debug"])


def test_a_failure_is_one_line_and_exit_status_1(monkeypatch, capsys):
    from foilkit.cli import doctor

    def broken(args):
        raise RuntimeError("the GPU caught fire\nsecond line")

    monkeypatch.setattr(doctor, "run", broken)
    assert main(["doctor"]) == 1
    assert capsys.readouterr().err == (
        "foilkit doctor: failed: RuntimeError: the GPU caught fire second line "
        "(rerun with --debug for the traceback)\n"
    )
    with pytest.raises(RuntimeError, match="the GPU caught fire"):
        main(["--debug", "doctor"])


@pytest.mark.parametrize("debug", [False, True])
def test_the_console_script_prints_a_traceback_only_with_debug(tmp_path, debug):
    command = [
        sys.executable,
        "-m",
        "foilkit",
        *score_argv("./not/a/path", tmp_path, tmp_path / "o"),
    ]
    result = subprocess.run(
        command + ["--debug"] * debug, check=False, capture_output=True, text=True, cwd=tmp_path
    )
    message = (
        f"--model './not/a/path' looks like a local path, but {tmp_path}/not/a/path does not "
        "exist: pass an existing model folder or a Hub id such as 'openai/clip-vit-base-patch32'"
    )
    if debug:
        assert result.returncode == 1 and "Traceback" in result.stderr
        assert result.stderr.rstrip().endswith(f"UserError: {message}")
    else:
        assert result.returncode == 2
        assert result.stderr == f"foilkit score: error: {message}\n"


@pytest.mark.parametrize(
    ("model", "refused"),
    [
        ("gpt2", False),  # a Hub id without owner
        ("openai/clip-vit-base-patch32", False),  # owner/name: a Hub id unless such a folder exists
        ("./not/a/path", True),
        ("../model", True),
        ("/no/such/model", True),
        ("~/no-such-model-folder", True),
        ("models/clip/final", True),  # two slashes: no Hub id has them
    ],
)
def test_only_a_path_that_does_not_exist_is_refused_before_loading(model, refused):
    if refused:
        with pytest.raises(
            UserError, match=rf"^--model {re.escape(repr(model))} looks like a local path"
        ):
            check_model_path(model)
    else:
        check_model_path(model)


def test_an_existing_model_folder_passes(tmp_path, monkeypatch):
    (tmp_path / "models" / "clip" / "final").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    for model in ("./models/clip/final", "models/clip/final", str(tmp_path / "models")):
        check_model_path(model)


def test_an_offline_cache_miss_says_how_to_fix_it():
    from huggingface_hub.errors import LocalEntryNotFoundError

    error = LocalEntryNotFoundError("Cannot find the requested files in the local cache.\nPass x.")
    assert one_line(error) == (
        "Cannot find the requested files in the local cache. Pass x; offline (HF_HUB_OFFLINE=1) a "
        "model or dataset must already be in the Hugging Face cache: check the id, run once with "
        "network access, or pass a local folder"
    )


# --- issue 35: Ctrl-C and a full disk end in one line that says what to do ----------------------


@pytest.fixture(scope="module")
def eight_rows(tmp_path_factory, motion_videos) -> Path:
    """Eight rows over the two motion videos (forward and reversed views), saved to disk."""
    import datasets

    path = tmp_path_factory.mktemp("eight") / "saved"
    rows = [
        {
            "id": f"{name}-{copy}",
            "video": str(video),
            "caption": f"a square moves {name}",
            "foils": ["a square moves up"],
            "start": None,
            "end": None,
            "reversed": bool(copy % 2),
        }
        for name, video in motion_videos.items()
        for copy in range(4)
    ]
    datasets.Dataset.from_list(rows).cast_column("video", datasets.Video()).save_to_disk(str(path))
    return path


@pytest.mark.skipif(sys.platform == "win32", reason="sends SIGINT")
def test_ctrl_c_during_scoring_says_how_to_resume_and_exits_130(tiny_clip, eight_rows, tmp_path):
    """A real ``foilkit score`` process gets SIGINT after its first batch is kept: no traceback,
    one line naming the exact command to continue, exit 130; that command finishes the run."""
    slow = tmp_path / "slow"  # each kept batch takes a while, so Ctrl-C lands mid-run
    slow.mkdir()
    (slow / "sitecustomize.py").write_text(
        "import time\n"
        "from foilkit.scorers.store import ResultStore\n"
        "append = ResultStore.append\n"
        "def slow_append(self, records):\n"
        "    append(self, records)\n"
        "    time.sleep(3.0)\n"
        "ResultStore.append = slow_append\n"
    )
    out = tmp_path / "run"
    argv = launched_score(tiny_clip, eight_rows, out, 2, 2)
    env = {**os.environ, **ONE_THREAD, "PYTHONPATH": os.pathsep.join([str(slow), *sys.path])}
    process = subprocess.Popen(
        [sys.executable, *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a shell's Ctrl-C: SIGINT at its default in the child, whatever this test process has
        # inherited or been left with (an ignored SIGINT would be ignored by the child too)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    shard = out / "shards" / "rank-00000.jsonl"
    try:
        deadline = time.monotonic() + 240
        while not (shard.is_file() and shard.stat().st_size):
            assert process.poll() is None, process.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "no scored rows after 240 s"
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert process.returncode == 130, (stdout[-2000:], stderr[-2000:], shard.read_text()[:500])
    resume = [*argv[2:], "--resume"]  # argv without "-m foilkit"
    assert stderr.rstrip("\n").splitlines()[-1] == (
        "foilkit score: interrupted (Ctrl-C); what it finished is kept in its output folder: "
        f"continue with {shlex.join(['foilkit', *resume])}"
    )
    kept = len(shard.read_text().splitlines())
    assert 1 <= kept < 8  # stopped mid-run
    run_to_success([sys.executable, "-m", "foilkit", *resume])
    assert len((out / "scores.jsonl").read_text().splitlines()) == 8
    assert json.loads((out / "run.json").read_text())["throughput"]["resumed_rows"] == kept


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux)")
def test_a_full_disk_while_scoring_names_the_shard_its_folder_and_the_fix(
    tiny_clip, saved_dataset, tmp_path, capsys, monkeypatch
):
    """The shard a scoring run appends to sits on a full disk (a link to /dev/full, whose every
    write fails with ENOSPC): one line naming the file, its folder and the fix, exit 2."""
    from foilkit.scorers.store import ResultStore

    full = tmp_path / "full-disk"
    full.mkdir()
    os.symlink("/dev/full", full / "rank-00000.jsonl")
    monkeypatch.setattr(ResultStore, "shard", property(lambda self: full / "rank-00000.jsonl"))
    argv = score_argv(tiny_clip, saved_dataset, tmp_path / "out", "--no-cache", "--no-progress")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    last = err.rstrip("\n").splitlines()[-1]
    assert re.fullmatch(
        rf"foilkit score: error: \[Errno 28\] no space left on the device of {full} \(writing "
        rf"rank-00000\.jsonl, [\d.]+ [KMGT]?i?B free\): free space there \(df -h {full}\), or "
        r"write to a folder on another disk \(--out for a run, --cache-dir for the embedding "
        r"cache\); a scoring or fine-tuning run then continues with --resume",
        last,
    ), last


def test_a_full_disk_error_that_names_no_file_still_says_what_to_do():
    assert one_line(OSError(errno.ENOSPC, "No space left on device")) == (
        "[Errno 28] No space left on device; the disk is full: free space on the disk of the "
        "folder the command writes to (--out, or the cache: --cache-dir, HF_HOME), or point it at "
        "a folder on another disk"
    )
