"""``foilkit generate bias``: lexical (JS divergence) and text-only bias of a foil set.

Reads rows with ``caption`` and ``foils`` -- a foils output folder as the generate commands
write it (or its ``foils.parquet``), JSONL rows (any canonical dataset exported to JSONL), or one
of ViLMA's published subtest files as they are (``change-state-action.json``: an object of items
keyed by id) -- and prints a JSON report; ``--before`` adds the divergence of an earlier
(unfiltered) version, ``--lm`` the text-only baseline. ``--output`` writes the report and its
run record (``<output>.run.json``).

On ViLMA's files the divergence is ViLMA's appendix B.1 number: every published item (the
paper's table is computed before validation; ``--vilma-items valid`` keeps the items that pass
its human validation), the main caption against all its foils, words as :func:`word_frequencies`
reads them, in bits.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from foilkit.files import atomic_write, read_json
from foilkit.generation.cli_io import claim_output_file, read_jsonl, run_record
from foilkit.generation.foil import FOILS_FILE
from foilkit.generation.provenance import record_path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rows",
        required=True,
        type=Path,
        help="a foils output folder (or its foils.parquet), JSONL rows with caption and foils, "
        "or a ViLMA subtest .json file as published",
    )
    parser.add_argument(
        "--vilma-items",
        choices=("all", "valid"),
        default="all",
        help="ViLMA files: every item (as appendix B.1) or those passing the human validation",
    )
    parser.add_argument("--before", type=Path, help="the same rows before a filter (as --rows)")
    parser.add_argument("--lm", help="causal LM for the text-only baseline (e.g. gpt2)")
    parser.add_argument("--output", "-o", type=Path, help="also write the report here")


def _pairs(path: Path, vilma_items: str = "all") -> list[tuple[str, list[str]]]:
    if path.suffix.lower() == ".json":
        return vilma_pairs(path, valid_only=vilma_items == "valid")
    if path.is_dir() or path.suffix.lower() == ".parquet":
        from foilkit.generation.foil import read_foils

        dataset = read_foils(path).select_columns(["caption", "foils"])
        return [(row["caption"], list(row["foils"])) for row in dataset]
    return [
        (r["caption"], list(r["foils"])) for r in read_jsonl(path, required=("caption", "foils"))
    ]


def vilma_pairs(path: Path, *, valid_only: bool = False) -> list[tuple[str, list[str]]]:
    """(caption, foils) of every item of a published ViLMA subtest file; with ``valid_only``
    only the items that pass the paper's validation (2 of 3 MTurk votes for the caption and the
    proficiency item's manual check, as the ViLMA builder's filter)."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected ViLMA's layout, an object of items keyed by id")
    pairs = []
    for key, item in data.items():
        if not isinstance(item, dict) or "caption" not in item or "foils" not in item:
            raise ValueError(f"{path}: item {key!r} has no 'caption' and 'foils'")
        if valid_only:
            votes = (item.get("mturk") or {}).get("caption", 0)
            human = ((item.get("proficiency") or {}).get("human") or {}).get("caption")
            if votes < 2 or human != 1:
                continue
        pairs.append((item["caption"], list(item["foils"])))
    if not pairs:
        raise ValueError(f"{path}: no items" + (" pass the validation" if valid_only else ""))
    return pairs


def run(args: argparse.Namespace) -> int:
    from foilkit.generation.bias import filter_bias_report, lexical_bias, text_only_baseline

    if args.output:
        claim_output_file(args.output)  # new, or a report foilkit wrote (its record beside it)
    after = _pairs(args.rows, args.vilma_items)
    captions = [c for c, _ in after]
    foils = [f for _, fs in after for f in fs]
    report: dict = {"rows": len(after), "js": lexical_bias(captions, foils)}
    if args.before:
        before = _pairs(args.before, args.vilma_items)
        report["filter"] = filter_bias_report(
            [c for c, _ in before],
            [f for _, fs in before for f in fs],
            foils,
            captions_after=captions,
        )
    if args.lm:
        from foilkit.generation.perplexity import load_text_lm

        report["text_only"] = text_only_baseline(load_text_lm(args.lm), after)
    text = json.dumps(report, indent=2, sort_keys=True)
    print(text)
    if args.output:
        atomic_write(args.output, text + "\n")
        record = run_record(
            args,
            "bias",
            inputs={"rows": _input_file(args.rows), "before": _input_file(args.before)},
            models={"lm": args.lm},
            results={"report": args.output.name},
        )
        record.write(record_path(args.output))
    return 0


def _input_file(path: Path | None) -> Path | None:
    """The file behind a ``--rows``/``--before`` argument (a folder's foils dataset)."""
    return path / FOILS_FILE if path is not None and path.is_dir() else path
