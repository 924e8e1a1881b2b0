"""Scoring protocols: what each benchmark's own published evaluation code does, as data.

A score depends on more than the model: which frames it sees and how they are sampled, how
frame features are pooled, how token log-probabilities become one number, the prompt and the
text length limit. The papers' own scripts differ on every one of these, so foilkit names
them. A :class:`Protocol` fixes them for one (benchmark, model family); two sets exist:

``paper`` (default)
    Each benchmark x family resolves to the protocol of that benchmark's own published code,
    declared in the benchmark's folder (``builders/<name>/protocols.py``) and found through the
    registry (:func:`paper_protocols`), with the reference file it reproduces. Where a paper
    published nothing for a family, the entry says so and falls back to the ``uniform`` values.
``uniform``
    One protocol across benchmarks (:data:`UNIFORM`): 8 frames by linspace, order-free mean
    pooling, mean token log-probability; for comparing a model across benchmarks.

:func:`resolve_protocol` turns a protocol name, a benchmark and an adapter family into the
settings a run uses; every explicit option (``--frames``, ``--pooling``, ...) overrides one
field and is recorded as an override. The resolved record goes into ``run.json``, the resume
identity and the report header. This module is the mechanism only and names no benchmark;
the :class:`Protocol` type and the uniform values live in :mod:`foilkit.protocol`, which the
benchmarks' folders import too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from foilkit.benchmark_registry import BENCHMARKS
from foilkit.protocol import (
    FRAME_SETTINGS,
    GENERATE_SETTINGS,
    LOAD_SETTINGS,
    MODEL_SETTINGS,
    SETTINGS,
    UNIFORM,
    UNIFORM_DEFAULT,
    Protocol,
    setting_label,
    unpublished,
)

PROTOCOLS = ("paper", "uniform")


def paper_protocols(benchmark: str | None) -> Mapping[str, Protocol]:
    """The paper protocols ``benchmark`` declares in its folder, by model family (empty for a
    name the registry does not know, or a benchmark that published no code)."""
    if benchmark is None or benchmark not in BENCHMARKS:
        return {}
    return BENCHMARKS.get(benchmark).protocols


def describe_protocol(name: str, benchmark: str | None, family: str) -> Protocol:
    """The protocol ``name`` declares for ``benchmark`` and ``family`` (before overrides)."""
    if name not in PROTOCOLS:
        raise ValueError(f"unknown protocol {name!r}; choose from {list(PROTOCOLS)}")
    if name == "uniform":
        return UNIFORM.get(family, UNIFORM_DEFAULT)
    if benchmark is None:
        base = UNIFORM.get(family, UNIFORM_DEFAULT)
        return replace(base, notes="no benchmark named: the uniform protocol's values")
    paper = paper_protocols(benchmark)
    if family in paper:
        return paper[family]
    if not paper:
        base = UNIFORM.get(family, UNIFORM_DEFAULT)
        note = f"{benchmark} is not a published benchmark: the uniform protocol's values"
        return replace(base, notes=note)
    return unpublished(benchmark, family)


@dataclass(frozen=True)
class ResolvedProtocol:
    """The settings a run uses: a protocol's, with the user's explicit options over them."""

    name: str
    benchmark: str | None
    family: str
    settings: Mapping[str, Any]
    overrides: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    reference: str = ""
    notes: str = ""
    #: settings the protocol left to the model, as the model fixes them (its ``native_settings``)
    from_model: Mapping[str, Any] = field(default_factory=dict)
    #: Settings this run could not follow on its device, each ``{"protocol", "used", "why"}``
    #: (e.g. float16 where the device cannot run it): said in the record and the report.
    departures: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: A run of several configs: the settings its configs resolved differently (a benchmark's
    #: answer parser per task type), by setting then config; absent from ``settings``.
    per_config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def with_departure(self, name: str, used: Any, why: str) -> ResolvedProtocol:
        """This protocol, with setting ``name`` run as ``used`` instead, for the reason ``why``."""
        departure = {"protocol": self.settings.get(name), "used": used, "why": why}
        return replace(
            self,
            settings={**self.settings, name: used},
            departures={**self.departures, name: departure},
        )

    def adapter_options(self, accepted: tuple[str, ...]) -> dict[str, Any]:
        """The model settings the adapter takes as constructor options."""
        return {
            name: value
            for name, value in self.settings.items()
            if name in MODEL_SETTINGS and name in accepted
        }

    def to_record(self) -> dict[str, Any]:
        """A JSON-serialisable record (``departures`` only when there are some, so records of
        runs that followed their protocol read as they always have)."""
        record = {
            "name": self.name,
            "benchmark": self.benchmark,
            "family": self.family,
            "settings": dict(self.settings),
            "overrides": {name: dict(value) for name, value in self.overrides.items()},
            "reference": self.reference,
            "notes": self.notes,
            **({"from_model": dict(self.from_model)} if self.from_model else {}),
        }
        if self.departures:
            record["departures"] = {name: dict(value) for name, value in self.departures.items()}
        if self.per_config:
            record["per_config"] = {name: dict(value) for name, value in self.per_config.items()}
        return record


def combined_protocol(protocols: Mapping[str, ResolvedProtocol]) -> ResolvedProtocol:
    """One account of the protocols a run's configs (by name, in run order) resolved: the first
    config's, with each setting the configs do not share moved from ``settings`` to
    ``per_config`` (every config's value, ``None`` where one has none), so a run of several
    configs claims no one config's setting for all."""
    first, *_ = protocols.values()
    names = dict.fromkeys(key for protocol in protocols.values() for key in protocol.settings)
    differing = {
        key: {config: protocol.settings.get(key) for config, protocol in protocols.items()}
        for key in names
    }
    differing = {
        key: values for key, values in differing.items() if len(set(map(repr, values.values()))) > 1
    }
    if not differing:
        return first
    settings = {key: value for key, value in first.settings.items() if key not in differing}
    return replace(first, settings=settings, per_config=differing)


def resolve_protocol(
    name: str,
    benchmark: str | None,
    family: str,
    overrides: Mapping[str, Any] | None = None,
    *,
    accepted: tuple[str, ...] = MODEL_SETTINGS,
    native: Mapping[str, Any] | None = None,
    config: str | None = None,
) -> ResolvedProtocol:
    """The settings of protocol ``name`` for ``benchmark`` x ``family``, with ``overrides`` applied.

    Args:
        name: ``paper`` or ``uniform``.
        benchmark: the benchmark's registered name (``None``: not a known benchmark).
        family: the adapter's registered name.
        overrides: explicit options (``None`` values mean "not given"); each one that differs
            from the protocol is recorded with the protocol's value.
        accepted: the model settings the family's adapter takes; an override of another one is
            an error (``--pooling`` means nothing to a video LLM).
        native: the settings the model itself fixes (``Adapter.native_settings``); they fill
            what the protocol leaves to the model (``num_frames=None``) and are recorded as
            ``from_model``.
        config: the benchmark config scored, for the answer parser ``generate`` mode reads
            its answers with when none is set (:func:`default_parser`).
    """
    protocol = describe_protocol(name, benchmark, family)
    settings = {
        key: value
        for key, value in protocol.settings().items()
        if key in FRAME_SETTINGS or key in LOAD_SETTINGS or key in accepted
    }
    from_model = {
        key: value
        for key, value in (native or {}).items()
        if key in SETTINGS and getattr(protocol, key) is None and value is not None
    }
    settings.update(from_model)
    recorded: dict[str, dict[str, Any]] = {}
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key not in SETTINGS:
            raise ValueError(f"{key!r} is not a protocol setting; choose from {list(SETTINGS)}")
        if key in MODEL_SETTINGS and key not in accepted:
            raise ValueError(
                f"the {family} adapter takes no {key!r} option (it takes "
                f"{list(accepted) or 'none'})"
            )
        # a load setting the protocol leaves to foilkit (no reference dtype) is no departure
        declared = key not in LOAD_SETTINGS or key in settings
        if declared and settings.get(key) != value:
            recorded[key] = {"protocol": settings.get(key), "given": value}
        settings[key] = value
    if settings.get("mode") != "generate":
        # the protocol's parser and decoding are generate mode's (a choice-mode protocol keeps
        # its reference's decoding for --mode generate); another mode asks nothing of them
        for key in GENERATE_SETTINGS:
            if key not in recorded:
                settings.pop(key, None)
    if settings.get("mode") == "generate" and "parser" in accepted and not settings.get("parser"):
        parser = default_parser(benchmark, config)
        if parser is not None:
            settings["parser"] = parser
    if "mode" in recorded and "prompt" not in recorded:
        # a protocol's choice question means nothing to another mode
        settings.pop("prompt", None)
    if "sampling" in recorded:
        # the protocol's policy parameters do not carry over to another policy
        for key in ("stride", "target_fps", "max_frames", "normalized_fps"):
            if key not in recorded:
                settings.pop(key, None)
    return ResolvedProtocol(
        name,
        benchmark,
        family,
        settings,
        recorded,
        protocol.reference,
        protocol.notes_for(settings.get("mode")),
        from_model,
    )


def default_parser(benchmark: str | None, config: str | None) -> str | None:
    """The answer parser of ``benchmark``'s ``config`` (its spec's ``answer_parsers``: the
    config's, else the benchmark's for every config); ``None``: generate mode's own default."""
    if benchmark is None or benchmark not in BENCHMARKS:
        return None
    parsers = BENCHMARKS.get(benchmark).answer_parsers
    return parsers.get(config, parsers.get(None))


def paper_table() -> dict[tuple[str, str], Protocol]:
    """Every registered benchmark's paper protocols, by ``(benchmark, family)``."""
    return {
        (benchmark, family): protocol
        for benchmark in BENCHMARKS.names()
        for family, protocol in paper_protocols(benchmark).items()
    }


def list_protocols() -> list[dict[str, Any]]:
    """Every declared paper protocol as rows (benchmark, family, settings, reference, notes, and
    ``mode_notes`` where another mode has its own)."""
    return [
        {
            "benchmark": benchmark,
            "family": family,
            **protocol.settings(),
            "reference": protocol.reference,
            "notes": protocol.notes,
            **({"mode_notes": dict(protocol.mode_notes)} if protocol.mode_notes else {}),
        }
        for (benchmark, family), protocol in paper_table().items()
    ]


__all__ = [
    "GENERATE_SETTINGS",
    "PROTOCOLS",
    "LOAD_SETTINGS",
    "SETTINGS",
    "UNIFORM",
    "Protocol",
    "ResolvedProtocol",
    "default_parser",
    "describe_protocol",
    "list_protocols",
    "paper_protocols",
    "paper_table",
    "resolve_protocol",
    "setting_label",
]
