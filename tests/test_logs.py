"""Logs and traceability of a run (issue 29): what a piped run (a SLURM log) prints, the
``--json`` summary, and what ``results.json`` records about how the run was made."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from launch import evaluate_argv

from foilkit.cli import main
from foilkit.progress import ProgressLines, format_seconds
from foilkit.run import UNITS, RunResults

#: What the libraries' bars and tqdm write: none of it may reach a log.
BAR_TEXT = ("Generating test split", "Creating parquet", "Loading weights", "it/s", "%|", "\x1b[")


@pytest.fixture(scope="module")
def benchmark(tmp_path_factory) -> Path:
    from foilkit.demo import write_demo_benchmark

    return write_demo_benchmark(tmp_path_factory.mktemp("logs") / "benchmark")


@pytest.fixture(scope="module")
def tiny_clip() -> str:
    from foilkit.synthetic.models import tiny_model_path

    return str(tiny_model_path("clip"))


def _evaluate_argv(benchmark: Path, model: str, out: Path, *extra: str) -> list[str]:
    return evaluate_argv(
        benchmark,
        model,
        *("--out", str(out), "--batch-size", "4", *extra),
        config="order,direction",
        progress=True,
    )


@pytest.fixture(scope="module")
def piped_run(benchmark, tiny_clip, tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    """``foilkit evaluate --json`` in a subprocess whose stdout and stderr are pipes (no terminal),
    as under SLURM; ``--log-interval 0``: a progress line after every batch."""
    out = tmp_path_factory.mktemp("piped") / "run"
    argv = _evaluate_argv(benchmark, tiny_clip, out, "--log-interval", "0", "--json")
    done = subprocess.run(
        [sys.executable, "-m", "foilkit", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done, out


def test_a_piped_run_logs_each_config_and_periodic_progress_without_bars(piped_run, tiny_clip):
    done, _ = piped_run
    err = done.stderr
    lines = err.splitlines()
    assert f"evaluate synthetic: config order (1/2): 12 rows, model {tiny_clip}" in lines
    assert f"evaluate synthetic: config direction (2/2): 16 rows, model {tiny_clip}" in lines
    periodic = [line for line in lines if line.startswith("score: ")]
    assert len(periodic) >= 2, err
    assert re.fullmatch(
        r"score: 4/12 rows \(33%\), [\d.e+]+ rows/s, elapsed \d+:\d\d:\d\d, ETA \d+:\d\d:\d\d",
        periodic[0],
    ), periodic[0]
    assert "\r" not in err and "\r" not in done.stdout
    for text in BAR_TEXT:
        assert text not in err, f"{text!r} leaked into the log:\n{err}"


def test_json_prints_one_summary_object_on_stdout(piped_run):
    done, out = piped_run
    summary = json.loads(done.stdout)  # stdout holds the summary and nothing else
    assert summary["status"] == 0 and summary["run_dir"] == str(out)
    assert set(summary["configs"]) == {"order", "direction"}
    order = summary["configs"]["order"]
    assert order["coverage"]["scored"] == 12
    accuracy = order["metrics"]["pairwise_foil_accuracy"]["accuracy"]
    assert 0 <= accuracy <= 1 and summary["units"] == UNITS
    assert summary["wall_seconds"] > 0


def test_results_record_the_command_line_commit_wall_time_and_units(piped_run, tiny_clip):
    _, out = piped_run
    raw = json.loads((out / "results.json").read_text())
    invocation = raw["invocation"]
    assert invocation["argv"][:2] == ["foilkit", "evaluate"]
    assert "--log-interval" in invocation["argv"] and tiny_clip in invocation["argv"]
    assert invocation["foilkit_version"]
    checkout = Path(__file__).resolve().parent.parent
    if (checkout / ".git").exists():  # run from a checkout: its commit
        head = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        assert invocation["git_commit"] == head and isinstance(invocation["git_dirty"], bool)
    assert invocation["wall_seconds"] > 0 and invocation["started_at"] <= invocation["finished_at"]
    assert raw["units"] == UNITS
    results = RunResults.load(out)
    assert results.invocation is not None and results.to_record() == raw  # round-trips


def test_run_records_hold_every_processor_setting_the_model_received(piped_run):
    _, out = piped_run
    record = RunResults.load(out).configs["order"].score
    processor = record.processor
    image = processor["image_processor"]
    assert image["class"] == "CLIPImageProcessor"
    assert image["size"] == {"shortest_edge": 32} and image["crop_size"]["height"] == 32
    assert image["image_mean"] and image["do_normalize"] is True
    assert processor["tokenizer"]["model_max_length"] == 77


def test_to_pandas_is_a_long_table_of_every_number(piped_run):
    _, out = piped_run
    results = RunResults.load(out)
    table = results.to_pandas()
    assert list(table.columns) == [
        "config",
        "group",
        "metric",
        "measure",
        "value",
        "ci_low",
        "ci_high",
        "n",
    ]
    overall = results.configs["order"].metrics["pairwise_foil_accuracy"].overall
    row = table[
        (table.config == "order")
        & table.group.isna()
        & (table.metric == "pairwise_foil_accuracy")
        & (table.measure == "accuracy")
    ]
    assert len(row) == 1
    assert row.value.item() == overall["accuracy"]
    assert [row.ci_low.item(), row.ci_high.item()] == overall["accuracy_ci"]
    assert row.n.item() == overall["n"] == 12
    assert set(table.config) == {"order", "direction"}
    assert not table.measure.str.startswith("n").any()  # counts are the n column, not rows
    assert table.value.between(0, 1).all()


def test_verbosity_warning_prints_no_progress(benchmark, tiny_clip, tmp_path, capfd):
    argv = _evaluate_argv(benchmark, tiny_clip, tmp_path / "run", "--verbosity", "warning")
    assert main([*argv[:4], "order", *argv[5:]]) == 0
    out, err = capfd.readouterr()
    # the results table, then the report's path (issue 40)
    assert err == "" and out.startswith("| ") and "\n\nreport: " in out


def test_log_interval_must_be_seconds(capsys):
    with pytest.raises(SystemExit):
        main(["score", "--model", "m", "--dataset", "d", "--out", "o", "--log-interval", "-1"])
    assert "'-1' is not a number of seconds >= 0" in capsys.readouterr().err


def test_progress_lines_come_at_most_once_per_interval(capsys):
    clock = iter([0.0, 0.0, 5.0, 12.0, 20.0, 31.0]).__next__  # the first: the start
    lines = ProgressLines("score", 100, "rows", interval=10.0, clock=clock)
    lines.update(10)  # t=0: too soon
    lines.update(10)  # t=5: too soon
    lines.update(20)  # t=12: a line
    lines.update(10)  # t=20: 8 s after the last
    lines.update(10)  # t=31
    assert capsys.readouterr().err.splitlines() == [
        "score: 40/100 rows (40%), 3.33 rows/s, elapsed 0:00:12, ETA 0:00:18",
        "score: 60/100 rows (60%), 1.94 rows/s, elapsed 0:00:31, ETA 0:00:21",
    ]
    assert format_seconds(3725) == "1:02:05"


def test_score_json_summary_on_stdout(benchmark, tiny_clip, tmp_path, capfd):
    out = tmp_path / "scored"
    argv = ["score", "--model", tiny_clip, "--dataset", str(benchmark), "--config", "order"]
    argv += ["--out", str(out), "--num-workers", "0", "--no-cache", "--json"]
    assert main(argv) == 0
    stdout, err = capfd.readouterr()
    summary = json.loads(stdout)
    assert summary["command"] == "score" and summary["status"] == 0
    assert summary["out"] == str(out) and summary["config"] == "order"
    assert summary["coverage"]["scored"] == 12 and summary["throughput"]["rows"] == 12
    assert "scoring order: 12 rows of 12 videos" in err.splitlines()  # the config named
    record = json.loads((out / "run.json").read_text())
    assert record["foilkit"]["version"] and "git_commit" in record["foilkit"]


def test_quiet_libraries_silences_bars_for_the_block_and_restores_after(monkeypatch):
    import datasets

    from foilkit.progress import quiet_libraries

    monkeypatch.delenv("TQDM_DISABLE", raising=False)
    datasets.utils.logging.enable_progress_bar()
    with quiet_libraries("info"):
        assert os.environ["TQDM_DISABLE"] == "1"  # the libraries imported later, children too
        assert not datasets.utils.logging.is_progress_bar_enabled()
    assert "TQDM_DISABLE" not in os.environ
    assert datasets.utils.logging.is_progress_bar_enabled()
    with quiet_libraries("debug"):  # debug leaves the libraries' bars on
        assert "TQDM_DISABLE" not in os.environ
        assert datasets.utils.logging.is_progress_bar_enabled()


def test_an_uploaded_results_file_keeps_no_local_path_of_the_command_line(piped_run, tmp_path):
    import shutil

    from foilkit.hub_results import prepare_upload

    _, out = piped_run
    run = tmp_path / "run"
    shutil.copytree(out, run)
    raw = json.loads((run / "results.json").read_text())
    raw["invocation"]["argv"].append("--cache-dir=/home/someone/private/cache")
    (run / "results.json").write_text(json.dumps(raw))
    uploaded = prepare_upload(run, "me/results").files["results.json"].decode()
    argv = json.loads(uploaded)["invocation"]["argv"]
    assert "--cache-dir=cache" in argv and "/home/someone" not in uploaded
    assert str(out.parent) not in uploaded and str(tmp_path) not in uploaded
    assert argv[:2] == ["foilkit", "evaluate"]
