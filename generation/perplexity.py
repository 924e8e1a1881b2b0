"""Sentence perplexity under a causal LM, for the contrast-set fluency filter and the
text-only bias baseline.

Both reuse the scorer's text-only adapter (:class:`foilkit.scorers.adapters.text_lm.TextLMAdapter`),
so a foil is judged by exactly the perplexity the unimodal baseline later scores it with.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from foilkit.scorers.adapters.text_lm import TextLMAdapter

# Paper 001 appendix A.3 uses GPT2-XL; ViLMA's unimodal baselines use GPT-2 and OPT.
DEFAULT_PERPLEXITY_MODEL = "gpt2-xl"


def load_text_lm(model_id: str = DEFAULT_PERPLEXITY_MODEL, **kwargs) -> TextLMAdapter:
    """The causal LM adapter for ``model_id`` (Hub id or local folder); ``kwargs`` go to the
    adapter (``device``, ``dtype``, ``revision``)."""
    from foilkit.scorers.adapters.text_lm import TextLMAdapter

    return TextLMAdapter(model_id, **kwargs)


def perplexities(lm: TextLMAdapter, texts: Sequence[str]) -> list[float]:
    """Perplexity of each text (exp of the mean token negative log-likelihood)."""
    from foilkit.scorers.requests import TextsRequest

    if not texts:
        return []
    return list(lm.score([TextsRequest(tuple(texts))])[0].scores)
