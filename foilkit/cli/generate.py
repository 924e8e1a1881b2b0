"""``foilkit generate <pipeline> ...``: make new foils with one of the papers' pipelines.

Pipelines are configuration, as the top-level commands are: ``PIPELINES`` maps each name to
the module implementing it and a one-line summary. A pipeline module has the command contract
of :mod:`foilkit.cli` (``configure(parser)`` and ``run(args) -> int``); only the chosen
pipeline's module is imported, so ``foilkit generate --help`` stays as fast as ``foilkit --help``.
"""

from __future__ import annotations

import argparse

from foilkit.cli import listing, registered_parser

# name -> (module implementing it, one-line summary)
PIPELINES: dict[str, tuple[str, str]] = {
    "vitatecs": (
        "foilkit.generation.vitatecs.cli",
        "VITATECS counterfactuals: in-context LLM generation, NLI + 7-way filter, human revision",
    ),
    "rtime": (
        "foilkit.generation.rtime.cli",
        "RTime text: activity pairs (LLM expansion, curation, objects) and caption rewrites",
    ),
    "contrast": (
        "foilkit.generation.contrast.cli",
        "MSR-VTT contrast sets: gender and verb multiple choice, person-ID swaps",
    ),
    "vilma": (
        "foilkit.generation.vilma.cli",
        "ViLMA foiling tools: counting, change of state, actor swap, spatial, masked-LM foils",
    ),
    "bias": (
        "foilkit.generation.bias_cli",
        "lexical (JS divergence) and text-only bias of a foil set",
    ),
}


def configure(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = f"pipelines:\n{listing(PIPELINES)}\n\nRun 'foilkit generate <pipeline> --help' for its options."
    parser.add_argument("pipeline", choices=sorted(PIPELINES), metavar="pipeline", help="see below")
    parser.add_argument("arguments", nargs=argparse.REMAINDER, help="the pipeline's own arguments")


def run(args: argparse.Namespace) -> int:
    name = args.pipeline
    module, parser = registered_parser(PIPELINES, name, f"foilkit generate {name}")
    return int(module.run(parser.parse_args(args.arguments)) or 0)
