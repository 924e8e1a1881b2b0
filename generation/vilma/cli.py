"""``foilkit generate vilma <stage>``: ViLMA-style foils as canonical JSONL rows.

Stages (inputs are JSONL; every output row carries its foils' provenance):
  counting         {"id", "template", "count", "singular_template"?, "video"?}
  change-of-state  {"id", "argument", "pre_state", "verb", "post_state", "reverse_verb",
                    "transitive"?, "video"?} -> one row per subtest
  actor-swap       {"id", "caption", "video"?}
  spatial          {"id", "caption", "video"?} (the whole file is the caption distribution)
  masked-lm        {"id", "caption", "video"?}: MLM foils by dependency role, NLI + CoLA filters
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from foilkit.generation.cli_io import add_output, read_jsonl, write_rows

STAGES = ("counting", "change-of-state", "actor-swap", "spatial", "masked-lm")


def configure(parser: argparse.ArgumentParser) -> None:
    from foilkit.generation.infill import FILL_MASK_TOP_K
    from foilkit.generation.nli import VILMA_NLI_MODEL
    from foilkit.generation.spacy_pipeline import DEFAULT_SPACY_PIPELINE
    from foilkit.generation.vilma import counting, grammaticality, masked_lm, spatial

    stages = parser.add_subparsers(dest="stage", required=True, metavar="stage")
    parsers = {name: stages.add_parser(name, help=f"ViLMA {name} foils") for name in STAGES}
    for stage in parsers.values():
        stage.add_argument(
            "--input", "-i", required=True, type=Path, help="JSONL input (see module doc)"
        )
        add_output(stage)
    count = parsers["counting"]
    count.add_argument(
        "--small-max", type=int, default=counting.SMALL_MAX, help="largest 'small' number (3)"
    )
    count.add_argument(
        "--max-count", type=int, default=counting.MAX_COUNT, help="count threshold (10)"
    )
    count.add_argument("--digits", action="store_true", help="write numbers as digits, not words")
    for name in ("actor-swap", "spatial", "masked-lm"):
        parsers[name].add_argument("--spacy", default=DEFAULT_SPACY_PIPELINE, help="spaCy pipeline")
    for name in ("spatial", "masked-lm"):
        stage = parsers[name]
        stage.add_argument(
            "--nli", help=f"NLI cross-encoder (ViLMA: {VILMA_NLI_MODEL}); omit to skip"
        )
        stage.add_argument(
            "--cola",
            help=f"CoLA classifier for grammaticality (e.g. {grammaticality.DEFAULT_COLA_MODEL})",
        )
        stage.add_argument(
            "--acceptable-label", help="index or name of the CoLA 'acceptable' class"
        )
        stage.add_argument(
            "--grammaticality-threshold", type=float, default=grammaticality.THRESHOLD
        )
    spatial_stage = parsers["spatial"]
    spatial_stage.add_argument(
        "--t5", required=True, help=f"T5 ranking model (ViLMA: {spatial.PAPER_RANKING_MODEL})"
    )
    spatial_stage.add_argument("--top-k", type=int, default=spatial.TOP_K)
    mlm = parsers["masked-lm"]
    mlm.add_argument("--mlm", action="append", required=True, metavar="KIND:MODEL",
                     help="fill-mask:roberta-large or t5:t5-large; repeat for an ensemble")  # fmt: skip
    mlm.add_argument(
        "--test", choices=sorted(masked_lm.PROFICIENCY_ROLES),
        help="the ViLMA test the foils are for: masks the word its proficiency foils masked",
    )  # fmt: skip
    mlm.add_argument(
        "--role", choices=masked_lm.ROLES,
        help="the word to mask (default: the --test's role, else argument)",
    )  # fmt: skip
    mlm.add_argument(
        "--top-k",
        type=int,
        help=f"fillers per target; default {masked_lm.PROFICIENCY_TOP_K} for proficiency foils "
        f"(ViLMA C.1), else {FILL_MASK_TOP_K} (C.3)",
    )
    mlm.add_argument("--foil-type", default="proficiency")
    mlm.add_argument(
        "--all-foils", action="store_true", help="keep every passing foil, not only the best"
    )


def run(args: argparse.Namespace) -> int:
    handler = {
        "counting": _counting,
        "change-of-state": _change_of_state,
        "actor-swap": _actor_swap,
        "spatial": _spatial,
        "masked-lm": _masked_lm,
    }[args.stage]
    count = write_rows(handler(args), args.output, args)
    print(f"wrote {count} rows to {args.output}")
    return 0


def _counting(args: argparse.Namespace) -> list[dict[str, Any]]:
    from foilkit.generation.foil import foil_row
    from foilkit.generation.vilma.counting import counting_pair

    rng, rows = random.Random(args.seed), []
    for record in read_jsonl(args.input, required=("id", "template", "count")):
        pair = counting_pair(
            record["template"], int(record["count"]), rng=rng, small_max=args.small_max,
            max_count=args.max_count, spelled=not args.digits,
            singular_template=record.get("singular_template"),
        )  # fmt: skip
        if pair is not None:
            caption, foil = pair
            rows.append(foil_row(str(record["id"]), caption, [foil], video_path=record.get("video"),
                                 subtest=foil.parameters["subtest"]))  # fmt: skip
    return rows


def _change_of_state(args: argparse.Namespace) -> list[dict[str, Any]]:
    from foilkit.generation.foil import foil_row
    from foilkit.generation.vilma.change_of_state import ChangeOfState, change_of_state_pairs

    fields = ("id", "argument", "pre_state", "verb", "post_state", "reverse_verb")
    rows = []
    for record in read_jsonl(args.input, required=fields):
        change = ChangeOfState(record["pre_state"], record["verb"], record["post_state"],
                               record["reverse_verb"], bool(record.get("transitive", True)))  # fmt: skip
        for subtest, (caption, foil) in change_of_state_pairs(change, record["argument"]).items():
            rows.append(foil_row(f"{record['id']}-{subtest}", caption, [foil],
                                 video_path=record.get("video"), subtest=subtest))  # fmt: skip
    return rows


def _captions(args: argparse.Namespace) -> list[dict[str, Any]]:
    return list(read_jsonl(args.input, required=("id", "caption")))


def _actor_swap(args: argparse.Namespace) -> list[dict[str, Any]]:
    from foilkit.generation.foil import foil_row
    from foilkit.generation.spacy_pipeline import load_spacy
    from foilkit.generation.vilma.actor_swap import actor_swap

    nlp, rows = load_spacy(args.spacy), []
    for record in _captions(args):
        foils = actor_swap(record["caption"], nlp=nlp)
        if foils:
            rows.append(
                foil_row(
                    str(record["id"]), record["caption"], foils, video_path=record.get("video")
                )
            )
    return rows


def _filters(args: argparse.Namespace) -> list[Callable]:
    """The NLI and grammaticality filters the options ask for, in ViLMA's order."""
    filters: list[Callable] = []
    if args.nli:
        from foilkit.generation.nli import NLIFilter, load_nli_model

        filters.append(NLIFilter(load_nli_model(args.nli), model_id=args.nli, policy="vilma"))
    if args.cola:
        from foilkit.generation.vilma.grammaticality import GrammaticalityFilter
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        label = args.acceptable_label
        filters.append(
            GrammaticalityFilter(
                AutoModelForSequenceClassification.from_pretrained(args.cola),
                AutoTokenizer.from_pretrained(args.cola),
                threshold=args.grammaticality_threshold,
                acceptable_label=int(label) if label and label.isdigit() else label,
                model_id=args.cola,
            )
        )
    return filters


def _spatial(args: argparse.Namespace) -> list[dict[str, Any]]:
    from foilkit.generation.foil import foil_row
    from foilkit.generation.vilma.spatial import spatial_foils
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    records = _captions(args)
    model = T5ForConditionalGeneration.from_pretrained(args.t5).eval()
    chosen = spatial_foils(
        [r["caption"] for r in records], model, AutoTokenizer.from_pretrained(args.t5),
        filters=_filters(args), top_k=args.top_k,
    )  # fmt: skip
    return [
        foil_row(str(r["id"]), r["caption"], [foil], video_path=r.get("video"))
        for r, foil in zip(records, chosen, strict=True)
        if foil is not None
    ]


def _load_masked_lm(spec: str):
    from foilkit.generation.vilma.masked_lm import MaskedLM
    from transformers import AutoModelForMaskedLM, AutoTokenizer, T5ForConditionalGeneration

    kind, sep, model_id = spec.partition(":")
    if not sep or kind not in ("fill-mask", "t5"):
        raise ValueError(f"--mlm {spec!r}: expected fill-mask:<model> or t5:<model>")
    auto = T5ForConditionalGeneration if kind == "t5" else AutoModelForMaskedLM
    return MaskedLM(
        auto.from_pretrained(model_id).eval(),
        AutoTokenizer.from_pretrained(model_id),
        kind,
        model_id,
    )


def _masked_lm(args: argparse.Namespace) -> list[dict[str, Any]]:
    from foilkit.generation.foil import foil_row
    from foilkit.generation.infill import FILL_MASK_TOP_K
    from foilkit.generation.spacy_pipeline import load_spacy
    from foilkit.generation.vilma.masked_lm import (
        PROFICIENCY_ROLES,
        PROFICIENCY_TOP_K,
        best_foil,
        masked_lm_foils,
    )

    if args.top_k is None:
        args.top_k = PROFICIENCY_TOP_K if args.foil_type == "proficiency" else FILL_MASK_TOP_K
    if args.role is None:
        args.role = PROFICIENCY_ROLES[args.test] if args.test else "argument"
    nlp, filters = load_spacy(args.spacy), _filters(args)
    models: Sequence = [_load_masked_lm(spec) for spec in args.mlm]
    rows = []
    for record in _captions(args):
        foils = masked_lm_foils(record["caption"], models, nlp=nlp, role=args.role,
                                foil_type=args.foil_type, filters=filters, top_k=args.top_k)  # fmt: skip
        if not args.all_foils and args.cola:
            best = best_foil(foils)
            foils = [best] if best is not None else []
        elif not args.all_foils:
            foils = foils[:1]
        if foils:
            rows.append(
                foil_row(
                    str(record["id"]), record["caption"], foils, video_path=record.get("video")
                )
            )
    return rows
