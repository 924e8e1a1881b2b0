"""The run record (``run.json``): everything needed to know where a set of scores came from.

:class:`ScoringRun` is the record, its one writer (:meth:`ScoringRun.to_record`) and its one
reader (:meth:`ScoringRun.from_record`): the scorer fills it, ``run.json`` and ``results.json``
hold its JSON, and the reports, ``compare``, the leaderboard and ``push-results`` read its
fields. A record written by an earlier foilkit reads with its renamed keys under today's names
(``frames``: ``num_frames``; a lone ``video_root``: ``video_roots``) and writes back as it was.
"""

from __future__ import annotations

import datetime as _dt
import importlib.metadata
import json
import os
import platform
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from foilkit.scorers.protocols import ResolvedProtocol

#: The distributions a run's numbers depend on (foilkit and its default install, what ``pip install
#: foilkit`` brings), each with its import name: recorded in every ``run.json`` and checked by
#: ``foilkit doctor``. The generation extra's are recorded by generation runs
#: (:mod:`foilkit.generation.provenance`).
PACKAGES: dict[str, str] = {
    "foilkit": "foilkit",
    "torch": "torch",
    "torchvision": "torchvision",
    "torchcodec": "torchcodec",
    "av": "av",
    "pillow": "PIL",
    "numpy": "numpy",
    "datasets": "datasets",
    "evaluate": "evaluate",
    "huggingface_hub": "huggingface_hub",
    "transformers": "transformers",
    "accelerate": "accelerate",
    "matplotlib": "matplotlib",
    "tqdm": "tqdm",
    "pyyaml": "yaml",
}


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    """Installed version of each distribution in ``names`` (default: :data:`PACKAGES`; ``None``
    when one is missing). Generation records use it with their own list."""
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def hardware(num_processes: int) -> dict[str, Any]:
    import torch

    gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "gpus": gpus,
        "num_processes": num_processes,
    }


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def foilkit_source() -> dict[str, Any]:
    """foilkit's version and, when it runs from a git checkout (an editable install), the
    checkout's commit and whether it had uncommitted changes (``None``: not a checkout, or git
    is missing): which code made a result, beyond a version that many commits share."""
    import subprocess
    from pathlib import Path

    from foilkit._version import __version__

    root = Path(__file__).resolve().parent.parent  # the checkout holding the foilkit package
    commit = dirty = None
    if (root / ".git").exists() and (root / "pyproject.toml").is_file():
        try:

            def git(*args: str) -> str:
                return subprocess.run(
                    ["git", "-C", str(root), *args],
                    capture_output=True,
                    text=True,
                    check=True,
                    timeout=10,
                ).stdout.strip()

            commit = git("rev-parse", "HEAD")
            dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
        except (OSError, subprocess.SubprocessError):
            commit = dirty = None
    return {"version": __version__, "git_commit": commit, "git_dirty": dirty}


#: Keys a record holds only when they have a value (the record of a run without them reads as
#: it always has): a question-asking adapter's prompts, rows' own questions, Vinoground's video
#: question, generate mode's answer outcomes.
_WHEN_GIVEN = ("prompt_templates", "questions", "video_question", "answers")


@dataclass(frozen=True)
class ScoringRun:
    """A scorer's run record (``run.json`` of ``foilkit.score``/``score_matrix``, and each
    config's ``run`` in ``results.json``): the model and how it was run, the protocol, the
    frames, the dataset, what failed and why, the spend and the machine.

    Every field is ``None`` where a record lacks it (one written before it was recorded, a
    stopped run's start record). ``identity``: what a resumed run must match; ``adapter``: the
    adapter's own record (``describe()``); ``video_roots``: the folders every video path had to
    lie inside (``None``: unconfined, a dataset object scored without a root); ``answers``:
    generate mode's answer outcomes (``parsed``, ``judged``, ``unparseable``, ``refused``);
    ``judge``: generate mode's LLM judge (:mod:`foilkit.scorers.judge`).
    """

    identity: dict[str, Any] = field(default_factory=dict)
    model: str | None = None
    revision: str | None = None
    adapter: dict[str, Any] = field(default_factory=dict)
    prompt_templates: dict[str, str] | None = None
    processor: dict[str, Any] | None = None
    mode: str | None = None
    questions: dict[str, Any] | None = None
    video_question: dict[str, Any] | None = None
    score_kind: str | None = None
    protocol: ResolvedProtocol | None = None
    num_frames: int | None = None
    sampling: dict[str, Any] | None = None
    decoder: str | None = None
    decoder_requested: str | None = None
    decoder_fallback: str | None = None
    max_decode_pixels: int | None = None
    video_roots: list[str] | None = None
    dtype: str | None = None
    device: str | None = None
    placement: dict[str, Any] | None = None
    backend: dict[str, Any] | None = None
    seed: int | None = None
    control: str | None = None
    batch_size: int | None = None
    num_workers: int | None = None
    model_threads: int | None = None
    dataset: dict[str, Any] | None = None
    cache: str | None = None
    errors: dict[str, Any] | None = None
    answers: dict[str, int] | None = None
    judge: dict[str, Any] | None = None
    throughput: dict[str, Any] | None = None
    packages: dict[str, str | None] | None = None
    foilkit: dict[str, Any] | None = None
    hardware: dict[str, Any] | None = None
    finished_at: str | None = None
    #: The JSON a record was read from, written back as it was (an older record keeps its keys).
    read_from: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @property
    def adapter_name(self) -> str | None:
        return self.adapter.get("adapter")

    @property
    def parser(self) -> str | None:
        """Generate mode's answer parser."""
        return self.adapter.get("parser")

    @property
    def decoding(self) -> dict[str, Any] | None:
        """Generate mode's decoding settings (``Decoding.to_record``); ``None`` otherwise."""
        return self.adapter.get("decoding")

    @property
    def prompt_name(self) -> str | None:
        """A choice-mode video LLM's named question (``vitatecs``, ``lmms-eval``)."""
        return self.adapter.get("prompt_name")

    @property
    def sampling_name(self) -> str | None:
        """The frame sampling policy's name."""
        return None if self.sampling is None else self.sampling.get("name")

    @property
    def dataset_revision(self) -> str | None:
        """The Hub commit of the dataset scored, when it was loaded by Hub id."""
        return None if self.dataset is None else self.dataset.get("revision")

    @property
    def num_rows(self) -> int | None:
        """The rows scored (those scored and those that failed)."""
        return None if self.dataset is None else self.dataset.get("num_rows")

    @property
    def failed_rows(self) -> int | None:
        """The rows that could not be scored."""
        return None if self.errors is None else self.errors.get("rows")

    @property
    def error_causes(self) -> dict[str, int] | None:
        """How many rows failed for each cause (``None``: a record from before causes were
        recorded)."""
        return None if self.errors is None else self.errors.get("causes")

    def to_record(self) -> dict[str, Any]:
        """The record as ``run.json`` holds it, its keys in field order (a record read: as it
        was read)."""
        if self.read_from is not None:
            return dict(self.read_from)
        record: dict[str, Any] = {}
        for name in _FIELDS:
            value = getattr(self, name)
            if name == "revision":  # written with the model
                continue
            if name == "model":
                value = {"id": self.model, "revision": self.revision}
            elif name == "protocol":
                value = None if value is None else value.to_record()
            elif name == "video_roots":  # the first, for readers of older records
                record["video_root"] = value[0] if value else None
            elif name == "prompt_templates":
                value = value or None
            if value is not None or name not in _WHEN_GIVEN:
                record[name] = value
        return record

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> ScoringRun:
        """The record ``data`` holds, of any foilkit version (renamed keys read by their new
        names; what a record lacks is ``None``)."""
        read = ("identity", "model", "revision", "adapter", "protocol", "num_frames", "video_roots")
        given = {name: data[name] for name in _FIELDS if name in data and name not in read}
        model = data.get("model")
        model = model if isinstance(model, Mapping) else {"id": model}
        identity = dict(data.get("identity") or {})
        if "frames" in identity:  # a run started before the frame count was named num_frames
            identity["num_frames"] = identity.pop("frames")
        roots = data.get("video_roots")
        if roots is None and data.get("video_root") is not None:  # before several roots
            roots = [data["video_root"]]
        protocol = data.get("protocol")
        return cls(
            **given,
            identity=identity,
            model=model.get("id"),
            revision=model.get("revision"),
            adapter=dict(data.get("adapter") or {}),
            protocol=protocol_from_record(protocol) if protocol else None,
            num_frames=data.get("num_frames", data.get("frames")),
            video_roots=None if roots is None else list(roots),
            read_from=data,
        )

    @classmethod
    def load(cls, path: str | os.PathLike) -> ScoringRun:
        """The record of a ``run.json``."""
        return cls.from_record(json.loads(Path(path).read_text(encoding="utf-8")))


#: The record's fields as ``run.json`` holds them, in order (``revision``: in ``model``).
_FIELDS = tuple(f.name for f in fields(ScoringRun) if f.name != "read_from")


def start_json(identity: Mapping[str, Any]) -> str:
    """A run's first ``run.json``, written before any row is scored: its identity (what a
    resumption must match) and when it started (read back by :meth:`ScoringRun.from_record`, its
    other fields ``None``); the end record replaces it."""
    return json.dumps({"identity": identity, "started_at": now()}, indent=2)


def protocol_from_record(record: Mapping[str, Any]) -> ResolvedProtocol:
    """A resolved protocol from its record (``ResolvedProtocol.to_record``)."""
    return ResolvedProtocol(
        name=record["name"],
        benchmark=record.get("benchmark"),
        family=record["family"],
        # as recorded: records written before the rename call ``num_frames`` ``frames``
        # (:func:`foilkit.scorers.protocols.setting_label` reads both as "frames")
        settings=dict(record["settings"]),
        overrides={name: dict(value) for name, value in (record.get("overrides") or {}).items()},
        reference=record.get("reference") or "",
        notes=record.get("notes") or "",
        from_model=dict(record.get("from_model") or {}),
        departures={name: dict(value) for name, value in (record.get("departures") or {}).items()},
        per_config={name: dict(value) for name, value in (record.get("per_config") or {}).items()},
    )
