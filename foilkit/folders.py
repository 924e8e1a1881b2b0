"""Folders foilkit writes: it writes only into a folder that is new, empty or its own, and it
replaces or deletes only what it wrote there.

Every command that writes a folder (``evaluate``'s run, ``score``'s output, ``finetune``'s run,
``push-results --dry-run``, ``build``'s export, ``generate``'s foils output, the demo) claims it
first with :func:`claim_folder`, before it loads or writes anything (a stage that writes a file
claims it with :func:`foilkit.generation.cli_io.claim_output_file`, by the same rule):

- a folder that does not exist, or is empty, is created and **marked** as foilkit's: the file
  ``.foilkit-folder`` (JSON: the kind of folder, foilkit's version, when) is written into it
  before anything else;
- a folder that carries foilkit's mark of the same kind is foilkit's to write again (to resume,
  to repeat a dry run, or to replace with ``--overwrite``);
- a folder written by a foilkit from before the mark is recognised by its kind's own record
  (``results.json`` of a run, ``run.json`` of a scoring folder, ...), and marked; a dataset
  export is not (its ``README.md`` is any Hub dataset's card): only a marked one is foilkit's;
- anything else that exists (a file, a folder of other files, a home directory, a project, a
  foilkit folder of another kind) is refused with :class:`ForeignFolderError`, one line naming
  it and the fix, and nothing in it is touched.

Replacing (:func:`replace_folder`) deletes only the entries that the folder's kind writes (its
``entries``: ``results.json``, ``scores/``, the run's own plots ``accuracy.png`` and
``recall.png``, ...), never a file a user put beside them (a ``notes.png`` stays). That is the
one place in foilkit where a user's folder loses files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from fnmatch import fnmatchcase
from pathlib import Path

from foilkit._version import __version__
from foilkit.errors import UserError
from foilkit.files import atomic_write

MARK_FILE = ".foilkit-folder"


class ForeignFolderError(UserError, FileExistsError):
    """A folder foilkit was asked to write into or replace is not one foilkit made."""


def _json_with(path: Path, key: str) -> bool:
    """Whether ``path`` is a JSON object with ``key`` (the record a kind of folder keeps)."""
    try:
        return key in json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return False


#: The ``format`` of a generation run's record (:data:`foilkit.generation.provenance.RECORD_FORMAT`
#: without its version): the record that makes a stage's output foilkit's.
GENERATION_RECORD = "foilkit.generation.run/"


def is_generation_record(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a run record of ``foilkit generate`` (a JSON object whose ``format``
    is a generation record's)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and str(data.get("format", "")).startswith(GENERATION_RECORD)


@dataclass(frozen=True)
class FolderKind:
    """A kind of folder foilkit writes.

    ``entries``: the top-level names (``fnmatch`` patterns) foilkit writes there, which
    :func:`replace_folder` may delete; ``subfolders``: the kind of folder an entry that is a
    folder must be (carrying that kind's mark) to be deleted, for a kind whose entries are folders
    of another kind (``None``: any entry that matches). ``legacy``: whether a folder of this
    kind written before folders were marked is one (it tells by the kind's own record file);
    ``None``: every such folder predates nothing (a new kind), so an unmarked folder is never
    taken.
    """

    name: str
    entries: tuple[str, ...]
    legacy: Callable[[Path], bool] | None = None
    subfolders: FolderKind | None = None

    def owns(self, name: str) -> bool:
        """Whether ``name`` (a top-level entry) is one this kind writes."""
        return name in (MARK_FILE, ".foilkit.lock") or any(
            fnmatchcase(name, pattern) for pattern in self.entries
        )


#: The plots of a run folder (:meth:`foilkit.run.RunFolder.plot`), by file name: its only
#: ``.png`` files that are foilkit's (a user's plot beside them is neither replaced nor shown).
RUN_PLOTS = ("accuracy.png", "recall.png")
#: ``foilkit evaluate``'s run folder (see :mod:`foilkit.run`).
RUN = FolderKind(
    "evaluation run",
    ("results.json", "config.yaml", "report.md", "report.html", *RUN_PLOTS, "scores", "scoring"),
    legacy=lambda root: _json_with(root / "results.json", "benchmark"),
)
#: ``foilkit evaluate --tasks``'s folder: one run folder per benchmark (``vitatecs/``, ...), each a
#: marked :data:`RUN` folder of its own, and the invocation's summary; replacing this folder
#: deletes a sub-folder only when it carries a run folder's mark (see :func:`replace_folder`).
TASKS = FolderKind(
    "multi-benchmark evaluation",
    ("summary.md", "summary.json", "*"),
    subfolders=RUN,
)


@dataclass(frozen=True)
class ScoresFolder:
    """Where each file of a scorer's output folder lives (``foilkit score --out``,
    ``out_dir=``, a run folder's ``scoring/<config>/``): its record (``run.json``,
    :class:`foilkit.scorers.record.ScoringRun`), its per-sample scores or retrieval matrix, the
    per-process shards a resumed run reads back and the list of missing videos."""

    root: Path

    RECORD = "run.json"
    CONFIG = "config.yaml"
    SCORES = "scores.jsonl"
    MATRIX = "matrix.npy"
    MATRIX_INDEX = "matrix.json"
    SHARDS = "shards"
    MISSING_VIDEOS = "missing_videos.txt"
    #: Every entry the scorer writes, by name (the :data:`SCORES` folder kind's).
    ENTRIES = (RECORD, CONFIG, SCORES, MATRIX, MATRIX_INDEX, SHARDS, MISSING_VIDEOS)

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))

    @property
    def record(self) -> Path:
        return self.root / self.RECORD

    @property
    def scores(self) -> Path:
        return self.root / self.SCORES

    @property
    def matrix(self) -> Path:
        return self.root / self.MATRIX

    @property
    def matrix_index(self) -> Path:
        return self.root / self.MATRIX_INDEX

    @property
    def shards(self) -> Path:
        return self.root / self.SHARDS

    @property
    def missing_videos(self) -> Path:
        return self.root / self.MISSING_VIDEOS


#: ``foilkit score``'s output folder (:class:`ScoresFolder`).
SCORES = FolderKind(
    "scoring run",
    ScoresFolder.ENTRIES,
    # a run killed before its run.json still has its lock
    legacy=lambda root: (
        _json_with(ScoresFolder(root).record, "identity") or (root / ".foilkit.lock").is_file()
    ),
)
#: ``foilkit finetune``'s run folder (see :mod:`foilkit.finetune.train`).
FINETUNE = FolderKind(
    "fine-tuning run",
    ("model", "checkpoints", "training.json", "loss.png"),
    legacy=lambda root: (root / "training.json").is_file() or (root / "checkpoints").is_dir(),
)
#: ``foilkit push-results --dry-run``'s folder (what would be sent, see :mod:`foilkit.hub_commit`).
DRY_RUN = FolderKind(
    "push-results dry run",
    tuple(
        "dataset dataset_commit.json model model_commit.json model_card_update.json "
        "model-index.yaml".split()
    ),
    legacy=lambda root: _json_with(root / "dataset_commit.json", "operations"),
)
#: ``foilkit build``'s export (a folder of parquet per config, the dataset card, ``eval.yaml``);
#: never replaced whole: an export rewrites each config it writes. Only a marked folder is one:
#: a dataset card with ``configs:`` is any Hub dataset's (a clone of one is a user's folder).
EXPORT = FolderKind("dataset export", ("README.md", "eval.yaml"))
#: ``foilkit generate``'s foils output folder (:func:`foilkit.generation.foil.write_foils`): the
#: foils dataset, the run's record and a stage's own files (the contrast sets' multiple-choice
#: file, VITATECS' candidates and annotations). One from before marks is known by its
#: ``run.json``, a generation run's record.
FOILS = FolderKind(
    "foils output",
    ("foils.parquet", "run.json", "multiple_choice.tsv", "candidates.jsonl", "annotations"),
    legacy=lambda root: is_generation_record(root / "run.json"),
)
#: ``foilkit demo``'s folder (the benchmark, runs, fine-tunes and the side-by-side report).
DEMO = FolderKind(
    "demo",
    ("benchmark", "runs", "finetune", "embedding-cache", "report.md", "*.png", "comparison.json"),
    legacy=lambda root: (root / "benchmark" / "README.md").is_file() and (root / "runs").is_dir(),
)

#: A side-by-side report of several runs (``foilkit compare``, ``foilkit report --out``).
SIDE_BY_SIDE = FolderKind(
    "side-by-side report",
    ("report.md", "report.html", "comparison.json", "side_by_side_*.png"),
    legacy=lambda root: (root / "comparison.json").is_file(),
)
#: ``foilkit leaderboard``'s folder.
LEADERBOARD = FolderKind(
    "leaderboard",
    ("leaderboard.md", "leaderboard.csv", "leaderboard.png", "leaderboard.html"),
    legacy=lambda root: (root / "leaderboard.csv").is_file(),
)
#: ``foilkit power --out``'s folder: the figures and their plot.
POWER = FolderKind(
    "power analysis",
    ("power.json", "power.png"),
    legacy=lambda root: (root / "power.json").is_file(),
)
#: ``foilkit metrics push --dry-run``'s folder (each metric Space's files and commit).
METRIC_DRY_RUN = FolderKind(
    "metrics dry run",
    ("*_commit.json",),
    legacy=lambda root: any(root.glob("*_commit.json")),
)

KINDS = {
    kind.name: kind
    for kind in (
        RUN,
        TASKS,
        SCORES,
        FINETUNE,
        DRY_RUN,
        EXPORT,
        FOILS,
        DEMO,
        SIDE_BY_SIDE,
        LEADERBOARD,
        METRIC_DRY_RUN,
        POWER,
    )
}


def folder_kind(root: str | os.PathLike) -> str | None:
    """The kind named by ``root``'s mark (``None``: no readable mark)."""
    try:
        mark = json.loads((Path(root) / MARK_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return mark.get("kind") if isinstance(mark, dict) else None


#: The temporary file of a mark being written (:func:`foilkit.files.atomic_open`'s naming).
_MARK_BEING_WRITTEN = re.compile(rf"\.{re.escape(MARK_FILE)}\.[0-9a-f]{{12}}\.tmp")


def holds_files(root: str | os.PathLike) -> bool:
    """Whether the folder ``root`` holds anything besides foilkit's mark (or the mark being
    written: another process of a distributed run claiming the folder)."""
    return any(
        entry.name != MARK_FILE and not _MARK_BEING_WRITTEN.fullmatch(entry.name)
        for entry in Path(root).iterdir()
    )


def _refuse(root: Path, kind: FolderKind, why: str) -> ForeignFolderError:
    return ForeignFolderError(
        f"{root} {why}; foilkit writes a {kind.name} only into a new or empty folder or one it "
        "made, and touched nothing there: choose another --out"
    )


def check_folder(root: str | os.PathLike, kind: FolderKind) -> bool:
    """Raise :class:`ForeignFolderError` unless foilkit may write a ``kind`` folder at ``root``;
    returns whether it is already foilkit's (marked, or a ``kind`` folder from before marks).

    Reads only: every process of a distributed run may call it before the main one writes.
    """
    root = Path(root)
    if not root.exists():
        return False
    if not root.is_dir():
        raise _refuse(root, kind, "is a file, not a folder")
    marked = folder_kind(root)
    if marked is None and kind.legacy is not None and kind.legacy(root):
        return True
    if marked is None and holds_files(root):
        # Another process of this run may have claimed the folder since its mark was read: the
        # mark is the first entry claim_folder writes, so files listed before a mark read now
        # are that claim's.
        marked = folder_kind(root)
        if marked is None:
            raise _refuse(root, kind, "is not empty and was not made by foilkit")
    if marked is not None and marked != kind.name:
        raise _refuse(root, kind, f"holds a foilkit {marked}, not a {kind.name}")
    return marked is not None


def _mark(root: Path, kind: FolderKind) -> None:
    if folder_kind(root) == kind.name:
        return
    created = datetime.now(timezone.utc).isoformat(timespec="seconds")
    mark = {"kind": kind.name, "foilkit": __version__, "created_at": created}
    atomic_write(root / MARK_FILE, json.dumps(mark, indent=2) + "\n")


def claim_folder(root: str | os.PathLike, kind: FolderKind) -> Path:
    """Make ``root`` a marked ``kind`` folder (created if missing) after :func:`check_folder`;
    returns it. Its content, if any, is left as it is."""
    root = Path(root)
    check_folder(root, kind)
    root.mkdir(parents=True, exist_ok=True)
    _mark(root, kind)
    return root


def _replaceable(entry: Path, kind: FolderKind) -> bool:
    """Whether :func:`replace_folder` deletes ``entry`` of a ``kind`` folder: one of its entries
    and, where the kind's entries are folders of another kind, a name it writes or such a folder
    (a folder carrying that kind's mark), never a user's file that merely matches a pattern."""
    if entry.name == MARK_FILE or not kind.owns(entry.name):
        return False
    if kind.subfolders is None or entry.name in kind.entries:
        return True
    return entry.is_dir() and not entry.is_symlink() and folder_kind(entry) == kind.subfolders.name


def replace_folder(root: str | os.PathLike, kind: FolderKind) -> Path:
    """:func:`claim_folder`, then delete what a ``kind`` folder holds of foilkit's (its
    ``entries``), leaving every other file in it; returns the folder, ready to be written anew.

    The mark is written before anything is deleted, so a folder is never left unmarked with
    only a user's files in it.
    """
    root = claim_folder(root, kind)
    for entry in sorted(root.iterdir()):
        if not _replaceable(entry, kind):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    return root
