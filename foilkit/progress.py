"""Progress output: foilkit shows its own, and silences the libraries' bars underneath it.

A base module (it imports nothing of foilkit), so builders, scorers and commands share it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager


def interactive() -> bool:
    """Whether progress bars can redraw in place (stderr is a terminal); elsewhere foilkit
    prints one line per phase instead of bars full of escape codes."""
    return sys.stderr.isatty()


@contextmanager
def library_progress_bars(*, enabled: bool) -> Iterator[None]:
    """Switch the progress bars of ``datasets``, ``huggingface_hub`` and (when installed)
    ``transformers`` on or off for the block ("Creating parquet from Arrow format",
    "Generating test split", "Loading weights"), and restore them after.

    foilkit's commands show their own progress (one line per phase when stderr is no terminal);
    the libraries' bars are noise there, and ``--no-progress`` could not silence them.
    """
    import datasets
    from huggingface_hub import utils as hub_utils

    libraries = [datasets.utils.logging]
    try:  # its bars ("Loading weights") come with the first model; transformers loads lazily
        from transformers.utils import logging as transformers_logging

        libraries.append(transformers_logging)
    except ImportError:
        pass
    before = [library.is_progress_bar_enabled() for library in libraries]
    hub_before = not hub_utils.are_progress_bars_disabled()
    switch = "enable_progress_bar" if enabled else "disable_progress_bar"
    for library in libraries:
        getattr(library, switch)()
    (hub_utils.enable_progress_bars if enabled else hub_utils.disable_progress_bars)()
    try:
        yield
    finally:
        for library, was in zip(libraries, before, strict=True):
            (library.enable_progress_bar if was else library.disable_progress_bar)()
        (hub_utils.enable_progress_bars if hub_before else hub_utils.disable_progress_bars)()
