"""Masked-LM foils chosen by dependency role (ViLMA §3.1, appendices C.1, C.3, C.5).

ViLMA parses a caption with spaCy, masks a target word picked by its role, and lets masked
language models propose replacements:

* ``noun`` / ``verb``: every noun or verb (Spatial Relations, Rare Actions proficiency);
* ``subject`` / ``object``: the main verb's subject or direct object;
* ``argument``: the object when the main verb has one, else the subject (the proficiency
  tests' "depending on the transitivity of the verb");
* ``pobj``: ViLMA's own proficiency ``noun`` rule (``tasks/proficiency/main.py``): the last
  prepositional object, else the last direct object;
* ``root``: the root verb (ViLMA's proficiency ``action`` rule).

:data:`PROFICIENCY_ROLES` names the role each ViLMA test's proficiency foils masked, measured on
the published caption/foil pairs (``tests/generation/vilma/test_masked_lm_roles.py``).

Fillers come from fill-mask models (RoBERTa, top-k, k = 32 in Situation Awareness) or a T5 span
model (for multi-word fillers); several models form an ensemble (Rare Actions' object
replacement), ranked by how many models propose a filler, then by its mean probability.
The candidates then go through the NLI and grammaticality filters; ViLMA's proficiency foil is
the candidate with the highest grammaticality score (:func:`best_foil`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from foilkit.builders.spacy_pipeline import pipeline_id
from foilkit.generation.foil import Foil
from foilkit.generation.infill import FILL_MASK_TOP_K, T5_MASK, fill_mask_fillers, t5_span_fillers

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Token

RULE = "vilma.masked_lm"
ROLES = ("noun", "verb", "subject", "object", "argument", "pobj", "root")
#: The role whose word ViLMA masked for each test's proficiency foils.
PROFICIENCY_ROLES = {
    "change_of_state": "argument",
    "spatial_relations": "pobj",
    "situation_awareness": "pobj",
    "actor_swap": "pobj",
    "rare_actions": "noun",
}
# C.1: proficiency foils use "the three most probable tokens";
# C.3 uses the top 32 (FILL_MASK_TOP_K).
PROFICIENCY_TOP_K = 3
_SUBJECTS = ("nsubj", "nsubjpass")
_OBJECTS = ("dobj", "obj")


@dataclass(frozen=True)
class MaskedLM:
    """A model that fills a mask: ``kind`` is ``"fill-mask"`` (BERT/RoBERTa) or ``"t5"``."""

    model: Any
    tokenizer: Any
    kind: str = "fill-mask"
    model_id: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("fill-mask", "t5"):
            raise ValueError(f"MaskedLM kind must be 'fill-mask' or 't5', got {self.kind!r}")

    @property
    def id(self) -> str:
        return self.model_id or str(self.model.config.name_or_path)

    @property
    def mask(self) -> str:
        return T5_MASK if self.kind == "t5" else self.tokenizer.mask_token

    def fillers(self, masked_texts: Sequence[str], top_k: int) -> list[list[tuple[str, float]]]:
        """(filler, probability) pairs per text, best first."""
        if self.kind == "t5":
            beams = max(top_k, 1)
            found = t5_span_fillers(
                self.model,
                self.tokenizer,
                masked_texts,
                num_beams=beams,
                num_candidates=beams,
                model_id=self.id,
            )
            # Beam scores are length-normalised log-probabilities:
            # exp gives a probability-like score.
            return [[(f.text, math.exp(f.score)) for f in fs] for fs in found]
        found = fill_mask_fillers(
            self.model, self.tokenizer, masked_texts, top_k=top_k, model_id=self.id
        )
        return [[(f.text, f.score) for f in fs] for fs in found]


def _main_verb(doc: Doc) -> Token | None:
    return next((t for t in doc if t.dep_ == "ROOT" and t.pos_ in ("VERB", "AUX")), None)


def mask_targets(doc: Doc, role: str) -> list[Token]:
    """The tokens of ``doc`` to mask for ``role`` (see the module docstring)."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; choose one of {ROLES}")
    if role == "noun":
        return [t for t in doc if t.pos_ == "NOUN"]
    if role == "verb":
        return [t for t in doc if t.pos_ == "VERB"]
    if role == "root":
        return [t for t in doc if t.dep_ == "ROOT"]
    if role == "pobj":
        # ViLMA's loop keeps the last match: the last pobj, else the last dobj
        pobjs = [t for t in doc if t.dep_ == "pobj"]
        dobjs = [t for t in doc if t.dep_ == "dobj"]
        return (pobjs or dobjs)[-1:]
    verb = _main_verb(doc)
    if verb is None:
        return []
    subjects = [c for c in verb.children if c.dep_ in _SUBJECTS]
    objects = [c for c in verb.children if c.dep_ in _OBJECTS]
    if role == "subject":
        return subjects
    if role == "object":
        return objects
    return objects or subjects


def ensemble_fillers(
    models: Sequence[MaskedLM],
    masked_text: Callable[[MaskedLM], str],
    *,
    top_k: int,
    exclude: Sequence[str] = (),
) -> list[tuple[str, int, float]]:
    """``(filler, votes, mean probability)`` of an ensemble, best first: each model fills its
    own ``masked_text(model)`` (its mask token in place); fillers are lower-cased, those in
    ``exclude`` dropped, and ranked by how many models propose them, then by their mean
    probability; the first ``top_k``."""
    excluded = {text.lower() for text in exclude}
    proposals: dict[str, list[float]] = defaultdict(list)
    for lm in models:
        for text, probability in lm.fillers([masked_text(lm)], top_k)[0]:
            if text.lower() not in excluded:
                proposals[text.lower()].append(probability)
    ranked = sorted(
        proposals.items(),
        key=lambda item: (-len(item[1]), -sum(item[1]) / len(item[1]), item[0]),
    )[:top_k]
    return [(text, len(ps), sum(ps) / len(ps)) for text, ps in ranked]


def masked_lm_candidates(
    caption: str,
    models: Sequence[MaskedLM],
    *,
    nlp: Language,
    role: str,
    foil_type: str,
    top_k: int = FILL_MASK_TOP_K,
) -> list[Foil]:
    """Candidate foils: each target of ``role`` replaced by the ensemble's ``top_k`` fillers."""
    if not models:
        raise ValueError("masked_lm_candidates needs at least one model")
    doc = nlp(caption)
    foils = []
    for target in mask_targets(doc, role):
        start, end = target.idx, target.idx + len(target.text)
        ranked = ensemble_fillers(
            models,
            lambda lm, start=start, end=end: caption[:start] + lm.mask + caption[end:],
            top_k=top_k,
            exclude=(target.text,),
        )
        for text, votes, mean in ranked:
            foils.append(
                Foil(
                    caption[:start] + text + caption[end:],
                    foil_type,
                    RULE,
                    parameters={"role": role, "top_k": top_k},
                    model_ids={
                        "parser": pipeline_id(nlp),
                        **{f"mlm{i}": lm.id for i, lm in enumerate(models)},
                    },
                    source={
                        "span": target.text,
                        "replacement": text,
                        "dep": target.dep_,
                        "votes": votes,
                        "ensemble_score": votes + mean,
                    },
                )
            )
    return foils


def masked_lm_foils(
    caption: str,
    models: Sequence[MaskedLM],
    *,
    nlp: Language,
    role: str,
    foil_type: str,
    filters: Sequence[Callable[[str, Sequence[Foil]], list[Foil]]] = (),
    top_k: int = FILL_MASK_TOP_K,
) -> list[Foil]:
    """Candidates that pass every filter in order (e.g. NLI, then grammaticality)."""
    foils = masked_lm_candidates(
        caption, models, nlp=nlp, role=role, foil_type=foil_type, top_k=top_k
    )
    for keep in filters:
        if not foils:
            break
        foils = keep(caption, foils)
    return foils


def best_foil(foils: Sequence[Foil], score: str = "grammaticality") -> Foil | None:
    """The foil with the highest ``score`` filter result (ViLMA C.1's choice), or ``None``."""
    scored = [f for f in foils if score in f.filter_scores]
    return max(scored, key=lambda f: f.filter_scores[score], default=None)
