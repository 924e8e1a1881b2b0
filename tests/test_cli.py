"""The ``foilkit`` console script: help, version, doctor, lazy imports."""

from __future__ import annotations

import argparse
from types import SimpleNamespace

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


@pytest.mark.parametrize("command", ["evaluate", "build"])
@pytest.mark.parametrize(
    "flags",
    [
        ["--config", "direction", "--config", "sequence"],
        ["--config", "direction,sequence"],
        ["--config", "direction, sequence", "--config", "direction"],
    ],
)
def test_every_config_given_is_kept_in_order_once(command, flags) -> None:
    """``--config a --config b`` and ``--config a,b`` choose both; never only the last."""
    from foilkit.cli import command_parser
    from foilkit.cli.options import chosen_configs

    required = {
        "evaluate": ["--benchmark", "vitatecs", "--model", "m", "--out", "o"],
        "build": ["vitatecs", "--out", "o"],
    }[command]
    _, parser = command_parser(command)
    assert chosen_configs(parser.parse_args([*required, *flags])) == ["direction", "sequence"]


def test_an_empty_config_name_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(
            ["evaluate", "--benchmark", "vitatecs", "--model", "m", "--out", "o", "--config", "a,"]
        )
    assert exit_info.value.code == 2
    assert "--config a,b or --config a --config b" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-2", "x"])
def test_limit_must_be_a_positive_whole_number(value, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(
            ["evaluate", "--benchmark", "vitatecs", "--model", "m", "--out", "o", "--limit", value]
        )
    assert exit_info.value.code == 2 and "at least 1" in capsys.readouterr().err


def test_score_refuses_several_configs_in_one_line(tmp_path, capsys) -> None:
    argv = ["score", "--model", "m", "--dataset", str(tmp_path), "--out", str(tmp_path / "o")]
    assert main([*argv, "--config", "a,b"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "foilkit evaluate --config a,b" in err


def test_configs_for_keeps_every_config_named_and_expands_all() -> None:
    from foilkit.builders import get_benchmark

    vilma = get_benchmark("vilma")
    assert vilma.configs_for(["rare_actions", "spatial_relations"]) == (
        "rare_actions",
        "spatial_relations",
    )
    assert vilma.configs_for(None) == vilma.all_configs == vilma.configs_for("all")
    assert vilma.configs_for(["spatial_relations", "all"])[0] == "spatial_relations"
    assert len(vilma.configs_for(["spatial_relations", "all"])) == len(vilma.all_configs)
    with pytest.raises(ValueError, match="'sequence'.*choose from all, action_counting_easy"):
        vilma.configs_for(["rare_actions", "sequence"])


def test_benchmarks_lists_configs_and_video_layouts_without_annotations(capsys) -> None:
    from foilkit.builders import BENCHMARKS, builder_class

    assert main(["benchmarks"]) == 0
    out = capsys.readouterr().out
    for name in BENCHMARKS:
        assert f"{name}: {BENCHMARKS.summary(name)}" in out
    assert "* all" in out and "pass --annotations to count" in out
    layout = builder_class("rtime").VIDEO_LAYOUT.replace("`", "")
    assert " ".join(layout.split()[:4]) in " ".join(out.split())


@pytest.mark.integration
def test_benchmarks_counts_the_rows_of_the_real_annotation_files(shared_data, capsys) -> None:
    """Counts from the published files: VITATECS' Direction.jsonl has one row per line; RTime's
    test.json 1000 videos (Origin), each also reversed (Hard); the gender contrast set is no
    published file."""
    import json

    argv = ["benchmarks", "vitatecs", "rtime", "contrast_sets", "--json"]
    assert main([*argv, "--annotations", str(shared_data)]) == 0
    listings = {entry["name"]: entry for entry in json.loads(capsys.readouterr().out)}
    lines = (shared_data / "vitatecs" / "Direction.jsonl").read_text().strip().splitlines()
    vitatecs = listings["vitatecs"]["configs"]
    assert vitatecs["direction"]["rows"] == {"test": len(lines)}
    assert vitatecs["all"]["rows"]["test"] == sum(
        c["rows"]["test"] for name, c in vitatecs.items() if name != "all"
    )
    rtime = listings["rtime"]["configs"]
    assert rtime["origin"]["rows"] == {"test": 1000, "validation": 500}
    assert rtime["hard"]["rows"]["test"] == 2000
    gender = listings["contrast_sets"]["configs"]["gender"]
    assert gender["rows"] is None and "not published" in gender["note"]
    assert listings["rtime"]["video_layout"].startswith("<video_root>/<source_id>.mp4")


def test_benchmarks_names_an_unknown_benchmark(capsys) -> None:
    assert main(["benchmarks", "vitatec"]) == 2
    assert "no benchmark 'vitatec'; choose from vitatecs" in capsys.readouterr().err


def _parsed(command, argv):
    parser = argparse.ArgumentParser()
    command.configure(parser)
    return parser.parse_args(argv)


def test_finetune_passes_every_training_flag_under_its_own_name(monkeypatch, tmp_path) -> None:
    """``foilkit finetune`` hands each flag to :func:`foilkit.finetune.finetune` (a flag named
    as the parameter passes as it is, the few others renamed), so a new flag cannot be lost."""
    from foilkit.cli import finetune as command

    args = _parsed(command, ["--model", "m", "--dataset", "d", "--out", str(tmp_path)])
    args.epochs, args.seed, args.num_workers, args.public = 3, 7, 2, True
    passed = {}

    def finetune(model, dataset, **kwargs):
        passed.update(kwargs, model=model, dataset=dataset)
        return SimpleNamespace(losses=[], model_dir=tmp_path, out_dir=tmp_path, record={})

    monkeypatch.setattr("foilkit.finetune.finetune", finetune)
    assert command.run(args) == 0
    renamed = {"out": "out_dir", "num_workers": "workers"}
    not_passed = {"json", "verbosity", "no_progress", "public"}
    expected = {renamed.get(k, k): v for k, v in vars(args).items() if k not in not_passed}
    expected["reversal_aspects"] = tuple(args.reversal_aspects)
    assert passed == {**expected, "private": False, "progress": None}
    assert (passed["epochs"], passed["seed"], passed["workers"]) == (3, 7, 2)


def test_finetune_flags_are_the_options_fields() -> None:
    """Each :class:`FinetuneOptions` field with help is a ``foilkit finetune`` flag under its own
    destination, with its default and type (made from the field, as score's are); the others
    are the command's own (``--reversal-aspects``, ``--num-workers``) or no flag."""
    from dataclasses import fields

    from foilkit.cli import finetune as command
    from foilkit.finetune import FinetuneOptions

    parser = argparse.ArgumentParser()
    command.configure(parser)
    actions = {action.dest: action for action in parser._actions}
    flagged = [f for f in fields(FinetuneOptions) if f.metadata.get("help")]
    assert {f.name for f in fields(FinetuneOptions)} - {f.name for f in flagged} == {
        "reversal_aspects",
        "workers",
        "keep_checkpoints",
    }
    for option in flagged:
        assert actions[option.name].default == option.default, option.name
    argv = ["--model", "m", "--dataset", "d", "--out", "o", "--training-seed", "7"]
    args = parser.parse_args([*argv, "--learning-rate", "0.5", "--frames", "3"])
    assert (args.seed, args.learning_rate, args.num_frames) == (7, 0.5, 3)
    with pytest.raises(SystemExit):  # an int field's flag takes whole numbers only
        parser.parse_args([*argv, "--epochs", "1.5"])


@pytest.mark.parametrize(
    ("kind", "text", "error"),
    [
        ("positive_number", "0", "'0' is not a number above 0 (e.g. 1.0)"),
        ("positive_number", "inf", "'inf' is not a number above 0 (e.g. 1.0)"),
        ("_positive_number", "abc", "'abc' is not a number > 0 (e.g. 120)"),
        ("price", "nan", "'nan' is not a price >= 0 (e.g. 0.0005)"),
        ("price", "-1", "'-1' is not a price >= 0 (e.g. 0.0005)"),
        ("_seconds", "-0.5", "'-0.5' is not a number of seconds >= 0 (e.g. 30)"),
        ("_fraction", "1.5", "'1.5' is not a fraction from 0 to 1 (e.g. 0.9)"),
        # argparse said only "invalid _fraction value: 'abc'" (the function's name)
        ("_fraction", "abc", "'abc' is not a fraction from 0 to 1 (e.g. 0.9)"),
    ],
)
def test_number_flags_name_what_they_take(kind: str, text: str, error: str) -> None:
    """The number types of the flags (one reader, :func:`foilkit.cli.options._number`) refuse
    a bad value in one line that says what the flag takes, with an example."""
    from foilkit.cli import options

    with pytest.raises(argparse.ArgumentTypeError) as refused:
        getattr(options, kind)(text)
    assert str(refused.value) == error
    assert getattr(options, kind)("1") == 1.0 and options.price("0") == options._seconds("0") == 0


def test_push_results_passes_every_upload_flag(monkeypatch) -> None:
    from foilkit.cli import push_results as command

    args = _parsed(command, ["run", "--repo", "me/results", "--model-index", "--direct"])
    passed = {}

    def prepare_upload(run_dir, repo, **kwargs):
        passed.update(kwargs, run_dir=run_dir, repo=repo)
        raise SystemExit(0)

    monkeypatch.setattr(command, "prepare_upload", prepare_upload)
    with pytest.raises(SystemExit):
        command.run(args)
    not_passed = {"direct", "dry_run", "private"}
    expected = {k: v for k, v in vars(args).items() if k not in not_passed}
    assert passed == {**expected, "create_pr": False} and passed["model_index"] is True
