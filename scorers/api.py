"""``foilkit.score`` and ``foilkit.score_matrix``: any Hub model on any foilkit dataset.

The options (:class:`ScoreOptions`), the run's inputs checked and resolved once into a job
(:meth:`foilkit.scorers.job.ScoringJob.resolve`) and run (:mod:`foilkit.scorers.runner`: plan,
split, score, gather, write), under ``accelerate launch`` as in one process.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from foilkit.config_file import write_config
from foilkit.scorers.dataset_files import load_scoring_dataset
from foilkit.scorers.distributed import process_state
from foilkit.scorers.job import ScoringJob
from foilkit.scorers.options import SCORE_OPTION_NAMES, ScoreOptions
from foilkit.scorers.runner import ScoredRows, ScoreMatrix, run_pool, run_rows


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
        ``scores.jsonl``, ``run.json`` and ``config.yaml`` (:func:`write_score_config`) there.
        :func:`score_rows` also returns the run record.
    """
    typed = ScoreOptions(**options)
    scored = score_rows(model, dataset, config, typed)
    write_score_config(model, dataset, config, typed, matrix=False)
    return scored.rows


def score_rows(
    model: str,
    dataset: Any,
    config: str | None,
    options: ScoreOptions,
    *,
    checked: ScoringJob | None = None,
) -> ScoredRows:
    """:func:`score` with typed options, returning the rows and the run record; ``checked``:
    the job :meth:`ScoringJob.resolve` made of these inputs, when the caller resolved it
    already (``evaluate`` resolves every config before any scoring, once)."""
    return run_rows(checked or ScoringJob.resolve(model, dataset, config, options), options)


def score_matrix(
    model: str, dataset: Any, config: str | None = None, **options: Any
) -> ScoreMatrix:
    """A views x texts score matrix over a retrieval pool (every row's view against every row's
    caption).

    Dual encoders compute it from (cached) embeddings as dot products; other adapters score
    each view against all captions (``choice`` mode does not apply: texts are not options).
    ``options``: see ``ScoreOptions``. With ``out_dir``, writes the matrix, ``run.json`` and
    ``config.yaml`` there.
    """
    typed = ScoreOptions(**options)
    matrix = score_pool(model, dataset, config, typed)
    write_score_config(model, dataset, config, typed, matrix=True)
    return matrix


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
    job = checked or ScoringJob.resolve(model, dataset, config, options, pool=True)
    return run_pool(job, options)


def write_score_config(
    model: str,
    dataset: Any,
    config: str | None,
    options: ScoreOptions,
    *,
    matrix: bool,
    command: Mapping[str, Any] | None = None,
) -> None:
    """A scoring folder's ``config.yaml`` (``out_dir``'s, by the main process; none without
    one): what ``foilkit score --config-file`` replays the run from, the model, dataset, config
    and every scoring option but the folder's own, and ``command``, the flags of the command
    line the scoring does not read (``--min-coverage``, ``--verbosity``, ``--json``). A dataset
    given as an object is no file's: the replay needs ``--dataset``, as the file says."""
    if options.out_dir is None or not process_state().is_main_process:
        return
    named = isinstance(dataset, (str, os.PathLike))
    replay = {
        "model": model,
        "dataset": os.fspath(dataset) if named else None,
        "configs": None if config is None else [config],
        "matrix": matrix,
        **(command or {}),
        **options.sections(leave=("out_dir", "resume")),
    }
    note = None if named else "the dataset was given as an object: name it with --dataset"
    write_config(options.out_dir, "score", replay, note=note)


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
    "write_score_config",
]
