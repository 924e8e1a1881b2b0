"""``foilkit generate rtime <stage>``: RTime's activity list and caption rewrites (§3.1, §8).

Stages, in the paper's order (each LLM stage takes the LLM options: --model, --base-url, ...;
replies are cached under --cache-dir, so a rerun sends nothing twice):
  expand-activities  seed pairs (JSONL; default: foilkit's) -> LLM few-shot expansion ->
                     curation file (.csv/.tsv/.jsonl): keep = yes for seeds, empty for new pairs
  curate-import      a curated file (pairs or phrases) -> the kept rows as JSONL
  enrich             curated pairs (JSONL) -> concrete objects for [something] -> curation file
  rewrite            captions (JSONL rows with id, caption, split; or an RTime .json file) ->
                     nine rewrites per train caption, similarity, temporal-word and reversal
                     checks (the reversal check: the other direction's caption) ->
                     JSONL rows with rewrites and provenance; --rtime-json writes the RTime
                     annotation format back; the run record holds the Fig. 10 report

No stage makes foils (RTime's hard negative is the reversed video): each writes its own file --
a curation file, curated JSONL, caption rows with rewrites -- and the run's
:class:`~foilkit.generation.provenance.RunRecord` beside it as ``<output>.run.json`` (and beside
``--rtime-json``'s and ``--plot``'s files). A stage replaces only files foilkit wrote (a foilkit
record beside them), checked before it starts
(:func:`~foilkit.generation.cli_io.claim_output_file`).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import types
import typing
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foilkit.generation.cli_io import (
    add_failed_requests_option,
    add_output,
    claim_output_file,
    failed_requests_status,
    recorded_on_failure,
    run_record,
    write_rows,
)
from foilkit.generation.provenance import RunRecord, record_path

if TYPE_CHECKING:
    from foilkit.generation.rtime.captions import CaptionRow

STAGES = ("expand-activities", "curate-import", "enrich", "rewrite")
ALL_SPLITS = "all"

# LLMSettings fields the stages set themselves: one reply per request; --seed seeds the LLM too
# (each request is sent a seed derived from it and the request).
_LLM_FIELDS_NOT_OPTIONS = ("n", "seed")
_LLM_HELP = {
    "model": "model name on the server (paper: gpt-4; a local vLLM/Ollama model works the same)",
    "base_url": "OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 "
    "(default: $OPENAI_BASE_URL, else OpenAI)",
    "api_key_env": "the NAME of the environment variable holding the API key (never the key)",
    "timeout_s": "the most seconds one request may take in all, however slowly its reply "
    "trickles (default 120)",
    "max_reply_bytes": "the largest reply read, in bytes; a larger one fails its request "
    "(default 16 MB)",
    "cache_dir": "folder caching every request and reply (a rerun costs nothing)",
    "send_seed": "send each request a seed derived from --seed and the request (recorded with "
    "the reply); --no-send-seed for an API that rejects a seed",
}
# The replies are lists: more room than LLMSettings's default.
_MAX_TOKENS = {"expand-activities": 1024, "enrich": 512, "rewrite": 1024}


def _add_llm_options(parser: argparse.ArgumentParser, stage: str) -> None:
    from foilkit.generation.llm import LLMSettings

    hints = typing.get_type_hints(LLMSettings)
    group = parser.add_argument_group("LLM")
    for config_field in dataclasses.fields(LLMSettings):
        name = config_field.name
        if name in _LLM_FIELDS_NOT_OPTIONS:
            continue
        kind = hints[name]
        if isinstance(kind, types.UnionType):  # "str | None" -> str
            (kind,) = [arg for arg in typing.get_args(kind) if arg is not type(None)]
        flag = "--" + name.replace("_", "-")
        if config_field.default is dataclasses.MISSING:
            group.add_argument(flag, required=True, type=kind, help=_LLM_HELP.get(name))
            continue
        default = _MAX_TOKENS[stage] if name == "max_tokens" else config_field.default
        help = _LLM_HELP.get(name, f"default {default}")
        if kind is bool:  # --send-seed / --no-send-seed
            group.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=default, help=help
            )
            continue
        group.add_argument(flag, type=kind, default=default, help=help)


def _client(args: argparse.Namespace):
    from foilkit.generation.llm import ChatClient, LLMSettings

    values = {
        f.name: getattr(args, f.name)
        for f in dataclasses.fields(LLMSettings)
        if f.name not in _LLM_FIELDS_NOT_OPTIONS
    }
    return ChatClient(LLMSettings(**values, seed=args.seed))


def _prompt(args: argparse.Namespace, default: str):
    from foilkit.generation.rtime import load_prompt

    return load_prompt(args.prompt or default)


def _record(
    args: argparse.Namespace,
    client,
    inputs: dict[str, Any],
    results: dict[str, Any],
    *,
    models: dict[str, Any] | None = None,
    prompts: dict[str, Any] | None = None,
) -> RunRecord:
    """An LLM stage's run record: the LLM beside ``models``, and ``results`` with the account
    of its requests: usage (requests, retries, failures...) and the requests parked as failed
    (key, error, reply)."""
    from foilkit.generation.provenance import llm_ref

    return run_record(
        args,
        "rtime",
        inputs=inputs,
        models={"llm": llm_ref(client.config), **(models or {})},
        prompts=prompts,
        results={
            **results,
            "llm_usage": client.usage.to_record(),
            "llm_failures": [failure.to_record() for failure in client.failures],
        },
    )


def _record_failure(args: argparse.Namespace, client, inputs: dict[str, Any]):
    """A stage's run record written when it fails: the error and the LLM requests so far."""

    def write(facts: dict[str, Any]) -> None:
        _record(args, client, inputs, facts).write(record_path(args.output))

    return recorded_on_failure(write, client)


def configure(parser: argparse.ArgumentParser) -> None:
    from foilkit.builders.spacy_pipeline import DEFAULT_SPACY_PIPELINE
    from foilkit.generation.rtime import enrichment, rewrites

    stages = parser.add_subparsers(dest="stage", required=True, metavar="stage")
    expand = stages.add_parser("expand-activities", help="LLM few-shot expansion of activity pairs")
    expand.add_argument(
        "--seeds",
        type=Path,
        help="JSONL pairs (activity, opposite, ...) to start from; default: "
        "foilkit's seed pairs from the paper's examples",
    )
    expand.add_argument("--rounds", type=int, default=5, help="requests, each with other shots")
    expand.add_argument("--shots", type=int, default=8, help="example pairs shown per request")
    expand.add_argument("--per-round", type=int, default=20, help="new pairs asked per request")

    curate = stages.add_parser("curate-import", help="read a curated file back (keep = yes/no)")
    curate.add_argument("curated", type=Path, help="curation file (.csv, .tsv or .jsonl)")
    curate.add_argument(
        "--undecided",
        choices=("error", "drop", "keep"),
        default="error",
        help="what an empty keep cell means (default: refuse the file)",
    )

    enrich = stages.add_parser("enrich", help="concrete objects for each activity's [something]")
    enrich.add_argument(
        "--pairs",
        required=True,
        type=Path,
        help="curated activity pairs (JSONL, as curate-import writes)",
    )
    enrich.add_argument(
        "--objects",
        type=int,
        default=enrichment.OBJECTS_PER_ACTIVITY,
        help="objects per activity (paper: 20)",
    )

    rewrite = stages.add_parser("rewrite", help="nine checked rewrites per train caption")
    rewrite.add_argument(
        "--input",
        "-i",
        required=True,
        type=Path,
        help="JSONL rows (id, caption, split) or RTime annotations (.json)",
    )
    rewrite.add_argument(
        "--input-split", help="split of rows without one (.json: default from the file name)"
    )
    rewrite.add_argument(
        "--splits",
        nargs="+",
        default=["train"],
        help=f"splits to rewrite (paper: train only), '{ALL_SPLITS}': every one",
    )
    rewrite.add_argument(
        "--count",
        type=int,
        default=rewrites.REWRITES_PER_CAPTION,
        help="rewrites per caption (paper: 9)",
    )
    rewrite.add_argument(
        "--min-similarity",
        type=float,
        default=rewrites.DEFAULT_MIN_SIMILARITY,
        help="reject rewrites whose cosine with the caption is lower "
        "(default %(default)s, calibrated for all-MiniLM-L6-v2)",
    )
    rewrite.add_argument(
        "--sentence-model",
        default=rewrites.DEFAULT_SENTENCE_MODEL,
        help="sentence-transformers model id or path (%(default)s)",
    )
    rewrite.add_argument(
        "--temporal-words", type=Path, help="temporal lexicon JSON (default: foilkit's)"
    )
    rewrite.add_argument(
        "--no-temporal-check",
        action="store_true",
        help="keep rewrites that drop or reverse temporal words",
    )
    rewrite.add_argument(
        "--reversal-margin",
        type=float,
        default=rewrites.DEFAULT_REVERSAL_MARGIN,
        help="reject a rewrite whose cosine with the caption of the reversed video reaches its "
        "cosine with its own caption plus this margin (default %(default)s; the opposite "
        "caption is the other direction of an RTime .json input, else a row's "
        "'opposite_caption')",
    )
    rewrite.add_argument(
        "--no-reversal-check",
        action="store_true",
        help="keep rewrites nearer the caption of the reversed video than their own",
    )
    rewrite.add_argument(
        "--no-order-check",
        action="store_true",
        help="keep rewrites that tell two of the caption's events in the other order (the check "
        "compares the events' order from spaCy's parse; it needs no opposite caption)",
    )
    rewrite.add_argument(
        "--event-match",
        type=float,
        default=rewrites.DEFAULT_EVENT_MATCH,
        help="the order check matches an event a rewrite tells with another verb to the "
        "caption's when their phrases' cosine reaches this (default %(default)s; 1.01: by verb "
        "only)",
    )
    rewrite.add_argument(
        "--on-wrong-count",
        choices=rewrites.WRONG_COUNT_POLICIES,
        default="reject",
        help="a reply without exactly --count rewrites: reject all of them (default) or judge each",
    )
    rewrite.add_argument("--spacy", default=DEFAULT_SPACY_PIPELINE, help="spaCy pipeline (lemmas)")
    rewrite.add_argument(
        "--rtime-json",
        type=Path,
        help="also write an RTime annotation file with the rewrites (needs an RTime .json input)",
    )
    rewrite.add_argument("--plot", type=Path, help="write the Fig. 10 histogram here (PNG)")

    for name, stage in (("expand-activities", expand), ("enrich", enrich), ("rewrite", rewrite)):
        stage.add_argument("--prompt", help="prompt YAML file replacing foilkit's")
        _add_llm_options(stage, name)
        add_failed_requests_option(stage)
    for stage in (expand, curate, enrich, rewrite):
        add_output(stage)


def run(args: argparse.Namespace) -> int:
    # before any file is read, model loaded or request sent: the stage's files are new or its own
    others = {option: getattr(args, option, None) for option in ("rtime_json", "plot")}
    claim_output_file(args.output, others)
    return _RUNNERS[args.stage](args)


def _usage_line(client) -> str:
    usage = client.usage
    cost = "" if usage.cost is None else f", cost {usage.cost:.4f}"
    return (
        f"LLM: {usage.requests} requests, {usage.cache_hits} cached, {usage.retries} retries, "
        f"{usage.failures} failed, {usage.prompt_tokens}+{usage.completion_tokens} tokens{cost}"
    )


def _expand(args: argparse.Namespace) -> int:
    from foilkit.generation.rtime.activities import (
        EXPANSION_PROMPT,
        SEED_ACTIVITY_PAIRS,
        expand_activity_pairs,
        read_activity_pairs,
    )
    from foilkit.generation.rtime.curation import write_curation

    known = read_activity_pairs(args.seeds)
    client = _client(args)
    template = _prompt(args, EXPANSION_PROMPT)
    inputs = {"seeds": args.seeds or SEED_ACTIVITY_PAIRS}
    with _record_failure(args, client, inputs):
        expansion = expand_activity_pairs(
            client,
            known,
            rounds=args.rounds,
            shots=args.shots,
            count=args.per_round,
            rng=random.Random(args.seed),
            template=template,
            park=True,
        )
    candidates: list[tuple[bool | None, Any]] = [(True, pair) for pair in known]
    candidates += [(None, pair) for pair in expansion.pairs]
    write_curation(candidates, args.output)
    results = {
        "known_pairs": len(known),
        "new_pairs": len(expansion.pairs),
        "repeated_pairs": expansion.repeated,
        "unreadable_lines": [list(item) for item in expansion.unreadable],
        "invalid_pairs": [list(item) for item in expansion.invalid],
    }
    record = _record(args, client, inputs, results, prompts={"expansion": template})
    record.write(record_path(args.output))
    print(
        f"{len(expansion.pairs)} new pairs ({expansion.repeated} repeated, "
        f"{len(expansion.unreadable)} unreadable lines) + {len(known)} known -> {args.output}; "
        f"fill in its 'keep' column, then run curate-import\n{_usage_line(client)}"
    )
    return failed_requests_status(args, client.failures, rerun="expand-activities")


def _curate_import(args: argparse.Namespace) -> int:
    from foilkit.generation.rtime.curation import read_curation

    curated = read_curation(args.curated, undecided=args.undecided)
    record = run_record(
        args,
        "rtime",
        inputs={"curated": args.curated},
        results={
            "kind": curated.kind,
            "dropped": curated.dropped,
            "undecided": curated.undecided,
        },
    )
    count = write_rows((kept.to_record() for kept in curated.kept), args.output, record)
    print(f"{curated.kind}: kept {count}, dropped {curated.dropped} -> {args.output}")
    return 0


def _enrich(args: argparse.Namespace) -> int:
    from foilkit.generation.rtime.activities import read_activity_pairs
    from foilkit.generation.rtime.curation import write_curation
    from foilkit.generation.rtime.enrichment import ENRICHMENT_PROMPT, enrich_activities

    pairs = read_activity_pairs(args.pairs)
    client = _client(args)
    template = _prompt(args, ENRICHMENT_PROMPT)
    with _record_failure(args, client, {"pairs": args.pairs}):
        enrichment = enrich_activities(
            client, pairs, objects=args.objects, template=template, park=True
        )
    write_curation([(None, phrase) for phrase in enrichment.phrases], args.output)
    results = {
        "pairs": len(pairs),
        "phrases": len(enrichment.phrases),
        "unreadable_lines": [list(item) for item in enrichment.unreadable],
        "activities_with_fewer_objects": [list(item) for item in enrichment.short],
    }
    record = _record(args, client, {"pairs": args.pairs}, results, prompts={"enrichment": template})
    record.write(record_path(args.output))
    print(
        f"{len(enrichment.phrases)} phrases for {len(pairs)} pairs -> {args.output}; fill in "
        f"its 'keep' column, then run curate-import\n{_usage_line(client)}"
    )
    return failed_requests_status(args, client.failures, rerun="enrich")


def _rewrite_filter(args: argparse.Namespace):
    from sentence_transformers import SentenceTransformer

    from foilkit.generation.rtime.rewrites import RewriteFilter

    lexicon = tokenize = order_parser = None
    if not (args.no_temporal_check and args.no_order_check):
        from foilkit.builders.spacy_pipeline import load_spacy

        nlp = load_spacy(args.spacy)
    if not args.no_temporal_check:
        from foilkit.generation.rtime.temporal_words import TemporalLexicon, spacy_tokenizer

        lexicon = TemporalLexicon.load(args.temporal_words)
        tokenize = spacy_tokenizer(nlp)
    if not args.no_order_check:
        from foilkit.generation.rtime.event_order import spacy_event_parser

        order_parser = spacy_event_parser(nlp)
    return RewriteFilter(
        embedder=SentenceTransformer(args.sentence_model),
        min_similarity=args.min_similarity,
        lexicon=lexicon,
        tokenize=tokenize,
        sentence_model=args.sentence_model,
        reversal_margin=None if args.no_reversal_check else args.reversal_margin,
        order_parser=order_parser,
        event_match=args.event_match,
    )


def _opposite_captions(rows: Sequence[CaptionRow]) -> dict[str, str]:
    """Row id -> the caption of the reversed video: a row's ``opposite_caption``, else the
    caption of the row of the same video (``source_id``) in the other ``direction``."""
    other = {"forward": "reverse", "reverse": "forward"}

    def video_and(row: CaptionRow, direction: str | None) -> tuple[Any, str] | None:
        source = row.fields.get("source_id")
        return (source, direction) if source is not None and direction else None

    captions = {
        key: row.caption for row in rows if (key := video_and(row, row.fields.get("direction")))
    }
    opposites = {}
    for row in rows:
        key = video_and(row, other.get(row.fields.get("direction")))
        opposite = row.fields.get("opposite_caption") or (captions.get(key) if key else None)
        if opposite:
            opposites[row.id] = opposite
    return opposites


def _rewrite(args: argparse.Namespace) -> int:
    from foilkit.generation.rtime.captions import read_caption_rows, write_rtime_annotations
    from foilkit.generation.rtime.rewrites import (
        REWRITE_PROMPT,
        plot_similarity,
        rewrite_captions,
        rewrite_columns,
        similarity_report,
    )

    if args.rtime_json and args.input.suffix.lower() != ".json":
        raise SystemExit(f"--rtime-json needs an RTime annotation .json input, got {args.input}")
    rows = read_caption_rows(args.input, split=args.input_split)
    chosen, skipped = [], Counter()
    for row in rows:
        if ALL_SPLITS in args.splits or row.split in args.splits:
            chosen.append(row)
        else:
            skipped[row.split] += 1
    if not chosen:
        raise SystemExit(
            f"{args.input}: no row in split(s) {args.splits} (rows by split: {dict(skipped)})"
        )
    opposites = _opposite_captions(rows)
    rewrite_filter = _rewrite_filter(args)
    client = _client(args)
    template = _prompt(args, REWRITE_PROMPT)
    with _record_failure(args, client, {"input": args.input}):
        results = rewrite_captions(
            client,
            [(row.id, row.caption) for row in chosen],
            rewrite_filter,
            count=args.count,
            template=template,
            on_wrong_count=args.on_wrong_count,
            opposites=[opposites.get(row.id) for row in chosen],
            park=True,
        )
    out_rows = [
        {**row.fields, "split": row.split, **rewrite_columns(result, rewrite_filter)}
        for row, result in zip(chosen, results)
    ]
    report = similarity_report(
        results, rewrite_filter, count=args.count, rng=random.Random(args.seed)
    )
    facts: dict[str, Any] = {
        "skipped_rows_by_split": dict(skipped),
        "failed_captions": [result.id for result in results if result.failed],
    }
    if args.rtime_json:
        facts["rtime_json_directions"] = write_rtime_annotations(
            args.input, {r.id: [w.text for w in r.accepted] for r in results}, args.rtime_json
        )
    if args.plot:
        plot_similarity(report, args.plot)
    temporal = rewrite_filter.lexicon is not None
    parsed = temporal or rewrite_filter.order_parser is not None
    inputs = {
        "input": args.input,
        "temporal_words": rewrite_filter.lexicon.source if temporal else None,
    }
    facts |= {
        "report": report,
        "unreadable_lines": {r.id: list(r.unreadable) for r in results if r.unreadable},
    }
    models = {"sentence": args.sentence_model, "spacy": args.spacy if parsed else None}
    record = _record(args, client, inputs, facts, models=models, prompts={"rewrite": template})
    count = write_rows(out_rows, args.output, record)
    for other in (args.rtime_json, args.plot):  # each file the stage wrote has its record
        if other:
            record.with_results(rows_written=count).write(record_path(other))
    print(
        f"{report['accepted']} of {report['candidates']} rewrites accepted for {count} captions "
        f"(skipped by split: {dict(skipped) or 'none'}); median cosine with the caption "
        f"{_median(report['rewrite_vs_caption']):.3f}, of a random caption "
        f"{_median(report['random_caption_vs_caption']):.3f}; "
        f"rejections {report['rejections']} -> {args.output}\n{_usage_line(client)}"
    )
    return failed_requests_status(args, client.failures, rerun="rewrite")


def _median(summary: dict[str, Any]) -> float:
    return summary.get("quantiles", {}).get("0.5", float("nan"))


_RUNNERS = {
    "expand-activities": _expand,
    "curate-import": _curate_import,
    "enrich": _enrich,
    "rewrite": _rewrite,
}
