"""Stage 2: the automatic filters applied to candidates, each recording its scores on them.

(a) the NLI filter (:class:`foilkit.generation.nli.NLIFilter`, policy ``"vitatecs"``: a pair goes
when either text entails the other), then (b) the 7-way filter model (criteria (b)-(d)), then,
at finalisation, the safety filter. A filter only looks at candidates still standing (status
``candidate``, or ``accepted`` for the safety filter); the others pass through unchanged, so a
candidate file always holds every answer the LLM gave and why each one went.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from foilkit.generation.nli import ENTAILMENT, POLICIES, NLIFilter, nli_scores
from foilkit.generation.vitatecs.exemplars import INVALID
from foilkit.generation.vitatecs.filter_model import AspectFilter, FilterDecision
from foilkit.generation.vitatecs.generate import (
    ACCEPTED,
    CANDIDATE,
    ENTAILED,
    OTHER_ASPECT,
    REJECTED,
    TOXIC,
    Candidate,
)
from foilkit.generation.vitatecs.toxicity import ToxicityFilter


def _update(
    candidates: Sequence[Candidate],
    status: str,
    step: Callable[[list[Candidate]], list[Candidate]],
) -> list[Candidate]:
    """``candidates`` with those of ``status`` replaced by what ``step`` makes of them."""
    indices = [i for i, c in enumerate(candidates) if c.status == status]
    updated = list(candidates)
    for index, candidate in zip(indices, step([candidates[i] for i in indices]), strict=True):
        updated[index] = candidate
    return updated


def apply_nli(candidates: Sequence[Candidate], nli: NLIFilter) -> list[Candidate]:
    """Criterion (a): candidates entailing or entailed by their caption become ``entailed``."""
    keep = POLICIES[nli.policy]

    def step(pending: list[Candidate]) -> list[Candidate]:
        pairs = [(c.query.caption, c.counterfactual or "") for c in pending]
        scores = nli_scores(nli.model, pairs, labels=nli.labels, batch_size=nli.batch_size)
        return [
            candidate.with_status(
                CANDIDATE if keep(score) else ENTAILED,
                nli={
                    **score.to_record(),
                    "entailment": max(score.forward[ENTAILMENT], score.backward[ENTAILMENT]),
                    "model": nli.model_id,
                    "policy": nli.policy,
                },
            )
            for candidate, score in zip(pending, scores, strict=True)
        ]

    return _update(candidates, CANDIDATE, step)


def _accept_predicted(candidate: Candidate, decision: FilterDecision) -> str:
    """The paper's rule: the pair is a sample of whichever aspect the filter assigns."""
    return ACCEPTED if decision.label != INVALID else REJECTED


def _accept_target(candidate: Candidate, decision: FilterDecision) -> str:
    """Stricter: the filter must assign the aspect the candidate was generated for."""
    if decision.label == INVALID:
        return REJECTED
    return ACCEPTED if decision.label == candidate.query.aspect else OTHER_ASPECT


#: How a filter decision becomes a status: ``predicted`` (paper) or ``target``.
ACCEPT_POLICIES: dict[str, Callable[[Candidate, FilterDecision], str]] = {
    "predicted": _accept_predicted,
    "target": _accept_target,
}


def apply_filter_model(
    candidates: Sequence[Candidate], model: AspectFilter, *, accept: str = "predicted"
) -> list[Candidate]:
    """Criteria (b)-(d): the 7-way filter labels each remaining candidate; accepted candidates
    carry the aspect it assigned as ``label``."""
    if accept not in ACCEPT_POLICIES:
        raise ValueError(
            f"unknown accept policy {accept!r}; choose one of {sorted(ACCEPT_POLICIES)}"
        )
    policy = ACCEPT_POLICIES[accept]

    def step(pending: list[Candidate]) -> list[Candidate]:
        if not pending:
            return []
        decisions = model.decide([(c.query.caption, c.counterfactual or "") for c in pending])
        updated = []
        for candidate, decision in zip(pending, decisions, strict=True):
            record = {**decision.to_record(), "model": model.model_id, "threshold": model.margin}
            updated.append(
                candidate.with_status(
                    policy(candidate, decision), label=decision.label, filter=record
                )
            )
        return updated

    return _update(candidates, CANDIDATE, step)


def apply_toxicity(candidates: Sequence[Candidate], toxicity: ToxicityFilter) -> list[Candidate]:
    """The safety filter on accepted counterfactuals: those above the threshold become ``toxic``."""

    def step(pending: list[Candidate]) -> list[Candidate]:
        scores = toxicity.scores([c.counterfactual or "" for c in pending])
        return [
            candidate.with_status(
                TOXIC if toxicity.is_toxic(score) else ACCEPTED, toxicity=toxicity.record(score)
            )
            for candidate, score in zip(pending, scores, strict=True)
        ]

    return _update(candidates, ACCEPTED, step)
