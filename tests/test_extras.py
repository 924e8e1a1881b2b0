"""What each command needs beyond ``pip install foilkit`` (issue 40): the extras in
pyproject.toml, ``foilkit doctor`` checking them command by command, and the demo naming its
extra in one line instead of failing halfway."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from foilkit.cli import main
from foilkit.errors import COMMAND_EXTRAS, EXTRA_IMPORTS, EXTRA_MODULES

REPO = Path(__file__).resolve().parents[1]


def _extras() -> dict[str, list[str]]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def test_every_extra_a_command_needs_is_declared_with_its_modules():
    from packaging.requirements import Requirement

    extras = _extras()
    assert set(EXTRA_IMPORTS) == set(extras) - {"test", "docs"}  # the developers' extras
    for extra, modules in EXTRA_IMPORTS.items():
        assert len(extras[extra]) == len(modules), extra  # one import name per distribution
    names = {extra: {Requirement(r).name for r in extras[extra]} for extra in extras}
    assert names["demo"] == {"clip-anytorch"} and "clip-anytorch" in names["test"]
    assert names["served"] == {"openai"} and "openai" in names["generation"]
    for command, needs in COMMAND_EXTRAS.items():
        assert {extra for extra, _ in needs} <= set(EXTRA_IMPORTS), command
    assert EXTRA_MODULES["clip"] == "demo" and EXTRA_MODULES["spacy"] == "generation"


@pytest.fixture
def without(monkeypatch):
    """``without(*modules)``: those import names look uninstalled to foilkit's checks."""
    import foilkit.errors as errors

    real = errors.installed

    def hide(*modules: str) -> None:
        monkeypatch.setattr(errors, "installed", lambda name: name not in modules and real(name))

    return hide


def test_doctor_says_per_command_which_extra_is_missing(without, capsys):
    without("clip", "openai")
    assert main(["doctor", "--skip-decode"]) == 0  # the core commands run
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert lines["demo"].split(None, 1)[1] == "needs pip install 'foilkit[demo]' (clip missing)"
    assert "needs pip install 'foilkit[generation]' (openai missing)" in lines["generate"]
    for command in ("score", "evaluate"):
        assert lines[command].split(None, 1)[1] == (
            "with --backend openai or --judge-model: pip install 'foilkit[served]' (openai missing)"
        )
    assert out.rstrip().endswith(
        "ready, but not for: demo (pip install 'foilkit[demo]'), generate (pip install "
        "'foilkit[generation]')."
    )
    assert "\nready.\n" not in out


def test_doctor_for_a_command_fails_without_its_extra(without, capsys):
    without("clip")
    assert main(["doctor", "--skip-decode", "--command", "evaluate"]) == 0
    capsys.readouterr()
    assert main(["doctor", "--skip-decode", "--command", "demo"]) == 1
    out = capsys.readouterr().out
    assert "NOT READY:\n  - foilkit demo needs the demo extra: pip install 'foilkit[demo]'" in out


def test_doctor_is_ready_for_every_command_on_this_install(capsys):
    missing = [m for modules in EXTRA_IMPORTS.values() for m in modules if not _installed(m)]
    if missing:
        pytest.skip(f"this install lacks {', '.join(missing)}")
    assert main(["doctor", "--skip-decode", *(f"--command={c}" for c in COMMAND_EXTRAS)]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("\nready.")
    for command in COMMAND_EXTRAS:
        assert f"  {command:<22} ready\n" in out


def _installed(module: str) -> bool:
    from foilkit.errors import installed

    return installed(module)


def test_the_demo_without_its_extra_names_it_in_one_line_and_writes_nothing(
    without, tmp_path, capsys
):
    without("clip")
    out = tmp_path / "demo"
    assert main(["demo", "--out", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "foilkit demo needs the demo extra: pip install 'foilkit[demo]'"
    assert not out.exists()


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1"], "--backend openai"),
        (["--mode", "generate", "--judge-model", "gpt-4o-mini"], "--judge-model"),
    ],
)
def test_a_served_model_or_judge_without_openai_names_the_served_extra(
    flags, named, without, tmp_path, capsys
):
    from foilkit.demo import write_demo_benchmark

    benchmark = write_demo_benchmark(tmp_path / "benchmark")
    capsys.readouterr()  # the writing's own output
    without("openai")
    argv = ["score", "--model", "served-vlm", "--dataset", str(benchmark), "--config", "order"]
    assert main([*argv, "--out", str(tmp_path / "out"), *flags]) == 2
    assert capsys.readouterr().err.strip() == (
        f"{named} needs the served extra: pip install 'foilkit[served]'"
    )
    assert not (tmp_path / "out").exists()
