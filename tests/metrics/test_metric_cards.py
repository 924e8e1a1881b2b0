"""Every ``metrics/<name>/`` folder is a complete evaluate Space: a metric card that documents
what the module takes and returns (and whose examples run), an ``app.py`` that hands the module
to evaluate's Gradio widget (in a checkout and in a Space's ``app/`` folder), and the
requirements its imports need."""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import re
import runpy
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
METRICS_DIR = REPO_ROOT / "metrics"
#: every evaluate module: a folder holding ``<folder name>.py``.
MODULES = sorted(
    folder.name for folder in METRICS_DIR.iterdir() if (folder / f"{folder.name}.py").is_file()
)

#: card section -> pattern its heading must match (case-insensitive); cards may word a heading
#: their own way ("Tie Policy", "Ties, and the default"), but none may leave a section out.
REQUIRED_SECTIONS: dict[str, str] = {
    "Metric Description": r"metric description",
    "How to Use": r"how to use",
    "Inputs": r"inputs",
    "Output Values": r"output values",
    "Tie Policy": r"\bties?\b",
    "Confidence Intervals": r"confidence intervals?",
    "Examples": r"examples?",
    "Limitations and Bias": r"limitations and bias",
    "Citation": r"citations?",
}
#: the YAML front matter of an evaluate metric Space: key -> check of its value.
FRONT_MATTER: dict[str, Any] = {
    "title": lambda v: isinstance(v, str) and v.strip(),
    "emoji": lambda v: isinstance(v, str) and v.strip(),
    "colorFrom": lambda v: isinstance(v, str) and v.strip(),
    "colorTo": lambda v: isinstance(v, str) and v.strip(),
    "sdk": lambda v: v == "gradio",
    "sdk_version": lambda v: isinstance(v, str) and re.fullmatch(r"\d+\.\d+\.\d+", v),
    "app_file": lambda v: v == "app.py",
    "pinned": lambda v: v is False,
    "tags": lambda v: isinstance(v, list) and {"evaluate", "metric"} <= set(v),
    "description": lambda v: isinstance(v, str) and v.strip() and "\n" not in v.strip(),
}
#: import name -> the distribution a requirements.txt lists for it, where the two differ.
DISTRIBUTIONS = {"yaml": "pyyaml", "sklearn": "scikit-learn", "PIL": "pillow"}
#: provided by the Space's ``sdk: gradio``, not by requirements.txt.
SPACE_PROVIDED = {"gradio"}

_PAIRWISE = {
    "caption_scores": [0.31, 0.28, 0.25, 0.30, 0.26, 0.33],
    "foil_scores": [[0.27], [0.29], [0.25], [0.22, 0.24], [0.21], [0.30]],
}
_PROFICIENCY = {
    "caption_scores": [0.71, 0.42, 0.66, 0.35],
    "foil_scores": [[0.30, 0.20], [0.55], [0.40], [0.35]],
    "proficiency_caption_scores": [0.80, 0.62, 0.30, 0.90],
    "proficiency_foil_scores": [[0.10], [0.25], [0.45], [0.20]],
}
_MULTIPLE_CHOICE = {
    "scores": [
        [0.21, 0.30, 0.18, 0.25, 0.19],
        [0.27, 0.22, 0.26, 0.20, 0.24],
        [0.23, 0.23, 0.20, 0.19, 0.22],
        [0.18, 0.20, 0.21, 0.26, 0.24],
    ],
    "labels": [1, 0, 0, 4],
}
_BLOCKS = [
    [[0.31, 0.24], [0.26, 0.29]],
    [[0.28, 0.27], [0.28, 0.27]],
    [[0.25, 0.30], [0.27, 0.22]],
]
_POOL = [  # 2 source videos x (forward, reversed) views against their 4 captions
    [0.62, 0.58, 0.21, 0.19],
    [0.57, 0.61, 0.20, 0.22],
    [0.18, 0.25, 0.55, 0.49],
    [0.24, 0.17, 0.50, 0.53],
]

#: metric -> realistic calls of its pure function, every option that adds keys exercised. The
#: first call uses no per-group options, so its keys must be documented literally; later calls'
#: group, subtest, test names and recall cut-offs are what a card's ``<placeholder>`` may stand for.
EXAMPLE_CALLS: dict[str, list[dict[str, Any]]] = {
    "pairwise_foil_accuracy": [
        {**_PAIRWISE, "n_resamples": 20},
        {
            **_PAIRWISE,
            "groups": ["direction", "direction", "sequence", "sequence", "type", "type"],
            "cluster": ["v1", "v1", "v2", "v3", "v3", "v4"],
            "pair_scores": [[[0.31, 0.27], [0.24, 0.29]]] * 6,
            "retrieval_scores": [[0.31, 0.27, 0.12, 0.10], [0.20, 0.18, 0.24, 0.26]] * 3,
            "retrieval_targets": [[0, 1], [2, 3]] * 3,
            "recall_ks": [1, 3],
            "n_resamples": 20,
        },
    ],
    "proficiency_combined_accuracy": [
        {**_PROFICIENCY, "n_resamples": 20},
        {**_PROFICIENCY, "score_kind": "probability", "n_resamples": 20},
        {
            **_PROFICIENCY,
            "groups": ["counting_easy", "counting_difficult", "change_action", "change_reverse"],
            "tests": ["action_counting", "action_counting", "change_of_state", "change_of_state"],
            "cluster": ["v1", "v2", "v3", "v3"],
            "score_kind": "probability",
            "n_resamples": 20,
        },
    ],
    "multiple_choice_accuracy": [
        {**_MULTIPLE_CHOICE, "n_resamples": 20},
        {
            **_MULTIPLE_CHOICE,
            "groups": ["verb_lm", "verb_lm", "verb_human", "gender"],
            "cluster": ["v1", "v2", "v1", "v3"],
            "n_resamples": 20,
        },
    ],
    "binary_retrieval_accuracy": [
        {"scores": _BLOCKS, "n_resamples": 20},
        {"scores": _BLOCKS, "cluster": ["a", "a", "b"], "ties": "strict", "n_resamples": 20},
    ],
    "retrieval_recall": [
        {"scores": _POOL, "ground_truth": [[0], [1], [2], [3]], "n_resamples": 20},
        {
            "scores": _POOL,
            "ground_truth": [[0], [1], [2], [3]],
            "cluster": ["s1", "s1", "s2", "s2"],
            "n_resamples": 20,
        },
    ],
    "winoground_score": [
        {"pair_scores": _BLOCKS, "n_resamples": 20},
        {
            "pair_scores": _BLOCKS,
            "categories": [["action"], ["object", "interaction"], ["action", "cyclical"]],
            "cluster": ["a", "a", "b"],
            "n_resamples": 20,
        },
    ],
}
#: the keyword arguments whose values name per-group result keys (multi-label ones: lists).
_NAMING_ARGUMENTS = ("groups", "tests", "recall_ks", "ks", "categories")


def _card(name: str) -> str:
    path = METRICS_DIR / name / "README.md"
    assert path.is_file(), f"{path} is missing: every metric folder needs its metric card"
    return path.read_text(encoding="utf-8")


def _front_matter(card: str) -> dict[str, Any]:
    match = re.match(r"---\n(.*?)\n---\n", card, flags=re.S)
    assert match, "README.md must open with YAML front matter between '---' lines"
    return yaml.safe_load(match.group(1))


def _sections(card: str) -> list[tuple[int, str, str]]:
    """(level, heading, body up to the next heading of the same or a higher level) per heading,
    headings inside fenced code ignored."""
    lines, headings, fenced = card.splitlines(), [], False
    for number, line in enumerate(lines):
        fenced ^= line.startswith("```")
        match = None if fenced else re.match(r"(#{1,6})\s+(.*\S)", line)
        if match:
            headings.append((number, len(match.group(1)), match.group(2)))
    sections = []
    for index, (number, level, heading) in enumerate(headings):
        end = next((n for n, lvl, _ in headings[index + 1 :] if lvl <= level), len(lines))
        sections.append((level, heading, "\n".join(lines[number + 1 : end])))
    return sections


def _section(card: str, title: str) -> str:
    pattern = REQUIRED_SECTIONS[title]
    bodies = [body for _, heading, body in _sections(card) if re.search(pattern, heading, re.I)]
    assert bodies, f"the card has no {title!r} section (a heading matching {pattern!r})"
    return "\n".join(bodies)


def _module(name: str) -> Any:
    return importlib.import_module(f"foilkit.metrics.{name}.{name}")


def _undocumented(result: dict[str, Any], call: dict[str, Any], documented: str) -> list[str]:
    """The keys of ``result`` the Output Values text does not name: literally as a backticked
    token, through a ``<placeholder>`` standing for one of the call's group names or cut-offs, or
    (for ``<key>_ci``) through a generic ``<...>_ci`` token when ``<key>`` itself is named."""
    tokens = set(re.findall(r"`([^`\s]+)`", documented))
    values = [v for arg in _NAMING_ARGUMENTS for v in (call.get(arg) or ())]
    names = {str(n) for v in values for n in (v if isinstance(v, list) else [v])}
    filler = "(?:" + "|".join(map(re.escape, sorted(names))) + ")" if names else "(?!)"
    patterns = [
        re.compile(
            "".join(
                filler if part.startswith("<") else re.escape(part)
                for part in re.split(r"(<[^>]+>)", token)
            )
        )
        for token in tokens
        if "<" in token
    ]
    generic_ci = any(re.fullmatch(r"<[^>]+>_ci", token) for token in tokens)

    def named(key: str) -> bool:
        return key in tokens or any(pattern.fullmatch(key) for pattern in patterns)

    return [
        key
        for key in result
        if not (named(key) or (generic_ci and key.endswith("_ci") and named(key[: -len("_ci")])))
    ]


def _requirement_names(path: Path) -> set[str]:
    names = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", line)
        if match:
            names.add(re.sub(r"[-_.]+", "-", match.group(0)).lower())
    return names


def _module_level_imports(source: str) -> set[str]:
    """Top-level names of absolute imports outside function and class bodies (lazy imports in a
    function are optional extras, not requirements)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name.split(".")[0] for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module:
                found.add(child.module.split(".")[0])
            visit(child)

    visit(ast.parse(source))
    return found


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """``evaluate`` in offline mode, whatever the environment said when it was imported."""
    import evaluate

    monkeypatch.setenv("HF_EVALUATE_OFFLINE", "1")
    monkeypatch.setattr(evaluate.config, "HF_EVALUATE_OFFLINE", True)


@pytest.fixture
def widget_calls(offline: None, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """``launch_gradio_widget`` replaced by a recorder of the modules handed to it."""
    import evaluate.utils

    calls: list[Any] = []
    monkeypatch.setattr(evaluate.utils, "launch_gradio_widget", calls.append)
    return calls


def test_every_metric_folder_is_found():
    expected = {
        "pairwise_foil_accuracy",
        "proficiency_combined_accuracy",
        "multiple_choice_accuracy",
        "binary_retrieval_accuracy",
    }
    assert expected <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_card_front_matter_is_an_evaluate_space(name):
    meta = _front_matter(_card(name))
    bad = {key: meta.get(key) for key, ok in FRONT_MATTER.items() if not ok(meta.get(key))}
    assert not bad, f"metrics/{name}/README.md front matter: missing or invalid {bad}"


@pytest.mark.parametrize("name", MODULES)
@pytest.mark.parametrize("title", list(REQUIRED_SECTIONS))
def test_card_has_section(name, title):
    assert _section(_card(name), title).strip(), f"metrics/{name}/README.md: {title!r} is empty"


@pytest.mark.parametrize("name", MODULES)
def test_card_documents_every_output_key(name):
    assert name in EXAMPLE_CALLS, f"add realistic example calls of {name} to EXAMPLE_CALLS"
    documented = _section(_card(name), "Output Values")
    function = getattr(_module(name), name)
    missing = {}
    for index, call in enumerate(EXAMPLE_CALLS[name]):
        undocumented = _undocumented(function(**call), call, documented)
        if undocumented:
            missing[index] = undocumented
    assert not missing, (
        f"metrics/{name}/README.md Output Values does not document these keys "
        f"(example call -> keys): {missing}"
    )


def test_undocumented_keys_are_caught():
    """The check itself: a placeholder stands only for the call's names, ``_ci`` needs its key."""
    documented = "| `accuracy` | `accuracy_ci` | `accuracy_<group>` | `n` |"
    keys = ["accuracy", "accuracy_ci", "accuracy_sequence", "accuracy_sequence_ci", "n"]
    extra = ["n_sequence", "n_tied", "accuracy_typo"]
    result = dict.fromkeys(keys + extra, 1.0)
    call = {"groups": ["sequence"]}
    assert _undocumented(result, call, documented) == ["accuracy_sequence_ci", *extra]
    assert _undocumented(result, call, documented + " `<key>_ci`") == extra
    without_groups = _undocumented(result, {}, documented)
    assert without_groups == ["accuracy_sequence", "accuracy_sequence_ci", *extra]


@pytest.mark.parametrize("name", MODULES)
def test_card_documents_every_argument(name):
    inputs = _section(_card(name), "Inputs")
    parameters = inspect.signature(getattr(_module(name), name)).parameters
    missing = [p for p in parameters if not re.search(rf"[`*]{re.escape(p)}[`*]", inputs)]
    assert not missing, f"metrics/{name}/README.md Inputs does not document {missing}"


@pytest.mark.parametrize("name", MODULES)
def test_card_shows_every_way_to_load(name):
    how_to = _section(_card(name), "How to Use")
    ways = {
        "evaluate from a checkout": f'evaluate.load("metrics/{name}")',
        "foilkit installed": f'foilkit.metrics.load("{name}")',
        "the pure function": f"from foilkit.metrics.{name}.{name} import",
    }
    missing = [way for way, text in ways.items() if text not in how_to]
    assert not missing, f"metrics/{name}/README.md How to Use does not show: {missing}"


@pytest.mark.parametrize("name", MODULES)
def test_card_cites_the_module(name):
    citation = " ".join(_module(name)._CITATION.split())
    assert citation in " ".join(_section(_card(name), "Citation").split())


@pytest.mark.parametrize("name", MODULES)
def test_card_examples_are_what_the_code_returns(name, monkeypatch, offline):
    """Every ``>>>`` line of the card's python blocks runs (from the repository root, where
    ``evaluate.load("metrics/<name>")`` resolves) and prints what the card says."""
    card = _card(name)
    assert ">>>" in _section(card, "Examples"), f"metrics/{name}/README.md: no runnable example"
    source = "\n".join(
        block for block in re.findall(r"```python\n(.*?)```", card, flags=re.S) if ">>>" in block
    )
    monkeypatch.chdir(REPO_ROOT)
    test = doctest.DocTestParser().get_doctest(source, {}, f"{name}/README.md", None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    output: list[str] = []
    runner.run(test, out=output.append)
    assert runner.failures == 0, "".join(output)


@pytest.mark.parametrize("name", MODULES)
def test_app_compiles(name):
    path = METRICS_DIR / name / "app.py"
    assert path.is_file(), f"{path} is missing: the Space needs its entry point"
    compile(path.read_text(encoding="utf-8"), str(path), "exec")


@pytest.mark.parametrize("layout", ["checkout", "space"])
@pytest.mark.parametrize("name", MODULES)
def test_app_hands_the_module_to_the_widget(name, layout, tmp_path, widget_calls):
    """Run ``app.py`` in the checkout, and in a copy laid out as a Space runs it: files (links
    resolved) in a folder named ``app/``, where loading the folder would load ``app.py`` itself."""
    folder = METRICS_DIR / name
    if layout == "space":
        ignore = shutil.ignore_patterns("__pycache__")
        folder = Path(shutil.copytree(folder, tmp_path / "app", ignore=ignore))
    runpy.run_path(str(folder / "app.py"), run_name="__main__")
    assert len(widget_calls) == 1, f"app.py launched the widget {len(widget_calls)} times"
    module = widget_calls[0]
    import evaluate

    assert isinstance(module, evaluate.EvaluationModule)
    assert module.name == name
    assert module.description == _module(name)._DESCRIPTION


@pytest.mark.parametrize("name", MODULES)
def test_requirements_cover_the_imports(name):
    folder = METRICS_DIR / name
    path = folder / "requirements.txt"
    assert path.is_file(), f"{path} is missing"
    listed = _requirement_names(path)
    assert "evaluate" in listed, f"{path} does not list evaluate"
    imported = set().union(
        *(_module_level_imports(file.read_text(encoding="utf-8")) for file in folder.glob("*.py"))
    )
    needed = {
        re.sub(r"[-_.]+", "-", DISTRIBUTIONS.get(top, top)).lower()
        for top in imported - set(sys.stdlib_module_names) - SPACE_PROVIDED
    }
    assert needed <= listed, f"{path} misses {sorted(needed - listed)} (imported by {folder}/*.py)"
