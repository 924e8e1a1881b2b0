"""``foilkit generate <pipeline> ...``: make new foils with one of the papers' pipelines.

Pipelines are configuration, as the top-level commands are: ``PIPELINES`` (a
:class:`foilkit.registry.Registry`) maps each name to the module implementing it, by a lazy
reference, and a one-line summary. A pipeline module has the command contract
of :mod:`foilkit.cli` (``configure(parser)`` and ``run(args) -> int``); only the chosen
pipeline's module is imported, so ``foilkit generate --help`` stays as fast as ``foilkit --help``.
"""

from __future__ import annotations

import argparse
from types import ModuleType

from foilkit.cli import registered_parser
from foilkit.errors import MissingExtra, missing_extra, missing_modules
from foilkit.registry import Registry

#: The pipelines, in the order ``foilkit generate --help`` lists them: name -> summary.
#: Pipeline ``name`` is the module ``foilkit.generation.<name>.cli`` (``bias``:
#: ``foilkit.generation.bias_cli``), imported when it runs.
SUMMARIES = {
    "vitatecs": "VITATECS counterfactuals: in-context LLM generation, NLI + 7-way filter, human "
    "revision",
    "rtime": "RTime text: activity pairs (LLM expansion, curation, objects) and caption rewrites",
    "contrast": "MSR-VTT contrast sets: gender and verb multiple choice, person-ID swaps",
    "vilma": "ViLMA foiling tools: counting, change of state, actor swap, spatial, masked-LM "
    "foils, rare actions",
    "quality": "a filter's precision and recall on held-out labelled positives and negatives",
    "bias": "lexical (JS divergence) and text-only bias of a foil set",
}
PIPELINES: Registry[ModuleType] = Registry("pipeline")
for _name, _summary in SUMMARIES.items():
    _module = "bias_cli" if _name == "bias" else f"{_name}.cli"
    PIPELINES.add_lazy(_name, f"foilkit.generation.{_module}", _summary)
del _name, _module, _summary


def configure(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = (
        f"pipelines:\n{PIPELINES.listing()}\n\n"
        "Run 'foilkit generate <pipeline> --help' for its options."
    )
    parser.add_argument("pipeline", choices=sorted(PIPELINES), metavar="pipeline", help="see below")
    parser.add_argument("arguments", nargs=argparse.REMAINDER, help="the pipeline's own arguments")


def run(args: argparse.Namespace) -> int:
    """Run the chosen pipeline; without the generation extra (spaCy, sentence-transformers,
    openai: :data:`foilkit.errors.EXTRA_MODULES`) it ends, before the pipeline writes anything,
    with :class:`foilkit.errors.MissingExtra`, the one line naming the extra to install."""
    name = args.pipeline
    try:
        module, parser = registered_parser(PIPELINES, name, f"foilkit generate {name}")
        parsed = parser.parse_args(args.arguments)  # --help reads without the extra
        if missing_modules("generation"):  # before the pipeline claims its output: none made
            raise MissingExtra(f"foilkit generate {name}", "generation")
        return int(module.run(parsed) or 0)
    except ModuleNotFoundError as error:
        extra = missing_extra(error)
        if extra is None:
            raise
        raise MissingExtra(f"foilkit generate {name}", extra) from error
