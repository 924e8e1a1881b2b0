"""The `Foil` every generation step returns, and its conversion to canonical dataset rows.

A foil is a false text made from a true caption. The papers keep foils only when they pass a
chain of rules and filters (NLI, grammaticality, perplexity, embedding distance...), each with
its own threshold; a foil therefore carries its *provenance* -- the rule that made it, the
parameters it ran with, the model ids it used and the score it got from every filter it passed --
so a generated dataset says how each of its foils came to be.

Steps are pure functions ``(caption, *, rng, **params) -> list[Foil]``; filters return the foils
they keep with their score recorded through :meth:`Foil.passed`. :func:`foil_row` turns a caption
and its foils into one row of the canonical schema (``id``, ``video``, ``video_path``,
``caption``, ``foils``, ``start``, ``end``, ``reversed``, ``foil_type``) plus a ``foil_provenance``
column: one JSON object per foil, in the order of ``foils``; :func:`foils_dataset` makes a
``datasets.Dataset`` of such rows with the builders' canonical features.

Every stage that makes foils writes them the same way, :func:`write_foils`: an output folder
holding ``foils.parquet`` (that dataset) and ``run.json`` (the run's
:class:`~foilkit.generation.provenance.RunRecord`), plus whatever files of its own the stage
documents (VITATECS' upstream-layout annotations, the contrast sets' multiple-choice TSV).
:func:`read_foils` reads the dataset back.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from foilkit.files import atomic_open
from foilkit.folders import FOILS, claim_folder

if TYPE_CHECKING:
    import datasets

    from foilkit.generation.provenance import RunRecord

PROVENANCE_COLUMN = "foil_provenance"
#: The one output layout of a stage that makes foils: ``<out>/foils.parquet`` + ``<out>/run.json``.
FOILS_FILE = "foils.parquet"
RECORD_FILE = "run.json"


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class Foil:
    """A false text and how it was made.

    Attributes:
        text: the foil itself.
        foil_type: what was changed, in the papers' vocabulary (``"gender"``, ``"verb"``,
            ``"counting"``, ``"spatial"``...); becomes the row's ``foil_type``.
        rule: the step that produced it (``"contrast.gender_swap"``, ``"vilma.masked_lm"``...).
        parameters: the step's parameters and thresholds (JSON-serialisable values).
        model_ids: role -> model id of every model the foil went through
            (``{"infill": "t5-large"}``).
        filter_scores: filter name -> the score that let the foil through, in the order applied.
        source: what was replaced and by what (``{"span": "woman", "replacement": "man"}``),
            so a reader can see the edit without diffing texts.
    """

    text: str
    foil_type: str
    rule: str
    parameters: Mapping[str, Any] = field(default_factory=dict)
    model_ids: Mapping[str, str] = field(default_factory=dict)
    filter_scores: Mapping[str, float] = field(default_factory=dict)
    source: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError(f"Foil.text must be a non-empty string, got {self.text!r}")
        if not self.foil_type:
            raise ValueError(f"Foil.foil_type must be set (foil {self.text!r})")
        if not self.rule:
            raise ValueError(f"Foil.rule must be set (foil {self.text!r})")
        for name in ("parameters", "model_ids", "filter_scores", "source"):
            object.__setattr__(self, name, _frozen(getattr(self, name)))

    def passed(
        self, filter_name: str, score: float, *, model_id: str | None = None, **parameters: Any
    ) -> Foil:
        """A copy that records having passed ``filter_name`` with ``score``.

        ``model_id`` (the filter's model) goes to ``model_ids[filter_name]``; ``parameters``
        (the filter's thresholds) to ``parameters`` under ``"<filter_name>.<name>"`` keys, so
        two filters with a ``threshold`` each stay distinguishable.
        """
        if filter_name in self.filter_scores:
            raise ValueError(f"foil {self.text!r} already passed filter {filter_name!r}")
        score = float(score)
        if math.isnan(score):
            raise ValueError(f"filter {filter_name!r} gave a NaN score to foil {self.text!r}")
        model_ids = dict(self.model_ids)
        if model_id is not None:
            model_ids[filter_name] = model_id
        return dataclasses.replace(
            self,
            filter_scores={**self.filter_scores, filter_name: score},
            model_ids=model_ids,
            parameters={
                **self.parameters,
                **{f"{filter_name}.{key}": value for key, value in parameters.items()},
            },
        )

    def to_record(self) -> dict[str, Any]:
        """The provenance as a plain JSON-serialisable dict (text included)."""
        return {
            "text": self.text,
            "foil_type": self.foil_type,
            "rule": self.rule,
            "parameters": dict(self.parameters),
            "model_ids": dict(self.model_ids),
            "filter_scores": dict(self.filter_scores),
            "source": dict(self.source),
        }

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> Foil:
        """Inverse of :meth:`to_record`."""
        return cls(**record)


def unique_foils(foils: Iterable[Foil], *, caption: str | None = None) -> list[Foil]:
    """Foils with duplicate texts (and the caption itself) removed, first occurrence kept."""
    seen = {caption.strip().lower()} if caption is not None else set()
    kept = []
    for foil in foils:
        key = foil.text.strip().lower()
        if key not in seen:
            seen.add(key)
            kept.append(foil)
    return kept


def foil_row(
    id: str,
    caption: str,
    foils: Sequence[Foil],
    *,
    video: str | None = None,
    video_path: str | None = None,
    start: float | None = None,
    end: float | None = None,
    reversed: bool = False,
    foil_type: str | None = None,
    **metadata: Any,
) -> dict[str, Any]:
    """One canonical-schema row for ``caption`` and its ``foils``.

    ``foil_type`` defaults to the foils' common type; foils of several types need it given
    explicitly. ``video`` is the video file (absolute, or relative to the user's video root),
    ``video_path`` its path relative to the video root. ``metadata`` adds benchmark columns
    (``aspect``, ``subtest``, ``clip``...). The provenance of each foil is stored as a JSON string
    in ``foil_provenance``, aligned with ``foils``, because the provenance dicts differ between
    rules and Arrow needs one type.
    """
    if not foils:
        raise ValueError(f"row {id!r}: no foils for caption {caption!r}")
    types = {foil.foil_type for foil in foils}
    if foil_type is None:
        if len(types) != 1:
            raise ValueError(
                f"row {id!r}: foils have several types {sorted(types)}; pass foil_type="
            )
        (foil_type,) = types
    reserved = {"caption", "foils", PROVENANCE_COLUMN} & metadata.keys()
    if reserved:
        raise ValueError(f"row {id!r}: metadata may not override {sorted(reserved)}")
    return {
        "id": id,
        "video": video,
        "video_path": video_path,
        "caption": caption,
        "foils": [foil.text for foil in foils],
        "start": start,
        "end": end,
        "reversed": reversed,
        "foil_type": foil_type,
        PROVENANCE_COLUMN: [json.dumps(foil.to_record(), sort_keys=True) for foil in foils],
        **metadata,
    }


def caption_rows(pairs: Iterable[tuple[Mapping[str, Any], Sequence[Foil]]]) -> list[dict[str, Any]]:
    """A :func:`foil_row` for each input row (``{"id", "caption", "video"?}``) paired with
    its foils; rows without foils are left out."""
    return [
        foil_row(str(record["id"]), record["caption"], foils, video_path=record.get("video"))
        for record, foils in pairs
        if foils
    ]


def row_foils(row: Mapping[str, Any]) -> list[Foil]:
    """The `Foil` objects of a row written by :func:`foil_row` (provenance parsed back)."""
    try:
        records = row[PROVENANCE_COLUMN]
    except KeyError:
        raise KeyError(f"row {row.get('id')!r} has no {PROVENANCE_COLUMN!r} column") from None
    return [Foil.from_record(json.loads(record)) for record in records]


def foils_dataset(rows: Sequence[Mapping[str, Any]], **metadata_features: Any) -> Any:
    """A ``datasets.Dataset`` of :func:`foil_row` rows with the canonical features.

    ``metadata_features`` declares the benchmark columns the rows carry (name -> feature);
    ``foil_type`` and ``foil_provenance`` are declared here.
    """
    import datasets

    from foilkit.builders.schema import TEXT, TEXTS, canonical_features

    features = canonical_features(foil_type=TEXT, **{PROVENANCE_COLUMN: TEXTS}, **metadata_features)
    if not rows:  # from_list cannot infer columns from no rows: an empty table of the schema
        return datasets.Dataset.from_dict({name: [] for name in features}, features=features)
    return datasets.Dataset.from_list([dict(row) for row in rows], features=features)


def write_foils(
    out: str | os.PathLike,
    rows: Sequence[Mapping[str, Any]],
    record: RunRecord,
    **metadata_features: Any,
) -> Path | None:
    """Write a foil-making stage's output: ``out/foils.parquet`` and ``out/run.json``.

    ``rows`` are :func:`foil_row` rows, ``metadata_features`` their benchmark columns (as for
    :func:`foils_dataset`). The record gains ``rows_written`` and ``foils`` (the dataset's file
    name, ``None`` when there were no rows: then no dataset is written, and one left by an
    earlier run in ``out`` is removed). Returns the dataset's path, or ``None``.

    ``out`` must be new, empty or a foils output (:data:`foilkit.folders.FOILS`; a stage claims
    it when it starts). The dataset is written to a temporary file and renamed over the old
    one, the record last: a full disk or a killed write leaves the previous output whole.
    """
    out = claim_folder(out, FOILS)
    path: Path | None = out / FOILS_FILE
    if rows:
        dataset = foils_dataset(rows, **metadata_features)
        with atomic_open(path, "wb") as handle:
            dataset.to_parquet(handle)
    else:
        path.unlink(missing_ok=True)
        path = None
    record.with_results(rows_written=len(rows), foils=path and path.name).write(out / RECORD_FILE)
    return path


def read_foils(out: str | os.PathLike) -> datasets.Dataset:
    """The foils dataset of an output folder written by :func:`write_foils` (or its
    ``foils.parquet`` itself), with the features it was written with."""
    import datasets

    path = Path(out)
    if path.is_dir():
        path = path / FOILS_FILE
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no foils dataset (a stage that selected no foil writes none; see "
            f"{path.parent / RECORD_FILE})"
        )
    return datasets.Dataset.from_parquet(str(path))
