"""Settings declared once: every :class:`ScoreOptions` field has its flag in ``foilkit score`` and
``foilkit evaluate`` (made from the field's metadata), and ``--config-file`` gives those flags
from a YAML file, a flag on the command line overriding it, a key no flag has refused by name."""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from foilkit.cli import COMMANDS, command_parser
from foilkit.cli.options import fill_names
from foilkit.cli.score import score_options
from foilkit.scorers.options import (
    PARTS,
    SECTION_OF,
    BackendOptions,
    ScoreOptions,
    option_flag,
    server_backend,
)

#: Flags of ``score``/``evaluate`` that are the command's own, not a scoring option's.
COMMAND_FLAGS = {
    "score": {"model", "dataset", "configs", "matrix", "config_file", "min_coverage", "verbosity"},
    "evaluate": {"model", "dataset", "configs", "matrix", "config_file", "min_coverage"}
    | {"verbosity", "tasks", "annotations", "on_missing", "n_resamples", "bootstrap_seed"}
    | {"limit", "limit_seed", "label", "log_with", "tracking_dir", "overwrite"},
}
#: ``--out``'s destination is ``out`` (the run folder, which each command describes).
DEST = {"out_dir": "out"}


def actions(command: str) -> dict[str, argparse.Action]:
    """The command's flags by option string."""
    _, parser = command_parser(command)
    return {flag: a for a in parser._actions for flag in a.option_strings}


@pytest.mark.parametrize("command", ["score", "evaluate"])
def test_every_option_has_its_flag_and_every_flag_an_option_or_the_command(command) -> None:
    flags = actions(command)
    for part in PARTS:
        for option in fields(part):
            action = flags[option_flag(option)]
            assert action.dest == DEST.get(option.name, option.name), option.name
            if option.metadata["help"] is not None:  # made from the field: its help, its default
                assert action.help.startswith(option.metadata["help"].split("{")[0])
                if not isinstance(option.default, bool):
                    assert action.default == option.default, option.name
    dests = {a.dest for a in flags.values()} - {"help", "json", "log_interval"}
    own = dests - {DEST.get(name, name) for name in SECTION_OF}
    assert own <= COMMAND_FLAGS[command] | {"out", "resume", "split"}, own - COMMAND_FLAGS[command]


@pytest.mark.parametrize("command", ["score", "evaluate"])
def test_the_flags_left_out_are_the_options_defaults(command) -> None:
    _, parser = command_parser(command)
    args = parser.parse_args(["--model", "m", "--dataset", "d", "--out", "o"])
    assert score_options(args) == ScoreOptions(out_dir="o")


def test_parser_help_lists_the_registered_parsers(monkeypatch) -> None:
    from foilkit.scorers.parsers import PARSERS, parser_names

    monkeypatch.setitem(PARSERS, "my_letters", PARSERS["yes_no"])
    flags = actions("score")
    assert "{names}" in flags["--parser"].help  # read when the help is shown, not before
    fill_names(flags.values())
    help = flags["--parser"].help
    assert all(name in help for name in parser_names()) and "my_letters" in help
    assert "vitatecs" in help and "tempcompass_captioning" in help  # the benchmarks' own


def test_the_served_model_takes_every_backend_setting_by_name() -> None:
    """No server setting is copied by hand: each backend field of ServerBackend's name reaches
    it, the others (where it runs, the deadline and the reply bound) in its units."""
    from foilkit.scorers.served import ServerBackend

    options = ScoreOptions(
        backend="openai",
        base_url="http://h:1/v1",
        frames_as="video",
        image_format="jpeg",
        frame_times="metadata",
        sampler_params=False,
        max_concurrency=3,
        max_retries=1,
        request_timeout=7.0,
        max_reply_mb=1.0,
        price_per_1k_prompt_tokens=0.5,
        use_cache=False,
    )
    served = server_backend(options)
    named = [
        f.name for f in fields(BackendOptions) if f.name in {f.name for f in fields(ServerBackend)}
    ]
    assert len(named) == 10
    assert all(getattr(served, name) == getattr(options, name) for name in named)
    assert (served.timeout_s, served.max_reply_bytes, served.cache_dir) == (7.0, 2**20, None)


def test_sections_round_trip() -> None:
    options = ScoreOptions(num_frames=4, mode="choice", video_root=["v"], judge_model="j")
    sections = options.sections()
    assert sections["frames"]["num_frames"] == 4 and sections["judge"]["judge_model"] == "j"
    assert ScoreOptions.from_sections(sections) == options
    with pytest.raises(ValueError, match="frames.mode; mode belongs in scorer"):
        ScoreOptions.from_sections({"frames": {"mode": "choice"}})


def write(path: Path, data: object) -> str:
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_flags_on_the_command_line_override_the_file(tmp_path: Path) -> None:
    file = write(
        tmp_path / "run.yaml",
        {
            "model": "from-file",
            "dataset": "d",
            "configs": ["a", "b"],
            "frames": {"num_frames": 8, "video_root": ["/videos"], "control": "reversed"},
            "scorer": {"mode": "choice"},
            "work": {"batch_size": 3, "use_cache": False},
        },
    )
    _, parser = command_parser("score")
    args = parser.parse_args(
        ["--config-file", file, "--out", "o", "--frames", "2", "--config", "c", "--batch-size", "5"]
    )
    assert args.model == "from-file"  # a required flag the file gives
    assert (args.num_frames, args.configs, args.batch_size) == (2, ["c"], 5)  # the command line
    assert (args.mode, args.control, args.video_root) == ("choice", "reversed", ["/videos"])
    options = score_options(args)
    assert (options.num_frames, options.use_cache, options.mode) == (2, False, "choice")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"frames": {"num_frame": 8}}, "unknown key 'frames.num_frame'"),
        ({"num_frames": 8}, "unknown key 'num_frames': write it under frames:"),
        ({"scorer": {"num_frames": 8}}, "unknown key 'scorer.num_frames': write it under frames:"),
        ({"frames": {"num_frames": 0}}, "frames.num_frames: '0' is not a whole number"),
        ({"scorer": {"no_such": 1}}, "unknown key 'scorer.no_such'"),
        ({"protocol": {"protocol": "papers"}}, "protocol.protocol: 'papers' is not one of"),
        ({"work": {"use_cache": "no"}}, "work.use_cache: 'no' is not true or false"),
    ],
)
def test_a_bad_key_or_value_in_the_file_is_one_line_naming_it(
    tmp_path: Path, capsys, data, message
) -> None:
    from foilkit.cli import main

    file = write(tmp_path / "run.yaml", {"model": "m", "dataset": "d", **data})
    with pytest.raises(SystemExit) as exit_info:
        main(["score", "--config-file", file, "--out", str(tmp_path / "o")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"{file}: " in err and message in err and err.count("\n") == 1, err


def test_a_missing_or_broken_file_is_named(tmp_path: Path, capsys) -> None:
    from foilkit.cli import main

    (tmp_path / "bad.yaml").write_text("model: [unclosed")
    for file in (tmp_path / "none.yaml", tmp_path / "bad.yaml"):
        with pytest.raises(SystemExit) as exit_info:
            main(["score", "--config-file", str(file), "--out", "o"])
        assert exit_info.value.code == 2
        assert str(file) in capsys.readouterr().err


@pytest.mark.parametrize("command", ["score", "evaluate"])
def test_the_flags_are_made_without_torch(command) -> None:
    """The options' module is light: ``foilkit score --help`` pays for no model library (the
    benchmarks that list their answer parsers in ``--parser``'s help import ``datasets``)."""
    from launch import assert_imports_none

    code = (
        f"from foilkit.cli import main\ntry: main([{command!r}, '--help'])\nexcept SystemExit: pass"
    )
    assert_imports_none(code, ("torch", "transformers"))


@pytest.mark.parametrize(
    "argv",
    [
        ["score", "--model", "m", "--out", "o", "--num-frames", "0"],
        ["evaluate", "--model", "m", "--out", "o", "--num-frames", "0"],
        ["build", "vitatecs"],  # --out missing
    ],
)
def test_the_parser_is_made_and_a_usage_error_answered_without_datasets(argv) -> None:
    """Only the help reads the benchmarks (the registries' names in the flags' help, build's
    video layouts), which import ``datasets``: making the parser and answering a usage error
    import no heavy library."""
    from launch import assert_imports_none

    code = (
        "from foilkit.cli import main\n"
        f"try: main({argv!r})\n"
        "except SystemExit as exit: assert exit.code == 2, exit.code"
    )
    assert_imports_none(code, ("datasets", "torch", "transformers"))


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_commands_help_is_shown_without_datasets_or_torch(command) -> None:
    """The help reads the registries' names (parsers, prompts, backends, benchmarks' video
    layouts) from the benchmarks' specs, which import neither ``datasets`` nor ``torch``: each
    benchmark's ``datasets`` builder lives in its own module (``builders/<name>/builder.py``)."""
    from launch import assert_imports_none

    code = (
        "import contextlib, io\n"
        "from foilkit.cli import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        f"    try: main([{command!r}, '--help'])\n"
        "    except SystemExit as exit: assert exit.code == 0, exit.code\n"
        "assert 'usage:' in out.getvalue()"
    )
    assert_imports_none(code, ("datasets", "torch", "transformers"))


def test_the_decoding_bound_is_the_decoders() -> None:
    from foilkit.scorers.options import MAX_DECODE_PIXELS
    from foilkit.scorers.video import MAX_DECODE_PIXELS as DECODERS

    assert ScoreOptions().max_decode_pixels == MAX_DECODE_PIXELS == DECODERS
