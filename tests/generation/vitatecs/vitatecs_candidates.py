"""Candidates as the generate stage makes them, for the tests of the stages after it."""

from __future__ import annotations

from typing import Any

from foilkit.generation.vitatecs.generate import Candidate, Query


def make_candidate(
    i: int, caption: str, counterfactual: str | None, aspect: str, status: str, **fields: Any
) -> Candidate:
    """Candidate ``i`` for ``caption`` in ``aspect``: video ``video<i>.mp4`` of MSR-VTT, sample 0
    of iteration 1 by model ``m`` (``raw`` is the counterfactual, or ``NA`` when there is none);
    ``fields`` sets the rest (``label``, ``scores``...)."""
    return Candidate(
        query=Query(str(i), caption, aspect, "MSRVTT", f"video{i}.mp4"),
        counterfactual=counterfactual,
        raw=counterfactual or "NA",
        status=status,
        sample=0,
        prompt_hash="h",
        request_key="k",
        model="m",
        iteration=1,
        exemplar_version=1,
        **fields,
    )
