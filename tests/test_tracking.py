"""Experiment trackers through accelerate's ``log_with`` (issue 29): names are checked before any
work, and ``foilkit evaluate --log-with tensorboard`` writes the run's numbers offline."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from launch import evaluate_argv

from foilkit.cli import main
from foilkit.run import RunResults
from foilkit.tracking import metric_scalars


def _evaluate(benchmark: Path, out: Path, *extra: str) -> list[str]:
    from foilkit.synthetic.models import tiny_model_path

    return evaluate_argv(benchmark, tiny_model_path("clip"), "--out", str(out), *extra)


@pytest.fixture(scope="module")
def benchmark(tmp_path_factory) -> Path:
    from foilkit.demo import write_demo_benchmark

    return write_demo_benchmark(tmp_path_factory.mktemp("tracking") / "benchmark")


def test_an_unknown_tracker_is_refused_before_any_work(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_evaluate(tmp_path / "nowhere", out, "--log-with", "tensorbord")) == 2
    err = capsys.readouterr().err
    assert "--log-with tensorbord: not a tracker accelerate knows" in err
    assert "tensorboard" in err and "wandb" in err and "trackio" in err
    assert not out.exists()


@pytest.mark.parametrize("name", ["wandb", "trackio"])
def test_a_tracker_whose_package_is_missing_names_it(name, tmp_path, capsys):
    if importlib.util.find_spec(name) is not None:
        pytest.skip(f"{name} is installed: nothing is missing")
    assert main(_evaluate(tmp_path / "nowhere", tmp_path / "run", "--log-with", name)) == 2
    assert f"--log-with {name}: its package is not installed; pip install {name}" in (
        capsys.readouterr().err
    )


def test_evaluate_logs_its_metrics_to_tensorboard(benchmark, tmp_path):
    pytest.importorskip("tensorboard", reason="the tensorboard package is not installed")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = tmp_path / "run"
    assert main(_evaluate(benchmark, out, "--log-with", "tensorboard")) == 0
    events = sorted((out / "tracking").rglob("events.out.tfevents.*"))
    assert events, f"no TensorBoard events under {out / 'tracking'}"
    logged = {}
    for path in events:
        accumulator = EventAccumulator(str(path))
        accumulator.Reload()
        for tag in accumulator.Tags()["scalars"]:
            logged[tag] = accumulator.Scalars(tag)[-1].value
    results = RunResults.load(out)
    expected = metric_scalars(results)
    accuracy = results.configs["order"].metrics["pairwise_foil_accuracy"].overall
    assert expected["order/pairwise_foil_accuracy/accuracy"] == accuracy["accuracy"]
    assert expected["order/coverage"] == 1.0
    for tag, value in expected.items():
        assert logged[tag] == pytest.approx(value, abs=1e-6), tag
