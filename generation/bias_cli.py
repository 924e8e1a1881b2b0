"""``foilkit generate bias``: lexical (JS divergence) and text-only bias of a foil set.

Reads rows with ``caption`` and ``foils`` (JSONL as the generate commands write, or any
canonical dataset exported to JSONL) and prints a JSON report; ``--before`` adds the
divergence of an earlier (unfiltered) version, ``--lm`` the text-only baseline.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from foilkit.generation.cli_io import read_jsonl


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rows", required=True, type=Path, help="JSONL rows with caption and foils"
    )
    parser.add_argument("--before", type=Path, help="the same rows before a filter (JSONL)")
    parser.add_argument("--lm", help="causal LM for the text-only baseline (e.g. gpt2)")
    parser.add_argument("--output", "-o", type=Path, help="also write the report here")


def _pairs(path: Path) -> list[tuple[str, list[str]]]:
    return [
        (r["caption"], list(r["foils"])) for r in read_jsonl(path, required=("caption", "foils"))
    ]


def run(args: argparse.Namespace) -> int:
    from foilkit.generation.bias import filter_bias_report, lexical_bias, text_only_baseline

    after = _pairs(args.rows)
    captions = [c for c, _ in after]
    foils = [f for _, fs in after for f in fs]
    report: dict = {"rows": len(after), "js": lexical_bias(captions, foils)}
    if args.before:
        before = _pairs(args.before)
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
        args.output.write_text(text + "\n", encoding="utf-8")
    return 0
