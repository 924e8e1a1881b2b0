"""Every ``owner/name@commit`` citation in the repository names the commit foilkit pins that
repository to: a builder's annotation source, else the one commit all its citations share (a
docstring once cited TempCompass at TOMATO's commit)."""

from __future__ import annotations

import importlib
import re
from collections import defaultdict
from pathlib import Path

from foilkit.builders import BUILDERS

ROOT = Path(__file__).resolve().parents[1]
#: The folders whose source and documentation cite reference repositories.
FOLDERS = ("builders", "metrics", "scorers", "generation", "foilkit", "tests", "benchmarks", "docs")
CITATION = re.compile(r"\b([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)@([0-9a-f]{7,40})\b")


def _builder_pins() -> dict[str, str]:
    """Repository -> the commit a builder downloads its annotations from (a sha, not a branch):
    the builder modules and the registered builders (``builders/<name>/builder.py``)."""
    sources = [BUILDERS.get(name).SOURCE for name in BUILDERS]
    for path in sorted((ROOT / "builders").glob("*.py")):
        sources.append(
            getattr(importlib.import_module(f"foilkit.builders.{path.stem}"), "SOURCE", None)
        )
    return {
        source.repo: source.commit
        for source in sources
        if source is not None and re.fullmatch(r"[0-9a-f]{40}", source.commit)
    }


def _citations() -> dict[str, set[tuple[str, str]]]:
    """Repository -> (commit cited, file) of every citation."""
    found: dict[str, set[tuple[str, str]]] = defaultdict(set)
    files = [ROOT / "README.md"] + [
        path for folder in FOLDERS for path in (ROOT / folder).rglob("*") if path.is_file()
    ]
    for path in files:
        if path.suffix not in (".py", ".md", ".yaml", ".json", ".txt"):
            continue
        for repo, commit in CITATION.findall(path.read_text(encoding="utf-8", errors="replace")):
            found[repo].add((commit, str(path.relative_to(ROOT))))
    return found


def test_every_citation_names_the_pinned_commit():
    pins, citations = _builder_pins(), _citations()
    assert {"llyx97/TempCompass", "yale-nlp/TOMATO"} <= set(pins) & set(citations)
    wrong = sorted(
        f"{file}: {repo}@{commit} (pinned: {pins[repo][:7]})"
        for repo, cited in citations.items()
        if repo in pins
        for commit, file in cited
        if not pins[repo].startswith(commit)
    )
    assert not wrong, wrong
    several = {
        repo: sorted(cited)
        for repo, cited in citations.items()
        if repo not in pins and len({commit for commit, _ in cited}) > 1
    }
    assert not several, several
