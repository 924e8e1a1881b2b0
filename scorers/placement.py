"""Where a model's weights go when one device cannot hold them: accelerate's big-model inference.

``device_map`` (``auto``, ``balanced``, ``balanced_low_0``, ``sequential``) has transformers
spread a model's layers over GPUs, then CPU memory, then ``offload_folder`` on disk, within
``max_memory``; accelerate's hooks move each layer's inputs to that layer's device, so the
model's inputs go to its first device (:func:`input_device`) and the model is never moved.

Several processes (``accelerate launch --num_processes R``) are R **replicas** of the model, each
owning a group of ``gpus_per_replica`` GPUs: the process of local index ``i`` takes GPUs
``i*k .. i*k+k-1`` (:func:`replica_gpus`), and its ``max_memory`` names those GPUs only, so the
replicas never share a GPU. Data parallelism (the engine's split of videos) runs across replicas
as it does across single-device processes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

#: The spreading strategies of ``from_pretrained(device_map=...)``.
DEVICE_MAPS = ("auto", "balanced", "balanced_low_0", "sequential")
#: What ``--max-memory`` looks like.
MAX_MEMORY_EXAMPLE = "0=70GiB,1=70GiB,cpu=200GiB"
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s*([KMG])(i?)B$", re.IGNORECASE)

Budget = dict[int | str, int | str]


def parse_max_memory(text: str | dict[Any, Any] | None) -> Budget | None:
    """``"0=70GiB,1=70GiB,cpu=200GiB"`` as ``{0: "70GiB", 1: "70GiB", "cpu": "200GiB"}``.

    Keys are GPU indices (as ``CUDA_VISIBLE_DEVICES`` numbers them) or ``cpu``; a size is a
    byte count or a number with a unit accelerate reads (``KB``/``MB``/``GB``: powers of 1000,
    ``KiB``/``MiB``/``GiB``: of 1024), written back in accelerate's spelling (its ``Gb`` would
    mean gigabits). A dict passes through with its keys and sizes checked the same way.
    """
    if text is None:
        return None
    items = list(text.items()) if isinstance(text, dict) else _pairs(text)
    budget: Budget = {}
    for key, size in items:
        device = _device_key(key, text)
        if device in budget:
            raise ValueError(f"{_where(text)} names device {device!r} twice; {_fix()}")
        budget[device] = _size(size, device, text)
    if not budget:
        raise ValueError(f"{_where(text)} names no device; {_fix()}")
    return budget


def _size(size: Any, device: int | str, text: Any) -> int | str:
    """A checked size: a positive byte count, or ``<number><unit>`` in accelerate's spelling."""
    if isinstance(size, str) and size.strip().isdigit():
        size = int(size)
    if isinstance(size, int) and not isinstance(size, bool) and size > 0:
        return size
    match = _SIZE.match(size.strip()) if isinstance(size, str) else None
    if match is None:
        raise ValueError(
            f"{_where(text)}: {size!r} (device {device!r}) is not a size such as 70GiB, 500MB or "
            f"a byte count; {_fix()}"
        )
    number, prefix, binary = match.groups()
    return f"{number}{prefix.upper()}{'iB' if binary else 'B'}"


def _pairs(text: str) -> list[tuple[str, str]]:
    pairs = []
    for part in text.split(","):
        key, sep, size = part.partition("=")
        if not sep or not key.strip() or not size.strip():
            raise ValueError(f"{_where(text)}: {part.strip()!r} is not DEVICE=SIZE; {_fix()}")
        pairs.append((key.strip(), size.strip()))
    return pairs


def _device_key(key: Any, text: Any) -> int | str:
    if isinstance(key, int) and not isinstance(key, bool) and key >= 0:
        return key
    if isinstance(key, str) and key.strip().isdigit():
        return int(key)
    if isinstance(key, str) and key.strip().lower() == "cpu":
        return "cpu"
    raise ValueError(
        f"{_where(text)}: device {key!r} is neither a GPU index (0, 1, ...) nor cpu; {_fix()}"
    )


def _where(text: Any) -> str:
    return f"max_memory (--max-memory) {text!r}"


def _fix() -> str:
    return f"write it as DEVICE=SIZE pairs, e.g. --max-memory {MAX_MEMORY_EXAMPLE}"


def replica_gpus(local_index: int, gpus_per_replica: int, num_gpus: int) -> tuple[int, ...]:
    """The GPUs of the replica that is local process ``local_index``: ``i*k .. i*k+k-1``."""
    first = local_index * gpus_per_replica
    gpus = tuple(range(first, first + gpus_per_replica))
    if gpus[-1] >= num_gpus:
        raise ValueError(
            f"process {local_index} of this node needs GPUs {gpus[0]}-{gpus[-1]} "
            f"(gpus_per_replica={gpus_per_replica}), but the node has {num_gpus}: launch at most "
            f"{num_gpus // gpus_per_replica} processes per node (accelerate launch "
            "--num_processes) or lower --gpus-per-replica"
        )
    return gpus


def check_placement(
    device_map: str | None,
    max_memory: str | dict[Any, Any] | None,
    offload_folder: str | None,
    gpus_per_replica: int | None,
    device: str | None,
) -> Budget | None:
    """Check the placement options together (each error names the flag to change); returns the
    parsed ``max_memory``."""
    budget = parse_max_memory(max_memory)
    if device_map is None:
        given = [
            flag
            for flag, value in (
                ("max_memory (--max-memory)", max_memory),
                ("offload_folder (--offload-folder)", offload_folder),
                ("gpus_per_replica (--gpus-per-replica)", gpus_per_replica),
            )
            if value is not None
        ]
        if given:
            raise ValueError(
                f"{', '.join(given)} applies to a model spread over devices: add "
                "device_map='auto' (--device-map auto)"
            )
        return None
    if device_map not in DEVICE_MAPS:
        raise ValueError(
            f"unknown device_map (--device-map) {device_map!r}; choose from {list(DEVICE_MAPS)}"
        )
    if device is not None:
        raise ValueError(
            f"device={device!r} (--device) puts the whole model on one device and device_map "
            "(--device-map) spreads it over several: pass one of them"
        )
    if gpus_per_replica is not None and gpus_per_replica < 1:
        raise ValueError(
            f"gpus_per_replica (--gpus-per-replica) must be >= 1, got {gpus_per_replica}"
        )
    return budget


@dataclass(frozen=True)
class Placement:
    """How one process loads its model: the ``from_pretrained`` keywords of big-model inference
    and the replica they make.

    ``gpus``: the GPUs this replica may use (empty on a machine without GPUs);
    ``max_memory``: what ``from_pretrained`` gets (``None``: accelerate's default, every
    visible device's free memory; a replica's: its GPUs and ``cpu``, each at the size named, else
    :data:`DEFAULT_SHARE` of its free memory, the CPU's shared by the node's replicas).
    """

    device_map: str
    max_memory: Budget | None
    offload_folder: str | None
    gpus: tuple[int, ...]

    @property
    def first_device(self) -> str:
        """The device the model's inputs go to before loading tells (its first GPU, else CPU)."""
        return f"cuda:{self.gpus[0]}" if self.gpus else "cpu"

    def pretrained_kwargs(self) -> dict[str, Any]:
        """The keywords ``from_pretrained`` takes for this placement."""
        kwargs: dict[str, Any] = {"device_map": self.device_map}
        if self.max_memory is not None:
            kwargs["max_memory"] = dict(self.max_memory)
        if self.offload_folder is not None:
            kwargs["offload_folder"] = self.offload_folder
        return kwargs

    def to_record(self) -> dict[str, Any]:
        """This replica's share as ``run.json`` records it: its GPUs, the ``max_memory`` and
        offload folder its ``from_pretrained`` got."""
        return {
            "gpus": list(self.gpus),
            "max_memory": _budget_record(self.max_memory),
            "offload_folder": self.offload_folder,
        }


def _budget_record(budget: Budget | None) -> dict[str, int | str] | None:
    """A ``max_memory`` with JSON's string keys."""
    return None if budget is None else {str(key): value for key, value in budget.items()}


def placement_record(
    device_map: str | None,
    max_memory: str | dict[Any, Any] | None,
    offload_folder: str | None,
    replicas: list[dict[str, Any]],
) -> dict[str, Any] | None:
    """The run's placement for ``run.json``: the options as given, the replica count and each
    replica's layout (``replicas``: one :meth:`Placement.to_record` plus its dispatched map's
    :func:`device_map_summary` per process, in process order)."""
    if device_map is None:
        return None
    gpus = {len(replica["gpus"]) for replica in replicas}
    return {
        "device_map": device_map,
        "max_memory": _budget_record(parse_max_memory(max_memory)),
        "offload_folder": offload_folder,
        "replicas": len(replicas),
        "gpus_per_replica": (gpus.pop() or None) if len(gpus) == 1 else None,
        "layout": replicas,
    }


def plan_placement(
    device_map: str | None,
    max_memory: str | dict[Any, Any] | None,
    offload_folder: str | None,
    gpus_per_replica: int | None,
    *,
    device: str | None,
    local_index: int,
    local_processes: int,
    process_index: int,
    num_processes: int,
    num_gpus: int,
) -> Placement | None:
    """This process's placement (``None``: no ``device_map``, the model goes whole to one device).

    The options are checked first, each error naming the flag to change. With GPUs and several
    processes on a node, ``gpus_per_replica`` defaults to the node's GPUs shared evenly. On a
    machine without GPUs every process spreads over CPU memory and disk; ``offload_folder`` gets
    one subfolder per process when there are several, so no two write the same files.
    """
    budget = check_placement(device_map, max_memory, offload_folder, gpus_per_replica, device)
    if device_map is None:
        return None
    named_gpus = sorted(key for key in budget or {} if isinstance(key, int))
    if num_gpus == 0:
        if gpus_per_replica is not None or named_gpus:
            what = (
                "gpus_per_replica (--gpus-per-replica)"
                if gpus_per_replica
                else (f"max_memory (--max-memory) GPU {named_gpus[0]}")
            )
            raise ValueError(
                f"{what} needs GPUs and this machine has none: leave it out (the model spreads "
                "over cpu= memory and --offload-folder)"
            )
        gpus: tuple[int, ...] = ()
    else:
        if named_gpus and named_gpus[-1] >= num_gpus:
            raise ValueError(
                f"max_memory (--max-memory) names GPU {named_gpus[-1]}, but this machine has "
                f"{num_gpus} (0-{num_gpus - 1})"
            )
        if gpus_per_replica is None and local_processes > 1:
            if num_gpus < local_processes:
                raise ValueError(
                    f"{local_processes} processes on this node share {num_gpus} GPUs: launch at "
                    "most one process per GPU (accelerate launch --num_processes)"
                )
            gpus_per_replica = num_gpus // local_processes
        if gpus_per_replica is None:
            gpus = tuple(range(num_gpus))
        else:
            gpus = replica_gpus(local_index, gpus_per_replica, num_gpus)
            # this replica's GPUs only: given sizes where the user named them, else a share of
            # what is free (transformers keeps the same 10% back when it sets the budget itself:
            # activations, and here the CUDA contexts other processes open for collectives)
            given = budget or {}
            budget = {gpu: given.get(gpu, _share(_free_gpu_memory(gpu))) for gpu in gpus}
            budget["cpu"] = given.get("cpu", _share(_free_cpu_memory() // local_processes))
    if offload_folder is not None and num_processes > 1:
        offload_folder = f"{offload_folder}/process-{process_index}"
    return Placement(device_map, budget, offload_folder, gpus)


#: The share of free memory a replica's budget takes for a device the user did not size.
DEFAULT_SHARE = 0.9


def _share(free: int) -> int:
    return int(free * DEFAULT_SHARE)


def _free_gpu_memory(gpu: int) -> int:
    import torch

    return int(torch.cuda.mem_get_info(gpu)[0])


def _free_cpu_memory() -> int:
    import psutil

    return int(psutil.virtual_memory().available)


def input_device(device_map: dict[str, Any]) -> Any:
    """The device a dispatched model takes its inputs on: its first GPU (accelerate's main
    device), or the CPU when it spreads over CPU memory and disk only."""
    import torch

    devices = [device for device in device_map.values() if device not in ("cpu", "disk")]
    if not devices:
        return torch.device("cpu")
    first = devices[0]
    return torch.device(f"cuda:{first}" if isinstance(first, int) else first)


def device_map_summary(device_map: dict[str, Any]) -> dict[str, Any]:
    """A dispatched model's map for ``run.json``: modules per device, in map order, and the
    input device (the full map can have hundreds of entries)."""
    modules: dict[str, int] = {}
    for device in device_map.values():
        modules[str(device)] = modules.get(str(device), 0) + 1
    return {"input_device": str(input_device(device_map)), "modules_per_device": modules}
