"""``foilkit generate``: the pipeline registry, lazy imports and dispatch to a pipeline."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from foilkit.cli import main
from foilkit.cli.generate import PIPELINES


def test_help_lists_every_pipeline(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["generate", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    listed = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    for name in PIPELINES:
        assert PIPELINES.summary(name) in listed.get(name, ""), name


@pytest.mark.parametrize("pipeline", sorted(PIPELINES))
def test_every_registered_pipeline_builds_its_parser(pipeline: str, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["generate", pipeline, "--help"])
    assert exit_info.value.code == 0, pipeline
    assert f"usage: foilkit generate {pipeline}" in capsys.readouterr().out


def test_unknown_pipeline_is_a_usage_error(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["generate", "no-such-pipeline"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'no-such-pipeline'" in capsys.readouterr().err


def test_a_pipeline_usage_error_names_the_pipeline(capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["generate", "bias"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "foilkit generate bias" in err and "--rows" in err


@pytest.mark.parametrize("argv", [["--help"], ["generate", "--help"]])
def test_help_imports_no_heavy_library(argv: list[str]) -> None:
    code = (
        "import sys; from foilkit.cli import main\n"
        f"try: main({argv!r})\nexcept SystemExit: pass\n"
        "heavy = [m for m in ('torch', 'transformers', 'openai', 'evaluate', 'datasets',\n"
        "                     'sentence_transformers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "pipelines = [m for m in sys.modules if m.startswith('foilkit.generation.')]\n"
        "assert not pipelines, pipelines"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_dispatches_to_the_chosen_pipeline(tmp_path, capsys) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text(
        json.dumps({"caption": "a man opens the door", "foils": ["a man closes the door"]}) + "\n"
    )
    out = tmp_path / "bias.json"
    assert main(["generate", "bias", "--rows", str(rows), "-o", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["rows"] == 1 and "js" in report
