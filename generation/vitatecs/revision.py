"""Stage 3: human revision. Filtered candidates out to annotators, their labels back in.

The export is a CSV (for a spreadsheet) and a JSONL with the same rows, plus a markdown sheet of
instructions (the aspect definitions of Tab. 17-18 and the label vocabulary). Each row shows the
caption, the counterfactual, the aspect it was generated for, the filter's label and that
aspect's definition, and a ``label`` column pre-filled with the filter's label (an aspect, or
``invalid`` for a pair it rejected): as in the paper, annotators only rectify it -- to another
aspect, to ``invalid`` (a negative example), to ``na`` (the caption has no such aspect), or empty
it to skip the row.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from foilkit.builders.vitatecs import ASPECTS
from foilkit.generation.cli_io import read_jsonl
from foilkit.generation.vitatecs.exemplars import INVALID, NA, LabelledPair
from foilkit.generation.vitatecs.generate import ACCEPTED, Candidate
from foilkit.generation.vitatecs.prompt import AspectSpec

REVISION_COLUMNS = tuple(
    "id caption counterfactual target_aspect filter_label filter_margin aspect_definition label "
    "note".split()
)
#: What annotators may write in ``label`` (besides an aspect), and what it means.
LABEL_ALIASES = {INVALID: INVALID, "negative": INVALID, NA: NA, "n/a": NA, "skip": "", "": ""}


def revision_rows(
    candidates: Sequence[Candidate],
    aspects: Mapping[str, AspectSpec],
    *,
    statuses: Sequence[str] = (ACCEPTED,),
) -> list[dict[str, Any]]:
    """One row per candidate whose status is in ``statuses`` (the paper checks the accepted)."""
    rows = []
    for candidate in candidates:
        if candidate.status not in statuses:
            continue
        predicted = candidate.label if candidate.label in (*ASPECTS, INVALID) else ""
        shown = predicted if predicted in ASPECTS else candidate.query.aspect
        rows.append(
            {
                "id": candidate.id,
                "caption": candidate.query.caption,
                "counterfactual": candidate.counterfactual,
                "target_aspect": candidate.query.aspect,
                "filter_label": candidate.label or "",
                "filter_margin": round(
                    float(candidate.scores.get("filter", {}).get("margin", 0)), 4
                ),
                "aspect_definition": f"{aspects[shown].name}: {aspects[shown].definition}",
                "label": predicted,
                "note": "",
            }
        )
    return rows


def instructions(aspects: Mapping[str, AspectSpec]) -> str:
    """The annotators' sheet: what to do, the label vocabulary, every aspect's definition."""
    parts = [
        "# Revising generated counterfactuals",
        "",
        (
            "Each row pairs a video caption with a counterfactual description generated for one "
            "temporal aspect. Decide whether the counterfactual differs from the caption *only* "
            "in one of the six aspects below (and is grammatical, plausible, carries about the "
            "same information, and neither entails nor is entailed by the caption)."
        ),
        "",
        (
            "The `label` column is pre-filled with the filter model's label (`filter_label`: an "
            f"aspect, or `{INVALID}` where it rejected the pair). Correct it where it is wrong; "
            "a label you leave as it is counts as yours. Write:"
        ),
        "",
        *(f"- `{aspect}`: a valid {spec.name} counterfactual" for aspect, spec in aspects.items()),
        f"- `{INVALID}` (or `negative`): violates a criterion; becomes a negative example",
        f"- `{NA}`: the caption does not describe the target aspect at all",
        (
            "- empty (or `skip`): no decision; the row is ignored (empty the label of every row "
            "you have not checked)"
        ),
        "",
    ]
    for spec in aspects.values():
        parts += [f"## {spec.annotator_text()}", ""]
    return "\n".join(parts)


def export_revision(
    candidates: Sequence[Candidate],
    aspects: Mapping[str, AspectSpec],
    path: str | os.PathLike,
    *,
    statuses: Sequence[str] = (ACCEPTED,),
) -> dict[str, Path]:
    """Write ``<path>.csv``, ``<path>.jsonl`` and ``<path>.instructions.md``; returns the paths."""
    stem = Path(path)
    stem.parent.mkdir(parents=True, exist_ok=True)
    rows = revision_rows(candidates, aspects, statuses=statuses)
    paths = {
        "csv": stem.with_name(stem.name + ".csv"),
        "jsonl": stem.with_name(stem.name + ".jsonl"),
        "instructions": stem.with_name(stem.name + ".instructions.md"),
    }
    with open(paths["csv"], "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=REVISION_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    with open(paths["jsonl"], "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    paths["instructions"].write_text(instructions(aspects) + "\n", encoding="utf-8")
    return paths


def _read_rows(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """(line number, row) of a CSV (header on line 1) or JSONL file."""
    if path.suffix.lower() == ".csv":
        with open(path, encoding="utf-8-sig", newline="") as handle:
            return list(enumerate(csv.DictReader(handle), start=2))
    return list(enumerate(read_jsonl(path), start=1))


def read_labels(path: str | os.PathLike, *, source: str = "") -> list[LabelledPair]:
    """The labelled pairs of a revised export (CSV or JSONL); rows left empty are skipped.

    Errors name the file, the row and the offending value.
    """
    path = Path(path)
    labelled = []
    for number, row in _read_rows(path):
        missing = [
            c for c in ("caption", "counterfactual", "target_aspect", "label") if c not in row
        ]
        if missing:
            raise ValueError(f"{path}:{number}: missing column(s) {missing}")
        raw = str(row["label"] or "").strip().lower()
        label = LABEL_ALIASES.get(raw, raw)
        if label == "":
            continue
        if label not in (*ASPECTS, INVALID, NA):
            raise ValueError(
                f"{path}:{number}: label {row['label']!r} is not an aspect {list(ASPECTS)}, "
                f"{INVALID!r}, {NA!r} or empty"
            )
        target = str(row["target_aspect"]).strip().lower()
        if target not in ASPECTS:
            raise ValueError(
                f"{path}:{number}: target_aspect {row['target_aspect']!r} not in {ASPECTS}"
            )
        caption, counterfactual = str(row["caption"]).strip(), str(row["counterfactual"]).strip()
        if not caption or not counterfactual:
            raise ValueError(f"{path}:{number}: empty caption or counterfactual")
        labelled.append(
            LabelledPair(
                caption=caption,
                counterfactual=counterfactual,
                label=label,
                aspect=target,
                reason=str(row.get("note") or "").strip(),
                source=source or f"{path.name}:{number}",
            )
        )
    return labelled
