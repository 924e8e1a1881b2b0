"""One word per job in the code's names (docs/contributing/index.md, "Names"): a JSON-ready
record is written by ``to_record`` and read by ``from_record``; typed settings are ``*Options``
(what a user gives a command) or ``*Settings`` (what one component runs with), and ``*Config``
is left to the libraries' word."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: ``*Config`` classes that are not settings: the library owns the word.
LIBRARY_CONFIGS = {
    "TemporalConfig": "a model's configuration, saved in its config.json (transformers' word)",
    "ExportedConfig": "one exported dataset config (datasets' word for a benchmark's subset)",
}
#: The serialisation verbs that ``to_record`` / ``from_record`` replaced.
OTHER_VERBS = ("to_json", "from_json", "as_dict", "to_dict")


def _classes() -> list[tuple[str, ast.ClassDef]]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    found = []
    for name in listed:
        path = ROOT / name
        if name.startswith("tests/") or path.is_symlink() or not path.is_file():
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [(name, node) for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    return found


CLASSES = _classes()


def _base_names(node: ast.ClassDef) -> set[str]:
    return {ast.unparse(base).rsplit(".", 1)[-1] for base in node.bases}


def test_settings_take_options_or_settings_and_config_is_the_libraries_word():
    builder_configs = {"BuilderConfig"}
    for _, node in CLASSES:  # FoilkitConfig and each builder's config, however deep
        for _, other in CLASSES:
            if _base_names(other) & builder_configs:
                builder_configs.add(other.name)
    wrong = [
        f"{path}: {node.name}"
        for path, node in CLASSES
        if node.name.endswith("Config")
        and node.name not in builder_configs
        and node.name not in LIBRARY_CONFIGS
    ]
    assert not wrong, f"settings named *Config (name them *Options or *Settings): {wrong}"


@pytest.mark.parametrize("verb", OTHER_VERBS)
def test_records_are_written_by_to_record_only(verb):
    named = [
        f"{path}: {node.name}.{verb}"
        for path, node in CLASSES
        for item in node.body
        if isinstance(item, ast.FunctionDef) and item.name == verb
    ]
    assert not named, f"name the method to_record/from_record: {named}"


def test_the_documented_old_names_still_import():
    from foilkit.generation.contrast.verb_phrases import VerbFoilConfig, VerbFoilSettings
    from foilkit.generation.llm import LLMConfig, LLMSettings

    assert LLMConfig is LLMSettings and VerbFoilConfig is VerbFoilSettings
