"""The import layers of foilkit, checked on the source: who may import whom.

::

    foilkit.cli         the commands: may import everything below
    foilkit (library)   evaluation, run, report, compare, hub_results, leaderboard, finetune,
                        synthetic, ...: builders, scorers, generation, metrics, base
    generation          builders (schema, aspects), scorers (text LMs), base
    builders            generation (the contrast sets' rule-based gender foils), metrics (names),
                        base
    scorers             base only
    metrics             nothing of foilkit (each folder is a self-contained evaluate module)
    base                foilkit._version, answers, benchmark_registry, errors, files, folders,
                        progress, protocol, registry, selection, video_paths: base only

and across packages only public modules: ``foilkit.metrics._common`` is the metrics package's
own business; another package goes through ``foilkit.metrics``.

import-linter does this for ordinary layouts, but its graph builder walks the top-level
package's folder, and foilkit's sub-packages live in other folders (``package-dir`` maps
``builders/`` to ``foilkit.builders``), so it cannot see them. This test reads the same
mapping from pyproject.toml and every import statement (function-level ones too: a lazy import
is still a dependency) with ``ast``.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR: dict[str, str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"][
    "setuptools"
]["package-dir"]

BASE = {
    "foilkit._version",
    "foilkit.answers",  # parsed answers and judge protocols: benchmarks declare, the scorer runs
    "foilkit.benchmark_registry",  # the benchmarks by name: every layer reaches them through it
    "foilkit.protocol",  # the Protocol type: benchmarks declare, the scorer resolves
    "foilkit.errors",
    "foilkit.files",
    "foilkit.folders",
    "foilkit.progress",
    "foilkit.registry",
    "foilkit.selection",  # --limit's rows: the builders select them, the run records them
    "foilkit.video_paths",
}

#: layer -> the layers it may import (its own is always allowed).
ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "metrics": set(),
    "scorers": {"base"},
    "builders": {"base", "metrics", "generation"},
    "generation": {"base", "builders", "scorers"},
    "library": {"base", "metrics", "scorers", "builders", "generation"},
    "cli": {"base", "metrics", "scorers", "builders", "generation", "library"},
}


def layer(module: str) -> str:
    """The layer of a ``foilkit`` module name."""
    if module in BASE or module == "foilkit":
        return "base"
    if module == "foilkit.__main__":  # ``python -m foilkit``: the command line
        return "cli"
    for name in ("metrics", "scorers", "builders", "generation", "cli"):
        if module == f"foilkit.{name}" or module.startswith(f"foilkit.{name}."):
            return name
    return "library"


def source_modules() -> Iterator[tuple[str, Path]]:
    """``(module name, file)`` for every Python file of every mapped package folder."""
    for package, folder in PACKAGE_DIR.items():
        base = ROOT / folder
        for path in sorted(base.rglob("*.py")):
            parts = path.relative_to(base).with_suffix("").parts
            if "__pycache__" in parts:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join((package, *parts)), path


def imported_modules(module: str, path: Path) -> Iterator[tuple[int, str]]:
    """``(line, module)`` of every foilkit module ``path`` imports (relative ones resolved)."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                target = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            yield node.lineno, target
            for alias in node.names:  # ``from foilkit.metrics import _common`` imports a module
                yield node.lineno, f"{target}.{alias.name}"


def is_private_to(target: str, importer_layer: str) -> bool:
    """Whether ``target`` is a private module (a ``_name`` part) of another layer's package."""
    if layer(target) in (importer_layer, "base"):
        return False
    return any(part.startswith("_") and part != "__init__" for part in target.split(".")[1:])


def violations() -> list[str]:
    modules = dict(source_modules())
    found: list[str] = []
    found_at: set[str] = set()
    for module, path in modules.items():
        own = layer(module)
        for line, target in dict.fromkeys(imported_modules(module, path)):
            if target != "foilkit" and not target.startswith("foilkit."):
                continue
            if target not in modules and target.rsplit(".", 1)[0] in modules:
                target = target.rsplit(".", 1)[0]  # ``from package import name``: not a module
            where = f"{path.relative_to(ROOT)}:{line}: {module} imports {target}"
            if where in found_at:
                continue
            found_at.add(where)
            other = layer(target)
            if other != own and other not in ALLOWED[own]:
                found.append(f"{where} ({own} may not import {other})")
            elif is_private_to(target, own):
                found.append(f"{where} (a private module of {other})")
    return found


def test_every_import_respects_the_layers():
    found = violations()
    assert not found, "import contract broken:\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        ("foilkit.metrics._common", "metrics"),
        ("foilkit.cli.score", "cli"),
        ("foilkit.registry", "base"),
        ("foilkit.evaluation", "library"),
        ("foilkit.builders.vilma", "builders"),
    ],
)
def test_layer_names(module, expected):
    assert layer(module) == expected


def test_the_checker_sees_a_forbidden_import(tmp_path):
    """The checker itself: an upward import and a private import are both found."""
    path = tmp_path / "engine.py"
    path.write_text(
        "from foilkit.cli import main\nfrom ..metrics import _common\nimport foilkit.errors\n"
    )
    imports = list(imported_modules("foilkit.scorers.engine", path))
    assert (1, "foilkit.cli") in imports and (2, "foilkit.metrics._common") in imports
    assert layer("foilkit.cli") not in ALLOWED["scorers"]
    assert is_private_to("foilkit.metrics._common", "scorers")
    assert not is_private_to("foilkit.scorers._x", "scorers")
