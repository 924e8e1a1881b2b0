"""Defect 7: one meaning per flag name across commands, defaults in the help, the video layout
in ``foilkit build --help``."""

from __future__ import annotations

import argparse

import pytest

from foilkit.cli import COMMANDS, command_parser, main

#: Flags more than one command takes: each must mean the same everywhere.
SHARED = ("--cache-dir", "--seed", "--video-root", "--n-resamples", "--out", "--dataset-id")


def _visible(name: str) -> dict[str, argparse.Action]:
    _, parser = command_parser(name)
    return {
        option: action
        for action in parser._actions
        if action.help != argparse.SUPPRESS
        for option in action.option_strings
    }


@pytest.fixture(scope="module")
def flags() -> dict[str, dict[str, argparse.Action]]:
    return {name: _visible(name) for name in COMMANDS}


@pytest.mark.parametrize("flag", ["--cache-dir", "--seed", "--video-root"])
def test_one_meaning_per_flag_name(flags, flag: str):
    meanings = {name: actions[flag].help for name, actions in flags.items() if flag in actions}
    assert len(meanings) >= 2, meanings  # score and evaluate share the scoring flags
    assert len(set(meanings.values())) == 1, meanings


def test_evaluate_names_the_video_root_once(flags):
    assert "--video-root" in flags["evaluate"] and "--videos" not in flags["evaluate"]
    _, parser = command_parser("evaluate")
    args = parser.parse_args(
        ["--benchmark", "vitatecs", "--model", "m", "--out", "o", "--videos", "v"]
    )
    assert args.video_root == ["v"]  # the old spelling still works, unlisted (repeatable)


@pytest.mark.parametrize(
    "name", ["score", "evaluate", "compare", "demo", "leaderboard", "build", "power"]
)
def test_help_shows_defaults_and_every_flag_has_help(flags, name: str):
    _, parser = command_parser(name)
    text = parser.format_help()
    for option, action in flags[name].items():
        assert action.help, f"foilkit {name} {option} has no help"
        switch = action.nargs == 0  # --no-cache: its default is its absence
        if (
            action.default not in (None, False, argparse.SUPPRESS)
            and not switch
            and option.startswith("--")
        ):
            assert "default" in parser._get_formatter()._expand_help(action), (name, option)
    assert text


def test_build_help_gives_each_benchmark_video_layout():
    _, parser = command_parser("build")
    text = " ".join(parser.format_help().split())
    for example in (
        "MSRVTT/video9770.mp4",
        "<source_dataset>/",
        "<source_id>.mp4",
        "video9770.mp4",
    ):
        assert example in text


def test_build_and_compare_take_their_renamed_flags():
    _, build = command_parser("build")
    args = build.parse_args(["vitatecs", "--out", "o", "--datasets-cache", "c", "--foil-seed", "3"])
    assert (args.datasets_cache, args.foil_seed) == ("c", 3)
    _, compare = command_parser("compare")
    assert compare.parse_args(["a", "b", "--out", "o", "--bootstrap-seed", "4"]).bootstrap_seed == 4


def test_bare_foilkit_is_a_usage_error(capsys):
    assert main([]) == 2
    assert "evaluate" in capsys.readouterr().err  # the commands are listed
