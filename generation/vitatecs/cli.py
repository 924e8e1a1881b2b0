"""``foilkit generate vitatecs <stage>``: VITATECS' human-in-the-loop counterfactual generation.

Stages (one loop folder holds the configuration, exemplars, iterations and LLM cache):
  init          create a loop folder from a configuration file (YAML/JSON; defaults = the paper)
  train-filter  fine-tune the 7-way filter on the current exemplars; held-out P/R/F1
  generate      LLM counterfactual candidates for fresh captions of each aspect
  filter        NLI filter + filter model on those candidates
  export        the accepted candidates as CSV/JSONL for annotators
  import        annotators' labels back into the exemplar sets (starts the next iteration)
  status        the iterations table (as the paper's Tab. 12)
  set           change settings of an existing loop (e.g. toxicity.model=null)
  finalize      generate + filter + diversity + safety at scale; write the dataset

``finalize --output <out>`` writes the one foils output (``<out>/foils.parquet``,
``<out>/run.json``) and, for the VITATECS builder, ``<out>/annotations/<Aspect>.jsonl``;
``<out>/candidates.jsonl`` keeps every candidate with its status. The loop's other stages record
each run in ``<loop>/iterations/<k>/<stage>.run.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def configure(parser: argparse.ArgumentParser) -> None:
    from foilkit.builders.vitatecs import ASPECTS

    stages = parser.add_subparsers(dest="stage", required=True, metavar="stage")

    def stage(name: str, help: str) -> argparse.ArgumentParser:
        sub = stages.add_parser(name, help=help, description=help)
        sub.add_argument("--loop", required=True, type=Path, help="the loop folder")
        return sub

    init = stage("init", "create a loop folder from a configuration file")
    init.add_argument(
        "--config", type=Path, help="YAML/JSON with the settings to change (seed, llm, filter, ...)"
    )
    init.add_argument("--seed", type=int, help="the loop's seed (overrides the file's)")
    init.add_argument("--model", help="LLM name (overrides llm.model)")
    init.add_argument("--base-url", help="OpenAI-compatible endpoint (overrides llm.base_url)")

    train = stage("train-filter", "fine-tune the filter model on the current exemplars")
    train.add_argument("--epochs", type=int, help="override filter.epochs for this run")

    def captions(sub: argparse.ArgumentParser) -> argparse.ArgumentParser:
        sub.add_argument(
            "--captions",
            required=True,
            type=Path,
            help="JSONL: caption, video_name, src_dataset[, id]",
        )
        sub.add_argument(
            "--per-aspect",
            type=int,
            help="captions per aspect (default: loop/finalize.queries_per_aspect)",
        )
        sub.add_argument("--aspects", nargs="+", choices=ASPECTS, default=list(ASPECTS))
        sub.add_argument("--no-progress", dest="progress", action="store_false")
        return sub

    def llm_failures(sub: argparse.ArgumentParser) -> argparse.ArgumentParser:
        from foilkit.generation.cli_io import add_failed_requests_option

        add_failed_requests_option(sub)
        return sub

    generate = llm_failures(
        captions(stage("generate", "generate candidates for the next iteration"))
    )
    generate.add_argument(
        "--force",
        action="store_true",
        help="generate the iteration's candidates again (they exist: a rerun replaces them)",
    )
    stage("filter", "NLI filter and filter model on the next iteration's candidates")
    export = stage("export", "write the filtered candidates for annotators")
    export.add_argument(
        "--include-rejected", action="store_true", help="also export candidates the filter rejected"
    )
    imported = stage("import", "merge annotators' labels into the exemplar sets")
    imported.add_argument("labels", type=Path, help="the revised CSV or JSONL")
    stage("status", "print the iterations table")
    settings = stage("set", "change settings of the loop's config.yaml, checked as at init")
    settings.add_argument(
        "assignments",
        nargs="+",
        metavar="key=value",
        help="dotted key and a YAML value, e.g. toxicity.model=null nli.model=/models/nli",
    )
    finalize = llm_failures(
        captions(stage("finalize", "generate, filter and select at scale; write the dataset"))
    )
    finalize.add_argument("--output", "-o", required=True, type=Path, help="output folder")


def run(args: argparse.Namespace) -> int:
    if args.stage == "init":
        return _init(args)
    if args.stage == "set":
        return _set(args)
    from foilkit.generation.vitatecs.loop import Loop, status_report

    loop = Loop(args.loop)
    status = 0
    if args.stage != "status":
        status = _HANDLERS[args.stage](args, loop) or 0
    print(status_report(loop))
    return status


def _init(args: argparse.Namespace) -> int:
    from foilkit.generation.vitatecs.config import PipelineSettings
    from foilkit.generation.vitatecs.data_files import read_data
    from foilkit.generation.vitatecs.loop import Loop, status_report

    overrides = read_data(args.config) if args.config else {}
    llm = {"model": args.model, "base_url": args.base_url}
    cli = {"seed": args.seed, "llm": {k: v for k, v in llm.items() if v is not None}}
    cli = {k: v for k, v in cli.items() if v not in (None, {})}
    config = (
        PipelineSettings()
        .merged(overrides, where=str(args.config or "defaults"))
        .merged(cli, where="command line")
    )
    loop = Loop.create(args.loop, config)
    print(f"created loop {loop.root} (seed {config.seed}, LLM {config.llm.model})")
    print(status_report(loop))
    return 0


def _set(args: argparse.Namespace) -> int:
    import yaml

    from foilkit.errors import UserError
    from foilkit.generation.vitatecs.data_files import write_data
    from foilkit.generation.vitatecs.loop import Loop

    loop = Loop(args.loop)
    overrides: dict = {}
    for assignment in args.assignments:
        key, sep, value = assignment.partition("=")
        if not sep or not key.strip():
            raise UserError(f"{assignment!r} is not key=value (e.g. toxicity.model=null)")
        *parents, name = key.strip().split(".")
        node = overrides
        for parent in parents:
            node = node.setdefault(parent, {})
        node[name] = yaml.safe_load(value)
    config = loop.config.merged(overrides, where="command line")
    write_data(loop.config_path, config.to_data())
    print(f"updated {loop.config_path}: {', '.join(args.assignments)}")
    return 0


def _train_filter(args: argparse.Namespace, loop) -> None:
    from foilkit.generation.vitatecs import stages

    result = stages.train_filter(loop, epochs=args.epochs)
    _record(args, loop, "train-filter", result, iteration=loop.load_state().current.iteration)
    scores = [
        f"{k} {result[k]:.3f}" for k in ("precision", "recall", "f1") if result.get(k) is not None
    ]
    print(
        f"filter trained on {result['train_pairs']} pairs ({result['examples']} with "
        f"augmentation); held out {result['heldout_pairs']}: "
        f"{', '.join(scores) or 'no held-out scores'}"
    )


def _caption_options(args: argparse.Namespace) -> dict:
    """The options every stage that reads ``--captions`` takes (see ``captions`` above)."""
    return {"per_aspect": args.per_aspect, "aspects": args.aspects, "progress": args.progress}


def _generate(args: argparse.Namespace, loop) -> int:
    from foilkit.generation.cli_io import failed_requests_status
    from foilkit.generation.vitatecs import stages

    client = stages.chat_client(loop)
    with _recorded_on_failure(args, loop, "generate", client):
        result = stages.generate(
            loop, args.captions, **_caption_options(args), force=args.force, client=client
        )
    _record(args, loop, "generate", result)
    print(f"{result['queries']} queries -> {result['path']}: {result['statuses']}")
    print(f"LLM usage: {result['usage']}")
    return failed_requests_status(args, result["failures"], rerun="generate --force")


def _filter(args: argparse.Namespace, loop) -> None:
    from foilkit.generation.vitatecs import stages

    result = stages.filter_candidates(loop)
    _record(args, loop, "filter", result)
    print(f"filtered -> {result['path']}: {result['statuses']}")


def _export(args: argparse.Namespace, loop) -> None:
    from foilkit.generation.vitatecs import stages

    paths = stages.export(loop, include_rejected=args.include_rejected)
    with open(paths["jsonl"], encoding="utf-8") as handle:
        rows = sum(1 for _ in handle)
    _record(args, loop, "export", {"rows": rows, **{k: str(v) for k, v in paths.items()}})
    print(
        f"{rows} candidates for revision: {paths['csv']} (also {paths['jsonl'].name}); "
        f"instructions: {paths['instructions']}"
    )
    if paths["already_exemplars"] or paths["repeats"]:
        print(
            f"left out {paths['already_exemplars']} already in the exemplar sets and "
            f"{paths['repeats']} repeated pairs"
        )


def _import(args: argparse.Namespace, loop) -> None:
    from foilkit.generation.vitatecs import stages

    result = stages.import_labels(loop, args.labels)
    _record(args, loop, "import", result, iteration=result["iteration"])
    print(
        f"imported {result['labels']} labels ({result['new_labels']} new): "
        f"{result['positive']} positive, "
        f"{result['negative']} negative, {result['na']} N/A, {result['moved']} moved, "
        f"{result['unchanged']} already known; iteration {result['iteration']} begins"
    )


def _finalize(args: argparse.Namespace, loop) -> int:
    from foilkit.generation.cli_io import failed_requests_status, parameters
    from foilkit.generation.vitatecs import stages

    client = stages.chat_client(loop)
    with _recorded_on_failure(args, loop, "finalize", client, path=args.output / "run.json"):
        result = stages.finalize(
            loop,
            args.captions,
            args.output,
            **_caption_options(args),
            parameters=parameters(args),
            client=client,
        )
    print(f"{result['queries']} queries: {result['statuses']}")
    if result["dataset"] is None:
        print(f"no candidate was selected: nothing written to {args.output}")
    else:
        print(
            f"rows per aspect: {result['rows']} -> {result['dataset']}, {args.output}/annotations"
        )
    print(f"LLM usage: {result['usage']}")
    return failed_requests_status(args, result["failures"], rerun="finalize")


def _recorded_on_failure(
    args: argparse.Namespace, loop, stage: str, client, *, path: Path | None = None
):
    """Run a stage; if it fails, write its run record anyway (the error, the LLM requests,
    retries and failures so far) before the error goes on."""
    from foilkit.generation.cli_io import recorded_on_failure
    from foilkit.generation.vitatecs import stages

    def write(facts: dict) -> None:
        _record(args, loop, stage, {**facts, **stages.llm_facts(client)}, path=path)

    return recorded_on_failure(write, client)


def _record(
    args: argparse.Namespace,
    loop,
    stage: str,
    result: dict,
    *,
    iteration: int | None = None,
    path: Path | None = None,
) -> None:
    """``iterations/<k>/<stage>.run.json`` (or ``path``): the stage's run record (its options,
    the loop's configuration, files, models and the result); ``k`` is the iteration under way
    unless given."""
    from foilkit.generation.cli_io import parameters
    from foilkit.generation.provenance import record_path
    from foilkit.generation.vitatecs import stages

    if iteration is None:
        iteration = loop.next_iteration()
    files = {"captions": getattr(args, "captions", None), "labels": getattr(args, "labels", None)}
    record = stages.stage_record(
        loop,
        stage,
        inputs=files,
        parameters=parameters(args),
        results=json.loads(json.dumps(result, default=str)),
    )
    record.write(path or record_path(loop.iteration_dir(iteration) / stage))


# stage -> handler(args, loop); ``init`` and ``status`` are handled by run() itself.
_HANDLERS = {
    "train-filter": _train_filter,
    "generate": _generate,
    "filter": _filter,
    "export": _export,
    "import": _import,
    "finalize": _finalize,
}
