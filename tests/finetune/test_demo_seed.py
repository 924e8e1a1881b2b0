"""``foilkit demo --training-seed N``: both temporal CLIPs are fine-tuned with seed N and the
demo's other settings (``benchmarks/demo_figures.py`` reruns the demo this way at each seed)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from foilkit.cli import main
from foilkit.finetune import demo, synthetic, train


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_each_fine_tuning_run_gets_the_seed_and_the_demo_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int
):
    calls = []

    def fake_finetune(base: str, train_dir: str, *, out_dir: Path, **settings):
        calls.append(settings)
        return SimpleNamespace(model_dir=out_dir / "model")

    monkeypatch.setattr(train, "finetune", fake_finetune)
    monkeypatch.setattr(synthetic, "write_train_split", lambda out: out)
    monkeypatch.setattr(synthetic, "write_base_model", lambda out: out)
    evaluated = []
    runs = demo.finetune_demo_runs(
        tmp_path,
        lambda model, **names: evaluated.append(names["run_name"]) or Path(names["run_name"]),
        seed=seed,
    )
    assert [settings["seed"] for settings in calls] == [seed, seed]
    unseeded = {key: value for key, value in demo.DEMO_FINETUNE.items() if key != "seed"}
    for settings in calls:
        assert {key: settings[key] for key in unseeded} == unseeded
    assert [settings["hard_negatives"] for settings in calls] == ["reversed", "none"]
    assert [str(run) for run in runs] == evaluated


@pytest.mark.parametrize(("argv", "seed"), [([], 0), (["--training-seed", "2"], 2)])
def test_the_demo_command_passes_its_seed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str], seed: int
):
    import foilkit.cli.demo as command

    seen = {}

    def fake_run_demo(out_dir, **options):
        seen.update(options)
        report = tmp_path / "report.md"
        report.write_text("", encoding="utf-8")
        return report

    monkeypatch.setattr(command, "run_demo", fake_run_demo)
    monkeypatch.setattr(command, "check_extras", lambda name: None)
    assert main(["demo", "--out", str(tmp_path / "demo"), *argv]) == 0
    assert seen["seed"] == seed
