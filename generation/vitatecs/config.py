"""The pipeline's configuration as data: one YAML/JSON file, every value the paper's by default.

``foilkit generate vitatecs init`` writes the resolved configuration (defaults overlaid with the
user's file) into the loop's folder; every later stage reads it from there, so a loop's
settings -- seed included -- are recorded once, next to its outputs. Unknown keys and values of
the wrong type are errors that name the file and the key.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from foilkit.builders.spacy_pipeline import DEFAULT_SPACY_PIPELINE
from foilkit.generation.llm import LLMSettings
from foilkit.generation.nli import VITATECS_NLI_MODEL
from foilkit.generation.vitatecs.data_files import read_data
from foilkit.generation.vitatecs.filter_model import FilterTraining
from foilkit.generation.vitatecs.generate import GenerationSettings
from foilkit.generation.vitatecs.toxicity import DEFAULT_TOXICITY_MODEL, PAPER_THRESHOLD

CONFIG_FORMAT = "foilkit.vitatecs.config/1"
#: The paper's generator and sampling (§3.3, appendix E): gpt-3.5-turbo-0613, top-p 0.8.
PAPER_LLM = LLMSettings(model="gpt-3.5-turbo-0613", top_p=0.8, max_tokens=128)


@dataclass(frozen=True)
class NLISettings:
    """The NLI filter (criterion (a)): a sentence-transformers cross-encoder."""

    model: str = VITATECS_NLI_MODEL
    batch_size: int = 32
    labels: list[str] | None = None  # output order, for checkpoints without a usable id2label


@dataclass(frozen=True)
class ToxicitySettings:
    """The safety filter at finalisation; ``model: null`` switches it off."""

    model: str | None = DEFAULT_TOXICITY_MODEL
    threshold: float = PAPER_THRESHOLD
    labels: list[str] | None = None
    batch_size: int = 32


@dataclass(frozen=True)
class LoopSettings:
    """The human-in-the-loop iterations (§3.3).

    Attributes:
        queries_per_aspect: captions sampled per aspect and iteration (paper: 500).
        accept: ``"predicted"`` (a candidate is a sample of the aspect the filter assigns, as
            in the paper) or ``"target"`` (only of the aspect it was generated for).
        min_f1_gain: the held-out F1 gain below which the loop counts as converged.
    """

    queries_per_aspect: int = 500
    accept: str = "predicted"
    min_f1_gain: float = 0.01


@dataclass(frozen=True)
class FinalizeSettings:
    """Generation at scale without humans (§3.3, Finalization).

    Attributes:
        queries_per_aspect: captions per aspect (paper: 20,000).
        per_caption: samples kept per caption and aspect.
        max_per_signature: cap on samples sharing one change signature (``None``: no cap).
        spacy: the spaCy pipeline that finds verbs for the change signatures (``null``: words).
    """

    queries_per_aspect: int = 20000
    per_caption: int = 1
    max_per_signature: int | None = None
    spacy: str | None = DEFAULT_SPACY_PIPELINE


@dataclass(frozen=True)
class PipelineSettings:
    """Everything a VITATECS generation loop runs with.

    Attributes:
        seed: seeds demonstration sampling, caption sampling, augmentation, fine-tuning and
            (unless ``llm.seed`` is set) the LLM's sampling: each request is sent its own seed
            derived from it and the request (``llm.send_seed: false`` for an API without one).
        llm: the chat model and sampling (``cache_dir`` defaults to ``<loop>/llm-cache``).
        exemplars, prompt, aspects: data files to start from (the shipped ones when ``None``).
        device: where the NLI and filter models run (the GPU when there is one).
    """

    seed: int = 0
    llm: LLMSettings = PAPER_LLM
    generation: GenerationSettings = field(default_factory=GenerationSettings)
    nli: NLISettings = field(default_factory=NLISettings)
    filter: FilterTraining = field(default_factory=FilterTraining)
    toxicity: ToxicitySettings = field(default_factory=ToxicitySettings)
    loop: LoopSettings = field(default_factory=LoopSettings)
    finalize: FinalizeSettings = field(default_factory=FinalizeSettings)
    exemplars: str | None = None
    prompt: str | None = None
    aspects: str | None = None
    device: str | None = None

    def to_data(self) -> dict[str, Any]:
        return {"format": CONFIG_FORMAT, **dataclasses.asdict(self)}

    @classmethod
    def from_data(cls, data: Mapping[str, Any], *, where: str = "config") -> PipelineSettings:
        values = {key: value for key, value in data.items() if key != "format"}
        return _build(cls(), values, where)

    @classmethod
    def load(cls, path: str | os.PathLike) -> PipelineSettings:
        data = read_data(path)
        if data.get("format", CONFIG_FORMAT) != CONFIG_FORMAT:
            raise ValueError(f"{path}: 'format' is {data['format']!r}, expected {CONFIG_FORMAT!r}")
        return cls.from_data(data, where=str(path))

    def merged(self, overrides: Mapping[str, Any], *, where: str = "config") -> PipelineSettings:
        """This configuration with ``overrides`` (a partial nested mapping) applied."""
        return PipelineSettings.from_data(_deep_merge(self.to_data(), overrides), where=where)


def _deep_merge(base: Mapping[str, Any], overrides: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _build(defaults: Any, values: Mapping[str, Any], where: str) -> Any:
    """A copy of the dataclass instance ``defaults`` with ``values`` set, nested ones included."""
    if not isinstance(values, Mapping):
        raise ValueError(f"{where}: expected a mapping, got {values!r}")
    fields = {f.name for f in dataclasses.fields(defaults)}
    unknown = sorted(set(values) - fields)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; known: {sorted(fields)}")
    kwargs = {}
    for name, value in values.items():
        default = getattr(defaults, name)
        at = f"{where}: {name}"
        if dataclasses.is_dataclass(default):
            kwargs[name] = _build(default, value, at)
            continue
        if value is not None and default is not None and not _same_kind(value, default):
            raise ValueError(f"{at} is {value!r}, expected a {type(default).__name__}")
        kwargs[name] = value
    try:
        return dataclasses.replace(defaults, **kwargs)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: {error}") from None


def _same_kind(value: Any, default: Any) -> bool:
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, (list, tuple)):
        return isinstance(value, (list, tuple))
    return isinstance(value, type(default))
