"""A scoring job: what a run scores and with what, resolved once before any model loads.

:func:`foilkit.scorers.api.check_inputs` checks a run's inputs and resolves them into one
:class:`ScoringJob` (the rows, the adapter class, the protocol, the sampling, the video roots,
the served backend and the judge, each made once); :mod:`foilkit.scorers.runner` runs it. The
job's :meth:`ScoringJob.load_adapter` is the one place an adapter is made for a run.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foilkit.folders import ScoresFolder
from foilkit.scorers.adapters import (
    Adapter,
    accepted_settings,
    dtype_problem,
    load_adapter,
    resolve_dtype,
)
from foilkit.scorers.dataset_files import dataset_fingerprint, fingerprint_change
from foilkit.scorers.distributed import model_device
from foilkit.scorers.placement import Placement, plan_placement
from foilkit.scorers.protocols import ResolvedProtocol
from foilkit.scorers.record import ScoringRun
from foilkit.scorers.store import ResultStore
from foilkit.scorers.video import SEEDED_POLICIES, SamplingPolicy
from foilkit.video_paths import check_video_root, video_columns

logger = logging.getLogger(__name__)

#: A run's options (:class:`foilkit.scorers.api.ScoreOptions`, read by attribute here: api
#: imports this module).
Options = Any


def sampling_policy(protocol: ResolvedProtocol, seed: int) -> SamplingPolicy:
    """The frame sampling policy of a resolved protocol (``seed`` for seeded policies)."""
    settings = protocol.settings
    if "num_frames" not in settings:
        raise ValueError(
            f"the {protocol.name} protocol leaves the frame count of {protocol.family} models to "
            "the model, and none was found; pass num_frames= (--num-frames N)"
        )
    return SamplingPolicy(
        settings["sampling"],
        settings["num_frames"],
        stride=settings.get("stride", 1),
        target_fps=settings.get("target_fps"),
        max_frames=settings.get("max_frames"),
        normalized_fps=settings.get("normalized_fps"),
        seed=seed if settings["sampling"] in SEEDED_POLICIES else None,
    )


def _precision(protocol: ResolvedProtocol, device: Any, given: bool) -> ResolvedProtocol:
    """The protocol with a dtype its device can run.

    A protocol's dtype (``paper``: the reference's float16) that the device cannot run falls
    back to float32 as a recorded departure, warned about and shown in the report; a dtype the
    user gave (``given``: ``--dtype``) that the device cannot run is an error.
    """
    import torch

    dtype = protocol.settings.get("dtype")
    if dtype is None:
        return protocol
    device = torch.device(device)
    problem = dtype_problem(resolve_dtype(dtype, device), device)
    if problem is None:
        return protocol
    if given:
        raise ValueError(f"dtype {dtype!r} (--dtype {dtype}): {problem}; pick another dtype")
    logger.warning(
        "the %s protocol runs %s in %s, which %s cannot run: scoring in float32 instead (%s)",
        protocol.name,
        protocol.family,
        dtype,
        device,
        problem,
    )
    return protocol.with_departure("dtype", "float32", problem)


def _placement(options: Options, state: Any) -> Placement | None:
    """This process's share of the machine for a model spread by ``device_map``."""
    import torch

    on_gpu = model_device(state).type == "cuda"
    return plan_placement(
        options.device_map,
        options.max_memory,
        options.offload_folder,
        options.gpus_per_replica,
        device=options.device,
        local_index=state.local_process_index,
        local_processes=int(os.environ.get("LOCAL_WORLD_SIZE", state.num_processes)),
        process_index=state.process_index,
        num_processes=state.num_processes,
        num_gpus=torch.cuda.device_count() if on_gpu else 0,
    )


def check_videos(
    data: Any, family: type[Adapter], roots: list[Path] | None, *, named: bool
) -> list[str]:
    """The video files the rows name, looked at before the model loads
    (:func:`foilkit.video_paths.check_video_root`: a wrong root is an error here); the paths
    of the missing ones. Nothing to look at for a text-only model, embedded video bytes or an
    unconfined dataset object (``roots`` ``None``)."""
    import datasets

    if not family.needs_video or roots is None or "video" not in data.column_names:
        return []
    paths = []
    for name in video_columns(data.column_names):  # the video, and a pair's foil video
        column = data.select_columns([name])
        if isinstance(column.features[name], datasets.Video):
            column = column.cast_column(name, datasets.Video(decode=False))
        for cell in column[name]:
            if isinstance(cell, Mapping):
                cell = None if cell.get("bytes") is not None else cell.get("path")
            if isinstance(cell, str) and cell:
                paths.append(cell)
    return check_video_root(paths, roots, named=named)


def scored_nothing(folder: ScoresFolder) -> bool:
    """Whether ``folder`` holds only the start of a run: its start record (no ``finished_at``)
    and no scored row in its shards."""
    try:
        record = ScoringRun.load(folder.record)
    except (OSError, ValueError):
        return False
    return record.finished_at is None and not ResultStore(folder.root).load()


def check_same_dataset(out_dir: Path, before: dict[str, Any], now: dict[str, Any]) -> None:
    """Refuse to resume a run whose dataset changed since it started: its rows scored before
    and after would come from two datasets. One line naming what changed, and the fix."""
    change = fingerprint_change(before, now)
    if change is not None:
        raise ValueError(
            f"cannot resume {out_dir}: its dataset changed since the run started ({change}), "
            "so its scores would mix two datasets; score it into a new output folder (--out; "
            "out_dir= in Python), or start this run again (evaluate --overwrite)"
        )


def check_resumed_dataset(options: Options, data: Any) -> None:
    """On ``resume``, the dataset check of the run's start
    (:func:`foilkit.scorers.runner.check_out_dir`) before any model loads."""
    folder = None if options.out_dir is None else ScoresFolder(Path(options.out_dir))
    if not options.resume or folder is None or not folder.record.is_file():
        return
    if scored_nothing(folder):  # nothing to mix: it starts over
        return
    before = ScoringRun.load(folder.record).identity.get("dataset")
    if before is not None:
        check_same_dataset(Path(options.out_dir), before, dataset_fingerprint(data))


@dataclass(frozen=True)
class ScoringJob:
    """A scoring run resolved once, before any model loads (by
    :func:`foilkit.scorers.api.check_inputs`): the model, the rows and their config, the adapter
    class, the resolved protocol and sampling, the video roots, the videos missing, and what
    the run talks to, made once: the served model's backend (``server``; ``None``: the model
    runs here) and the LLM judge (``judge``; ``None``: none)."""

    model: str
    data: Any
    config: str | None
    family: type[Adapter]
    protocol: ResolvedProtocol
    policy: SamplingPolicy
    roots: list[Path] | None
    missing: list[str]
    server: Any = None  # foilkit.scorers.served.ServerBackend
    judge: Any = None  # foilkit.scorers.judge.Judge

    def load_adapter(self, options: Options, state: Any) -> tuple[Adapter, ResolvedProtocol]:
        """The adapter that scores the job in this process (its share of the machine for a
        model spread by ``device_map``), with the job's judge; and the protocol with the dtype
        its device runs (:func:`_precision`)."""
        placement = _placement(options, state)
        device = placement.first_device if placement is not None else options.device
        device = device or model_device(state)
        protocol = _precision(self.protocol, device, given=options.dtype != "auto")
        model_options = protocol.adapter_options(accepted_settings(self.family))
        if model_options.get("mode") == "generate":  # answers are drawn from the run's seed
            model_options["seed"] = options.seed
        if options.backend != "local":
            adapter: Adapter = self.family(
                self.model, server=self.server, device="cpu", **model_options
            )
        else:
            adapter = load_adapter(
                self.model,
                adapter=self.family.name,
                revision=options.revision,
                dtype=protocol.settings.get("dtype", "auto"),
                device=device,
                trust_remote_code=options.trust_remote_code,
                placement=placement,
                **model_options,
            )
        adapter.judge = self.judge
        return adapter, protocol
