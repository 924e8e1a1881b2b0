"""The README stays true: every command it shows parses, every file and metric it names exists."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from foilkit.cli import COMMANDS, command_parser
from foilkit.metrics import METRICS

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def _shell_lines() -> list[str]:
    """The commands of the README's bash blocks, continuation lines joined, comments dropped."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", README, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def _foilkit_invocations() -> list[list[str]]:
    """``foilkit <command> ...`` argument lists, also those run through ``accelerate launch -m``."""
    calls = []
    for line in _shell_lines():
        words = shlex.split(line)
        if words[:1] == ["foilkit"]:
            calls.append(words[1:])
        elif "-m" in words and words[words.index("-m") + 1] == "foilkit":
            calls.append(words[words.index("-m") + 2 :])
    return calls


def test_the_quickstart_is_two_dev_sh_commands():
    quickstart = README.split("## Quickstart", 1)[1].split("##", 1)[0]
    block = re.search(r"```bash\n(.*?)```", quickstart, flags=re.S).group(1)
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["./dev.sh demo", "./dev.sh test"]
    assert (REPO / ".ci" / "run").read_text().strip().endswith("./dev.sh test")


@pytest.mark.parametrize("argv", _foilkit_invocations(), ids=lambda argv: " ".join(argv[:2]))
def test_every_foilkit_command_in_the_readme_parses(argv):
    assert argv[0] in COMMANDS
    _, parser = command_parser(argv[0])
    parser.parse_args(argv[1:])  # a wrong flag or a missing argument exits


def test_the_readme_shows_the_main_commands():
    shown = {argv[0] for argv in _foilkit_invocations()}
    assert {"evaluate", "compare", "push-results", "build", "score"} <= shown


def test_files_and_metrics_the_readme_names_exist():
    for path in re.findall(r"\]\(((?:[\w.-]+/)*[\w.-]+\.md)\)", README):
        assert (REPO / path).is_file(), path
    for script in re.findall(r"python (benchmarks/[\w.]+\.py)", README):
        assert (REPO / script).is_file(), script
    for name in METRICS:
        assert f"`{name}`" in README


def _repository_url() -> str:
    import tomllib

    urls = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]
    return urls["Repository"]


def _link_targets() -> list[str]:
    """Every Markdown link and image target of the README, and every HTML ``src``/``href``."""
    return re.findall(r"\]\(([^)\s]+)", README) + re.findall(r'(?:src|href)="([^"]+)"', README)


def test_the_readme_links_nothing_relative():
    """PyPI shows the README without the repository around it: a link to a file of the
    repository must be absolute (an in-page ``#anchor`` stays)."""
    relative = [t for t in _link_targets() if not t.startswith(("https://", "http://", "#"))]
    assert not relative, relative


def test_every_link_into_the_repository_names_an_existing_file():
    """Links into the repository start with pyproject.toml's Repository URL (its one
    definition) and point at a file or folder that exists on the default branch's layout."""
    url = _repository_url()
    ours = [t for t in _link_targets() if t.startswith(url)]
    assert ours
    for target in ours:
        match = re.fullmatch(re.escape(url) + r"/(?:blob|raw|tree)/main/([^#?]+)", target)
        assert match, f"{target}: link files as {url}/blob/main/<path> (images: /raw/main/)"
        assert (REPO / match.group(1)).exists(), target


def test_licence_and_citation_agree_with_the_package_metadata():
    import tomllib

    import yaml

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert "Apache License" in (REPO / "LICENSE").read_text() and project["license"] == "Apache-2.0"
    citation = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0"
    assert {"message", "title", "authors"} <= citation.keys() and citation["authors"]
    assert citation["repository-code"] == _repository_url()
    assert citation["license"] == project["license"]
    from foilkit import __version__

    assert citation["version"] == __version__
    assert project["urls"]["Issues"] == f"{_repository_url()}/issues"
