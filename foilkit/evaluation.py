"""``foilkit.evaluate``: build or load a benchmark, score a model, compute its metrics, report.

One call makes a run folder (:mod:`foilkit.run` owns its layout and its ``results.json``):
metrics with confidence intervals, the report and its plots, per-sample scores and the
scorer's own folders.

Every number in ``results.json`` comes from the ``foilkit.metrics`` functions; which ones,
with which options and inputs, is :mod:`foilkit.builders.spec` (each benchmark's spec beside its
builder).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foilkit.builders import get_benchmark
from foilkit.builders.spec import Benchmark, MetricSpec, group_names, subset_columns
from foilkit.config_file import write_config
from foilkit.errors import check_offline_model
from foilkit.folders import RUN, check_folder, claim_folder, replace_folder
from foilkit.metrics import metric_function
from foilkit.report import write_run_report
from foilkit.run import (
    UNITS,
    Bootstrap,
    ConfigResults,
    Coverage,
    Invocation,
    MetricResult,
    RunFolder,
    RunResults,
    SampleSpread,
    SavedMatrix,
    plain_json,
    tie_policy,
)
from foilkit.scorers.once import in_one_run
from foilkit.scorers.record import ScoringRun
from foilkit.selection import RowSelection
from foilkit.video_paths import RootsGiven, named_roots, video_roots_for

if TYPE_CHECKING:  # the scorers import torch: only when scoring
    from foilkit.scorers.job import ScoringJob
    from foilkit.scorers.options import ScoreOptions
    from foilkit.scorers.protocols import ResolvedProtocol

#: The prefixes of a text group's per-sample columns (ViLMA's proficiency texts, a pair's foil
#: video and Vinoground's video question have their own).
GROUP_PREFIXES = ("", "proficiency_", "foil_video_", "video_question_", "foil_video_question_")
#: The :class:`ScoreOptions` fields ``evaluate`` sets itself: from its own arguments
#: (``benchmark``, ``videos``, ``resume``, ``split``) and the run folder (each config's scoring
#: folder).
EVALUATE_SETS = ("benchmark", "video_root", "resume", "split", "out_dir")


@dataclass(frozen=True)
class Evaluation:
    """What :func:`evaluate` returns: the run folder and its results (``None`` on the other
    processes of a distributed run: the main one computes and writes them)."""

    run_dir: Path
    results: RunResults | None

    @property
    def folder(self) -> RunFolder:
        return RunFolder(self.run_dir)

    @property
    def report(self) -> Path:
        return self.folder.report


@dataclass(frozen=True)
class BenchmarkSplit:
    """One split of a config as a run evaluates it: the rows ``--limit`` selected (all of them
    without it), how many of those building it dropped because their video was missing (``None``:
    loaded from an exported dataset, whose build this run did not see), and the split's rows
    before the limit selected some (``limited_from``; ``None``: every row was selected)."""

    data: Any
    dropped_missing: int | None
    limited_from: int | None = None


def load_benchmark_split(
    benchmark: Benchmark,
    config: str,
    *,
    dataset: str | os.PathLike | None = None,
    videos: RootsGiven = None,
    annotations: str | os.PathLike | None = None,
    on_missing: str = "error",
    split: str | None = None,
    cache_dir: str | None = None,
    selection: RowSelection | None = None,
) -> BenchmarkSplit:
    """One split of ``config``: from an exported folder or Hub id (``dataset``) or built by the
    builder; with ``selection`` (``--limit``), only the rows it selects, chosen before any video
    is looked for (a build resolves and keeps only theirs)."""
    from foilkit.scorers.api import load_scoring_dataset

    split = split or benchmark.split
    if dataset is not None:
        data = load_scoring_dataset(os.fspath(dataset), config, split)
        if selection is None or selection.count(data.num_rows) == data.num_rows:
            return BenchmarkSplit(data, None)
        return BenchmarkSplit(data.select(selection.indices(data.num_rows)), None, data.num_rows)
    if benchmark.builder is None:
        raise ValueError(
            f"{benchmark.name} has no builder: pass dataset=<exported folder or Hub id>"
        )
    from foilkit.builders import load_builder, prepare

    roots = named_roots(videos) or [None]
    if len(roots) > 1:
        raise ValueError(
            f"building {benchmark.name} from its annotations reads one video root (the layout "
            f"its dataset card gives), got {len(roots)}: {', '.join(map(str, roots))}; pass one "
            "--video-root, or several with --dataset naming an exported folder or Hub id"
        )
    limit = {} if selection is None else {"limit": selection.limit, "limit_seed": selection.seed}
    builder = load_builder(
        benchmark.builder,
        config,
        video_root=roots[0],
        on_missing=on_missing,
        annotations=annotations,
        splits=(split,),  # only the split evaluated: its annotations and videos alone
        cache_dir=cache_dir,
        **limit,  # only the rows selected: their videos alone
    )
    data = load_scoring_dataset(prepare(builder), None, split)
    report = builder.video_reports.get(split)
    return BenchmarkSplit(
        data, report.dropped if report is not None else 0, builder.selected_from.get(split)
    )


@dataclass(frozen=True)
class EvaluateOptions:
    """What :func:`evaluate` takes besides the benchmark, the model and the run folder: one
    object that ``foilkit evaluate`` (and each benchmark of ``--tasks``) fills once.

    Attributes:
        config: a config of the benchmark or a list of them, ``"all"``/``None`` for the paper's
            full set.
        limit, limit_seed: evaluate only ``limit`` rows of each config, or that share of them
            (a float below 1), the first ones or a sample drawn with ``limit_seed``, selected
            before any video is looked for (:mod:`foilkit.selection`); a partial run, shown as
            such in ``results.json`` and every report, its coverage of the rows selected.
        dataset: an exported folder or Hub dataset id; default: build from the annotations.
        videos: the video root, or several (relative video paths resolve against them; every
            video path must lie inside one; building from the annotations takes one).
        annotations, on_missing: passed to the builder when building.
        split: default ``test``.
        n_resamples, bootstrap_seed: the bootstrap of the confidence intervals (the scoring
            options' ``seed`` is the scorer's, for the ``shuffled`` control).
        label: the model's name in reports (default: ``model``).
        overwrite: replace an existing run folder (only a folder foilkit made, and only the
            files it wrote there: see :mod:`foilkit.folders`); ``resume``: continue its scoring.
        datasets_cache_dir: the ``datasets`` cache of a build.
        score_options: how to score (:class:`foilkit.scorers.options.ScoreOptions`: frames,
            control, dtype, ...); the fields in :data:`EVALUATE_SETS` are :func:`evaluate`'s to
            set.
        command_line: the command that asked for the run, recorded in ``results.json``
            (default: this process's ``sys.argv``).
        command_flags: the flags of that command which the run does not read
            (``foilkit evaluate``'s ``--min-coverage``, ``--verbosity``, ``--json``,
            ``--log-with``, ``--tracking-dir``), by name: ``config.yaml`` holds them, so that
            it replays the command whole.
    """

    config: str | Sequence[str] | None = None
    limit: int | float | None = None
    limit_seed: int | None = None
    dataset: str | os.PathLike | None = None
    videos: RootsGiven = None
    annotations: str | os.PathLike | None = None
    on_missing: str = "error"
    split: str | None = None
    n_resamples: int = 1000
    bootstrap_seed: int = 0
    label: str | None = None
    overwrite: bool = False
    resume: bool = False
    datasets_cache_dir: str | None = None
    score_options: ScoreOptions | None = None
    command_line: Sequence[str] | None = None
    command_flags: Mapping[str, Any] | None = None


@in_one_run  # the model, processor, served backend and judge: once for every config
def evaluate(
    benchmark: str,
    model: str,
    *,
    out_dir: str | os.PathLike,
    options: EvaluateOptions | None = None,
    **keywords: Any,
) -> Evaluation:
    """Evaluate ``model`` on ``benchmark`` (every config ``config`` names) and write the run
    folder ``out_dir`` (with its ``config.yaml``, which replays the run).

    Args:
        benchmark: a name in :data:`foilkit.builders.BENCHMARKS`.
        model: Hub id or local path of any model ``foilkit.score`` supports.
        out_dir: the run folder.
        options: the rest (:class:`EvaluateOptions`); each of its fields may be given as a
            keyword instead (``config=["direction"], limit=20``), over ``options``.
    """
    given = replace(options or EvaluateOptions(), **keywords)
    from foilkit.scorers.adapters import reads_hub_model
    from foilkit.scorers.distributed import process_state
    from foilkit.scorers.job import ScoringJob
    from foilkit.scorers.options import ScoreOptions
    from foilkit.scorers.record import now

    started, started_at = time.monotonic(), now()
    spec = get_benchmark(benchmark)
    configs_chosen = spec.configs_for(
        given.config,
        judge=given.score_options is not None and given.score_options.judge_model is not None,
    )
    selection = RowSelection.of(given.limit, given.limit_seed)  # a bad limit costs no work
    folder = RunFolder(Path(out_dir))
    options = _scoring_options(
        given.score_options or ScoreOptions(), spec, given.videos, given.dataset, given.resume
    )
    state = process_state()
    check_folder(folder.root, RUN)  # on every process, before the main one writes
    if folder.is_run() and not (given.overwrite or given.resume):
        raise FileExistsError(
            f"{folder.root} already holds an evaluation; pass overwrite=True (--overwrite) "
            "or resume=True (--resume), or choose another out_dir"
        )
    if options.backend == "local" and reads_hub_model(options.adapter):
        check_offline_model(model)  # an offline Hub id not in the cache: before any build
    # every config's rows (those --limit selects) and the inputs of its scoring, each checked
    # once, before the run folder or a model
    splits = {
        name: load_benchmark_split(
            spec,
            name,
            dataset=given.dataset,
            videos=given.videos,
            annotations=given.annotations,
            on_missing=given.on_missing,
            split=given.split,
            cache_dir=given.datasets_cache_dir,
            selection=selection,
        )
        for name in configs_chosen
    }
    checks = {
        name: ScoringJob.resolve(
            model,
            loaded.data,
            None,
            options,
            pool=any(metric.matrix for metric in spec.metrics(name)),
            named=given.videos is not None,
        )
        for name, loaded in splits.items()
    }
    replay = {
        "model": model,
        "configs": list(configs_chosen),
        "dataset": None if given.dataset is None else os.fspath(given.dataset),
        "annotations": None if given.annotations is None else os.fspath(given.annotations),
        "on_missing": given.on_missing,
        "limit": given.limit,
        "limit_seed": given.limit_seed,
        "n_resamples": given.n_resamples,
        "bootstrap_seed": given.bootstrap_seed,
        "label": given.label,
        **(given.command_flags or {}),
        **_replay_sections(options, given.videos, given.split),
    }
    if state.is_main_process:
        (replace_folder if given.overwrite else claim_folder)(folder.root, RUN)
        write_config(folder.root, "evaluate", replay)
    state.wait_for_everyone()
    bootstrap = Bootstrap(given.n_resamples, given.bootstrap_seed)
    configs: dict[str, ConfigResults] = {}
    for number, (name, loaded) in enumerate(splits.items(), 1):
        if options.progress and state.is_local_main_process:  # a log shows where the run is
            print(
                f"evaluate {spec.name}: config {name} ({number}/{len(splits)}): "
                f"{loaded.data.num_rows} rows, model {model}",
                file=sys.stderr,
                flush=True,
            )
        entry = _evaluate_config(
            spec, name, model, loaded, checks[name], folder, options, bootstrap
        )
        if entry is not None:
            configs[name] = entry
    if not state.is_main_process:
        return Evaluation(folder.root, None)
    results = RunResults(
        benchmark=spec.name,
        title=spec.title,
        paper_table=spec.paper_table,
        model=model,
        label=given.label or model_label(model),
        control=options.control,
        protocol=_run_protocol(configs),
        dataset=None if given.dataset is None else os.fspath(given.dataset),
        split=given.split or spec.split,
        bootstrap=bootstrap,
        configs=configs,
        limit=None if selection is None else selection.limit,
        limit_seed=None if selection is None else selection.seed,
        invocation=run_invocation(given.command_line, started, started_at, replay),
        units=UNITS,
    )
    results.save(folder)
    write_run_report(results, folder.root)
    return Evaluation(folder.root, results)


def _replay_sections(
    options: ScoreOptions, videos: RootsGiven, split: str | None
) -> dict[str, dict[str, Any]]:
    """The scoring options of ``config.yaml``, one section per part: ``options`` as the run
    scores with them, but the video roots and split as given (``evaluate`` resolves them), and
    no scoring folder (the run folder is ``--out``'s)."""
    sections = options.sections(leave=("out_dir", "resume"))
    roots = named_roots(videos)
    sections["frames"]["video_root"] = None if roots is None else [str(root) for root in roots]
    sections["work"]["split"] = split
    return sections


def run_invocation(
    command_line: Sequence[str] | None,
    started: float,
    started_at: str,
    config: dict[str, Any] | None = None,
) -> Invocation:
    """The run's :class:`foilkit.run.Invocation`, ending now (``started``: ``time.monotonic``),
    with the configuration that replays it (``config.yaml``'s)."""
    from foilkit.scorers.record import foilkit_source, now

    source = foilkit_source()
    return Invocation(
        argv=list(sys.argv if command_line is None else command_line),
        foilkit_version=source["version"],
        git_commit=source["git_commit"],
        git_dirty=source["git_dirty"],
        started_at=started_at,
        finished_at=now(),
        wall_seconds=round(time.monotonic() - started, 3),
        config=config,
    )


def _scoring_options(
    given: ScoreOptions,
    spec: Benchmark,
    videos: RootsGiven,
    dataset: str | os.PathLike | None,
    resume: bool,
) -> ScoreOptions:
    """``given`` with the fields ``evaluate`` sets (:data:`EVALUATE_SETS`), but each config's
    scoring folder, which :func:`_evaluate_config` sets; a field of those given is an error.

    The video roots are those the user named (``videos``), else the exported folder
    (``dataset``), else none (:func:`foilkit.video_paths.video_roots_for`): the split reaches the
    scorer as a loaded object, which must not count as the caller's own, unconfined paths."""
    from foilkit.scorers.options import ScoreOptions

    defaults = {f.name: f.default for f in fields(ScoreOptions)}
    clashes = [name for name in EVALUATE_SETS if getattr(given, name) != defaults[name]]
    if clashes:
        raise ValueError(
            f"evaluate sets score_options' {', '.join(clashes)} itself (from benchmark, videos=, "
            "resume=, split= and the run folder): leave them unset"
        )
    roots = [str(root) for root in video_roots_for(videos, dataset) or []]
    return replace(given, benchmark=spec.name, video_root=roots, resume=resume)


def _evaluate_config(
    spec: Benchmark,
    config: str,
    model: str,
    loaded: BenchmarkSplit,
    checked: ScoringJob,
    folder: RunFolder,
    options: ScoreOptions,
    bootstrap: Bootstrap,
) -> ConfigResults | None:
    """Score one config (per-sample rows and/or the retrieval matrix) from its checked inputs;
    on the main process also write its per-sample scores and return its results (``None`` on
    the other processes)."""
    from foilkit.scorers.api import score_pool, score_rows
    from foilkit.scorers.distributed import process_state

    data = loaded.data
    kinds = {metric.matrix for metric in spec.metrics(config)}  # per-sample rows, a pool or both

    def scoring(pool: bool) -> Any:
        if pool not in kinds:
            return None
        out_dir = str(folder.scoring(config, matrix=pool))
        run = score_pool if pool else score_rows
        return run(model, data, None, replace(options, out_dir=out_dir), checked=checked)

    scored, matrix = scoring(pool=False), scoring(pool=True)
    if not process_state().is_main_process:
        return None
    rows = None if scored is None else scored.rows
    if rows is not None:
        folder.write_scores(config, rows)
    if matrix is not None:
        folder.write_matrix(
            config, SavedMatrix(matrix.scores, matrix.ids, matrix.texts, matrix.score_kind)
        )
    failed = len(matrix.errors) if rows is None else sum(1 for error in rows["error"] if error)
    causes = (scored or matrix).record.error_causes
    return ConfigResults(
        num_rows=data.num_rows,
        metrics=compute_metrics(
            spec, config, rows, matrix, n_resamples=bootstrap.n_resamples, seed=bootstrap.seed
        ),
        coverage=Coverage.of(
            data.num_rows, loaded.dropped_missing, failed, causes, loaded.limited_from
        ),
        limited_from=loaded.limited_from,
        # the records as results.json holds them: what loading the folder gives
        score=None if scored is None else ScoringRun.from_record(plain_json(scored.run)),
        score_matrix=None if matrix is None else ScoringRun.from_record(plain_json(matrix.run)),
    )


def compute_metrics(
    spec: Benchmark, config: str, rows: Any, matrix: Any, *, n_resamples: int, seed: int
) -> dict[str, MetricResult]:
    """Every metric of ``config`` over all scored items and, where ``per_group``, per group,
    each with the tie policy it ran with.

    Rows whose video could not be scored (``error``) are left out and counted; the metrics see
    only the rows that were scored.
    """
    columns = _scored_columns(rows) if rows is not None else None
    if columns is not None and not columns["id"]:
        errors = sorted(set(rows["error"]))
        raise RuntimeError(
            f"{spec.name}/{config}: none of the {rows.num_rows} rows could be scored: "
            + "; ".join(errors[:5])
            + (f" (and {len(errors) - 5} more)" if len(errors) > 5 else "")
        )
    out: dict[str, MetricResult] = {}
    for metric in spec.metrics(config):
        groups = None
        if metric.matrix:
            kept = [i for i, row in enumerate(matrix.scores) if not _all_nan(row)]
            data = {
                "scores": matrix.scores[kept][:, kept],
                "texts": [matrix.texts[i] for i in kept],
                "ids": [matrix.ids[i] for i in kept],
            }
            overall = _call(metric, data, matrix.score_kind, None, n_resamples, seed)
            errors = len(matrix.errors)
        else:
            score_kind = columns["score_kind"][0] if columns["score_kind"] else "similarity"
            overall = _call(metric, columns, score_kind, spec.cluster_column, n_resamples, seed)
            errors = sum(1 for error in rows["error"] if error)
            if metric.per_group and spec.group_column in columns:
                groups = {
                    group: _call(
                        metric,
                        subset_columns(columns, spec.group_column, group),
                        score_kind,
                        spec.cluster_column,
                        n_resamples,
                        seed,
                    )
                    for group in group_names(columns[spec.group_column])
                }
                share_group_results(overall, groups)
        samples = None
        if not metric.matrix:
            samples = per_sample(metric, columns, score_kind, spec.cluster_column, seed)
        out[metric.metric] = MetricResult(overall, errors, groups, tie_policy(metric), samples)
    return out


def per_sample(
    metric: MetricSpec,
    columns: Mapping[str, list[Any]],
    score_kind: str,
    cluster_column: str | None,
    seed: int,
) -> dict[str, SampleSpread] | None:
    """Generate mode with several answers per question: each reported quantity of ``metric``
    computed on each sample's answers alone (the ``sample_<s>`` details stand in for the scores),
    without intervals; ``None`` for other runs."""
    from foilkit.scorers.generate import SAMPLE_DETAIL

    count = 0
    while f"caption_{SAMPLE_DETAIL}{count}" in columns:
        count += 1
    if count == 0:
        return None
    values: dict[str, list[float]] = {}
    for sample in range(count):
        data = dict(columns)
        for prefix in GROUP_PREFIXES:
            if f"{prefix}caption_{SAMPLE_DETAIL}{sample}" in columns:
                data[f"{prefix}caption_score"] = columns[f"{prefix}caption_{SAMPLE_DETAIL}{sample}"]
                data[f"{prefix}foil_scores"] = columns[f"{prefix}foil_{SAMPLE_DETAIL}{sample}"]
        result = _call(metric, data, score_kind, cluster_column, 0, seed)
        for key in metric.columns.values():
            if isinstance(result.get(key), (int, float)):
                values.setdefault(key, []).append(float(result[key]))
    return {key: SampleSpread(found) for key, found in values.items()}


def share_group_results(overall: dict[str, Any], groups: Mapping[str, Mapping[str, Any]]) -> None:
    """One number per quantity: the overall result's per-group keys (``<key>_<group>`` and its
    ``_ci``) become the group's own result. The metric function's per-group intervals come from
    resampling all items (a group's size varies between resamples), the group's from resampling
    its items only; a results.json showing both would give one accuracy two intervals."""
    for group, result in groups.items():
        for key, value in result.items():
            if key.endswith("_ci") or f"{key}_{group}" not in overall:
                continue
            overall[f"{key}_{group}"] = value
            if f"{key}_ci" in result:
                overall[f"{key}_{group}_ci"] = result[f"{key}_ci"]


def _call(
    metric: MetricSpec,
    data: Mapping[str, Any],
    score_kind: str,
    cluster_column: str | None,
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    inputs = metric.inputs(data)
    if not metric.matrix and cluster_column in data:  # unless the inputs regrouped the items
        inputs.setdefault("cluster", list(data[cluster_column]))
    result = metric_function(metric.metric)(
        **inputs,
        score_kind=score_kind,
        **metric.options_for(score_kind),
        n_resamples=n_resamples,
        seed=seed,
    )
    return separate_unanswered(plain_json(result), data)


#: A metric's tie count, the answer group whose rows it counts and the count of those rows that
#: chose no text (generate mode), which is kept apart from the ties.
UNANSWERED_KEYS = {
    "n_tied": ("main", "n_unanswered"),
    "n_tied_main": ("main", "n_unanswered_main"),
    "n_tied_proficiency": ("proficiency", "n_unanswered_proficiency"),
}


def separate_unanswered(result: dict[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    """Generate mode: the items whose every answer chose no text (unparseable, refused, judged
    to match none) counted as ``n_unanswered`` and no longer in ``n_tied``, which keeps the
    items a model judged equal (their texts tie at 0 either way; the tie policy credits both
    alike). Left as it is where the metric regrouped the rows (its ``n`` is not theirs)."""
    from foilkit.scorers.output import unanswered_rows

    for tied, (group, key) in UNANSWERED_KEYS.items():
        flags = unanswered_rows(data, group) if tied in result else None
        if flags is None or result.get("n") != len(flags):
            continue
        result[key] = sum(flags)
        result[tied] -= result[key]
    return result


def _run_protocol(configs: Mapping[str, ConfigResults]) -> ResolvedProtocol | None:
    """The resolved scoring protocol of a run: its configs' (:func:`combined_protocol`: a
    setting they resolved differently, as generate mode's parser per TempCompass task type,
    is recorded per config)."""
    from foilkit.scorers.protocols import combined_protocol

    protocols = {
        config: protocol
        for config, entry in configs.items()
        if (protocol := next((r.protocol for r in entry.records() if r.protocol), None))
    }
    return combined_protocol(protocols) if protocols else None


def model_label(model: str) -> str:
    """A Hub id as it is; a local model folder by its name."""
    return Path(model).name if Path(model).exists() else model


def _scored_columns(rows: Any) -> dict[str, list[Any]]:
    keep = [i for i, error in enumerate(rows["error"]) if not error]
    table = rows.select(keep).to_dict()
    return {name: list(values) for name, values in table.items()}


def _all_nan(row: Any) -> bool:
    import numpy as np

    return bool(np.isnan(row).all())
