"""``foilkit.evaluate``: build or load a benchmark, score a model, compute the paper's metrics, report.

One call makes a run folder::

    <run_dir>/results.json          metrics with confidence intervals + the run records
    <run_dir>/report.md             the paper's table layout, with CIs
    <run_dir>/*.png                 plots (per-group bars with CIs, P/T/P+T, recall curves)
    <run_dir>/scores/<config>.parquet     per-sample scores (one row per dataset row)
    <run_dir>/scores/<config>-matrix.npy  retrieval pools: views x texts scores (+ .json: ids, texts)
    <run_dir>/scoring/<config>/     the scorer's own folder (run.json, resumable shards)

Every number in ``results.json`` comes from the ``foilkit.metrics`` functions; which ones,
with which options and inputs, is :mod:`foilkit.benchmarks`.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foilkit.benchmarks import Benchmark, MetricSpec, get_benchmark

RESULTS_FILE = "results.json"
RESULTS_FORMAT = 1


@dataclass(frozen=True)
class Evaluation:
    """What :func:`evaluate` returns: the run folder and the content of its ``results.json``."""

    run_dir: Path
    results: dict[str, Any]

    @property
    def report(self) -> Path:
        return self.run_dir / "report.md"


def metric_function(name: str) -> Any:
    """The pure function of metric ``name`` (``foilkit.metrics.<name>.<name>.<name>``)."""
    return getattr(importlib.import_module(f"foilkit.metrics.{name}.{name}"), name)


@dataclass(frozen=True)
class BenchmarkSplit:
    """One split of a config, and how many rows building it dropped because their video was missing
    (``None``: loaded from an exported dataset, whose build this run did not see)."""

    data: Any
    dropped_missing: int | None


def load_benchmark_split(
    benchmark: Benchmark,
    config: str,
    *,
    dataset: str | os.PathLike | None = None,
    videos: str | os.PathLike | None = None,
    annotations: str | os.PathLike | None = None,
    on_missing: str = "error",
    split: str | None = None,
    cache_dir: str | None = None,
) -> BenchmarkSplit:
    """One split of ``config``: from an exported folder or Hub id (``dataset``) or built by the builder."""
    from foilkit.scorers.api import load_scoring_dataset

    split = split or benchmark.split
    if dataset is not None:
        return BenchmarkSplit(load_scoring_dataset(os.fspath(dataset), config, split), None)
    if benchmark.builder is None:
        raise ValueError(
            f"{benchmark.name} has no builder: pass dataset=<exported folder or Hub id>"
        )
    from foilkit.builders import load_builder, prepare

    builder = load_builder(benchmark.builder, config, video_root=videos, on_missing=on_missing,
                           annotations=annotations, cache_dir=cache_dir)  # fmt: skip
    data = load_scoring_dataset(prepare(builder), None, split)
    report = builder.video_reports.get(split)
    return BenchmarkSplit(data, report.dropped if report is not None else 0)


def evaluate(
    benchmark: str,
    model: str,
    *,
    config: str | None = None,
    out_dir: str | os.PathLike,
    dataset: str | os.PathLike | None = None,
    videos: str | os.PathLike | None = None,
    annotations: str | os.PathLike | None = None,
    on_missing: str = "error",
    split: str | None = None,
    n_resamples: int = 1000,
    bootstrap_seed: int = 0,
    label: str | None = None,
    overwrite: bool = False,
    resume: bool = False,
    datasets_cache_dir: str | None = None,
    **score_options: Any,
) -> Evaluation:
    """Evaluate ``model`` on ``benchmark`` (every config ``config`` names) and write the run folder.

    Args:
        benchmark: a name in :data:`foilkit.benchmarks.BENCHMARKS`.
        model: Hub id or local path of any model ``foilkit.score`` supports.
        config: a config of the benchmark, or ``"all"``/``None`` for the paper's full set.
        out_dir: the run folder.
        dataset: an exported folder or Hub dataset id; default: build from the annotations.
        videos: the video root (relative video paths resolve against it).
        annotations, on_missing: passed to the builder when building.
        split: default ``test``.
        n_resamples, bootstrap_seed: the bootstrap of the confidence intervals (``seed`` is
            the scorer's, for the ``shuffled`` control).
        label: the model's name in reports (default: ``model``).
        overwrite: replace an existing run folder; ``resume``: continue its scoring.
        **score_options: :class:`foilkit.scorers.api.ScoreOptions` (frames, control, dtype, ...).
    """
    from foilkit.scorers.distributed import process_state

    spec = get_benchmark(benchmark)
    run_dir = Path(out_dir)
    state = process_state()
    if (run_dir / RESULTS_FILE).exists() and not (overwrite or resume):
        raise FileExistsError(
            f"{run_dir} already holds an evaluation; pass overwrite=True (--overwrite) "
            "or resume=True (--resume), or choose another out_dir"
        )
    if overwrite and state.is_main_process and run_dir.exists():
        shutil.rmtree(run_dir)
    state.wait_for_everyone()
    options = {
        **score_options,
        "benchmark": spec.name,
        "video_root": None if videos is None else os.fspath(videos),
        "resume": resume,
    }
    configs: dict[str, Any] = {}
    for name in spec.configs_for(config):
        loaded = load_benchmark_split(spec, name, dataset=dataset, videos=videos, annotations=annotations,
                                      on_missing=on_missing, split=split, cache_dir=datasets_cache_dir)  # fmt: skip
        entry = _evaluate_config(
            spec, name, model, loaded, run_dir, options, n_resamples, bootstrap_seed
        )
        if state.is_main_process:
            configs[name] = entry
    results = {
        "format": RESULTS_FORMAT, "benchmark": spec.name, "title": spec.title, "paper_table": spec.paper_table,
        "model": model, "label": label or _model_label(model), "control": score_options.get("control"),
        "protocol": _run_protocol(configs),
        "dataset": None if dataset is None else os.fspath(dataset), "split": split or spec.split,
        "bootstrap": {"n_resamples": n_resamples, "seed": bootstrap_seed}, "configs": configs,
    }  # fmt: skip
    if state.is_main_process:
        from foilkit.report import write_run_report

        (run_dir / RESULTS_FILE).write_text(json.dumps(results, indent=2, default=_json_default))
        write_run_report(results, run_dir)
    return Evaluation(run_dir, results)


def _evaluate_config(
    spec: Benchmark,
    config: str,
    model: str,
    loaded: BenchmarkSplit,
    run_dir: Path,
    options: dict[str, Any],
    n_resamples: int,
    seed: int,
) -> dict[str, Any] | None:
    """Score one config (per-sample rows and/or the retrieval matrix); on the main process also
    write its per-sample scores and compute its metrics."""
    from foilkit.scorers.api import score, score_matrix
    from foilkit.scorers.distributed import process_state

    data = loaded.data
    metrics = spec.metrics(config)
    rows, matrix, records = None, None, {}
    if any(not m.matrix for m in metrics):
        rows = score(model, data, out_dir=str(run_dir / "scoring" / config), **options)
        records["score"] = json.loads((run_dir / "scoring" / config / "run.json").read_text())
    if any(m.matrix for m in metrics):
        matrix = score_matrix(
            model, data, out_dir=str(run_dir / "scoring" / f"{config}-matrix"), **options
        )
        records["score_matrix"] = matrix.run
    if not process_state().is_main_process:
        return None
    (run_dir / "scores").mkdir(parents=True, exist_ok=True)
    if rows is not None:
        rows.to_parquet(run_dir / "scores" / f"{config}.parquet")
    if matrix is not None:
        import numpy as np

        np.save(run_dir / "scores" / f"{config}-matrix.npy", matrix.scores)
        (run_dir / "scores" / f"{config}-matrix.json").write_text(
            json.dumps({"ids": matrix.ids, "texts": matrix.texts, "score_kind": matrix.score_kind})
        )
    failed = len(matrix.errors) if rows is None else sum(1 for error in rows["error"] if error)
    return {
        "num_rows": data.num_rows,
        "coverage": coverage(data.num_rows, loaded.dropped_missing, failed),
        "metrics": compute_metrics(spec, config, rows, matrix, n_resamples=n_resamples, seed=seed),
        "run": records,
    }


def coverage(num_rows: int, dropped_missing: int | None, failed: int) -> dict[str, int | None]:
    """What became of a config's rows: in the benchmark, dropped at build for a missing video,
    failed to score (video missing, corrupt or out of range, a bad score), scored."""
    return {
        "benchmark_rows": None if dropped_missing is None else num_rows + dropped_missing,
        "dropped_missing_video": dropped_missing,
        "failed": failed,
        "scored": num_rows - failed,
    }


def compute_metrics(
    spec: Benchmark, config: str, rows: Any, matrix: Any, *, n_resamples: int, seed: int
) -> dict[str, Any]:
    """Every metric of ``config`` over all scored items and, where ``per_group``, per group.

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
    out: dict[str, Any] = {}
    for metric in spec.metrics(config):
        if metric.matrix:
            kept = [i for i, row in enumerate(matrix.scores) if not _all_nan(row)]
            data = {"scores": matrix.scores[kept][:, kept], "texts": [matrix.texts[i] for i in kept],
                    "ids": [matrix.ids[i] for i in kept]}  # fmt: skip
            entry = {"overall": _call(metric, data, matrix.score_kind, None, n_resamples, seed),
                     "errors": len(matrix.errors)}  # fmt: skip
        else:
            score_kind = columns["score_kind"][0] if columns["score_kind"] else "similarity"
            entry = {"overall": _call(metric, columns, score_kind, spec.cluster_column, n_resamples, seed),
                     "errors": sum(1 for error in rows["error"] if error)}  # fmt: skip
            if metric.per_group and spec.group_column in columns:
                entry["groups"] = {
                    group: _call(metric, subset_columns(columns, spec.group_column, group), score_kind,
                                 spec.cluster_column, n_resamples, seed)
                    for group in dict.fromkeys(columns[spec.group_column])
                }  # fmt: skip
                share_group_results(entry["overall"], entry["groups"])
        out[metric.metric] = entry
    return out


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
        **metric.options,
        n_resamples=n_resamples,
        seed=seed,
    )
    return {key: _plain(value) for key, value in result.items()}


def _run_protocol(configs: Mapping[str, Any]) -> dict[str, Any] | None:
    """The resolved scoring protocol of a run (the same for every config of one benchmark)."""
    for entry in configs.values():
        for record in entry["run"].values():
            if record.get("protocol"):
                return record["protocol"]
    return None


def _model_label(model: str) -> str:
    """A Hub id as it is; a local model folder by its name."""
    return Path(model).name if Path(model).exists() else model


def _scored_columns(rows: Any) -> dict[str, list[Any]]:
    keep = [i for i, error in enumerate(rows["error"]) if not error]
    table = rows.select(keep).to_dict()
    return {name: list(values) for name, values in table.items()}


def subset_columns(
    columns: Mapping[str, Sequence[Any]], column: str, value: Any
) -> dict[str, list[Any]]:
    keep = [i for i, v in enumerate(columns[column]) if v == value]
    return {name: [values[i] for i in keep] for name, values in columns.items()}


def _all_nan(row: Any) -> bool:
    import numpy as np

    return bool(np.isnan(row).all())


def _plain(value: Any) -> Any:
    """numpy scalars/arrays -> JSON values."""
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def load_results(run_dir: str | os.PathLike) -> dict[str, Any]:
    """The ``results.json`` of a run folder (``FileNotFoundError`` naming the folder when absent)."""
    path = Path(run_dir) / RESULTS_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{run_dir} is not a foilkit evaluation run folder: {path} is missing"
        )
    return json.loads(path.read_text())
