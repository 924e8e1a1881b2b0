"""``foilkit.score`` and ``foilkit.score_matrix``: any Hub model on any foilkit dataset.

The options (:class:`ScoreOptions`), the run's inputs checked and resolved once into a job
(:func:`check_inputs`, :mod:`foilkit.scorers.job`) and run (:mod:`foilkit.scorers.runner`:
plan, split, score, gather, write), under ``accelerate launch`` as in one process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foilkit.benchmark_registry import BENCHMARKS
from foilkit.errors import MissingExtra, UserError, check_offline_model, missing_modules
from foilkit.folders import SCORES, check_folder
from foilkit.scorers.adapters import Adapter, accepted_settings, adapter_class, reads_hub_model
from foilkit.scorers.cache import default_cache_dir
from foilkit.scorers.dataset_files import load_scoring_dataset
from foilkit.scorers.generate import check_generation
from foilkit.scorers.job import ScoringJob, check_resumed_dataset, check_videos, sampling_policy
from foilkit.scorers.modes import SERVING_BACKENDS
from foilkit.scorers.once import once
from foilkit.scorers.options import (
    SCORE_OPTION_NAMES,
    ScoreOptions,
    judge_settings,
    server_backend,
)
from foilkit.scorers.protocols import ResolvedProtocol
from foilkit.scorers.runner import ScoredRows, ScoreMatrix, run_pool, run_rows
from foilkit.scorers.video.decoding import FFMPEG_FIX, ffmpeg_problem
from foilkit.video_paths import named_roots, video_roots_for


def make_judge(options: ScoreOptions, protocol: ResolvedProtocol) -> Any:
    """The run's LLM judge (:class:`foilkit.scorers.judge.Judge`; its replies cached beside the
    embedding cache, none with ``use_cache=False``), or ``None`` when none is configured;
    refused outside generate mode or where the parser's official protocol has no judge. Made
    once per run for each answer parser (:func:`foilkit.scorers.once.once`: a config's usage
    is what the judge spent while it was scored, :func:`_judge_record`)."""
    settings = judge_settings(options)
    if settings is None:
        return None
    if protocol.settings.get("mode") != "generate":
        raise ValueError(
            "--judge-model reads the answers of generate mode; add --mode generate (the "
            f"{protocol.name} protocol scores {protocol.family} models in mode "
            f"{protocol.settings.get('mode', 'default')!r})"
        )
    from foilkit.scorers.judge import Judge
    from foilkit.scorers.parsers import DEFAULT_PARSER

    cache = None
    if options.use_cache:
        cache = str(Path(options.cache_dir or default_cache_dir()) / "judge")
    parser = protocol.settings.get("parser") or DEFAULT_PARSER
    judge = once(("judge", settings, parser, cache), lambda: Judge(settings, parser, cache))
    judge.check_key()
    return judge


def check_inputs(
    model: str,
    dataset: Any,
    config: str | None,
    options: ScoreOptions,
    *,
    pool: bool = False,
    named: bool | None = None,
) -> ScoringJob:
    """The run resolved once into a :class:`foilkit.scorers.job.ScoringJob`, and everything
    about it that can be wrong without loading the model checked first (a mistake found after a
    model loads costs its loading time, and a run folder):
    the output folder's owner, the dataset, the adapter and protocol, the frame count the model
    takes (:meth:`Adapter.check_frames`), the video root and the rows' video files
    (:func:`foilkit.video_paths.check_video_root`). ``pool``: for a retrieval matrix;
    ``named``: whether the user named the video roots (default: whether ``options`` names any;
    ``evaluate`` passes its roots on either way). The served backend and the judge are made
    here, once, and the run uses these."""
    if options.out_dir is not None:  # whether foilkit may write there: read only, first
        check_folder(Path(options.out_dir), SCORES)
    for flag, given in (
        ("--backend openai", options.backend == "openai"),
        ("--judge-model", options.judge_model),
    ):
        if given and missing_modules("served"):  # the openai client: foilkit[served]
            raise MissingExtra(flag, "served")
    data = load_scoring_dataset(dataset, config, options.split)
    check_resumed_dataset(options, data)
    server = None
    if options.backend != "local":  # a served video LLM: no config to read here
        family: type[Adapter] = SERVING_BACKENDS.get(options.backend)
        server = server_backend(options)
        server.check_key()  # its settings and key, before any work
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
    native = family.native_settings(
        model, revision=options.revision, trust_remote_code=options.trust_remote_code
    )
    # the benchmark config: named, else the one the rows were built or loaded as
    benchmark_config = config or getattr(getattr(data, "info", None), "config_name", None)
    protocol = options.resolve(family.name, accepted_settings(family), native, benchmark_config)
    if not family.asks_questions and "needs_question" in data.column_names:
        asked = list(data["needs_question"])
        if any(asked):
            first = asked.index(True)
            rows, instead = _questions_only(options.benchmark)
            raise ValueError(
                f"row {first} (id={data[first]['id']!r}) and {sum(asked) - 1} other(s) are "
                f"questions whose options mean nothing without the question ({rows}); a "
                f"{family.name} model scores texts alone. Score them with a video LLM (--mode "
                "choice or likelihood), or leave such configs out where the benchmark has "
                f"others{instead}"
            )
    if pool and protocol.settings.get("pooling") == "softmax-mean":
        raise ValueError(
            "pooling 'softmax-mean' normalises over one item's caption and foils; a retrieval "
            "pool has none: use pooling 'mean' or 'mean-of-similarities'"
        )
    policy = sampling_policy(protocol, options.seed)
    judge = make_judge(options, protocol)  # its settings and key, before any model
    if protocol.settings.get("mode") == "generate":  # the decoding and parser, before any model
        check_generation(protocol.settings, judged=options.judge_model is not None)
    if policy.name not in ("fps", "int-fps"):  # those take max_frames, not a set count
        family.check_frames(
            model,
            policy.num_frames,
            revision=options.revision,
            trust_remote_code=options.trust_remote_code,
        )
    roots = video_roots_for(options.video_root, dataset)
    if named is None:
        named = named_roots(options.video_root) is not None
    missing = check_videos(data, family, roots, named=named)
    return ScoringJob(model, data, config, family, protocol, policy, roots, missing, server, judge)


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


def score(model: str, dataset: Any, config: str | None = None, **options: Any) -> Any:
    """Score every row of a foilkit dataset with a Hub model; returns the per-sample ``Dataset``.

    Args:
        model: Hub id or local path of any supported model (see ``foilkit.scorers.adapters``).
        dataset: a ``datasets.Dataset``/``DatasetDict``, a ``save_to_disk`` folder, a parquet
            folder or a Hub id, in the canonical foilkit schema.
        config: the dataset config (aspect, test, ...) when ``dataset`` is a folder or Hub id.
        **options: see ``ScoreOptions``.

    Returns:
        One row per dataset row: ``id``, ``caption_score``, ``foil_scores`` (and the
        ``proficiency_`` pair for ViLMA), ``score_kind``, ``frame_indices``, ``error``, the
        adapter's details, then the dataset's metadata columns. With ``out_dir``, also writes
        ``scores.jsonl`` and ``run.json`` there. :func:`score_rows` also returns the run record.
    """
    return score_rows(model, dataset, config, ScoreOptions(**options)).rows


def score_rows(
    model: str,
    dataset: Any,
    config: str | None,
    options: ScoreOptions,
    *,
    checked: ScoringJob | None = None,
) -> ScoredRows:
    """:func:`score` with typed options, returning the rows and the run record; ``checked``:
    the job :func:`check_inputs` resolved for these inputs, when the caller resolved it already
    (``evaluate`` resolves every config before any scoring, once)."""
    return run_rows(checked or check_inputs(model, dataset, config, options), options)


def score_matrix(
    model: str, dataset: Any, config: str | None = None, **options: Any
) -> ScoreMatrix:
    """A views x texts score matrix over a retrieval pool (every row's view against every row's
    caption).

    Dual encoders compute it from (cached) embeddings as dot products; other adapters score
    each view against all captions (``choice`` mode does not apply: texts are not options).
    ``options``: see ``ScoreOptions``.
    """
    return score_pool(model, dataset, config, ScoreOptions(**options))


def score_pool(
    model: str,
    dataset: Any,
    config: str | None,
    options: ScoreOptions,
    *,
    checked: ScoringJob | None = None,
) -> ScoreMatrix:
    """:func:`score_matrix` with typed options (the matrix carries its run record, ``run``);
    ``checked``: as :func:`score_rows`' (checked with ``pool=True``)."""
    if options.mode in ("choice", "generate"):
        raise ValueError(
            f"score_matrix needs a mode that scores each text alone; {options.mode!r} compares "
            "texts as the options of one question"
        )
    return run_pool(checked or check_inputs(model, dataset, config, options, pool=True), options)


__all__ = [
    "SCORE_OPTION_NAMES",
    "ScoreMatrix",
    "ScoreOptions",
    "ScoredRows",
    "load_scoring_dataset",
    "score",
    "score_matrix",
    "score_pool",
    "score_rows",
]
