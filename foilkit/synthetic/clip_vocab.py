"""CLIP's real byte-level BPE vocabulary, as an offline Hugging Face ``CLIPTokenizer``.

The tiny CLIP and X-CLIP test models need CLIP's real token ids, not a toy vocabulary: the text
towers pool the hidden state at the end-of-text token, and X-CLIP finds it as the highest id in
the sequence (``input_ids.argmax(-1)``), which is ``<|endoftext|>`` = 49407 only in CLIP's own
vocabulary. The vocabulary ships with ``clip-anytorch`` as ``clip/bpe_simple_vocab_16e6.txt.gz``
(OpenAI's file, also copied into CLIP4Clip and X-CLIP): 48,894 merges after a version line.
OpenAI's ``SimpleTokenizer`` numbers the 256 byte symbols, the same 256 with ``</w>``, one token
per merge, then ``<|startoftext|>`` and ``<|endoftext|>``: 49,408 ids. The Hub's
``openai/clip-vit-base-patch32`` ``vocab.json`` / ``merges.txt`` hold exactly these, and its
tokenizer is ``CLIPTokenizer`` with BOS 49406, EOS = PAD = UNK 49407 and ``model_max_length``
77; ``CLIPTokenizer`` itself sets HF's ftfy-free normaliser (NFC, whitespace runs to one space,
lower case) and CLIP's pre-tokenizer. Nothing here touches the network.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
from pathlib import Path

VOCAB_FILE = "bpe_simple_vocab_16e6.txt.gz"
#: How many merges OpenAI's tokenizer reads from the file (``merges[1 : 49152 - 256 - 2 + 1]``).
NUM_MERGES = 49152 - 256 - 2
VOCAB_SIZE = 2 * 256 + NUM_MERGES + 2  # 49408
START_OF_TEXT, END_OF_TEXT = "<|startoftext|>", "<|endoftext|>"
BOS_ID, EOS_ID = VOCAB_SIZE - 2, VOCAB_SIZE - 1  # 49406, 49407
#: CLIP's text context length (``clip.tokenize``'s and the towers' 77 positions).
CONTEXT_LENGTH = 77


def bpe_vocab_path() -> Path:
    """Where ``clip-anytorch`` installed the vocabulary (found without importing ``clip``,
    whose ``__init__`` needs ``pkg_resources``)."""
    spec = importlib.util.find_spec("clip")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            "CLIP's BPE vocabulary comes with the clip-anytorch package, which foilkit's demo "
            "extra installs: pip install 'foilkit[demo]' (or pip install clip-anytorch)"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / VOCAB_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the installed clip-anytorch package")
    return path


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2/CLIP's reversible map from the 256 byte values to printable characters, in the
    order that numbers the first 256 tokens: printable Latin-1 bytes first, then the others."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    printable += range(ord("®"), ord("ÿ") + 1)
    others = [b for b in range(256) if b not in printable]
    return {
        **{b: chr(b) for b in printable},
        **{b: chr(256 + n) for n, b in enumerate(others)},
    }


@functools.cache
def vocab_and_merges() -> tuple[dict[str, int], list[tuple[str, str]]]:
    """CLIP's ``vocab.json`` (token -> id, 49,408 entries) and merges, in OpenAI's order."""
    lines = gzip.decompress(bpe_vocab_path().read_bytes()).decode("utf-8").split("\n")
    merges = [tuple(line.split()) for line in lines[1 : NUM_MERGES + 1]]
    symbols = list(bytes_to_unicode().values())
    tokens = [
        *symbols,
        *(symbol + "</w>" for symbol in symbols),
        *("".join(merge) for merge in merges),
        START_OF_TEXT,
        END_OF_TEXT,
    ]
    vocab = {token: i for i, token in enumerate(tokens)}
    if len(vocab) != VOCAB_SIZE:
        raise ValueError(
            f"{bpe_vocab_path()}: expected {VOCAB_SIZE} distinct tokens, got {len(vocab)}"
        )
    return vocab, merges


def clip_tokenizer():
    """A ``CLIPTokenizer`` equal to ``openai/clip-vit-base-patch32``'s: same ids, same merges, BOS
    49406, EOS = PAD = UNK 49407, ``model_max_length`` 77, no network."""
    from tokenizers import AddedToken
    from transformers import CLIPTokenizer

    vocab, merges = vocab_and_merges()
    tokenizer = CLIPTokenizer(
        vocab=dict(vocab),
        merges=list(merges),
        bos_token=START_OF_TEXT,
        eos_token=END_OF_TEXT,
        pad_token=END_OF_TEXT,
        unk_token=END_OF_TEXT,
        model_max_length=CONTEXT_LENGTH,
    )
    specials = (START_OF_TEXT, END_OF_TEXT)
    tokenizer.add_tokens(
        [AddedToken(token, special=True, normalized=False) for token in specials],
        special_tokens=True,
    )  # already in the vocabulary: marks them unsplittable, ids unchanged
    return tokenizer
