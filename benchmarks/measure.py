"""What every benchmark script shares: timing a phase with its peak memory, tables, the JSON record.

A *phase* is one timed piece of work (the engine's run, the naive loop, the decode-only pass).
``measure(name)`` times it (wall and CPU seconds: the CPU time of every thread of this process,
so CPU / wall is how many cores the phase kept busy) and samples memory in a background thread
while it runs:

- host memory: the RSS of this process (the engine decodes in threads of it), sampled every
  ``SAMPLE_EVERY_S`` seconds; the peak, in MiB;
- GPU memory: ``torch.cuda.max_memory_allocated`` over the phase, in MiB, when CUDA is in use.

Ratios are only meaningful between phases measured in one run on one machine, so every
result carries the hardware it ran on.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import psutil

SAMPLE_EVERY_S = 0.02
MIB = 1 << 20


@dataclass
class Phase:
    """One measured phase: wall time, memory at its start and its peak (``None``: not measured).

    The peak less the start is what the phase itself needed on top of what was already held
    (the model, or the score matrix a metric reads).
    """

    name: str
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # CPU time of this process (every thread) over the phase
    start_rss_mib: float | None = None
    peak_rss_mib: float | None = None
    start_gpu_mib: float | None = None
    peak_gpu_mib: float | None = None

    def rate(self, count: int) -> float:
        """``count`` things per second of this phase."""
        return count / self.seconds if self.seconds > 0 else float("inf")

    @property
    def cores_busy(self) -> float:
        """CPU seconds per wall second: how many cores the phase kept busy on average."""
        return self.cpu_seconds / self.seconds if self.seconds > 0 else 0.0


class _PeakSampler(threading.Thread):
    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.process = psutil.Process(os.getpid())
        self.peak = self.process.memory_info().rss
        self._stop_event = threading.Event()

    def run(self) -> None:
        while not self._stop_event.wait(SAMPLE_EVERY_S):
            self.peak = max(self.peak, self.process.memory_info().rss)

    def stop(self) -> int:
        self._stop_event.set()
        self.join()
        return max(self.peak, self.process.memory_info().rss)


def _cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


@contextmanager
def measure(name: str) -> Iterator[Phase]:
    """Time the ``with`` block and record its peak host (and GPU) memory in the yielded
    ``Phase``."""
    import torch

    phase = Phase(name)
    cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        phase.start_gpu_mib = round(torch.cuda.memory_allocated() / MIB, 1)
    sampler = _PeakSampler()
    phase.start_rss_mib = round(sampler.peak / MIB, 1)
    sampler.start()
    cpu_started = _cpu_seconds(sampler.process)
    started = time.perf_counter()
    try:
        yield phase
    finally:
        if cuda:
            torch.cuda.synchronize()
        phase.seconds = time.perf_counter() - started
        phase.cpu_seconds = _cpu_seconds(sampler.process) - cpu_started
        phase.peak_rss_mib = round(sampler.stop() / MIB, 1)
        if cuda:
            phase.peak_gpu_mib = round(torch.cuda.max_memory_allocated() / MIB, 1)


def phase_record(phase: Phase) -> dict[str, Any]:
    record = {key: value for key, value in asdict(phase).items() if key != "name"}
    return {**record, "cores_busy": round(phase.cores_busy, 3)}


def environment() -> dict[str, Any]:
    """Hardware and package versions of this run (the scorer's own run-record helpers)."""
    import torch

    from foilkit.scorers.record import hardware, package_versions

    record = {
        **hardware(1),
        "packages": package_versions(),
        "torch_threads": torch.get_num_threads(),
    }
    if torch.cuda.is_available():
        properties = torch.cuda.get_device_properties(0)
        record["gpu_memory_gib"] = round(properties.total_memory / (1 << 30), 1)
    return record


def describe_hardware(env: Mapping[str, Any]) -> str:
    """One line naming the machine, for the header of a printed table."""
    gpus = ", ".join(env.get("gpus") or []) or "no GPU"
    torch = env["packages"].get("torch")
    return f"{env['cpu_count']} CPU cores, {gpus}; torch {torch}, Python {env['python']}"


def format_number(value: Any) -> str:
    """Numbers as a table shows them: three significant figures, ratios with an ``x``."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        if value == float("inf"):
            return "inf"
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    return str(value)


def times(ratio: float) -> str:
    """A ratio as the tables print it: ``3.10x``."""
    return f"{ratio:.2f}x"


def against(value: float, goal: float) -> str:
    """A ratio against its target: ``3.10x >= 3.0x`` (met) or ``2.50x < 3.0x``."""
    return f"{times(value)} {'>=' if value >= goal else '<'} {goal}x"


def render_table(title: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """A plain-text table (a GitHub-markdown pipe table, readable in a terminal too); each row
    maps column -> value, the columns in the first row's order."""
    columns = list(rows[0])
    cells = [[format_number(row[column]) for column in columns] for row in rows]
    widths = [
        max([len(column), *(len(row[i]) for row in cells)]) for i, column in enumerate(columns)
    ]

    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(value.ljust(width) for value, width in zip(values, widths)) + " |"

    separator = "|" + "|".join("-" * (width + 2) for width in widths) + "|"
    return "\n".join([f"### {title}", "", line(columns), separator, *map(line, cells), ""])


def size_parser(doc: str, sizes: Mapping[str, str]) -> argparse.ArgumentParser:
    """A script's parser, its docstring's first paragraph as the description, with a flag per
    run size (``--quick``: name -> help): at most one, as ``args.size``, ``full`` without any."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group()
    for name, text in sizes.items():
        group.add_argument(f"--{name}", dest="size", action="store_const", const=name, help=text)
    parser.set_defaults(size="full")
    return parser


def write_json(path: str | os.PathLike, record: Mapping[str, Any]) -> Path:
    """Write the run's full record (indented JSON); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, default=str) + "\n")
    return path
