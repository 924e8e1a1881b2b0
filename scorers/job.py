"""A scoring job: what a run scores and with what, resolved once before any model loads.

:meth:`ScoringJob.resolve` checks a run's inputs and resolves them into one
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

from foilkit.benchmark_registry import BENCHMARKS
from foilkit.errors import MissingExtra, UserError, check_offline_model, missing_modules
from foilkit.folders import SCORES, ScoresFolder, check_folder
from foilkit.scorers.adapters import (
    Adapter,
    accepted_settings,
    adapter_class,
    dtype_problem,
    load_adapter,
    reads_hub_model,
    resolve_dtype,
)
from foilkit.scorers.cache import default_cache_dir
from foilkit.scorers.dataset_files import (
    dataset_fingerprint,
    fingerprint_change,
    load_scoring_dataset,
)
from foilkit.scorers.distributed import model_device
from foilkit.scorers.generate import check_generation
from foilkit.scorers.judge import Judge
from foilkit.scorers.once import once
from foilkit.scorers.openai_client import ServerBackend
from foilkit.scorers.options import ScoreOptions, judge_settings
from foilkit.scorers.parsers import DEFAULT_PARSER
from foilkit.scorers.placement import Placement, plan_placement
from foilkit.scorers.protocols import ResolvedProtocol
from foilkit.scorers.record import ScoringRun
from foilkit.scorers.serving import SERVING_BACKENDS
from foilkit.scorers.store import ResultStore
from foilkit.scorers.video import SEEDED_POLICIES, SamplingPolicy
from foilkit.scorers.video.decoding import FFMPEG_FIX, ffmpeg_problem
from foilkit.video_paths import check_video_root, named_roots, video_columns, video_roots_for

logger = logging.getLogger(__name__)


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


def _placement(options: ScoreOptions, state: Any) -> Placement | None:
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


def check_resumed_dataset(options: ScoreOptions, data: Any) -> None:
    """On ``resume``, the dataset check of the run's start
    (:func:`foilkit.scorers.runner.check_out_dir`) before any model loads."""
    folder = None if options.out_dir is None else ScoresFolder(Path(options.out_dir))
    if not options.resume or folder is None or not folder.record.is_file():
        return
    if scored_nothing(folder):  # nothing to mix: it starts over
        return
    before = ScoringRun.load(folder.record).identity.get("dataset")
    if before is not None:
        check_same_dataset(folder.root, before, dataset_fingerprint(data))


def make_judge(options: ScoreOptions, protocol: ResolvedProtocol) -> Judge | None:
    """The run's LLM judge (:class:`foilkit.scorers.judge.Judge`; its replies cached beside the
    embedding cache, none with ``use_cache=False``), or ``None`` when none is configured;
    refused outside generate mode or where the parser's official protocol has no judge. Made
    once per run for each answer parser (:func:`foilkit.scorers.once.once`: a config's usage
    is what the judge spent while it was scored, as the runner records it)."""
    settings = judge_settings(options)
    if settings is None:
        return None
    if protocol.settings.get("mode") != "generate":
        raise ValueError(
            "--judge-model reads the answers of generate mode; add --mode generate (the "
            f"{protocol.name} protocol scores {protocol.family} models in mode "
            f"{protocol.settings.get('mode', 'default')!r})"
        )
    cache = None
    if options.use_cache:
        cache = str(Path(options.cache_dir or default_cache_dir()) / "judge")
    parser = protocol.settings.get("parser") or DEFAULT_PARSER
    judge = once(("judge", settings, parser, cache), lambda: Judge(settings, parser, cache))
    judge.check_key()
    return judge


def _check_extras(options: ScoreOptions) -> None:
    """The openai client (``foilkit[served]``), where the served backend or the judge needs it."""
    for flag, given in (
        ("--backend openai", options.backend == "openai"),
        ("--judge-model", options.judge_model),
    ):
        if given and missing_modules("served"):
            raise MissingExtra(flag, "served")


def _family(model: str, options: ScoreOptions) -> tuple[type[Adapter], ServerBackend | None]:
    """The adapter class that scores ``model`` and, for a served one, its backend (its settings
    and key checked, before any work); an in-process model's decoder checked once, here."""
    server = None
    if options.backend != "local":  # a served video LLM: no config to read here
        family: type[Adapter] = SERVING_BACKENDS.get(options.backend)
        server = family.serving(options)  # what it connects with, checked before any work
    else:
        if reads_hub_model(options.adapter):  # one line, where the libraries would retry
            check_offline_model(model)
        family = adapter_class(
            model,
            adapter=options.adapter,
            revision=options.revision,
            trust_remote_code=options.trust_remote_code,
        )
    problem = ffmpeg_problem(options.decoder) if family.needs_video else None
    if problem is not None:  # once, here, not once per row
        raise UserError(f"{problem}: {FFMPEG_FIX}")
    return family, server


def _protocol(
    model: str,
    family: type[Adapter],
    data: Any,
    config: str | None,
    options: ScoreOptions,
    pool: bool,
) -> ResolvedProtocol:
    """The protocol ``family`` scores ``data`` with: the options over the benchmark config's
    (named, else the one the rows were built or loaded as) and the model's own settings; for a
    retrieval ``pool``, with a pooling that takes one."""
    native = family.native_settings(
        model, revision=options.revision, trust_remote_code=options.trust_remote_code
    )
    benchmark_config = config or getattr(getattr(data, "info", None), "config_name", None)
    protocol = options.resolve(family.name, accepted_settings(family), native, benchmark_config)
    if pool and protocol.settings.get("pooling") == "softmax-mean":
        raise ValueError(
            "pooling 'softmax-mean' normalises over one item's caption and foils; a retrieval "
            "pool has none: use pooling 'mean' or 'mean-of-similarities'"
        )
    return protocol


def _check_questions(data: Any, family: type[Adapter], benchmark: str | None) -> None:
    """Refuse rows whose options mean nothing without their question for a model that scores
    texts alone."""
    if family.asks_questions or "needs_question" not in data.column_names:
        return
    asked = list(data["needs_question"])
    if not any(asked):
        return
    first = asked.index(True)
    rows, instead = _questions_only(benchmark)
    raise ValueError(
        f"row {first} (id={data[first]['id']!r}) and {sum(asked) - 1} other(s) are "
        f"questions whose options mean nothing without the question ({rows}); a "
        f"{family.name} model scores texts alone. Score them with a video LLM (--mode "
        "choice or likelihood), or leave such configs out where the benchmark has "
        f"others{instead}"
    )


def _questions_only(benchmark: str | None) -> tuple[str, str]:
    """Which rows of ``benchmark`` (else of every registered benchmark that has some) need their
    question, and what to choose instead, as their specs say it (``questions_only``)."""
    specs = [BENCHMARKS.get(name) for name in BENCHMARKS.names()]
    specs = [spec for spec in specs if spec.questions_only]
    specs = [spec for spec in specs if spec.name == benchmark] or specs
    rows = ", ".join(spec.questions_only[0] for spec in specs)
    instead = "".join(
        f" ({spec.title}: {spec.questions_only[1]})"
        for spec in specs
        if len(spec.questions_only) > 1
    )
    return rows, instead


def _check_work(
    model: str,
    family: type[Adapter],
    protocol: ResolvedProtocol,
    policy: SamplingPolicy,
    options: ScoreOptions,
) -> None:
    """What the protocol asks of the run, checked before any model: generate mode's decoding
    and parser, the frame count the model takes (:meth:`Adapter.check_frames`)."""
    if protocol.settings.get("mode") == "generate":
        check_generation(protocol.settings, judged=options.judge_model is not None)
    if policy.name not in ("fps", "int-fps"):  # those take max_frames, not a set count
        family.check_frames(
            model,
            policy.num_frames,
            revision=options.revision,
            trust_remote_code=options.trust_remote_code,
        )


@dataclass(frozen=True)
class ScoringJob:
    """A scoring run resolved once, before any model loads (:meth:`resolve`): the model, the
    rows and their config, the adapter class, the resolved protocol and sampling, the video
    roots, the videos missing, and what the run talks to, made once: the served model's backend
    (``server``; ``None``: the model runs here) and the LLM judge (``judge``; ``None``: none)."""

    model: str
    data: Any
    config: str | None
    family: type[Adapter]
    protocol: ResolvedProtocol
    policy: SamplingPolicy
    roots: list[Path] | None
    missing: list[str]
    server: ServerBackend | None = None
    judge: Judge | None = None

    @classmethod
    def resolve(
        cls,
        model: str,
        dataset: Any,
        config: str | None,
        options: ScoreOptions,
        *,
        pool: bool = False,
        named: bool | None = None,
    ) -> ScoringJob:
        """The run resolved once, and everything about it that can be wrong without loading
        the model checked first (a mistake found after a model loads costs its loading time,
        and a run folder): the output folder's owner, the dataset, the adapter and protocol,
        the frame count the model takes, the video root and the rows' video files
        (:func:`foilkit.video_paths.check_video_root`). ``pool``: for a retrieval matrix;
        ``named``: whether the user named the video roots (default: whether ``options`` names
        any; ``evaluate`` passes its roots on either way). The served backend and the judge
        are made here, once, and the run uses these."""
        if options.out_dir is not None:  # whether foilkit may write there: read only, first
            check_folder(Path(options.out_dir), SCORES)
        _check_extras(options)
        data = load_scoring_dataset(dataset, config, options.split)
        check_resumed_dataset(options, data)
        family, server = _family(model, options)
        protocol = _protocol(model, family, data, config, options, pool)
        _check_questions(data, family, options.benchmark)
        policy = sampling_policy(protocol, options.seed)
        judge = make_judge(options, protocol)  # its settings and key, before any model
        _check_work(model, family, protocol, policy, options)
        roots = video_roots_for(options.video_root, dataset)
        if named is None:
            named = named_roots(options.video_root) is not None
        missing = check_videos(data, family, roots, named=named)
        return cls(model, data, config, family, protocol, policy, roots, missing, server, judge)

    def load_adapter(self, options: ScoreOptions, state: Any) -> tuple[Adapter, ResolvedProtocol]:
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
