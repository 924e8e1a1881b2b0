"""Splitting work across processes and gathering results with accelerate.

Works the same under ``accelerate launch`` (any number of GPUs, nodes, or CPU processes) and
in a plain Python process (one process). Work is split into contiguous chunks without padding
(``split_between_processes``), so nothing is computed twice; gathered results are put back in
dataset order, and a duplicated row (which padding would cause) is an error, not a silent win.

What is split are whole batches of ``ScoringPlan.batches``, planned over the whole dataset
before the split: every model call gets the same inputs in the same company whatever the
process count (see ``Engine.run`` for what that makes bit-identical).

A launched process stops when its launcher dies (``stop_with_launcher``): the launcher starts
each worker in a session of its own, so without this a killed ``accelerate launch`` would
leave its workers scoring and writing shards.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")
logger = logging.getLogger(__name__)

#: Linux's ``prctl`` option that asks for a signal when the parent process dies.
PR_SET_PDEATHSIG = 1
_watched_parent: int | None = None


def launched() -> bool:
    """Whether this process is one worker of a launcher (``accelerate launch``, ``torchrun``)."""
    return "LOCAL_RANK" in os.environ or "WORLD_SIZE" in os.environ


def stop_with_launcher() -> None:
    """Have this process end (SIGTERM) as soon as its launcher, the parent process, dies.

    Only in a launched worker, once per process. On Linux the kernel sends the signal
    (``PR_SET_PDEATHSIG``); elsewhere a daemon thread checks the parent every second. Rows
    are appended to the shard batch by batch and synced, so a stopped worker loses at most
    the batch it was scoring (a torn line is cut on resume).
    """
    global _watched_parent
    if not launched() or _watched_parent is not None:
        return
    parent = _watched_parent = os.getppid()
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0) != 0:
            logger.warning(
                "this worker will outlive its launcher: prctl(PR_SET_PDEATHSIG) failed (%s)",
                os.strerror(ctypes.get_errno()),
            )
    else:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # the launcher died before the kernel was watching
        os.kill(os.getpid(), signal.SIGTERM)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGTERM)


def process_state() -> Any:
    """accelerate's ``PartialState`` for this process (one process when not launched).

    On a machine without an accelerator the processes of ``accelerate launch --multi_gpu
    --num_processes N`` (or ``ACCELERATE_USE_CPU=1``) form a CPU group over gloo; plain
    ``accelerate launch --cpu`` starts one process only (it expects ``mpirun`` for more).
    """
    import torch
    from accelerate import PartialState
    from accelerate.utils import parse_flag_from_env

    stop_with_launcher()
    return PartialState(
        cpu=parse_flag_from_env("ACCELERATE_USE_CPU") or not torch.accelerator.is_available()
    )


def model_device(state: Any) -> Any:
    """The device this process's model runs on: the state's, a CPU always as plain ``cpu``.

    accelerate names the CPU of a launched process ``cpu:0``; transformers takes other paths
    for a model there than on ``cpu`` (a one-text batch of the tiny CLIP differs in its last
    bits), so one process and several would not compute the same numbers.
    """
    import torch

    device = torch.device(state.device)
    return torch.device("cpu") if device.type == "cpu" else device


def split(state: Any, items: Sequence[T]) -> list[T]:
    """This process's contiguous share of ``items`` (shares differ by at most one item)."""
    with state.split_between_processes(list(items), apply_padding=False) as share:
        return list(share)


def gather_records(state: Any, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every process's records, on every process, ordered by row ``index``."""
    if state.num_processes > 1:
        from accelerate.utils import gather_object

        records = gather_object(records)
    by_index: dict[int, dict[str, Any]] = {}
    for record in records:
        if record["index"] in by_index:
            raise RuntimeError(
                f"row {record['index']} (id={record['id']!r}) was scored by two processes"
            )
        by_index[record["index"]] = record
    return [by_index[index] for index in sorted(by_index)]


def gather_counts(state: Any, counts: dict[str, float]) -> dict[str, float]:
    """Sum of per-process counters (views encoded, texts scored, ...)."""
    if state.num_processes == 1:
        return counts
    from accelerate.utils import gather_object

    total: dict[str, float] = {}
    for part in gather_object([counts]):
        for key, value in part.items():
            total[key] = total.get(key, 0) + value
    return total
