"""Reading and writing the pipeline's data files (YAML or JSON, chosen by the file's suffix).

Exemplar sets, the prompt template, aspect instructions, configuration and loop state are all
files a person reads and edits; each has a ``format`` tag so a file of the wrong kind is named
as such instead of failing somewhere downstream.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from foilkit.files import atomic_write, read_json, read_text

YAML_SUFFIXES = (".yaml", ".yml")


def package_data(name: str) -> Path:
    """The path of a data file shipped with foilkit in ``generation/vitatecs/data``."""
    return Path(str(resources.files("foilkit.generation.vitatecs") / "data" / name))


def read_data(path: str | os.PathLike, *, format: str | None = None) -> dict[str, Any]:
    """The mapping stored in a YAML/JSON file; checks its ``format`` tag when one is expected."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    if path.suffix.lower() in YAML_SUFFIXES:
        import yaml

        try:
            data = yaml.safe_load(read_text(path))
        except yaml.YAMLError as error:
            raise ValueError(f"{path}: not valid YAML ({error})") from None
    else:
        data = read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping at the top level, got {type(data).__name__}")
    if format is not None and data.get("format") != format:
        raise ValueError(f"{path}: 'format' is {data.get('format')!r}, expected {format!r}")
    return data


def write_data(path: str | os.PathLike, data: Mapping[str, Any]) -> Path:
    """Write ``data`` as YAML or JSON (by suffix), atomically, keys in the given order."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() in YAML_SUFFIXES:
        import yaml

        text = yaml.safe_dump(
            _plain(data), sort_keys=False, allow_unicode=True, width=100, default_flow_style=False
        )
    else:
        text = json.dumps(_plain(data), indent=2, ensure_ascii=False) + "\n"
    atomic_write(path, text)
    return path


def _plain(value: Any) -> Any:
    """Mappings and sequences as dicts and lists (what yaml.safe_dump and json accept)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value
