"""Gender contrast foils (paper 001, §3.1 and appendix A.1, Table 6), with their provenance.

The swap itself (which noun, which pronouns, names and coordinations) is the contrast-set
builder's own rule, :func:`foilkit.builders.contrast_sets.multiple_choice.swap_gender`, which
builds the ``gender`` config from the user's multiple-choice file; here each swap becomes a
:class:`Foil`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from foilkit.builders.contrast_sets.multiple_choice import GENDER_NOUN_MAP, swap_gender
from foilkit.builders.spacy_pipeline import pipeline_id
from foilkit.generation.foil import Foil

if TYPE_CHECKING:
    from spacy.language import Language

RULE = "contrast.gender_swap"
FOIL_TYPE = "gender"


def gender_swap(
    caption: str,
    *,
    rng: random.Random,
    noun_map: Mapping[str, Sequence[str]] = GENDER_NOUN_MAP,
    nlp: Language | None = None,
) -> list[Foil]:
    """The gender foil of ``caption`` with its provenance, or ``[]`` when it has no
    gender-sensitive noun: :func:`foilkit.builders.contrast_sets.multiple_choice.swap_gender`
    (the arguments are its own); given ``nlp``, the foil records the tagger
    (``model_ids["tagger"]``)."""
    swap = swap_gender(caption, rng=rng, noun_map=noun_map, nlp=nlp)
    if swap is None:
        return []
    return [
        Foil(
            swap.text,
            FOIL_TYPE,
            RULE,
            parameters={"noun_map": "table6" if noun_map is GENDER_NOUN_MAP else "custom"},
            model_ids={"tagger": pipeline_id(nlp)} if nlp is not None else {},
            source=swap.source,
        )
    ]
