"""``foilkit finetune`` in a log and with trackers (issue 29): a line per epoch and periodic
progress lines where stderr is no terminal; the loss per step to TensorBoard (offline)."""

from __future__ import annotations

import json

import pytest

from foilkit.cli import main


def _argv(finetune_argv, out, *extra: str) -> list[str]:
    argv = [arg for arg in finetune_argv("direction", "--out", str(out)) if arg != "--no-progress"]
    return [*argv, "--epochs", "1", "--num-workers", "0", *extra]


def test_a_logged_finetune_prints_epochs_and_periodic_progress_and_a_json_summary(
    finetune_argv, tmp_path, capfd
):
    out = tmp_path / "run"
    assert main(_argv(finetune_argv, out, "--log-interval", "0", "--json")) == 0
    stdout, err = capfd.readouterr()
    summary = json.loads(stdout)  # --json: the summary alone on stdout
    assert summary["command"] == "finetune" and summary["model_dir"] == str(out / "model")
    assert summary["steps"] >= 1 and summary["last_loss"] > 0
    lines = err.splitlines()
    assert any(line.startswith("finetune: epoch 1/1: ") for line in lines), err
    assert any(line.startswith("epoch 1: 1/") and "batches/s" in line for line in lines), err
    assert "\r" not in err and "it/s" not in err


def test_finetune_logs_each_steps_loss_to_tensorboard(finetune_argv, tmp_path):
    pytest.importorskip("tensorboard", reason="the tensorboard package is not installed")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = tmp_path / "run"
    argv = _argv(finetune_argv, out, "--no-progress", "--log-with", "tensorboard")
    assert main(argv) == 0
    losses = [entry["loss"] for entry in json.loads((out / "training.json").read_text())["losses"]]
    logged = {}
    for path in sorted((out / "tracking").rglob("events.out.tfevents.*")):
        accumulator = EventAccumulator(str(path))
        accumulator.Reload()
        if "loss" in accumulator.Tags()["scalars"]:
            logged = {event.step: event.value for event in accumulator.Scalars("loss")}
    assert sorted(logged) == list(range(1, len(losses) + 1))
    assert [logged[step] for step in sorted(logged)] == pytest.approx(losses, rel=1e-6)
