"""One registry type for every named thing foilkit looks up: commands (``foilkit.cli.COMMANDS``),
generation pipelines (``foilkit.cli.generate.PIPELINES``), builders and benchmarks
(``foilkit.builders.BUILDERS``, ``BENCHMARKS``), adapters (``foilkit.scorers.adapters.ADAPTERS``)
and the flat public API (``foilkit._LAZY``). The metrics package imports nothing else of foilkit
(each folder is a self-contained evaluate module), so its ``METRICS`` stays a plain tuple.

A :class:`Registry` maps a name to a target and a one-line summary. A target is the object
itself, or a lazy reference, ``"package.module"`` or ``"package.module:attribute"``, imported
only when :meth:`Registry.get` asks for it, so ``foilkit --help`` and ``import foilkit`` never pay
for torch. An unknown name is an :class:`UnknownNameError` that lists the known ones.

>>> colours = Registry("colour")
>>> colours.add("red", (255, 0, 0), "the first primary")
>>> colours.get("red")
(255, 0, 0)
>>> colours.names()
('red',)
>>> colours.get("blue")
Traceback (most recent call last):
...
foilkit.registry.UnknownNameError: unknown colour 'blue'; choose from: red
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Lazy:
    """A reference to ``module`` (or ``module:attribute``), imported when first needed."""

    path: str

    def load(self) -> Any:
        module, _, attribute = self.path.partition(":")
        loaded = importlib.import_module(module)
        return getattr(loaded, attribute) if attribute else loaded

    @property
    def module(self) -> str:
        return self.path.partition(":")[0]


@dataclass(frozen=True)
class Entry(Generic[T]):
    """One registered name: its target (or a :class:`Lazy` reference to it) and summary."""

    name: str
    target: T | Lazy
    summary: str = ""


class UnknownNameError(KeyError, ValueError):
    """A name no registry entry has; the message lists the names that exist. A ``ValueError``
    too: a wrong name is a value the user chose (the command line reports it in one line)."""

    def __str__(self) -> str:  # KeyError would quote the whole message again
        return str(self.args[0])


class Registry(Generic[T]):
    """Names -> targets of one ``kind`` (the word used in errors: "benchmark", "command")."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry[T]] = {}

    def add(self, name: str, target: T | Lazy, summary: str = "") -> None:
        """Register ``target`` (an object, or a :class:`Lazy` reference) under ``name``."""
        if name in self._entries:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._entries[name] = Entry(name, target, summary)

    def add_lazy(self, name: str, path: str, summary: str = "") -> None:
        """Register ``"module"`` or ``"module:attribute"``, imported when ``name`` is first used."""
        self.add(name, Lazy(path), summary)

    def entry(self, name: str) -> Entry[T]:
        try:
            return self._entries[name]
        except KeyError:
            choices = ", ".join(self._entries) or "(none registered)"
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}; choose from: {choices}"
            ) from None

    def get(self, name: str) -> T:
        """The target registered as ``name`` (imported now if it was registered lazily)."""
        target = self.entry(name).target
        return target.load() if isinstance(target, Lazy) else target

    __getitem__ = get

    def remove(self, name: str) -> None:
        """Unregister ``name`` (a plug-in registered for a while, e.g. by a test)."""
        self.entry(name)  # an unknown name is an UnknownNameError
        del self._entries[name]

    __delitem__ = remove

    def summary(self, name: str) -> str:
        return self.entry(name).summary

    def names(self) -> tuple[str, ...]:
        """Registered names, in registration order."""
        return tuple(self._entries)

    def listing(self) -> str:
        """Names and summaries, one aligned line each (for a parser's epilog)."""
        width = max((len(name) for name in self._entries), default=0)
        return "\n".join(
            f"  {entry.name:<{width}}  {entry.summary}" for entry in self._entries.values()
        )

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self._entries)})"
