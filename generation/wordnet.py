"""NLTK's WordNet, where its corpus is installed (it is not on PyPI, so never assumed)."""

from __future__ import annotations

from typing import Any


def load_wordnet(user: str, alternative: str) -> Any:
    """``nltk.corpus.wordnet``, loaded; a ``RuntimeError`` naming ``user`` and the
    ``alternative`` to use when nltk or its ``wordnet`` corpus is missing."""
    try:
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
    except (ImportError, LookupError) as error:
        raise RuntimeError(
            f"{user} needs nltk with the 'wordnet' corpus installed "
            f"({error.__class__.__name__}: {str(error).strip().splitlines()[0]}); "
            f"use {alternative} otherwise"
        ) from error
    return wordnet
