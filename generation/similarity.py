"""Sentence-embedding similarity shared by the generation filters (contrast-set verb foils,
RTime rewrites)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def pairwise_cosines(embedder: Any, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    """Cosine of each ``(text, text)`` pair; every distinct text is encoded once."""
    if not pairs:
        return np.zeros(0)
    texts = list(dict.fromkeys(text for pair in pairs for text in pair))
    index = {text: i for i, text in enumerate(texts)}
    vectors = np.asarray(
        embedder.encode(texts, normalize_embeddings=True, show_progress_bar=False),
        dtype=np.float64,
    )
    left = vectors[[index[a] for a, _ in pairs]]
    right = vectors[[index[b] for _, b in pairs]]
    return (left * right).sum(axis=1)
