"""What a run makes once however many configs and benchmarks it scores: the model's weights
and processor, the served backend, the LLM judge.

``foilkit evaluate --config all`` (and ``--tasks``) scores config after config, each through
its own adapter (a config may resolve its own prompt or answer parser); within
:func:`one_run`, each adapter built for the same model takes the weights and processor the
first one loaded (:func:`once`), instead of loading them again: for a 72B model on 8 GPUs that
is minutes per config. Outside :func:`one_run` (``foilkit.score``, a Python caller) every call
makes its own, as before.

A model is held until another model is loaded in its place (:func:`once`'s ``slot``), so a run
never holds two models' weights at a time; everything else is held until the run ends.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ParamSpec, TypeVar

T = TypeVar("T")
P = ParamSpec("P")

#: What the current run made, by key (``None``: no run is open: nothing is kept).
_MADE: ContextVar[dict[Hashable, Any] | None] = ContextVar("foilkit_made_once", default=None)
#: Per slot, the key of the object holding it in the current run.
_SLOTS: ContextVar[dict[str, Hashable] | None] = ContextVar("foilkit_once_slots", default=None)


@contextmanager
def one_run() -> Iterator[None]:
    """Within it, :func:`once` makes each object once; a run opened inside another is part of
    it (``--tasks`` runs one ``evaluate`` per benchmark, all sharing the model). What was made
    is let go when the outermost run ends."""
    if _MADE.get() is not None:
        yield
        return
    made, slots = _MADE.set({}), _SLOTS.set({})
    try:
        yield
    finally:
        _MADE.reset(made)
        _SLOTS.reset(slots)


def in_one_run(function: Callable[P, T]) -> Callable[P, T]:
    """``function``, each call of it one run (:func:`one_run`): ``foilkit.evaluate``'s."""

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        with one_run():
            return function(*args, **kwargs)

    return run


def once(key: Hashable, make: Callable[[], T], *, slot: str | None = None) -> T:
    """``make()``, or, within :func:`one_run`, what it made for ``key`` before in this run.

    ``slot``: objects of which the run holds one at a time (``"model"``: weights); making one
    for another key lets the previous one go first, so its memory is free for the new one.
    """
    made = _MADE.get()
    if made is None:
        return make()
    if key in made:
        return made[key]
    slots = _SLOTS.get()
    if slot is not None and slots is not None:
        previous = slots.pop(slot, None)
        if previous is not None:
            made.pop(previous, None)
    made[key] = value = make()
    if slot is not None and slots is not None:
        slots[slot] = key
    return value


__all__ = ["in_one_run", "once", "one_run"]
