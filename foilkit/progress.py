"""Progress output: foilkit shows its own, and silences the libraries' bars underneath it.

A base module (it imports nothing of foilkit), so builders, scorers and commands share it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext


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


#: Seconds between two periodic progress lines when stderr is no terminal (``--log-interval``).
DEFAULT_LOG_INTERVAL = 30.0

#: ``--verbosity`` levels, quietest first: ``error`` and ``warning`` print no progress lines;
#: ``info`` (the default) prints foilkit's; ``debug`` also lets the libraries' info messages and
#: their bars through (but those of the steps foilkit's own progress covers: scoring, exports).
VERBOSITIES = ("error", "warning", "info", "debug")

#: What the environment tells the libraries imported inside :func:`quiet_libraries` (each reads
#: its switch when first imported; tqdm reads ``TQDM_DISABLE`` at every bar it makes).
_QUIET_ENVIRONMENT = {
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "TQDM_DISABLE": "1",
}


@contextmanager
def quiet_libraries(verbosity: str = "info") -> Iterator[None]:
    """Silence every library progress bar of this process and the processes it starts for the
    block, unless ``verbosity`` is ``debug``; at ``error``/``warning`` the libraries' loggers go
    to that level, at ``debug`` to ``INFO``. The environment and the loggers' levels are
    restored after.

    The bars ("Generating test split", "Creating parquet from Arrow format", "Loading weights",
    tqdm's own) are written with carriage returns, which a log file keeps as one long line.
    foilkit's own bars are made with ``disable=`` given, which ``TQDM_DISABLE`` does not
    override; libraries already imported are switched off directly, later ones by the
    environment (which ``accelerate launch``'s processes inherit too); a library first imported
    in the block keeps its bars off after it.
    """
    import logging
    import os

    if verbosity not in VERBOSITIES:
        raise ValueError(f"verbosity {verbosity!r}; choose from {', '.join(VERBOSITIES)}")
    environment = {name: os.environ.get(name) for name in _QUIET_ENVIRONMENT}
    loggers = [
        logging.getLogger(name)
        for name in ("datasets", "transformers", "huggingface_hub", "accelerate", "foilkit")
    ]
    levels = [logger.level for logger in loggers]
    if verbosity != "info":  # info leaves each library's own level
        level = {"error": logging.ERROR, "warning": logging.WARNING, "debug": logging.INFO}
        for logger in loggers:
            logger.setLevel(level[verbosity])
    quiet = verbosity != "debug"
    if quiet:
        for name, value in _QUIET_ENVIRONMENT.items():
            os.environ.setdefault(name, value)
    imported = "datasets" in sys.modules  # else importing it here would cost every command
    try:
        with library_progress_bars(enabled=False) if quiet and imported else nullcontext():
            yield
    finally:
        for name, value in environment.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def format_seconds(seconds: float) -> str:
    """``3725`` -> ``1:02:05``: a duration as h:mm:ss."""
    whole = max(0, round(seconds))
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


class ProgressLines:
    """Periodic progress lines for a log (``score: 120/480 rows (25%), 3.1 rows/s, elapsed
    0:00:39, ETA 0:01:56``) on stderr, at most once every ``interval`` seconds (``0``: after
    every update); ``clock``: seconds, monotonic (tests give their own).

    The terminal gets bars instead (see :func:`interactive`); a log file gets these, so a
    SLURM job shows that it is alive, how fast it goes and when it will end.
    """

    def __init__(
        self,
        label: str,
        total: int,
        unit: str,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label, self.total, self.unit, self.interval = label, total, unit, interval
        self.done = 0
        self._clock = clock
        self._started = self._last = clock()

    def update(self, count: int) -> None:
        """Count ``count`` more done; print a line when ``interval`` has passed since the last."""
        self.done += count
        now = self._clock()
        if now - self._last >= self.interval:
            self._last = now
            print(self.line(now - self._started), file=sys.stderr, flush=True)

    def line(self, elapsed: float) -> str:
        """The progress line after ``elapsed`` seconds."""
        rate = self.done / elapsed if elapsed > 0 else 0.0
        share = f" ({self.done / self.total:.0%})" if self.total else ""
        left = self.total - self.done
        eta = format_seconds(left / rate) if rate > 0 else "unknown"
        return (
            f"{self.label}: {self.done}/{self.total} {self.unit}{share}, {rate:.3g} {self.unit}/s, "
            f"elapsed {format_seconds(elapsed)}, ETA {eta}"
        )
