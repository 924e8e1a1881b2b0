"""Gender / Verb multiple-choice items from an MSR-VTT Random MC file (paper 001, §4.1, app. D).

MSR-VTT's multiple-choice test (Yu et al., 2018) gives each clip its true caption and four
captions of other videos. The contrast MCs replace *one* of those negatives with a contrast foil
of the true caption and keep the other three ("Gender MC", "Verb_LM MC"); clips whose caption
yields no foil are dropped, as in the paper (2,477 of 2,990 clips for Gender MC).

Files use the layout of the published contrast sets, which the contrast-set builder reads:
tab-separated ``clip, ending0 .. ending{n-1}, label`` (``label`` = index of the true ending).
Written files add ``foil_type`` and ``foil_provenance`` (the contrast foil's JSON record, empty
for Random MC) as trailing columns. :func:`item_row` is an item as a row of the foils dataset,
laid out as the contrast-set builder lays out its rows (caption = the true ending, foils = the
other endings in order).
"""

from __future__ import annotations

import csv
import json
import os
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from foilkit.builders.contrast_sets.multiple_choice import (
    read_multiple_choice_file,
    with_contrast_foil,
)
from foilkit.files import atomic_open
from foilkit.generation.foil import Foil, foil_row

RANDOM_FOIL_TYPE = "random"
#: The rule of a negative that is another clip's caption, as the multiple-choice file gives it.
RANDOM_RULE = "contrast.random_negative"
#: The multiple-choice file a ``gender-mc`` / ``verb-mc`` output folder holds besides its foils.
MULTIPLE_CHOICE_FILE = "multiple_choice.tsv"


@dataclass(frozen=True)
class MultipleChoiceItem:
    """One multiple-choice question: a clip, its candidate captions and the true one's index."""

    clip: str
    options: tuple[str, ...]
    label: int
    foil_type: str = RANDOM_FOIL_TYPE
    contrast_foil: Foil | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.label < len(self.options):
            raise ValueError(
                f"clip {self.clip!r}: label {self.label} is not an index of its "
                f"{len(self.options)} options"
            )

    @property
    def caption(self) -> str:
        return self.options[self.label]


def read_multiple_choice(path: str | os.PathLike) -> list[MultipleChoiceItem]:
    """Items of a ``clip, ending0..ending{n-1}, label`` file (tab- or comma-separated;
    :func:`foilkit.builders.contrast_sets.multiple_choice.read_multiple_choice_file`), with the
    ``foil_type`` and ``foil_provenance`` a written file adds."""
    items = []
    for clip, options, label, row in read_multiple_choice_file(path):
        contrast = row.get("foil_provenance") or None
        items.append(
            MultipleChoiceItem(
                clip=clip,
                options=options,
                label=label,
                foil_type=row.get("foil_type") or RANDOM_FOIL_TYPE,
                contrast_foil=Foil.from_record(json.loads(contrast)) if contrast else None,
            )
        )
    return items


def write_multiple_choice(items: Iterable[MultipleChoiceItem], path: str | os.PathLike) -> None:
    """Write items as a TSV in the published layout plus ``foil_type`` and ``foil_provenance``."""
    items = list(items)
    width = {len(item.options) for item in items}
    if len(width) > 1:
        raise ValueError(f"{path}: items have different numbers of options {sorted(width)}")
    n = width.pop() if width else 5
    with atomic_open(path, newline="") as handle:  # a temporary file renamed over the old
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(
            ["clip", *(f"ending{i}" for i in range(n)), "label", "foil_type", "foil_provenance"]
        )
        for item in items:
            provenance = json.dumps(item.contrast_foil.to_record()) if item.contrast_foil else ""
            writer.writerow([item.clip, *item.options, item.label, item.foil_type, provenance])


def item_row(item: MultipleChoiceItem) -> dict[str, Any]:
    """The item as a foils-dataset row: ``caption`` the true ending, ``foils`` the other endings
    in order (the contrast foil with its provenance, the others as random negatives), and the
    builder's ``clip``, ``options`` and ``label`` columns."""
    contrast = item.contrast_foil
    foils = [
        contrast
        if contrast is not None and option == contrast.text
        else Foil(option, RANDOM_FOIL_TYPE, RANDOM_RULE, source={"ending": position})
        for position, option in enumerate(item.options)
        if position != item.label
    ]
    return foil_row(
        item.clip,
        item.caption,
        foils,
        video_path=f"{item.clip}.mp4",
        foil_type=item.foil_type,
        clip=item.clip,
        options=list(item.options),
        label=item.label,
    )


def build_contrast_mc(
    random_mc: Iterable[MultipleChoiceItem],
    make_foils: Callable[[str], Sequence[Foil]],
    *,
    rng: random.Random,
    foil_type: str,
) -> list[MultipleChoiceItem]:
    """Contrast MC items (Gender MC, Verb MC...) from Random MC items.

    For each item, ``make_foils(true caption)`` proposes contrast foils; one is drawn uniformly
    and replaces a negative drawn uniformly (the other negatives and the true caption keep their
    positions, so ``label`` is unchanged;
    :func:`foilkit.builders.contrast_sets.multiple_choice.with_contrast_foil`). Items with no
    foil, or whose foils all already appear among the options, are dropped.
    """
    built = []
    for item in random_mc:
        foils = list(make_foils(item.caption))
        made = with_contrast_foil(item.options, item.label, [foil.text for foil in foils], rng)
        if made is not None:
            chosen, options = made
            built.append(
                MultipleChoiceItem(item.clip, options, item.label, foil_type, foils[chosen])
            )
    return built
