"""Prompts as data: one template type and one hash for every LLM pipeline (VITATECS, RTime).

A prompt file is YAML::

    format: foilkit.prompt/1          # optional in a user's file; checked when present
    version: 1                        # bump when editing the wording
    source: where in the paper the prompt comes from and how faithful it is
    fields: [caption, count]          # the names its messages use
    messages:                         # chat messages whose content is a str.format template
      - {role: system, content: "..."}
      - {role: user, content: "Description: {caption} ..."}

A pipeline may keep more sections in the same file (VITATECS' ``demonstrations``: how each
in-context example is written); :meth:`PromptTemplate.from_data` is told which. Two hashes name a
prompt in provenance: :func:`prompt_hash` of the messages as sent (one request), and
:attr:`PromptTemplate.template_hash` of the unfilled messages (the wording a whole run used).
"""

from __future__ import annotations

import hashlib
import json
import os
import string
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROMPT_FORMAT = "foilkit.prompt/1"
_KEYS = ("format", "version", "source", "fields", "messages")


def prompt_hash(messages: Sequence[Mapping[str, str]]) -> str:
    """SHA-256 of chat messages (role and content, in order); model and sampling are not in it."""
    text = json.dumps(
        [dict(message) for message in messages],
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class PromptTemplate:
    """Chat messages with ``{field}`` slots, and where they come from.

    Attributes:
        name: the file's stem (``"rewrite_caption"``).
        source: where in the paper the wording comes from.
        fields: the names the messages use; checked against them.
        messages: ``(role, content template)`` pairs.
        path: the file it was read from.
        version: the wording's version, bumped by whoever edits it.
    """

    name: str
    source: str
    fields: tuple[str, ...]
    messages: tuple[tuple[str, str], ...]
    path: str = "<memory>"
    version: int = 1
    template_hash: str = field(init=False, repr=False, compare=False)

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
        unfilled = [{"role": role, "content": content} for role, content in self.messages]
        object.__setattr__(self, "template_hash", prompt_hash(unfilled))

    @classmethod
    def load(
        cls, name_or_path: str | os.PathLike, *, folder: str | os.PathLike | None = None
    ) -> PromptTemplate:
        """A prompt file by path, or a packaged one by name (no suffix) from ``folder``."""
        return cls.from_data(*read_prompt_file(name_or_path, folder=folder))

    @classmethod
    def from_data(
        cls, data: Mapping[str, Any], path: str | os.PathLike, *, sections: Collection[str] = ()
    ) -> PromptTemplate:
        """The template in a prompt file's ``data``; ``sections`` names the other top-level keys
        the pipeline reads itself (any further key is an error naming the file)."""
        if data.get("format", PROMPT_FORMAT) != PROMPT_FORMAT:
            raise ValueError(
                f"prompt {path}: 'format' is {data['format']!r}, expected {PROMPT_FORMAT!r} "
                "(a prompt file has 'fields' and chat 'messages': see foilkit.generation.prompts)"
            )
        unknown = sorted(set(data) - set(_KEYS) - set(sections))
        if unknown:
            raise ValueError(
                f"prompt {path}: unknown key(s) {unknown}; a prompt file has "
                f"{sorted({*_KEYS, *sections})}"
            )
        try:
            messages = tuple((str(m["role"]), str(m["content"])) for m in data["messages"])
            return cls(
                name=Path(path).stem,
                source=str(data.get("source", "")),
                fields=tuple(data["fields"]),
                messages=messages,
                path=str(path),
                version=int(data.get("version", 1)),
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

    def record(self) -> dict[str, Any]:
        """What a run record says about the wording: name, file, version and template hash."""
        return {key: getattr(self, key) for key in ("name", "path", "version", "template_hash")}


def read_prompt_file(
    name_or_path: str | os.PathLike, *, folder: str | os.PathLike | None = None
) -> tuple[dict[str, Any], Path]:
    """The mapping in a prompt file and its path; a bare name is looked up in ``folder``."""
    import yaml

    path = Path(name_or_path)
    if not path.suffix and folder is not None:
        path = Path(folder) / f"{name_or_path}.yaml"
    if not path.is_file():
        packaged = sorted(p.stem for p in Path(folder).glob("*.yaml")) if folder else []
        raise FileNotFoundError(f"no prompt file {path} (packaged prompts: {packaged})")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ValueError(f"prompt {path}: not valid YAML ({error})") from None
    if not isinstance(data, dict):
        raise ValueError(f"prompt {path}: expected a mapping, got {type(data).__name__}")
    return data, path
