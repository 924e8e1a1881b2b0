"""Splitting work across processes and gathering results with accelerate.

Works the same under ``accelerate launch`` (any number of GPUs, nodes, or CPU processes) and
in a plain Python process (one process). Work is split into contiguous chunks without padding
(``split_between_processes``), so nothing is computed twice; gathered results are put back in
dataset order, and a duplicated row (which padding would cause) is an error, not a silent win.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def process_state() -> Any:
    """accelerate's ``PartialState`` for this process (one process when not launched).

    On a machine without an accelerator the processes of ``accelerate launch --multi_gpu
    --num_processes N`` (or ``ACCELERATE_USE_CPU=1``) form a CPU group over gloo; plain
    ``accelerate launch --cpu`` starts one process only (it expects ``mpirun`` for more).
    """
    import torch
    from accelerate import PartialState
    from accelerate.utils import parse_flag_from_env

    return PartialState(
        cpu=parse_flag_from_env("ACCELERATE_USE_CPU") or not torch.accelerator.is_available()
    )


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
