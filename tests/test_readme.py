"""The README and the docs pages stay true: every command they show parses with flags ``--help``
shows, every file and metric they name exists. (The docs site's build, its generated pages, its
links and its runnable examples: ``tests/test_docs.py``.)"""

from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

import pytest

from foilkit.cli import COMMANDS, command_parser
from foilkit.metrics import METRICS

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
#: The docs pages (``docs/``, the site's source), each ``path -> text``.
PAGES = {
    str(path.relative_to(REPO)): path.read_text(encoding="utf-8")
    for path in sorted((REPO / "docs").rglob("*.md"))
}
#: The README, then every docs page.
TEXT = "\n".join([README, *PAGES.values()])


def _page(name: str) -> str:
    """The text of ``docs/<name>``, where a README passage moved."""
    return PAGES[f"docs/{name}"]


def _shell_lines(text: str = TEXT) -> list[str]:
    """The commands of the README's and the docs' bash blocks, continuation lines joined,
    comments dropped."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split("  #")[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def _foilkit_invocations(text: str = TEXT) -> list[list[str]]:
    """``foilkit <command> ...`` argument lists, also those run through ``accelerate launch -m``."""
    calls = []
    for line in _shell_lines(text):
        words = shlex.split(line)
        if words[:1] == ["foilkit"]:
            calls.append(words[1:])
        elif "-m" in words and words[words.index("-m") + 1] == "foilkit":
            calls.append(words[words.index("-m") + 2 :])
    return calls


def _first_bash_block(text: str, heading: str) -> list[str]:
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


def test_the_quickstart_is_two_dev_sh_commands():
    assert _first_bash_block(README, "## Install") == ["./dev.sh demo", "./dev.sh test"]
    quickstart = _first_bash_block(_page("getting-started.md"), "## Quickstart")
    assert quickstart == ["./dev.sh demo", "./dev.sh test"]
    assert (REPO / ".ci" / "run").read_text().strip().endswith("./dev.sh test")


@pytest.mark.parametrize("argv", _foilkit_invocations(), ids=lambda argv: " ".join(argv[:2]))
def test_every_foilkit_command_in_the_docs_parses(argv):
    assert argv[0] in COMMANDS
    _, parser = command_parser(argv[0])
    parser.parse_args(argv[1:])  # a wrong flag or a missing argument exits
    hidden = {
        option
        for action in parser._actions
        if action.help == argparse.SUPPRESS
        for option in action.option_strings
    }
    used = {word.split("=", 1)[0] for word in argv[1:] if word.startswith("--")}
    assert not used & hidden, f"use the flags --help shows, not {sorted(used & hidden)}"


def test_the_docs_show_the_main_commands():
    shown = {argv[0] for argv in _foilkit_invocations()}
    assert {"evaluate", "compare", "push-results", "build", "score"} <= shown
    assert {"evaluate", "doctor"} <= {argv[0] for argv in _foilkit_invocations(README)}


def test_files_and_metrics_the_docs_name_exist():
    for script in re.findall(r"python (benchmarks/[\w.]+\.py)", TEXT):
        assert (REPO / script).is_file(), script
    for name in METRICS:
        assert f"`{name}`" in _page("metrics.md"), name


def test_the_readme_points_nowhere_a_user_lacks():
    """No ``../shared`` (the developers' sibling folder) and no hidden ``--videos``."""
    assert "../shared" not in README
    assert "--videos" not in TEXT


def test_the_readme_quotes_the_demo_as_getting_started_does():
    """The demo's figures are quoted in two places: the same table, to the character."""
    table = re.compile(r"^\| run \|.*?^\| chance \|[^\n]*$", flags=re.S | re.M)
    quoted = table.search(README).group(0)
    assert quoted == table.search(_page("getting-started.md")).group(0)
    assert "| **93.8** [81.2, 100.0] |" in quoted


def _repository_url() -> str:
    import tomllib

    urls = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["urls"]
    return urls["Repository"]


def _link_targets(text: str = README) -> list[str]:
    """Every Markdown link and image target of ``text``, and every HTML ``src``/``href``."""
    return re.findall(r"\]\(([^)\s]+)", text) + re.findall(r'(?:src|href)="([^"]+)"', text)


def test_the_readme_links_nothing_relative():
    """PyPI shows the README without the repository around it: a link to a file of the
    repository must be absolute (an in-page ``#anchor`` stays)."""
    relative = [t for t in _link_targets() if not t.startswith(("https://", "http://", "#"))]
    assert not relative, relative


def test_every_link_into_the_repository_names_an_existing_file():
    """Links into the repository (README and docs) start with pyproject.toml's Repository URL
    (its one definition) and point at a file or folder that exists on the default branch's
    layout."""
    url = _repository_url()
    ours = [t for t in _link_targets(TEXT) if t.startswith(url)]
    assert ours
    for target in ours:
        match = re.fullmatch(
            re.escape(url) + r"/(?:blob|raw|tree)/main/([^#?]+)(?:#[\w-]+)?", target
        )
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
