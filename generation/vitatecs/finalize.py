"""Finalisation (§3.3): generate and filter at scale without humans, merge for diversity, and
write the result as a VITATECS dataset.

:func:`finalize_candidates` runs generation -> NLI filter -> filter model -> safety filter ->
diversity selection on many queries; :func:`write_dataset` writes what was selected as the one
foils output (:func:`foilkit.generation.foil.write_foils`) plus the VITATECS layout:

* ``foils.parquet``: the builder's columns (ids ``<aspect>-<line>`` as the builder gives them)
  plus provenance per row -- ``generator_model``, ``prompt_hash``, ``iteration`` and, in
  ``foil_provenance``, the full record of how the counterfactual was made and filtered
  (model ids, request key, exemplar version, NLI/filter/toxicity scores);
* ``run.json``: the run's :class:`~foilkit.generation.provenance.RunRecord`;
* ``annotations/<Aspect>.jsonl`` (stage-specific) in the layout of the published VITATECS files
  (``src_dataset``, ``video_name``, ``caption``, ``counterfactual``, ``aspect``), so the VITATECS
  builder reads it (``foilkit build vitatecs --annotations <out>/annotations``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from foilkit.builders.vitatecs import ASPECTS
from foilkit.files import atomic_open
from foilkit.folders import FOILS, claim_folder
from foilkit.generation.foil import Foil, foil_row, write_foils
from foilkit.generation.llm import ChatClient
from foilkit.generation.nli import NLIFilter
from foilkit.generation.provenance import RunRecord
from foilkit.generation.vitatecs.diversity import change_signatures, select_diverse
from foilkit.generation.vitatecs.exemplars import ExemplarSets
from foilkit.generation.vitatecs.filter_model import AspectFilter
from foilkit.generation.vitatecs.filtering import apply_filter_model, apply_nli, apply_toxicity
from foilkit.generation.vitatecs.generate import (
    ACCEPTED,
    PAPER_SETTINGS,
    REDUNDANT,
    SELECTED,
    Candidate,
    GenerationSettings,
    Query,
    generate_candidates,
)
from foilkit.generation.vitatecs.prompt import AspectSpec, CounterfactualPrompt
from foilkit.generation.vitatecs.toxicity import ToxicityFilter

if TYPE_CHECKING:
    from spacy.language import Language

RULE = "vitatecs.in_context_counterfactual"


def select_final(
    candidates: Sequence[Candidate],
    *,
    nlp: Language | None = None,
    per_caption: int = 1,
    max_per_signature: int | None = None,
) -> list[Candidate]:
    """Accepted candidates become ``selected`` or ``redundant``: per caption and aspect, those
    with the rarest change of verb across the aspect are kept (:mod:`.diversity`)."""
    accepted = [c for c in candidates if c.status == ACCEPTED]
    signatures = change_signatures(
        [(c.query.caption, c.counterfactual or "") for c in accepted], nlp
    )
    signature_of = {id(c): (c.label, s) for c, s in zip(accepted, signatures, strict=True)}
    kept = select_diverse(
        accepted,
        signature=lambda c: signature_of[id(c)],
        group=lambda c: (c.query.id, c.label),
        score=lambda c: float(c.scores.get("filter", {}).get("margin", 0.0)),
        per_group=per_caption,
        max_per_signature=max_per_signature,
    )
    decided = {
        id(c): c.with_status(
            SELECTED if keep else REDUNDANT, diversity={"signature": signature_of[id(c)][1]}
        )
        for c, keep in zip(accepted, kept, strict=True)
    }
    return [decided.get(id(c), c) for c in candidates]


def finalize_candidates(
    queries: Sequence[Query],
    *,
    client: ChatClient,
    exemplars: ExemplarSets,
    prompt: CounterfactualPrompt,
    aspects: Mapping[str, AspectSpec],
    nli: NLIFilter,
    filter_model: AspectFilter,
    toxicity: ToxicityFilter | None = None,
    nlp: Language | None = None,
    settings: GenerationSettings = PAPER_SETTINGS,
    accept: str = "predicted",
    per_caption: int = 1,
    max_per_signature: int | None = None,
    seed: int = 0,
    iteration: int = 0,
    progress: bool = True,
) -> list[Candidate]:
    """Every candidate of every query with its final status (``selected`` ones make the data)."""
    candidates = generate_candidates(
        queries,
        client=client,
        exemplars=exemplars,
        prompt=prompt,
        aspects=aspects,
        settings=settings,
        seed=seed,
        iteration=iteration,
        progress=progress,
    )
    candidates = apply_nli(candidates, nli)
    candidates = apply_filter_model(candidates, filter_model, accept=accept)
    if toxicity is not None:
        candidates = apply_toxicity(candidates, toxicity)
    return select_final(
        candidates, nlp=nlp, per_caption=per_caption, max_per_signature=max_per_signature
    )


def _foil(candidate: Candidate) -> Foil:
    scores = candidate.scores
    filter_scores = {
        "nli": scores["nli"]["entailment"],
        "filter": scores["filter"]["margin"],
    }
    model_ids = {
        "generator": candidate.model,
        "nli": scores["nli"]["model"],
        "filter": scores["filter"]["model"],
    }
    if "toxicity" in scores:
        filter_scores["toxicity"] = scores["toxicity"]["score"]
        model_ids["toxicity"] = scores["toxicity"]["scorer"]
    return Foil(
        text=candidate.counterfactual or "",
        foil_type=candidate.label or candidate.query.aspect,
        rule=RULE,
        parameters={
            "prompt_hash": candidate.prompt_hash,
            "request_key": candidate.request_key,
            "request_seed": candidate.request_seed,
            "iteration": candidate.iteration,
            "exemplar_version": candidate.exemplar_version,
            "target_aspect": candidate.query.aspect,
            "sample": candidate.sample,
            "nli.policy": scores["nli"]["policy"],
            "filter.threshold": scores["filter"]["threshold"],
            "filter.product": scores["filter"]["product"],
            **(
                {"toxicity.threshold": scores["toxicity"]["threshold"]}
                if "toxicity" in scores
                else {}
            ),
            **(
                {"diversity.signature": scores["diversity"]["signature"]}
                if "diversity" in scores
                else {}
            ),
        },
        model_ids=model_ids,
        filter_scores=filter_scores,
        source={"caption_id": candidate.query.id},
    )


def dataset_rows(candidates: Sequence[Candidate]) -> dict[str, list[dict[str, Any]]]:
    """Per aspect, the rows of the selected candidates: ``upstream`` (the published file
    layout) and ``rows`` (the builder's columns plus provenance), aligned."""
    by_aspect: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for candidate in candidates:
        if candidate.status != SELECTED:
            continue
        aspect = candidate.label or candidate.query.aspect
        entry = by_aspect.setdefault(aspect, {"upstream": [], "rows": []})
        query = candidate.query
        entry["upstream"].append(
            {
                "src_dataset": query.src_dataset,
                "video_name": query.video_name,
                "caption": query.caption,
                "counterfactual": candidate.counterfactual,
                "aspect": aspect.capitalize(),
            }
        )
        entry["rows"].append(
            foil_row(
                f"{aspect}-{len(entry['rows']) + 1}",
                query.caption,
                [_foil(candidate)],
                video_path=f"{query.src_dataset}/{query.video_name}",
                aspect=aspect,
                source_dataset=query.src_dataset,
                video_name=query.video_name,
                generator_model=candidate.model,
                prompt_hash=candidate.prompt_hash,
                iteration=candidate.iteration,
            )
        )
    return {aspect: by_aspect[aspect] for aspect in ASPECTS if aspect in by_aspect}


def write_dataset(
    candidates: Sequence[Candidate], out: str | os.PathLike, *, record: RunRecord | None = None
) -> dict[str, Any]:
    """Write the foils output (``foils.parquet``, ``run.json``: ``record`` with what was written)
    and ``annotations/<Aspect>.jsonl`` under ``out``; returns the annotation files, the dataset's
    path (``None`` when nothing was selected) and the row count per aspect.

    ``out`` is claimed before anything is written (new, empty or a foils output:
    :data:`foilkit.folders.FOILS`); each file is written to a temporary file and renamed, the
    record last."""
    from foilkit.builders.schema import COUNT, TEXT

    out = claim_folder(out, FOILS)
    (out / "annotations").mkdir(parents=True, exist_ok=True)
    per_aspect = dataset_rows(candidates)
    files = {}
    for aspect, entry in per_aspect.items():
        path = out / "annotations" / f"{aspect.capitalize()}.jsonl"
        with atomic_open(path) as handle:
            handle.writelines(
                json.dumps(item, ensure_ascii=False) + "\n" for item in entry["upstream"]
            )
        files[aspect] = str(path)
    rows = {aspect: len(entry["rows"]) for aspect, entry in per_aspect.items()}
    record = (record or RunRecord("vitatecs", "finalize")).with_results(
        annotations=files, rows=rows
    )
    dataset_path = write_foils(
        out,
        [row for entry in per_aspect.values() for row in entry["rows"]],
        record,
        aspect=TEXT,
        source_dataset=TEXT,
        video_name=TEXT,
        generator_model=TEXT,
        prompt_hash=TEXT,
        iteration=COUNT,
    )
    return {
        "annotations": files,
        "dataset": None if dataset_path is None else str(dataset_path),
        "rows": rows,
    }
