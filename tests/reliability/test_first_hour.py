"""A new user's first hour (issue 40, section 5): a peer harness's flags, bad numbers and an
unwritable ``--out`` answered in one line before any work, an offline Hub id that is not cached
named at once, a failed start that blocks nothing, the results on the terminal, and a machine
without FFmpeg told to pass ``--decoder pyav``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from launch import evaluate_argv

from foilkit.cli import main


@pytest.fixture(scope="module")
def benchmark(tmp_path_factory) -> Path:
    """The demo's synthetic benchmark (exported layout: ``videos/<config>/*.mp4``)."""
    from foilkit.demo import write_demo_benchmark

    return write_demo_benchmark(tmp_path_factory.mktemp("first-hour") / "benchmark")


def _evaluate(benchmark: Path, model: str, out: Path, *extra: str) -> list[str]:
    return evaluate_argv(benchmark, model, "--out", str(out), *extra)


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err, err
    return err


@pytest.fixture
def nothing_runs(monkeypatch):
    """Building or loading a dataset, or a model, fails the test: the error must come first."""

    def refuse(*args, **kwargs):
        raise AssertionError("work started before the mistake was reported")

    monkeypatch.setattr("foilkit.evaluation.load_benchmark_split", refuse)
    monkeypatch.setattr("foilkit.scorers.api.load_scoring_dataset", refuse)
    monkeypatch.setattr("foilkit.scorers.job.load_scoring_dataset", refuse)
    monkeypatch.setattr("foilkit.scorers.job.adapter_class", refuse)
    monkeypatch.setattr("foilkit.scorers.job.load_adapter", refuse)


# --- lmms-eval's flags and bad numbers: one line at parse time -------------------------------

REQUIRED = ["--benchmark", "vitatecs", "--model", "m", "--out", "o"]


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--model_args", "pretrained=x"], "lmms-eval's --model_args: foilkit has no --model_args"),
        (["--batch_size", "1"], "lmms-eval's --batch_size: write --batch-size"),
        (["--output_path", "runs/x"], "lmms-eval's --output_path: write --out"),
        (["--log_samples"], "lmms-eval's --log_samples: foilkit always writes every row's scores"),
        (["--gen_kwargs", "temperature=0"], "write --temperature, --top-p, --max-new-tokens"),
        (["--num_frames", "4"], "--num_frames: foilkit's flag is --num-frames"),
        (["--video_root=v"], "--video_root: foilkit's flag is --video-root"),
    ],
)
def test_a_peer_harness_flag_is_answered_with_foilkits_in_one_line(flags, said, capsys):
    # as lmms-eval users type it: the flags first, and --out missing (no usage dump for it)
    with pytest.raises(SystemExit) as exit_info:
        main(["evaluate", "--model", "clip", *flags, "--tasks", "vitatecs"])
    assert exit_info.value.code == 2
    line = _one_line(capsys)
    assert line.startswith("foilkit evaluate: error: ") and said in line
    assert "usage:" not in line and "required" not in line


def test_several_peer_flags_are_named_in_the_same_line(capsys):
    argv = ["--model_args", "a=1", "--batch_size", "1", "--output_path", "o", "--log_samples"]
    with pytest.raises(SystemExit):
        main(["evaluate", "--model", "clip", "--tasks", "vitatecs", *argv])
    line = _one_line(capsys)
    for flag in ("--model_args", "--batch_size", "--output_path", "--log_samples"):
        assert f"lmms-eval's {flag}" in line


@pytest.mark.parametrize("command", ["evaluate", "score"])
@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [
        ("--batch-size", "0", "'0' is not a whole number of at least 1"),
        ("--num-frames", "-3", "'-3' is not a whole number of at least 1"),
        ("--frames", "0", "'0' is not a whole number of at least 1"),
        ("--num-workers", "-1", "'-1' is not a whole number of at least 0"),
        ("--stride", "0", "'0' is not a whole number of at least 1"),
        ("--max-frames", "0", "'0' is not a whole number of at least 1"),
        ("--max-text-tokens", "0", "'0' is not a whole number of at least 1"),
        ("--target-fps", "0", "'0' is not a number above 0"),
        ("--normalized-fps", "nan", "'nan' is not a number above 0"),
        ("--max-retries", "-1", "'-1' is not a whole number of at least 0"),
        ("--gpus-per-replica", "0", "'0' is not a whole number of at least 1"),
    ],
)
def test_a_bad_number_is_refused_at_parse_time_naming_its_flag(
    command, flag, value, said, nothing_runs, capsys
):
    required = {"evaluate": REQUIRED, "score": ["--model", "m", "--dataset", "d", "--out", "o"]}
    with pytest.raises(SystemExit) as exit_info:
        main([command, *required[command], flag, value])
    assert exit_info.value.code == 2
    line = _one_line(capsys)
    assert line.startswith(f"foilkit {command}: error: argument ") and flag in line
    assert said in line and "usage:" not in line


@pytest.mark.parametrize("name", ["batch_size", "num_frames"])
def test_score_options_refuse_a_count_below_one_in_flag_and_python_names(name):
    from foilkit.scorers.api import ScoreOptions

    flag = "--" + name.replace("_", "-")
    with pytest.raises(ValueError, match=rf"^{name} must be >= 1 \({flag} N\), got 0$"):
        ScoreOptions(**{name: 0})


# --- an unwritable --out, before any dataset or model -----------------------------------------


def _unwritable(tmp_path: Path) -> dict[str, tuple[str, str]]:
    (tmp_path / "notes.txt").write_text("mine")
    return {
        "under /proc": ("/proc/foilkit-run", "cannot write in /proc"),
        "under a file": (str(tmp_path / "notes.txt" / "run"), "notes.txt is a file, not a folder"),
    }


@pytest.mark.parametrize("case", ["under /proc", "under a file"])
@pytest.mark.parametrize("command", ["evaluate", "score", "compare"])
def test_an_unwritable_out_is_refused_at_once_naming_out(
    command, case, tmp_path, nothing_runs, capsys
):
    out, said = _unwritable(tmp_path)[case]
    argv = {
        "evaluate": ["evaluate", *REQUIRED[:4], "--out", out],
        "score": ["score", "--model", "m", "--dataset", str(tmp_path), "--out", out],
        "compare": ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", out],
    }[command]
    started = time.monotonic()
    assert main(argv) == 2
    assert time.monotonic() - started < 5
    line = _one_line(capsys)
    assert line.startswith(f"foilkit {command}: error: --out {out}: ") and said in line
    assert "choose" in line and "Errno" not in line


@pytest.mark.skipif(
    not hasattr(__import__("os"), "geteuid") or __import__("os").geteuid() == 0,
    reason="root writes into a read-only folder",
)
def test_a_folder_without_write_permission_is_refused(tmp_path, nothing_runs, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    assert main(["evaluate", *REQUIRED[:4], "--out", str(locked / "run")]) == 2
    assert "Permission denied" in _one_line(capsys)


# --- an offline Hub id that is not cached: one line before any retry --------------------------


@pytest.fixture
def empty_hub_cache(tmp_path, monkeypatch) -> Path:
    cache = tmp_path / "hub-cache"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tiny").mkdir()  # a folder of local models, without the one typed
    return cache


@pytest.mark.parametrize(
    ("model", "hint"),
    [
        ("openai/clip-vit-base-patch33", ""),  # a typo in a Hub id
        ("gpt3", ""),  # an id without owner
        ("tiny/clip", "./tiny is a local folder, but it has no 'clip';"),  # a relative path typo
    ],
)
@pytest.mark.parametrize("command", ["evaluate", "score"])
def test_an_offline_model_not_in_the_cache_is_one_line_before_any_retry(
    command, model, hint, empty_hub_cache, benchmark, tmp_path, monkeypatch, capsys
):
    def refuse(*args, **kwargs):
        raise AssertionError("the dataset was built or the Hub asked before the model was checked")

    monkeypatch.setattr("foilkit.evaluation.load_benchmark_split", refuse)
    monkeypatch.setattr("foilkit.scorers.job.adapter_class", refuse)
    argv = _evaluate(benchmark, model, tmp_path / "run")
    if command == "score":
        argv = ["score", *argv[3:7], "--model", model, "--out", str(tmp_path / "run")]
    started = time.monotonic()
    assert main(argv) == 2
    assert time.monotonic() - started < 5
    line = _one_line(capsys)
    hint = f" {hint}" if hint else ""
    assert line == (
        f"foilkit {command}: error: --model {model!r} is no local folder and no model in the "
        f"Hugging Face cache ({empty_hub_cache}), and HF_HUB_OFFLINE=1 downloads nothing:{hint} "
        "pass an existing model folder, check the Hub id, or run once with network access "
        "(unset HF_HUB_OFFLINE) to download it"
    )


def test_a_cached_or_online_model_passes_the_offline_check(empty_hub_cache, monkeypatch):
    from foilkit.errors import UserError, check_offline_model

    with pytest.raises(UserError):
        check_offline_model("openai/clip-vit-base-patch32")
    snapshot = empty_hub_cache / "models--openai--clip-vit-base-patch32" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    check_offline_model("openai/clip-vit-base-patch32")  # in the cache: loads offline
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    check_offline_model("openai/clip-vit-base-patch33")  # online: the Hub answers
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    with pytest.raises(UserError, match="TRANSFORMERS_OFFLINE=1 downloads nothing"):
        check_offline_model("openai/clip-vit-base-patch33")


def test_online_a_mistyped_relative_path_to_a_folder_of_models_is_one_line(
    empty_hub_cache, benchmark, tmp_path, monkeypatch, capsys
):
    def refuse(*args, **kwargs):
        raise AssertionError("the Hub was asked for a mistyped relative path")

    monkeypatch.setattr("foilkit.scorers.job.adapter_class", refuse)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    (tmp_path / "tiny" / "clip-cb7e432edd3a").mkdir()
    (tmp_path / "tiny" / "clip-cb7e432edd3a" / "config.json").write_text("{}")
    argv = ["score", "--model", "tiny/clip", "--dataset", str(benchmark), "--config", "order"]
    argv += ["--out", "run"]
    assert main(argv) == 2
    assert _one_line(capsys) == (
        "foilkit score: error: --model 'tiny/clip': ./tiny is a folder of local models, but it "
        "has no 'clip' (it holds clip-cb7e432edd3a): pass one of them as ./tiny/NAME; to "
        "download the Hub model 'tiny/clip' instead, run from another folder"
    )


# --- a failed start leaves nothing that blocks its rerun ---------------------------------------


def test_a_start_that_scored_no_row_does_not_block_its_rerun(
    benchmark, tiny_clip, tmp_path, monkeypatch, capsys
):
    import foilkit.scorers.runner as runner

    real = runner.Engine

    def broken(*args, **kwargs):
        raise RuntimeError("the engine failed before its first batch")

    monkeypatch.setattr(runner, "Engine", broken)
    out = tmp_path / "run"
    argv = _evaluate(benchmark, tiny_clip, out)
    assert main(argv) == 1
    record = json.loads((out / "scoring" / "order" / "run.json").read_text())
    assert "finished_at" not in record  # the start record the failed run left
    capsys.readouterr()
    monkeypatch.setattr(runner, "Engine", real)
    assert main(argv) == 0, capsys.readouterr().err  # the same command, no --resume
    assert (out / "results.json").is_file()
    capsys.readouterr()
    assert main(argv) == 2  # a finished run still needs --resume or --overwrite
    assert "--overwrite" in _one_line(capsys)


def test_a_start_that_scored_rows_still_needs_resume(
    benchmark, tiny_clip, tmp_path, monkeypatch, capsys
):
    import foilkit.scorers.runner as runner
    from foilkit.scorers.store import ResultStore

    real = runner.Engine

    class StopsAfterOneBatch(real):
        def run(self, batches):
            super().run(list(batches)[:1])
            raise RuntimeError("killed after its first batch")

    monkeypatch.setattr(runner, "Engine", StopsAfterOneBatch)
    out = tmp_path / "scores"
    argv = ["score", "--model", tiny_clip, "--dataset", str(benchmark), "--config", "order"]
    argv += ["--out", str(out), "--num-workers", "0", "--no-cache", "--no-progress"]
    argv += ["--batch-size", "1"]
    assert main(argv) == 1
    assert ResultStore(out).load()  # rows were scored: they must not be mixed or lost
    capsys.readouterr()
    monkeypatch.setattr(runner, "Engine", real)
    assert main(argv) == 2
    assert "--resume" in _one_line(capsys)
    assert main([*argv, "--resume"]) == 0


# --- the numbers on the terminal ---------------------------------------------------------------


def test_evaluate_and_compare_end_with_the_results_table(benchmark, tiny_clip, tmp_path, capsys):
    from foilkit.report import headline

    forward, backward = tmp_path / "forward", tmp_path / "reversed"
    assert main(_evaluate(benchmark, tiny_clip, forward)) == 0
    out = capsys.readouterr().out
    report = (forward / "report.md").read_text()
    table, _, end = out.rpartition("\n\nreport: ")
    assert end.strip() == str(forward / "report.md")
    assert table.startswith("| ") and table in report  # report.md's table, as it is there
    assert "\n| order | " in table and len(table.splitlines()) == 3  # header, rule, the config
    assert main(_evaluate(benchmark, tiny_clip, backward, "--control", "reversed")) == 0
    capsys.readouterr()
    compared = tmp_path / "compare"
    argv = ["compare", str(forward), str(backward), "--out", str(compared), "--n-resamples", "20"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    report = (compared / "report.md").read_text()
    assert out.startswith(headline(compared / "report.md")) and "| run | order" in out
    tests = out[out.index("## Paired tests") : out.index("\n\nreport: ")]
    assert "mcnemar" in tests and tests in report
    assert out.rstrip().endswith(f"report: {compared / 'report.md'}")


# --- no FFmpeg: one line with the fix, before the model loads ----------------------------------

#: The shape of torchcodec's own error without FFmpeg (0.17: a traceback per version it tried).
NO_FFMPEG = (
    "Could not load libtorchcodec. Likely causes:\n"
    "  1. FFmpeg is not properly installed in your environment.\n"
    + "".join(
        f"FFmpeg version {version}:\nTraceback (most recent call last):\n  File x, line 1\n"
        f"OSError: libavutil.so.{56 + version - 4}: cannot open shared object file: No such file "
        "or directory\n"
        for version in (9, 8, 7, 6, 5, 4)
    )
)


@pytest.fixture
def no_ffmpeg(monkeypatch):
    import foilkit.scorers.video.decoding as decoding

    def fail() -> None:
        raise RuntimeError(NO_FFMPEG)

    monkeypatch.setattr(decoding, "_load_torchcodec", fail)


def test_without_ffmpeg_evaluate_says_decoder_pyav_in_one_line(
    benchmark, tiny_clip, tmp_path, no_ffmpeg, monkeypatch, capfd
):
    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded before the decoder was checked")

    monkeypatch.setattr("foilkit.scorers.job.load_adapter", refuse)
    assert main(_evaluate(benchmark, tiny_clip, tmp_path / "run")) == 2
    out, err = capfd.readouterr()
    (line,) = err.strip().splitlines()
    assert line.startswith(
        "foilkit evaluate: error: torchcodec cannot load FFmpeg's shared libraries "
        "(libavutil.so.61 not found): decode with PyAV, which brings its own FFmpeg: "
        "--decoder pyav (decoder='pyav' in Python), or install FFmpeg's shared libraries"
    )
    assert "apt-get install" in line and out == ""


def test_without_ffmpeg_decoder_pyav_scores_every_row(
    benchmark, tiny_clip, tmp_path, no_ffmpeg, capsys
):
    out = tmp_path / "run"
    assert main(_evaluate(benchmark, tiny_clip, out, "--decoder", "pyav")) == 0
    results = json.loads((out / "results.json").read_text())
    coverage = results["configs"]["order"]["coverage"]
    assert coverage["failed"] == 0 and coverage["scored"] == results["configs"]["order"]["num_rows"]


# --- library noise: foilkit's messages only ----------------------------------------------------


def _python(code: str) -> subprocess.CompletedProcess:
    """``code`` run by this Python with this process's import path, in a fresh process (the
    libraries print some notes once per process)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )


def test_a_pe_video_model_loads_without_transformers_notes_about_its_own_code():
    from foilkit.synthetic.models import TINY_MODELS, tiny_model_path

    if TINY_MODELS["pe-video"].missing():
        pytest.skip(f"the pe-video model needs {', '.join(TINY_MODELS['pe-video'].missing())}")
    path = tiny_model_path("pe-video")
    done = _python(
        "from foilkit.scorers.adapters import load_adapter\n"
        f"adapter = load_adapter({str(path)!r}, device='cpu')\n"
        "print('loaded', adapter.name)"
    )
    shown = done.stdout + done.stderr
    assert "loaded pe-video" in done.stdout
    assert "but not documented" not in shown and "[ERROR]" not in shown
    assert "video_processor_class" not in shown


def test_models_prints_the_table_and_no_library_warning():
    done = _python("from foilkit.cli import main; raise SystemExit(main(['models']))")
    assert done.stderr == ""
    lines = done.stdout.splitlines()
    assert lines[0].split()[:2] == ["model_type", "adapter"] and "families:" in lines[-1]
    assert not any(line.startswith("[transformers]") for line in lines)


def test_noise_is_dropped_only_inside_the_block_and_only_the_noise(capfd):
    import io
    import logging

    from transformers.utils import logging as transformers_logging

    from foilkit.progress import library_noise_dropped

    logged = io.StringIO()  # a handler of transformers' own, as its default one writes stderr
    handler = logging.StreamHandler(logged)
    transformers_logging._get_library_root_logger().addHandler(handler)
    logger = transformers_logging.get_logger("transformers.models.pe_video")
    noise = "`P` defines `video_processor_class = 'V'`, which is deprecated. Register it."
    with library_noise_dropped():
        print("[ERROR] `padding_mask_videos` is part of M.f's signature, but not documented. Add")
        print("foilkit: a message of its own")
        logger.warning(noise)
        logger.warning("Some weights of M were not initialized from the model checkpoint")
    print("[ERROR] `x` is part of M.f's signature, but not documented. After the block.")
    logger.warning(noise)
    out, err = capfd.readouterr()
    assert out == (
        "foilkit: a message of its own\n"
        "[ERROR] `x` is part of M.f's signature, but not documented. After the block.\n"
    )
    transformers_logging._get_library_root_logger().removeHandler(handler)
    shown = logged.getvalue()
    assert "Some weights of M were not initialized" in shown and shown.count("deprecated") == 1


def test_doctor_without_ffmpeg_gives_the_cause_and_both_fixes_in_a_few_lines(no_ffmpeg, capsys):
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    problems = out[out.index("NOT READY:") :].splitlines()
    assert len(problems) == 3 and "Traceback" not in out
    assert problems[1] == (
        "  - torchcodec cannot decode video: torchcodec cannot load FFmpeg's shared libraries "
        "(libavutil.so.61 not found)"
    )
    assert "apt-get install" in problems[2] and "--decoder pyav" in problems[2]
