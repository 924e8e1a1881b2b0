"""The RTime prompts as data: YAML files of chat messages with ``{named}`` fields.

Each file in ``prompts/`` holds ``source`` (where in the paper the prompt comes from and how
faithful it is), ``fields`` (the names it needs) and ``messages`` (``role``/``content`` pairs
whose content is a ``str.format`` template). A user's own file of the same shape replaces a
packaged one (``--prompt``), and :func:`prompt_hash` goes into every output row's provenance,
so a row says which wording produced it.
"""

from __future__ import annotations

import hashlib
import json
import os
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROMPTS_DIR = Path(__file__).parent / "prompts"


@dataclass(frozen=True)
class PromptTemplate:
    """Chat messages with ``{field}`` slots, and where they come from."""

    name: str
    source: str
    fields: tuple[str, ...]
    messages: tuple[tuple[str, str], ...]  # (role, content template)
    path: str = "<memory>"

    def __post_init__(self) -> None:
        used = {
            name
            for _, content in self.messages
            for _, name, _, _ in string.Formatter().parse(content)
            if name
        }
        if used != set(self.fields):
            raise ValueError(
                f"prompt {self.path}: 'fields' {sorted(self.fields)} differ from the fields its "
                f"messages use {sorted(used)}"
            )

    @classmethod
    def load(cls, name_or_path: str | os.PathLike) -> PromptTemplate:
        """A packaged prompt by name (``"rewrite_caption"``) or a YAML file by path."""
        import yaml

        path = Path(name_or_path)
        if not path.suffix:
            path = PROMPTS_DIR / f"{name_or_path}.yaml"
        if not path.is_file():
            packaged = sorted(p.stem for p in PROMPTS_DIR.glob("*.yaml"))
            raise FileNotFoundError(f"no prompt file {path} (packaged prompts: {packaged})")
        record = yaml.safe_load(path.read_text(encoding="utf-8"))
        try:
            messages = tuple((m["role"], m["content"]) for m in record["messages"])
            return cls(
                name=path.stem,
                source=str(record.get("source", "")),
                fields=tuple(record["fields"]),
                messages=messages,
                path=str(path),
            )
        except (KeyError, TypeError) as error:
            raise ValueError(
                f"prompt {path}: needs 'fields' and 'messages' (each with 'role' and "
                f"'content'): {error!r}"
            ) from None

    def render(self, **values: Any) -> list[dict[str, str]]:
        """The chat messages with every field filled in."""
        missing = sorted(set(self.fields) - values.keys())
        if missing:
            raise KeyError(f"prompt {self.path} needs field(s) {missing}")
        return [
            {"role": role, "content": content.format(**values)} for role, content in self.messages
        ]


def prompt_hash(messages: Sequence[Mapping[str, str]]) -> str:
    """SHA-256 of the rendered messages alone (model and sampling excluded)."""
    text = json.dumps(list(messages), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def template_hash(template: PromptTemplate) -> str:
    """SHA-256 of a template's messages before filling: names the wording across all rows."""
    return prompt_hash([{"role": role, "content": content} for role, content in template.messages])
