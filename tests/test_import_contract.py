"""The import layers of foilkit, checked on the source: who may import whom.

::

    foilkit.cli         the commands: may import everything below
    foilkit (library)   evaluation, run, report, compare, hub_results, leaderboard, finetune,
                        synthetic, ...: builders, scorers, generation, metrics, base
    generation          builders (schema, aspects), scorers (text LMs), base
    builders            metrics (names), base
    scorers             base only
    metrics             nothing of foilkit (each folder is a self-contained evaluate module)
    base                foilkit._version, answers, benchmark_registry, config_file, errors,
                        files, folders, progress, protocol, registry, selection, video_paths:
                        base only

and across packages only public modules: ``foilkit.metrics._common`` is the metrics package's
own business; another package goes through ``foilkit.metrics``.

import-linter does this for ordinary layouts, but its graph builder walks the top-level
package's folder, and foilkit's sub-packages live in other folders (``package-dir`` maps
``builders/`` to ``foilkit.builders``), so it cannot see them. This test reads the same
mapping from pyproject.toml and every import statement (function-level ones too: a lazy import
is still a dependency) with ``ast``.

The same graph holds no import circle between files (``KNOWN_CIRCLES`` lists those still being
removed) and no cycle between packages: ``builders`` and ``generation`` point one way.
"""

from __future__ import annotations

import ast
import tomllib
from collections.abc import Iterator, Mapping
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
    "foilkit.config_file",  # config.yaml: evaluate's run folder and the scorer's own write it
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
    "builders": {"base", "metrics"},
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


def imports(module: str, path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """``(line, module, names)`` of every import statement of ``path`` (relative ones resolved):
    ``names`` are what ``from module import ...`` takes, ``[]`` for ``import module``."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                target = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            yield node.lineno, target, [alias.name for alias in node.names]


def imported_modules(module: str, path: Path) -> Iterator[tuple[int, str]]:
    """``(line, module)`` of every foilkit module ``path`` imports (relative ones resolved)."""
    for line, target, names in imports(module, path):
        yield line, target
        for name in names:  # ``from foilkit.metrics import _common`` imports a module
            yield line, f"{target}.{name}"


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


#: The import circles still in the house, each a set of modules (issue 42, item 6: being removed
#: on its branch; empty this when it lands). Any other circle fails, and so does one gone.
KNOWN_CIRCLES: set[frozenset[str]] = set()


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """module -> the foilkit modules it imports, function-level imports counted (a lazy import
    is still a dependency): ``from package import module`` imports the module, ``from package
    import name`` the package (as import-linter's graph reads them)."""
    graph: dict[str, set[str]] = {module: set() for module in modules}
    for module, path in modules.items():
        for _, target, names in imports(module, path):
            taken = [f"{target}.{name}" for name in names if f"{target}.{name}" in modules]
            for found in taken if names and len(taken) == len(names) else [*taken, target]:
                if found in modules and found != module:
                    graph[module].add(found)
    return graph


def circles(graph: Mapping[str, set[str]]) -> set[frozenset[str]]:
    """The import circles of ``graph``: its strongly connected parts of more than one node
    (Tarjan's algorithm; every node on a circle of imports is in the same part)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            part = set()
            while not part or node not in part:
                part.add(stack.pop())
            if len(part) > 1:
                found.add(frozenset(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def package_graph(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between foilkit's packages (``foilkit.builders``, ``foilkit.cli``,
    ``foilkit.finetune``, ...), each module of the top folder standing alone."""
    packages = {".".join(module.split(".")[:2]) for module in graph if module.count(".") > 1}

    def package(module: str) -> str:
        top = ".".join(module.split(".")[:2])
        return top if top in packages else module

    rooms: dict[str, set[str]] = {package(module): set() for module in graph}
    for module, targets in graph.items():
        rooms[package(module)] |= {package(t) for t in targets} - {package(module)}
    return rooms


def _named(parts: set[frozenset[str]]) -> str:
    return "\n".join(" <-> ".join(sorted(part)) for part in sorted(parts, key=sorted))


def test_no_new_import_circle():
    found = circles(import_graph(dict(source_modules())))
    assert found <= KNOWN_CIRCLES, "new import circles:\n" + _named(found - KNOWN_CIRCLES)
    assert found >= KNOWN_CIRCLES, "gone, remove from KNOWN_CIRCLES:\n" + _named(
        KNOWN_CIRCLES - found
    )


def test_no_package_cycle():
    found = circles(package_graph(import_graph(dict(source_modules()))))
    assert not found, "packages importing each other:\n" + _named(found)


def test_the_circle_checker_on_a_small_house(tmp_path):
    """The checker itself: a file-level circle through a function-level and a relative import,
    ``from package import module`` as the module, and a package cycle."""
    files = {
        "a.py": "def f():\n    from foilkit.b import g\n",
        "b.py": "from . import c\n",
        "c.py": "from foilkit import a\n",
        "d.py": "from foilkit.p import X\n",  # a name: the package
        "p/__init__.py": "from foilkit.p.x import X\n",
        "p/x.py": "from foilkit.p import y\nfrom foilkit.q.y import Y\n",  # y: the module
        "p/y.py": "",
        "q/__init__.py": "",
        "q/y.py": "def f():\n    from foilkit.p.y import Y\n",
    }
    modules = {}
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        dotted = "foilkit." + name.removesuffix(".py").replace("/", ".")
        modules[dotted.removesuffix(".__init__")] = path
    graph = import_graph(modules)
    assert graph["foilkit.c"] == {"foilkit.a"} and graph["foilkit.d"] == {"foilkit.p"}
    assert graph["foilkit.p.x"] == {"foilkit.p.y", "foilkit.q.y"}
    assert circles(graph) == {frozenset({"foilkit.a", "foilkit.b", "foilkit.c"})}
    assert circles(package_graph(graph)) == {
        frozenset({"foilkit.a", "foilkit.b", "foilkit.c"}),
        frozenset({"foilkit.p", "foilkit.q"}),
    }
    graph["foilkit.q.y"].clear()  # the arrow back up removed: one-way between the packages
    assert circles(package_graph(graph)) == {frozenset({"foilkit.a", "foilkit.b", "foilkit.c"})}


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
