"""``foilkit push-results``: a run's per-sample scores and results as a Hub dataset repo, and
its numbers as ``model-index`` results on the model's card.

The dataset repo gets ``scores/<config>.parquet`` (one row per item: the evidence behind every
number; retrieval pools also ``scores/<config>-matrix.npy`` with its ids and texts), ``results.json``, ``report.md``, the plots, and a dataset card whose YAML ``configs:``
makes ``load_dataset(repo, "<config>")`` return the per-sample scores. The model card gets one
``EvalResult`` per reported number (huggingface_hub's card API: ``eval_results_to_model_index``
then ``metadata_update``, which merges with the results already on the card).

``--dry-run <folder>`` writes exactly what would be sent: ``dataset/`` holds the files as they
would sit in the repo, ``dataset_commit.json`` the commit operations, ``model_card_update.json``
the ``metadata_update`` call and ``model-index.yaml`` the YAML it adds. Nothing touches the network.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foilkit.hub_commit import RepoCommit

#: Hub task type of each metric's numbers in ``model-index``.
TASK_TYPES = {
    "pairwise_foil_accuracy": "zero-shot-classification",
    "proficiency_combined_accuracy": "zero-shot-classification",
    "multiple_choice_accuracy": "multiple-choice",
    "binary_retrieval_accuracy": "video-text-retrieval",
    "retrieval_recall": "video-text-retrieval",
}


@dataclass(frozen=True)
class ResultsUpload:
    """What :func:`push_results` sends: repo files (path in repo -> local file) and card metadata."""

    repo_id: str
    files: dict[str, Path]
    card: str
    commit_message: str
    model_repo: str | None
    model_index: list[dict[str, Any]] | None


def eval_results(results: Mapping[str, Any], *, dataset_id: str, source_url: str) -> list[Any]:
    """One ``huggingface_hub.EvalResult`` per cell of the run's table (values in percent)."""
    from huggingface_hub import EvalResult

    from foilkit.benchmarks import get_benchmark
    from foilkit.report import run_table

    benchmark = get_benchmark(results["benchmark"])
    metric_of = {config: benchmark.metrics(config) for config in results["configs"]}
    out = []
    for row in run_table(results).rows:
        for column, cell in row.cells.items():
            metric = next(m for m in metric_of[row.config] if column in m.columns)
            scope = (
                row.config
                if row.label in (row.config, "all", f"{row.config} (all)")
                else f"{row.config}/{row.label}"
            )
            out.append(EvalResult(
                task_type=TASK_TYPES[metric.metric], task_name=f"{results['title']} ({benchmark.paper_table})",
                dataset_type=dataset_id, dataset_name=results["title"], dataset_config=row.config,
                dataset_split=results["split"], metric_type=metric.metric, metric_name=f"{column} ({scope})",
                metric_value=round(100 * cell.value, 2), metric_config=scope,
                metric_args={"ci_95": None if cell.low is None else [round(100 * cell.low, 2), round(100 * cell.high, 2)],
                             "control": results.get("control")},
                source_name="foilkit", source_url=source_url,
            ))  # fmt: skip
    return out


def prepare_upload(
    run_dir: str | os.PathLike,
    repo_id: str,
    *,
    model_repo: str | None = None,
    dataset_id: str | None = None,
) -> ResultsUpload:
    """Collect a run folder's files and build the dataset card and the ``model-index`` entries."""
    from huggingface_hub.repocard_data import eval_results_to_model_index

    from foilkit.evaluation import RESULTS_FILE, load_results

    run = Path(run_dir)
    results = load_results(run)
    files = {f"scores/{p.name}": p for p in sorted((run / "scores").glob("*")) if p.is_file()}
    files[RESULTS_FILE] = run / RESULTS_FILE
    files.update({p.name: p for p in sorted(run.glob("*.png"))})
    if (run / "report.md").is_file():
        files["report.md"] = run / "report.md"
    model_index = None
    if model_repo is not None:
        source = f"https://huggingface.co/datasets/{repo_id}"
        dataset = dataset_id or _dataset_id(results)
        model_index = eval_results_to_model_index(
            model_repo, eval_results(results, dataset_id=dataset, source_url=source)
        )
    message = f"foilkit results: {results['label']} on {results['title']}"
    return ResultsUpload(
        repo_id, files, results_card(results, run, sorted(files)), message, model_repo, model_index
    )


def _dataset_id(results: Mapping[str, Any]) -> str:
    """The evaluated dataset's Hub id when it came from the Hub, else the benchmark's name."""
    dataset = results.get("dataset")
    if dataset and not Path(dataset).exists():
        return dataset
    return results["benchmark"]


def results_card(results: Mapping[str, Any], run: Path, files: list[str]) -> str:
    """The dataset card: YAML ``configs`` (one per scored config) + the run's report."""
    import yaml

    configs = [{"config_name": name.removeprefix("scores/").removesuffix(".parquet"),
                "data_files": [{"split": results["split"], "path": name}]}
               for name in files if name.startswith("scores/") and name.endswith(".parquet")]  # fmt: skip
    header = {"tags": ["foilkit", "evaluation", results["benchmark"]], "configs": configs}
    report = (
        (run / "report.md").read_text(encoding="utf-8") if (run / "report.md").is_file() else ""
    )
    return (
        f"---\n{yaml.safe_dump(header, sort_keys=False)}---\n\n"
        f"# foilkit results: {results['label']} on {results['title']}\n\n"
        "Per-sample scores (`scores/<config>.parquet`, one row per benchmark item: the score of the "
        "caption and of each foil, the frames used, any video error) and the metrics with bootstrap "
        "confidence intervals (`results.json`) of one `foilkit evaluate` run.\n\n"
        + report.split("\n", 1)[-1]
    )


def push_results(
    upload: ResultsUpload, *, token: str | None = None, private: bool | None = None
) -> dict[str, str]:
    """Send ``upload``: one commit to the dataset repo, then the model card's ``model-index`` update."""
    from huggingface_hub import metadata_update

    out = {"dataset_commit": dataset_commit(upload).push(token=token, private=private)}
    if upload.model_repo is not None:
        out["model_card_commit"] = metadata_update(
            upload.model_repo, {"model-index": upload.model_index}, repo_type="model", overwrite=True,
            token=token, commit_message=upload.commit_message,
        )  # fmt: skip
    return out


def dataset_commit(upload: ResultsUpload) -> RepoCommit:
    """The dataset repo commit: the card plus every file of the run."""
    files: dict[str, Path | bytes] = {"README.md": upload.card.encode("utf-8"), **upload.files}
    return RepoCommit(upload.repo_id, "dataset", files, upload.commit_message)


def write_dry_run(upload: ResultsUpload, folder: str | os.PathLike) -> Path:
    """Write what :func:`push_results` would send into ``folder`` (see the module docstring)."""
    import yaml

    out = Path(folder)
    if out.exists():
        shutil.rmtree(out)
    dataset_commit(upload).write_dry_run(out, "dataset")
    if upload.model_repo is not None:
        call = {"function": "huggingface_hub.metadata_update", "repo_id": upload.model_repo, "repo_type": "model",
                "overwrite": True, "commit_message": upload.commit_message,
                "metadata": {"model-index": upload.model_index}}  # fmt: skip
        (out / "model_card_update.json").write_text(json.dumps(call, indent=2))
        (out / "model-index.yaml").write_text(
            yaml.safe_dump({"model-index": upload.model_index}, sort_keys=False)
        )
    return out


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", help="a foilkit evaluate run folder")
    parser.add_argument(
        "--repo", required=True, help="dataset repo id for the per-sample scores and results"
    )
    parser.add_argument("--model-repo", help="model repo whose card gets the model-index results")
    parser.add_argument(
        "--dataset-id",
        help="Hub id of the evaluated dataset in model-index (default: the "
        "dataset the run loaded when it is a Hub id, else the benchmark name)",
    )
    parser.add_argument("--private", action="store_true", help="create the dataset repo as private")
    parser.add_argument(
        "--dry-run",
        metavar="FOLDER",
        help="write the files and commit operations here; send nothing",
    )


def run(args: argparse.Namespace) -> int:
    upload = prepare_upload(
        args.run_dir, args.repo, model_repo=args.model_repo, dataset_id=args.dataset_id
    )
    if args.dry_run:
        print(f"dry run: {write_dry_run(upload, args.dry_run)} holds what would be sent")
        return 0
    for name, url in push_results(upload, private=args.private or None).items():
        print(f"{name}: {url}")
    return 0
