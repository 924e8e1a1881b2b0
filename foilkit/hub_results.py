"""``foilkit push-results``: a run's per-sample scores and results as a Hub dataset repo, and
its numbers as ``.eval_results/`` on the model repo, the files the Hub's leaderboards read.

The dataset repo gets ``scores/<config>.parquet`` (one row per item: the evidence behind every
number; retrieval pools also ``scores/<config>-matrix.npy`` with its ids and texts),
``results.json``, ``report.md``, the plots, and a dataset card (with a licence) whose YAML
``configs:`` makes ``load_dataset(repo, "<config>")`` return the per-sample scores. Local paths
of the machine that ran the evaluation (model cache, dataset and cache folders) are replaced by
their last component in what is uploaded.

The model repo gets ``.eval_results/<benchmark>[_<control>].yaml``: one
``huggingface_hub.EvalResultEntry`` per task of the benchmark's ``eval.yaml`` (the task ids of
:func:`foilkit.builders.hub.hub_tasks`, or for a run under a temporal control its control tasks,
``direction_reversed``: never the paper's task; values in percent), with ``dataset.id`` the
benchmark's canonical Hub repository (:func:`foilkit.builders.hub.hub_repo`) unless told,
``dataset.revision`` the commit of the Hub dataset the run loaded when it is that repository,
short ``notes`` (protocol, frames, control, 95% CI, coverage) and ``source`` the results
dataset, whose ``results.json`` holds the full record. It is opened as a pull request unless
``--direct`` (most models evaluated are not the user's). ``--model-index`` also writes the
legacy ``model-index`` card metadata.

``--dry-run <folder>`` writes exactly what would be sent: ``dataset/`` and ``model/`` hold the
files as they would sit in each repo (``model/.eval_results/*.yaml``), ``dataset_commit.json``
and ``model_commit.json`` the commit operations; with ``--model-index`` also
``model_card_update.json`` (the ``metadata_update`` call) and ``model-index.yaml``.
Nothing touches the network.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foilkit.errors import UserError
from foilkit.folders import DRY_RUN, replace_folder
from foilkit.hub_commit import RepoCommit
from foilkit.markdown import markdown_text
from foilkit.run import DEFAULT_MIN_COVERAGE, RunFolder, RunResults

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from foilkit.builders.hub import HubTask

#: Hub task id (a pipeline tag) of each metric's numbers in ``model-index``.
TASK_TYPES = {
    "pairwise_foil_accuracy": "zero-shot-classification",
    "proficiency_combined_accuracy": "zero-shot-classification",
    "multiple_choice_accuracy": "multiple-choice",
    "binary_retrieval_accuracy": "zero-shot-classification",
    "retrieval_recall": "text-retrieval",
}
#: Licence of the uploaded results (scores and metrics) unless ``--license`` says otherwise.
RESULTS_LICENSE = "cc-by-4.0"
#: Folder of a model repo whose YAML files the Hub's leaderboards read.
EVAL_RESULTS_DIR = ".eval_results"
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class TaskValue:
    """A run's value of one leaderboard task, in percent, with its 95% CI when it has one."""

    task: HubTask
    value: float
    ci: tuple[float, float] | None
    n: int | None
    config: str
    group: str | None


def task_values(results: RunResults) -> list[TaskValue]:
    """The run's value of every leaderboard task of its benchmark that it computed: the paper's
    tasks, or under a temporal control the control's own tasks (``direction_reversed``)."""
    from foilkit.builders.hub import hub_tasks

    found: dict[str, TaskValue] = {}
    for task in hub_tasks(results.benchmark, results.control):
        if task.mean_of:
            parts = [found[part] for part in task.mean_of if part in found]
            if parts and len(parts) == len(task.mean_of):
                mean = sum(part.value for part in parts) / len(parts)
                found[task.id] = TaskValue(task, round(mean, 2), None, None, task.config, None)
            continue
        for config, group, key in task.sources:
            result = _result(results, config, group, key)
            if result is not None:
                value, ci = result[key], result.get(f"{key}_ci")
                found[task.id] = TaskValue(
                    task,
                    round(100 * value, 2),
                    None
                    if not ci or ci[0] is None
                    else (round(100 * ci[0], 2), round(100 * ci[1], 2)),
                    result.get("n"),
                    config,
                    group,
                )
                break
    return list(found.values())


def _result(
    results: RunResults, config: str, group: str | None, key: str
) -> Mapping[str, Any] | None:
    """The result holding ``key`` for ``config`` (its ``group``), or ``None``."""
    entry = results.configs.get(config)
    for metric in entry.metrics.values() if entry is not None else ():
        scope = metric.overall if group is None else (metric.groups or {}).get(group)
        if scope is not None and scope.get(key) is not None:
            return scope
    return None


def eval_results_path(results: RunResults) -> str:
    """``.eval_results/<benchmark>[_<control>].yaml``: one file per benchmark and frame control."""
    variant = results.control
    return f"{EVAL_RESULTS_DIR}/{results.benchmark}{'' if not variant else '_' + variant}.yaml"


def run_notes(results: RunResults, value: TaskValue | None = None) -> str:
    """``notes`` of an entry, short as the Hub shows them: the scoring protocol's name, frames,
    control, the 95% CI, the coverage (``protocol paper; 8 frames; control none; 95% CI
    [61.2, 70.3]; coverage 20 / 20 rows scored``) and, for a run cut by ``--limit``, that it is
    partial. The protocol's settings and everything else are in the results dataset's
    ``results.json``, the entry's ``source``."""
    parts = []
    if results.protocol is not None:
        parts.append(f"protocol {results.protocol.name}")
    num_frames = next((r.num_frames for r in results.records() if r.num_frames is not None), None)
    if num_frames is not None:
        parts.append(f"{num_frames} frames")
    parts.append(f"control {results.control or 'none'}")
    if value is not None and value.ci is not None:
        parts.append(f"95% CI [{value.ci[0]}, {value.ci[1]}]")
    entry = results.configs.get(value.config) if value is not None else None
    if entry is not None and entry.coverage is not None:
        parts.append(f"coverage {entry.coverage.label} rows scored")
    partial = results.partial()
    if partial is not None:
        parts.append(partial)
    return "; ".join(parts)


def eval_result_entries(
    results: RunResults,
    *,
    dataset_id: str,
    source_url: str,
    dataset_revision: str | None = None,
) -> list[Any]:
    """One ``huggingface_hub.EvalResultEntry`` per leaderboard task the run computed."""
    from huggingface_hub import EvalResultEntry

    date = next((r.finished_at for r in results.records() if r.finished_at is not None), None)
    return [
        EvalResultEntry(
            dataset_id=dataset_id,
            task_id=value.task.id,
            value=value.value,
            dataset_revision=dataset_revision,
            date=date,
            source_url=source_url,
            source_name="foilkit results",
            notes=run_notes(results, value),
        )
        for value in task_values(results)
    ]


def eval_results_yaml(entries: Sequence[Any]) -> str:
    """The ``.eval_results/*.yaml`` text of ``entries`` (huggingface_hub's serialisation), one
    line per value (``notes`` unwrapped)."""
    import yaml
    from huggingface_hub import eval_result_entries_to_yaml

    data = eval_result_entries_to_yaml(list(entries))
    return yaml.safe_dump(data, sort_keys=False, width=2**31 - 1)


@dataclass(frozen=True)
class ResultsUpload:
    """What :func:`push_results` sends: the results dataset repo's files and card, the model
    repo's ``.eval_results`` files, and (optionally) legacy ``model-index`` card metadata."""

    repo_id: str
    files: dict[str, Path | bytes]
    card: str
    commit_message: str
    model_repo: str | None
    model_files: dict[str, bytes] = field(default_factory=dict)
    model_index: list[dict[str, Any]] | None = None
    create_pr: bool = True


def eval_results(results: RunResults, *, dataset_id: str, source_url: str) -> list[Any]:
    """Legacy ``model-index``: one ``huggingface_hub.EvalResult`` per cell of the run's table
    (percent)."""
    from huggingface_hub import EvalResult

    from foilkit.report import run_table

    benchmark = results.spec
    metric_of = {config: benchmark.metrics(config) for config in results.configs}
    out = []
    for row in run_table(results).rows:
        for column, cell in row.cells.items():
            metric = next(m for m in metric_of[row.config] if column in m.columns)
            whole = row.label in (row.config, "all", f"{row.config} (all)")
            scope = row.config if whole else f"{row.config}/{row.label}"
            name = f"{column} ({scope})"
            if whole and metric.columns[column].startswith("macro_"):
                name = f"{column}, mean over {benchmark.group_label}s ({scope})"
            out.append(
                EvalResult(
                    task_type=TASK_TYPES[metric.metric],
                    task_name=f"{results.title} ({benchmark.paper_table})",
                    dataset_type=dataset_id,
                    dataset_name=results.title,
                    dataset_config=row.config,
                    dataset_split=results.split,
                    metric_type=metric.metric,
                    metric_name=name,
                    metric_value=round(100 * cell.value, 2),
                    metric_config=scope,
                    metric_args={
                        "ci_95": None
                        if cell.low is None
                        else [round(100 * cell.low, 2), round(100 * cell.high, 2)],
                        "control": results.control,
                    },
                    source_name="foilkit",
                    source_url=source_url,
                )
            )
    return out


def prepare_upload(
    run_dir: str | os.PathLike,
    repo_id: str,
    *,
    model_repo: str | None = None,
    dataset_id: str | None = None,
    dataset_revision: str | None = None,
    model_index: bool = False,
    create_pr: bool = True,
    license: str = RESULTS_LICENSE,
    min_coverage: float = DEFAULT_MIN_COVERAGE,
) -> ResultsUpload:
    """Collect a run folder's files (local paths removed), the results card, and for
    ``model_repo`` its ``.eval_results`` file (and ``model-index`` entries with ``model_index``).

    A run that scored fewer of a config's rows than ``min_coverage`` is no leaderboard result:
    its ``.eval_results`` are refused (the results dataset, which states its coverage, is not).
    """
    run = RunFolder(Path(run_dir))
    results = RunResults.load(run)
    if model_repo is not None:
        _check_coverage(run.root, results, min_coverage)
    local = _local_paths(results)
    # per-sample scores and the item browser copy the benchmark's texts: not for a benchmark
    # whose terms forbid redistributing them (TemporalBench)
    withheld = _redistribution_forbidden(results.benchmark)
    if withheld:
        logger.warning(
            "%s: the per-sample scores and the HTML item browser stay local (they copy the "
            "benchmark's questions): %s",
            results.benchmark,
            withheld,
        )
    files: dict[str, Path | bytes] = {
        run.relative(p): p for p in ([] if withheld else run.score_files())
    }

    def redacted(path: Path) -> str:
        """Add ``path``'s text to the upload, local paths cut (:func:`_redact`); returns it."""
        text = _redact(path.read_text(encoding="utf-8"), local)
        files[run.relative(path)] = text.encode("utf-8")
        return text

    redacted(run.results)
    files.update({run.relative(p): p for p in run.plots()})
    report = redacted(run.report) if run.report.is_file() else ""
    if run.html.is_file() and not withheld:  # the item browser: self-contained, on the Hub
        redacted(run.html)
    model_files, index = {}, None
    if model_repo is not None:
        source = f"https://huggingface.co/datasets/{repo_id}"
        dataset = hub_dataset_id(results, dataset_id)
        if dataset_revision is None and dataset == results.dataset:
            dataset_revision = loaded_revision(results)
        entries = eval_result_entries(
            results, dataset_id=dataset, source_url=source, dataset_revision=dataset_revision
        )
        if not entries:
            raise ValueError(
                f"{run.root} holds none of the leaderboard tasks of {results.benchmark} "
                f"(configs {sorted(results.configs)})"
            )
        model_files[eval_results_path(results)] = eval_results_yaml(entries).encode("utf-8")
        if model_index:
            from huggingface_hub.repocard_data import eval_results_to_model_index

            index = eval_results_to_model_index(
                model_repo, eval_results(results, dataset_id=dataset, source_url=source)
            )
    message = f"foilkit results: {_redact(results.label, local)} on {results.title}"
    scores = {
        config: run.relative(run.scores(config))
        for config in results.configs
        if run.scores(config).is_file() and not withheld
    }
    card = results_card(results, report, scores, license=license)
    return ResultsUpload(repo_id, files, card, message, model_repo, model_files, index, create_pr)


def _redistribution_forbidden(benchmark: str | None) -> str:
    """Why ``benchmark``'s texts must not be redistributed (its spec's), or ``""``."""
    from foilkit.builders import BENCHMARKS, get_benchmark

    if benchmark is None or benchmark not in BENCHMARKS.names():
        return ""
    return get_benchmark(benchmark).redistribution_forbidden


def hub_dataset_id(results: RunResults, dataset_id: str | None = None) -> str:
    """The benchmark dataset's Hub id: ``dataset_id``, else the benchmark's canonical repository
    (:func:`foilkit.builders.hub.hub_repo`, so every result joins one leaderboard), else
    the dataset the run loaded when that was a Hub id. A local folder or a benchmark name is no
    Hub id: the caller must say."""
    from foilkit.builders.hub import hub_repo

    if dataset_id is not None and not HUB_ID.match(dataset_id):
        raise ValueError(f"--dataset-id {dataset_id!r} is not a Hub dataset id <owner>/<name>")
    chosen = dataset_id or hub_repo(results.benchmark) or results.dataset
    if chosen and HUB_ID.match(str(chosen)) and (dataset_id or not Path(chosen).exists()):
        return str(chosen)
    raise ValueError(
        f"the run evaluated {results.dataset or results.benchmark!r}, which is not a Hub dataset "
        "id: pass --dataset-id <owner>/<name>, the Hub dataset holding the benchmark's eval.yaml"
    )


def loaded_revision(results: RunResults) -> str | None:
    """The commit of the Hub dataset the run loaded, as its scoring records give it (``None``:
    built from the annotations, a local folder, or a run recorded before revisions were)."""
    return next((r.dataset_revision for r in results.records() if r.dataset_revision), None)


def _local_paths(results: RunResults) -> list[str]:
    """Absolute paths of the machine that ran the evaluation found in ``results``, longest first."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, Mapping):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str):
            if value.startswith("--") and "=" in value:  # a recorded command line's --out=/a/b
                value = value.split("=", 1)[1]
            if os.path.isabs(value) or value.startswith("~"):
                found.add(value.rstrip("/"))

    walk(results.to_record())
    return sorted(found, key=len, reverse=True)


def _redact(text: str, local: Sequence[str]) -> str:
    """``text`` with every path of ``local`` cut to its last component, also where the report
    wrote it escaped for Markdown."""
    for path in local:
        name = Path(path).name or path
        text = text.replace(path, name)
        text = text.replace(markdown_text(path), markdown_text(name))
    return text


def results_card(
    results: RunResults, report: str, scores: Mapping[str, str], *, license: str = RESULTS_LICENSE
) -> str:
    """The dataset card: licence, YAML ``configs`` (one per config with per-sample scores,
    ``scores``: config -> its file in the repo) + the run's report."""
    import yaml

    configs = [
        {"config_name": config, "data_files": [{"split": results.split, "path": path}]}
        for config, path in sorted(scores.items())
    ]
    header = {
        "license": license,
        "tags": ["foilkit", "evaluation", results.benchmark],
        "configs": configs,
    }
    local = _local_paths(results)
    return (
        f"---\n{yaml.safe_dump(header, sort_keys=False)}---\n\n"
        f"# foilkit results: {markdown_text(_redact(results.label, local))} on {results.title}\n\n"
        "Per-sample scores (`scores/<config>.parquet`, one row per benchmark item: the score of "
        "the caption and of each foil, the frames used, any video error) and the metrics with "
        "bootstrap confidence intervals (`results.json`) of one `foilkit evaluate` run.\n\n"
        + report.split("\n", 1)[-1]
    )


def _check_coverage(root: Path, results: RunResults, minimum: float) -> None:
    """Refuse a run below ``minimum`` coverage (rows scored / rows selected, as everywhere), and
    a partial run (``--limit``) unless ``minimum`` is 0: either's values would enter the
    benchmark's Hub leaderboard as results over the benchmark."""
    low = [
        f"{config}: {entry.coverage.label} rows scored ({entry.coverage.fraction:.0%})"
        for config, entry in results.configs.items()
        if entry.coverage is not None and entry.coverage.below(minimum)
    ]
    if low:
        raise UserError(
            f"{root} is incomplete ({'; '.join(low)}; below --min-coverage {minimum:g}): its "
            "values would enter the benchmark's Hub leaderboard as results. Fix the inputs and "
            "rerun, push without --model-repo, or pass --min-coverage 0 to publish it anyway"
        )
    partial = results.partial()
    if partial is not None and minimum > 0:
        raise UserError(
            f"{root} is a {partial}: its values would enter the benchmark's Hub leaderboard as "
            "results over the whole benchmark. Evaluate every row (leave out --limit), push "
            "without --model-repo, or pass --min-coverage 0 to publish it anyway"
        )


def push_results(
    upload: ResultsUpload, *, token: str | None = None, private: bool | None = None
) -> dict[str, str]:
    """Send ``upload``: the results dataset commit, then the model repo's ``.eval_results``
    (a pull request unless ``upload.create_pr`` is false) and any ``model-index`` update."""
    out = {"dataset_commit": dataset_commit(upload).push(token=token, private=private)}
    if upload.model_repo is not None:
        out["model_commit"] = model_commit(upload).push(token=token)
    if upload.model_index is not None:
        from huggingface_hub import metadata_update

        out["model_card_commit"] = metadata_update(**_card_update(upload), token=token)
    return out


def _card_update(upload: ResultsUpload) -> dict[str, Any]:
    """The ``huggingface_hub.metadata_update`` arguments that write ``upload``'s ``model-index``
    on the model card."""
    return {
        "repo_id": upload.model_repo,
        "repo_type": "model",
        "overwrite": True,
        "commit_message": upload.commit_message,
        "create_pr": upload.create_pr,
        "metadata": {"model-index": upload.model_index},
    }


def dataset_commit(upload: ResultsUpload) -> RepoCommit:
    """The dataset repo commit: the card plus every file of the run."""
    files: dict[str, Path | bytes] = {"README.md": upload.card.encode("utf-8"), **upload.files}
    return RepoCommit(upload.repo_id, "dataset", files, upload.commit_message)


def model_commit(upload: ResultsUpload) -> RepoCommit:
    """The model repo commit: its ``.eval_results`` file, as a pull request by default; the
    model repo is never created (it is someone's model)."""
    return RepoCommit(
        str(upload.model_repo),
        "model",
        dict(upload.model_files),
        upload.commit_message,
        create_pr=upload.create_pr,
        create_repo=False,
    )


def write_dry_run(upload: ResultsUpload, folder: str | os.PathLike) -> Path:
    """Write what :func:`push_results` would send into ``folder`` (see the module docstring)."""
    import yaml

    out = replace_folder(folder, DRY_RUN)  # a new folder, or an earlier dry run's
    dataset_commit(upload).write_dry_run(out, "dataset")
    if upload.model_repo is not None:
        model_commit(upload).write_dry_run(out, "model")
    if upload.model_index is not None:
        call = {"function": "huggingface_hub.metadata_update", **_card_update(upload)}
        (out / "model_card_update.json").write_text(json.dumps(call, indent=2))
        (out / "model-index.yaml").write_text(
            yaml.safe_dump({"model-index": upload.model_index}, sort_keys=False)
        )
    return out
