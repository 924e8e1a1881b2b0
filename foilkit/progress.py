"""Progress output: foilkit shows its own, and silences the libraries' bars underneath it.

A base module (it imports nothing of foilkit), so builders, scorers and commands share it.
"""

from __future__ import annotations

import io
import logging
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import TextIO


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


#: What the libraries print or log that says nothing to a foilkit user and that foilkit's own
#: messages do not replace: notes about the libraries' own code, not the user's model or data.
#: Dropped by :func:`library_noise_dropped`, where foilkit loads a model or lists the families.
LIBRARY_NOISE = (
    # transformers' docstring check, printed (stdout) each time PE-Video's model is built
    re.compile(r"^\[ERROR\] `\w+` is part of .*, but not documented"),
    # transformers' note to processor authors (PE-Video's processor)
    re.compile(r"defines `video_processor_class = .*`, which is deprecated"),
)

#: What the libraries log while ``foilkit models`` builds each family's tiny twin's config to
#: list it: the twins' own settings (token ids beyond a tiny vocabulary, no RoPE parameters).
TWIN_CONFIG_NOISE = (
    re.compile(r"^Model config: \w+ must be `None` or an integer within the vocabulary"),
    re.compile(r"^`standardize_rope_params` was called but no RoPE parameters were found"),
)


class _NoiseDroppingStream(io.TextIOBase):
    """A text stream passing every line to ``stream`` but those ``patterns`` match (kept whole
    until their newline, so a line printed in parts is judged whole)."""

    def __init__(self, stream: TextIO, patterns: Sequence[re.Pattern[str]]) -> None:
        self.stream, self.patterns, self.pending = stream, patterns, ""

    def write(self, text: str) -> int:
        *lines, self.pending = (self.pending + text).split("\n")
        for line in lines:
            self._pass(line + "\n")
        return len(text)

    def _pass(self, text: str) -> None:
        if not any(pattern.search(text) for pattern in self.patterns):
            self.stream.write(text)

    def flush(self) -> None:
        if self.pending:
            self._pass(self.pending)
            self.pending = ""
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.stream.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self.stream.errors

    def __getattr__(self, name: str):  # what else a library asks of the stream (``buffer``)
        return getattr(self.stream, name)


@contextmanager
def library_noise_dropped(patterns: Sequence[re.Pattern[str]] = LIBRARY_NOISE) -> Iterator[None]:
    """Drop the libraries' messages that ``patterns`` match (:data:`LIBRARY_NOISE`) for the
    block: those logged through ``transformers``' loggers, and those printed to stdout or
    stderr. Every other message passes, and everything is as before after the block: the
    user sees foilkit's messages and the libraries' warnings that concern their model or data,
    not notes about the libraries' own code."""
    try:  # its handler, which writes to the stderr of when it was made
        from transformers.utils import logging as transformers_logging

        handlers = list(transformers_logging._get_library_root_logger().handlers)
    except ImportError:
        handlers = []

    def noise(record: logging.LogRecord) -> bool:  # a handler's filter: False drops the record
        return not any(pattern.search(record.getMessage()) for pattern in patterns)

    for handler in handlers:
        handler.addFilter(noise)
    streams = sys.stdout, sys.stderr
    sys.stdout = _NoiseDroppingStream(streams[0], patterns)  # type: ignore[assignment]
    sys.stderr = _NoiseDroppingStream(streams[1], patterns)  # type: ignore[assignment]
    try:
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        sys.stdout, sys.stderr = streams
        for handler in handlers:
            handler.removeFilter(noise)


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
