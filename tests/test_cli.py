"""The ``foilkit`` console script: help, version, doctor, lazy imports."""

from __future__ import annotations

import pytest
from launch import assert_imports_none

from foilkit import __version__
from foilkit.cli import COMMANDS, main


def test_version(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"foilkit {__version__}"


def test_help_lists_every_command(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out and COMMANDS.summary(name) in out


def test_unknown_command_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["no-such-command"])
    assert exit_info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_every_registered_command_builds_its_parser() -> None:
    for name in COMMANDS:
        with pytest.raises(SystemExit) as exit_info:
            main([name, "--help"])
        assert exit_info.value.code == 0, name


@pytest.mark.parametrize(
    ("command", "argv", "dest", "value"),
    [
        ("finetune", ["--num-workers", "3"], "num_workers", 3),
        ("finetune", ["--workers", "3"], "num_workers", 3),  # the older name still works
        ("finetune", ["--frames", "6"], "num_frames", 6),
        ("score", ["--frames", "6"], "num_frames", 6),
    ],
)
def test_renamed_flags_keep_their_old_names(command, argv, dest, value) -> None:
    from foilkit.cli import command_parser

    required = {
        "finetune": ["--model", "m", "--dataset", "d", "--out", "o"],
        "score": ["--model", "m", "--dataset", "d", "--out", "o"],
    }[command]
    _, parser = command_parser(command)
    assert getattr(parser.parse_args([*required, *argv]), dest) == value


def test_help_imports_no_heavy_library() -> None:
    code = "from foilkit.cli import main\ntry: main(['--help'])\nexcept SystemExit: pass"
    assert_imports_none(code, ("torch", "transformers", "evaluate", "datasets"))


def test_doctor_passes_on_this_install(capsys) -> None:
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "video decoding (torchcodec + FFmpeg): ok" in out and "ready." in out
    assert "HF_HUB_OFFLINE=1" in out


def test_doctor_names_a_missing_package(monkeypatch, capsys) -> None:
    from importlib import metadata

    real = metadata.version

    def version(dist: str) -> str:
        if dist == "torchcodec":
            raise metadata.PackageNotFoundError(dist)
        return real(dist)

    monkeypatch.setattr(metadata, "version", version)
    assert main(["doctor", "--skip-decode"]) == 1
    assert "package 'torchcodec' is not installed" in capsys.readouterr().out


def test_doctor_reports_a_broken_decoder(monkeypatch, capsys) -> None:
    from foilkit.cli import doctor

    monkeypatch.setattr(
        doctor, "check_decoding", lambda: "RuntimeError: libavcodec.so.59 not found"
    )
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "libavcodec.so.59 not found" in out and "apt-get install" in out
