"""A benchmark is one folder: its reference is pinned once, and the scorer names no benchmark.

Each registered benchmark's folder (``builders/<name>/``) holds its builder, paper protocols,
answer parsers, judges and Hub metadata; the engine reaches them only through
:mod:`foilkit.benchmark_registry`. These tests read the source, so that a benchmark's name or
reference creeping back into the scorer, or a second copy of a pin, fails here.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from pathlib import Path

import pytest

from foilkit.benchmark_registry import BENCHMARKS
from foilkit.scorers.adapters.text_lm import reference_reduction
from foilkit.scorers.judge import judge_protocol
from foilkit.scorers.parsers import get_parser, parser_names
from foilkit.scorers.prompts import caption_question, choice_prompt, choice_prompt_names
from foilkit.scorers.protocols import paper_protocols

ROOT = Path(__file__).resolve().parents[1]
CODE = [
    path
    for folder in ("builders", "scorers", "foilkit", "generation", "metrics")
    for path in sorted((ROOT / folder).rglob("*.py"))
]
#: ``owner/name@commit``: a pinned reference as protocols and judges cite it.
PIN = re.compile(r"\b([\w.-]+/[\w.-]+)@([0-9a-f]{7,40})\b")
#: Where the scorer still names a benchmark in code (not docstrings), file -> the names: only
#: the user-facing defaults, generate mode's parser and the choice prompt (VITATECS'). A
#: benchmark's questions, perplexity reductions and the like are on its spec, found through the
#: registry. The list may only shrink.
SCORER_NAMES_LEFT = {
    "scorers/parsers.py": {"vitatecs"},
    "scorers/prompts.py": {"vitatecs"},
}


def _code_strings(path: Path) -> set[str]:
    """The names and string constants of ``path``'s code, docstrings and comments left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    documented = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, documented)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings:
                found.add(node.value)
        elif isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found.add(node.name)
    return found


def _spellings(name: str) -> tuple[str, ...]:
    return (name, name.replace("_", " ")) if "_" in name else (name,)


def test_the_scorer_names_no_benchmark_in_code():
    """No scorer module names a registered benchmark in its code, beyond the few places listed
    (which may only shrink)."""
    named: dict[str, set[str]] = {}
    for path in sorted((ROOT / "scorers").rglob("*.py")):
        strings = " ".join(_code_strings(path)).lower()
        hits = {name for name in BENCHMARKS.names() if any(s in strings for s in _spellings(name))}
        if hits:
            named[path.relative_to(ROOT).as_posix()] = hits
    assert named == SCORER_NAMES_LEFT


@pytest.mark.parametrize("name", BENCHMARKS.names())
def test_a_benchmark_reference_is_pinned_once(name):
    """Every pin of the benchmark's own repository its protocols and judges cite is one
    constant: one commit, written in one place of the code."""
    spec = BENCHMARKS.get(name)
    cited = [protocol.reference for protocol in spec.protocols.values()]
    cited += [judge.reference for judge in spec.judges.values()]
    folder = ROOT / "builders" / name
    pins = {
        (repo, commit)
        for text in cited
        for repo, commit in PIN.findall(text)
        if (folder / "source.py").exists() or (folder / "protocols.py").exists()
    }
    own = {repo for repo, _ in pins if repo.split("/")[1].lower().startswith(name[:4])}
    for repo in own:
        commits = {commit for r, commit in pins if r == repo}
        assert len(commits) == 1, f"{name} cites {repo} at several commits: {commits}"
        (commit,) = commits
        written = [
            path.relative_to(ROOT).as_posix()
            for path in CODE
            if f"{repo}@{commit}" in path.read_text(encoding="utf-8")
            or re.search(rf'commit="{commit}[0-9a-f]*"', path.read_text(encoding="utf-8"))
        ]
        assert len(written) == 1, f"{repo}@{commit} is written in {written}"
        assert written[0].startswith(f"builders/{name}/"), written


def test_github_sourced_benchmarks_cite_the_commit_their_builder_downloads():
    """A benchmark whose files come from its GitHub repository cites that repository at the
    commit the builder downloads (``source.py``'s ``REFERENCE`` is ``SOURCE.pin``)."""
    from importlib import import_module

    for name in BENCHMARKS.names():
        if not (ROOT / "builders" / name / "source.py").exists():
            continue
        source = import_module(f"foilkit.builders.{name}.source")
        assert source.REFERENCE == f"{source.SOURCE.repo}@{source.SOURCE.commit[:7]}"
        spec = BENCHMARKS.get(name)
        cites = [p.reference for p in spec.protocols.values() if source.SOURCE.repo in p.reference]
        cites += [j.reference for j in spec.judges.values() if source.SOURCE.repo in j.reference]
        assert cites, f"{name}'s protocols and judges never cite {source.REFERENCE}"
        assert all(source.REFERENCE in text for text in cites)


def test_the_engine_finds_a_benchmarks_data_through_the_registry():
    """Protocols, parsers, judges, choice prompts, caption questions and perplexity reductions
    declared on a spec are what the scorer resolves by name, and ``--parser NAME`` finds every
    benchmark's parser with no benchmark named."""
    for name in BENCHMARKS.names():
        spec = BENCHMARKS.get(name)
        assert paper_protocols(name) is spec.protocols
        for parser_name, parser in spec.parsers.items():
            assert get_parser(parser_name) is parser
            assert parser_name in parser_names()
        for prompt_name, prompt in spec.prompts.items():
            assert choice_prompt(prompt_name) is prompt
            assert prompt_name in choice_prompt_names()
        for role, question in spec.questions.items():
            assert caption_question(role) is question
        for reduction_name, reduction in spec.reductions.items():
            assert reference_reduction(reduction_name) is reduction
        for parser_name, judge in spec.judges.items():
            assert judge_protocol(parser_name) is judge
            assert parser_name in spec.parsers  # a judge reads the misses of a parser it has
        assert set(spec.answer_parsers.values()) <= set(spec.parsers)


def test_a_new_benchmarks_reduction_needs_no_scorer_change():
    """A benchmark registered with its own perplexity reduction makes it ``text-lm``'s by name;
    an unknown name is refused listing every benchmark's; a question role none declares is an
    error naming it."""

    def perplexities(logits, input_ids, mask, ignored):
        return logits

    spec = replace(BENCHMARKS.get("synthetic"), name="toy", reductions={"toy-ppl": perplexities})
    BENCHMARKS.add("toy", spec)
    try:
        assert reference_reduction("toy-ppl") is perplexities
        assert reference_reduction("mean") is None
        with pytest.raises(ValueError, match=r"'nope'; choose from \['mean', 'vilma', 'toy-ppl'\]"):
            reference_reduction("nope")
    finally:
        BENCHMARKS.remove("toy")
    with pytest.raises(ValueError, match="no registered benchmark declares a question for 'x'"):
        caption_question("x")
