"""The docs site stays true: it builds with ``mkdocs build --strict`` (a broken link, anchor,
nav entry or API reference fails), and its generated pages are what ``docs/hooks.py`` writes
from the code now (every command's options from its parser, the flat API)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
#: ``./dev.sh test-lowest`` sets it for ``.venv-lowest``, which installs the lowest supported
#: versions of foilkit's own dependencies and not the docs site's tools.
LOWEST = os.environ.get("FOILKIT_LOWEST_VERSIONS") == "1"


def _hooks():
    spec = importlib.util.spec_from_file_location("foilkit_docs_hooks", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(
    LOWEST,
    reason="the lowest-versions environment (.venv-lowest, FOILKIT_LOWEST_VERSIONS=1) does not "
    "install mkdocs; the docs site is built on the pinned stack (requirements.txt)",
)
def test_the_docs_site_builds_strict(tmp_path):
    site = tmp_path / "site"
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    seconds = time.monotonic() - started
    assert (site / "commands" / "evaluate" / "index.html").is_file()
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "out_dir" in api and "RunResults" in api  # the docstrings were read, not just named
    assert seconds < 120, f"mkdocs build took {seconds:.0f} s"


def test_the_command_pages_are_the_parsers_help():
    from foilkit.cli import COMMANDS

    pages = _hooks().command_pages()
    assert set(pages) == {f"{name}.md" for name in COMMANDS} | {"index.md"}
    stale = [
        name
        for name, text in pages.items()
        if not (DOCS / "commands" / name).is_file()
        or (DOCS / "commands" / name).read_text(encoding="utf-8") != text
    ]
    assert not stale, f"docs/commands/{stale} differ from the parsers: run python docs/hooks.py"
    written = {path.name for path in (DOCS / "commands").glob("*.md")}
    assert written == set(pages), (
        f"docs/commands/ holds pages of no command: {written - set(pages)}"
    )
    assert "--video-root" in pages["evaluate.md"] and "--videos" not in pages["evaluate.md"]
    assert "## foilkit generate vitatecs" in pages["generate.md"]
    assert "## foilkit metrics compute" in pages["metrics.md"]


def test_the_api_page_documents_the_flat_api():
    import foilkit

    page = _hooks().api_page()
    assert (DOCS / "api.md").read_text(encoding="utf-8") == page, "run python docs/hooks.py"
    for name in foilkit.__all__:
        if name != "__version__":
            assert f".{name}\n" in page, name


def test_every_page_is_in_the_nav():
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    config = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)

    def pages(entries) -> set[str]:
        found = set()
        for entry in entries:
            values = entry.values() if isinstance(entry, dict) else [entry]
            for value in values:
                found |= pages(value) if isinstance(value, list) else {value}
        return found

    nav = pages(config["nav"])
    on_disk = {str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md")}
    assert on_disk == nav, f"not in the nav: {on_disk - nav}; missing: {nav - on_disk}"
