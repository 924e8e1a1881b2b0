"""How a generation run made its output: one record type for every pipeline and stage.

A :class:`RunRecord` says which pipeline and stage ran, on which input files (with their
SHA-256), with which models (Hub id or path, and the revision where one can be known offline),
which prompt wordings (name, file, version and template hash), which seed, parameters and
thresholds, what it produced (counts, reports, LLM usage), under which package versions, and
when. It is written as JSON:

* ``<out>/run.json`` next to ``<out>/foils.parquet`` for a stage that makes foils (the one output
  layout, :func:`foilkit.generation.foil.write_foils`);
* ``<file>.run.json`` next to an intermediate stage file (:func:`record_path`): RTime's curation
  files and caption rewrites, the bias report;
* ``<loop>/iterations/<k>/<stage>.run.json`` for the VITATECS loop's stages.

The record of the whole run sits beside the output; what happened to each foil (its rule,
parameters, model ids and filter scores) is the foil's own record in the dataset's
``foil_provenance`` column (:class:`foilkit.generation.foil.Foil`).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import importlib.metadata
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foilkit.folders import GENERATION_RECORD
from foilkit.scorers.record import package_versions

if TYPE_CHECKING:
    from foilkit.generation.llm import LLMSettings
    from foilkit.generation.prompts import PromptTemplate

RECORD_FORMAT = f"{GENERATION_RECORD}1"
RECORD_SUFFIX = ".run.json"

#: Distributions whose versions decide what a generation run produces.
PACKAGES = tuple(
    "foilkit torch transformers sentence-transformers spacy datasets numpy openai".split()
)

_DISTRIBUTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _package_versions() -> dict[str, str | None]:
    return package_versions(PACKAGES)


def file_digest(path: str | os.PathLike) -> dict[str, str]:
    """``{"path", "sha256"}`` of an input file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"path": os.fspath(path), "sha256": digest.hexdigest()}


def _revision(model_id: str) -> str | None:
    """The model's revision where it can be known without a network: the Hub commit of a
    snapshot in the Hugging Face cache (by path, or by Hub id when cached), or the version of a
    model installed as a Python package (spaCy pipelines)."""
    path = Path(model_id).expanduser()
    if path.exists():
        parts = path.absolute().parts
        if "snapshots" in parts[:-1]:
            return parts[parts.index("snapshots") + 1]
        return None
    if "/" not in model_id and _DISTRIBUTION_NAME.match(model_id):
        try:
            return importlib.metadata.version(model_id)
        except importlib.metadata.PackageNotFoundError:
            pass
    try:
        from huggingface_hub import try_to_load_from_cache

        for filename in ("config.json", "modules.json"):
            cached = try_to_load_from_cache(model_id, filename)
            if isinstance(cached, str):
                return Path(cached).parent.name
    except (ImportError, ValueError):  # not a valid Hub id
        pass
    return None


def model_ref(model_id: str) -> dict[str, str | None]:
    """``{"id", "revision"}`` of a model given by Hub id, local folder or package name."""
    return {"id": str(model_id), "revision": _revision(str(model_id))}


def llm_ref(config: LLMSettings) -> dict[str, Any]:
    """``{"id", "revision", "base_url", "seed"}`` of a chat model behind an API (no revision to
    know); ``seed`` is the base seed each request's own seed is derived from (``None`` where no
    seed is sent; the cache entries and the foils record each request's)."""
    seed = config.seed if config.send_seed else None
    return {
        "id": config.model,
        "revision": None,
        "base_url": config.resolved_base_url(),
        "seed": seed,
    }


def _jsonable(value: Any) -> Any:
    """Parameters as JSON values: paths as strings, mappings and sequences recursively."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, Mapping):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _jsonable(dataclasses.asdict(value))
    return value


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class RunRecord:
    """One run of one generation stage: what went in, what it ran with, what came out.

    Attributes:
        pipeline, stage: ``foilkit generate <pipeline> <stage>`` (``stage`` is the pipeline's
            name for one-stage pipelines).
        seed: the run's seed (``None`` where nothing is random).
        inputs: role -> ``{"path", "sha256"}`` of every input file.
        models: role -> ``{"id", "revision"}`` (LLMs add ``base_url``).
        prompts: role -> ``{"name", "path", "version", "template_hash"}`` of each wording used.
        parameters: every other option and threshold the stage ran with.
        results: what it produced: counts, reports, LLM usage, the files it wrote.
        packages: versions of the packages that decide the output (:data:`PACKAGES`).
        created: when the record was made (UTC, ISO 8601).
    """

    pipeline: str
    stage: str
    seed: int | None = None
    inputs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    models: Mapping[str, Mapping[str, str | None]] = field(default_factory=dict)
    prompts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    parameters: Mapping[str, Any] = field(default_factory=dict)
    results: Mapping[str, Any] = field(default_factory=dict)
    packages: Mapping[str, str | None] = field(default_factory=_package_versions)
    created: str = field(default_factory=_now)

    @classmethod
    def create(
        cls,
        pipeline: str,
        stage: str,
        *,
        seed: int | None = None,
        inputs: Mapping[str, str | os.PathLike | None] | None = None,
        models: Mapping[str, str | Mapping[str, Any] | None] | None = None,
        prompts: Mapping[str, PromptTemplate | None] | None = None,
        parameters: Mapping[str, Any] | None = None,
        results: Mapping[str, Any] | None = None,
    ) -> RunRecord:
        """A record from the files, model ids and templates themselves: inputs are hashed,
        model ids given as text get their revision, templates their hash; ``None`` entries are
        left out."""
        return cls(
            pipeline=pipeline,
            stage=stage,
            seed=seed,
            inputs={k: file_digest(v) for k, v in (inputs or {}).items() if v is not None},
            models={
                k: model_ref(v) if isinstance(v, (str, os.PathLike)) else dict(v)
                for k, v in (models or {}).items()
                if v is not None
            },
            prompts={k: v.record() for k, v in (prompts or {}).items() if v is not None},
            parameters=_jsonable(dict(parameters or {})),
            results=_jsonable(dict(results or {})),
        )

    def with_results(self, **results: Any) -> RunRecord:
        """A copy with more results recorded."""
        return dataclasses.replace(self, results={**self.results, **_jsonable(results)})

    def to_data(self) -> dict[str, Any]:
        return {"format": RECORD_FORMAT, **_jsonable(dataclasses.asdict(self))}

    @classmethod
    def from_data(cls, data: Mapping[str, Any], *, where: str = "record") -> RunRecord:
        if data.get("format") != RECORD_FORMAT:
            raise ValueError(
                f"{where}: 'format' is {data.get('format')!r}, expected {RECORD_FORMAT!r}"
            )
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names - {"format"})
        if unknown:
            raise ValueError(f"{where}: unknown key(s) {unknown}")
        return cls(**{k: v for k, v in data.items() if k in names})

    def write(self, path: str | os.PathLike) -> Path:
        """Write the record as JSON to ``path`` (atomically); returns it."""
        from foilkit.files import atomic_write

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.to_data(), indent=2, sort_keys=True, ensure_ascii=False, default=str)
        return atomic_write(path, text + "\n")

    @classmethod
    def read(cls, path: str | os.PathLike) -> RunRecord:
        from foilkit.files import read_json

        return cls.from_data(read_json(path), where=str(path))


def record_path(output: str | os.PathLike) -> Path:
    """Where the record of an intermediate stage file lives: ``<output>.run.json``."""
    return Path(f"{os.fspath(output)}{RECORD_SUFFIX}")
