"""The ``foilkit`` command line.

Subcommands are configuration, not code: ``COMMANDS`` (a :class:`foilkit.registry.Registry`)
maps each name to the module that implements it, by a lazy reference, and a one-line summary.
A command module defines ``configure(parser: argparse.ArgumentParser) -> None`` and
``run(args) -> int``, and keeps its top-level imports light; only the chosen command's module
is imported, so ``foilkit --help`` never pays for torch, transformers or evaluate.

An error ends a command with one line on stderr, not a traceback: a user error (see
:mod:`foilkit.errors`) with exit status 2, any other failure with 1. ``--debug``, anywhere on
the command line, shows the traceback instead. Ctrl-C ends a command with one line too, exit
status 130, saying how to continue it (``--resume`` where the command has it).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from types import ModuleType

from foilkit._version import __version__
from foilkit.errors import (
    USER_ERRORS,
    MissingExtra,
    UserError,
    check_model_path,
    interrupted,
    one_line,
)
from foilkit.progress import quiet_libraries
from foilkit.registry import Registry

#: The commands, in the order ``foilkit --help`` lists them: name -> summary. Command ``name``
#: is the module ``foilkit.cli.<name>`` (``-`` as ``_``; ``import``, a keyword: ``import_``),
#: imported when the command runs.
SUMMARIES = {
    "doctor": "check the installed stack, FFmpeg, GPU and offline settings",
    "score": "score a Hub model on a foilkit dataset (accelerate launch -m foilkit score)",
    "build": "build a benchmark as a Hub-layout dataset (parquet + card), optionally push",
    "benchmarks": "list the benchmarks, their configs, row counts and the video layout each "
    "expects",
    "evaluate": "score a model on a benchmark and write metrics with CIs, a report and plots",
    "metrics": "list, compute or push (as a Hub evaluate Space) foilkit's metrics",
    "compare": "paired test and side-by-side report of two evaluation runs",
    "power": "power and minimum detectable effects of a benchmark's tests, before and after runs",
    "import": "score answers a model gave outside foilkit (published predictions, lmms-eval, "
    "JSONL)",
    "report": "rebuild a run folder's report.html: tables, plots and an item browser with frames",
    "leaderboard": "rank runs per benchmark task with CIs, paired tests and a plot",
    "push-results": "upload a run's scores and results to the Hub; add model-index to a card",
    "models": "the model families foilkit scores: adapter, modes, tiny twin, "
    "tested/refused/untested",
    "demo": "the whole pipeline offline on a synthetic temporal benchmark with tiny models",
    "finetune": "fine-tune a CLIP/SigLIP with a temporal module and reversed-video hard "
    "negatives (RTime)",
    "generate": "make new foils: LLM counterfactuals (VITATECS, RTime), contrast sets, ViLMA "
    "foiling tools, bias checks",
}
COMMANDS: Registry[ModuleType] = Registry("command")
for _name, _summary in SUMMARIES.items():
    _module = "import_" if _name == "import" else _name.replace("-", "_")
    COMMANDS.add_lazy(_name, f"foilkit.cli.{_module}", _summary)
del _name, _module, _summary


class CommandParser(argparse.ArgumentParser):
    """A command's parser whose usage errors are one line: the error, naming the flag, and
    where the options are listed, not the whole usage (dozens of lines for ``evaluate``); a
    peer harness's flag (``--model_args``, ``--batch_size``, ...) is answered with foilkit's
    (:func:`foilkit.cli.options.foreign_flags`) before anything else is checked."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        from foilkit.cli.options import foreign_flags

        given = sys.argv[1:] if args is None else list(args)
        clauses = foreign_flags(self._option_string_actions, given)
        if clauses:
            self.error("; ".join(clauses))
        if "--config-file" in self._option_string_actions:
            namespace = self._from_config_file(given, namespace)
        return super().parse_known_args(given, namespace)

    def _from_config_file(
        self, given: list[str], namespace: argparse.Namespace | None
    ) -> argparse.Namespace | None:
        """``namespace`` holding what ``--config-file`` gives the flags ``given`` leaves out (a
        flag on the command line wins); a flag the file gives is no longer required."""
        from foilkit.cli.options import config_file_values

        first = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
        first.add_argument("--config-file")
        path = first.parse_known_args(given)[0].config_file
        if path is None:
            return namespace
        try:
            values = config_file_values(self._actions, path, given)
        except (UserError, OSError) as error:
            self.error(one_line(error))
        namespace = namespace or argparse.Namespace()
        for action in self._actions:
            if action.dest in values:
                action.required = False
                setattr(namespace, action.dest, values[action.dest])
        return namespace

    def format_help(self) -> str:
        """The help, with what only the help reads (the benchmarks', which import ``datasets``)
        filled in now: each flag's registry names (:func:`foilkit.cli.options.fill_names`) and
        an epilog given as a function (``foilkit build``'s video layouts)."""
        from foilkit.cli.options import fill_names

        fill_names(self._actions)
        if callable(self.epilog):
            self.epilog = self.epilog()
        return super().format_help()

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} ('{self.prog} --help' lists the options)\n")


def registered_parser(
    registry: Registry[ModuleType], name: str, prog: str
) -> tuple[ModuleType, argparse.ArgumentParser]:
    """The module ``registry`` names for ``name`` (imported now, not before) and its parser."""
    module = registry.get(name)
    parser = CommandParser(prog=prog, description=registry.summary(name))
    module.configure(parser)
    return module, parser


def _top_level_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="foilkit",
        description="Does this video model understand time? Temporal video-language benchmarks "
        "as Hugging Face datasets, metrics and an accelerate scoring engine.",
        epilog=f"commands:\n{COMMANDS.listing()}\n\n"
        "Run 'foilkit <command> --help' for a command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"foilkit {__version__}")
    parser.add_argument(
        "--debug", action="store_true", help="on an error, show the traceback (any position)"
    )
    parser.add_argument("command", choices=sorted(COMMANDS), metavar="command", help="see below")
    return parser


def command_parser(name: str) -> tuple[ModuleType, argparse.ArgumentParser]:
    """The module implementing command ``name`` (imported now) and its argument parser."""
    return registered_parser(COMMANDS, name, f"foilkit {name}")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    argv = [arg for arg in argv if arg != "--debug"]
    resumable = False
    try:
        top = _top_level_parser()
        if not argv:  # nothing asked: the commands, and a non-zero status for scripts
            top.print_help(sys.stderr)
            return 2
        if argv[0] not in COMMANDS:
            top.parse_args(argv[:1])  # prints help/version or a precise usage error
            return 2
        module, parser = command_parser(argv[0])
        args = parser.parse_args(argv[1:])
        args.command_line = ["foilkit", *argv]  # recorded by the commands that keep a record
        resumable = hasattr(args, "resume")
        return _run(module, args, argv[0], debug)
    except KeyboardInterrupt:
        if debug:
            raise
        print(interrupted(argv, resumable=resumable), file=sys.stderr)
        return 130


def _run(module: ModuleType, args: argparse.Namespace, name: str, debug: bool) -> int:
    """Command ``name`` run with its parsed ``args``; an error as one line and its exit status."""
    try:
        if isinstance(getattr(args, "model", None), str):
            check_model_path(args.model)
        with quiet_libraries(getattr(args, "verbosity", "info")):
            return int(module.run(args) or 0)
    except Exception as error:
        if debug:
            raise
        if isinstance(error, MissingExtra):  # the line names the command itself
            print(one_line(error), file=sys.stderr)
            return 2
        if isinstance(error, USER_ERRORS):
            print(f"foilkit {name}: error: {one_line(error)}", file=sys.stderr)
            return 2
        print(
            f"foilkit {name}: failed: {type(error).__name__}: {one_line(error)} "
            "(rerun with --debug for the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
