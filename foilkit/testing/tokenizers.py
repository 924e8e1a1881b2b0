"""Tiny tokenizer vocabularies built offline from a built-in English corpus, for each model family.

The tiny test models need tokenizers that (a) tokenize any caption text, (b) are the family's real
tokenizer class, so ``AutoTokenizer.from_pretrained(folder)`` / ``AutoProcessor`` reload them as
they would a Hub checkpoint, and (c) are built without the network and byte-for-byte the same on
every run. The ``tokenizers`` trainers break count ties in hash-map order, which differs between
runs, so the vocabularies here are constructed instead of trained: every corpus word becomes one
token, and the characters or bytes it is made of stay in the vocabulary as the fallback for
unseen words (byte-level BPE and Unigram pieces cover any text; WordPiece uses ``[UNK]``).
Each function returns what the family's tokenizer class takes as ``vocab`` (and ``merges``).
"""
from __future__ import annotations

import math
import string
from collections import Counter

from tokenizers import pre_tokenizers

# Sentences in the vocabulary of the four benchmarks and of the video-LLM prompts, plus every
# printable ASCII character as its own word (so whole-word vocabularies cover any ASCII text).
CORPUS: tuple[str, ...] = (
    "A man is walking to the left of the red car, then he turns around.",
    "The woman opens the door before she sits down on the chair.",
    "Two dogs run around the yard three times and then lie down.",
    "A person puts the cup on the table after drinking from it.",
    "Someone takes the book off the shelf and starts reading it.",
    "The ball rolls slowly from the right to the left.",
    "A red square moves to the right; a blue square appears first, then a green one.",
    "The girl is throwing a ball up and catching it quickly.",
    "A boy pushes the box away from the camera, not towards it.",
    "He closes the window while she is cooking in the kitchen.",
    "The video is played in reverse: the water flows back into the glass.",
    "Which of the following sentences best describes the video?",
    "Respond with a single letter (A, B, C, D or E).",
    "You are given a short video clip and two captions. Select the one that is true.",
    "Describe the content of the video in one sentence.",
    "A cat jumps onto the sofa, sleeps, and wakes up 2 hours later.",
    "Five people are dancing together on a stage with bright lights.",
    "The car stops at the red light and starts again when it turns green.",
    "A chef cuts the onion into small pieces before frying it.",
    "The man is not smiling; the woman is laughing at his joke.",
    "She picks up the phone, answers it, and puts it down again.",
    "The bird flies from the tree to the roof of the house.",
    "Children are playing football in the park on a sunny day.",
    "The contradiction, the entailment and the neutral label.",
    " ".join(string.printable.split() + list(string.punctuation)),
    " ".join(string.ascii_letters + string.digits),
)


def _words(pre_tokenizer) -> list[str]:
    """Distinct corpus words as ``pre_tokenizer`` splits them, in first-seen order."""
    words = (word for line in CORPUS for word, _ in pre_tokenizer.pre_tokenize_str(line))
    return list(dict.fromkeys(words))


def byte_level_bpe(special_tokens: list[str], *,
                   end_of_word_suffix: str | None = None) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Vocabulary and merges of a byte-level BPE (GPT-2, RoBERTa, Qwen2; CLIP with ``"</w>"``).

    ``special_tokens`` get the first ids, in order, then the 256 byte symbols (with and without
    ``end_of_word_suffix``), so any Unicode text tokenizes without an unknown token; each corpus
    word is one token, reached by merging its symbols left to right.
    """
    suffix = end_of_word_suffix or ""
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {token: i for i, token in enumerate(dict.fromkeys(
        [*special_tokens, *sorted(alphabet), *(sorted(c + suffix for c in alphabet) if suffix else [])]))}
    merges: dict[tuple[str, str], None] = {}
    for word in _words(pre_tokenizers.ByteLevel(add_prefix_space=False)):
        symbols = [*word[:-1], word[-1] + suffix]
        merged = symbols[0]
        for symbol in symbols[1:]:
            merges[merged, symbol] = None
            merged += symbol
            vocab.setdefault(merged, len(vocab))
    return vocab, list(merges)


def wordpiece(special_tokens: list[str]) -> dict[str, int]:
    """Vocabulary of a lower-cased WordPiece (BERT): corpus words, ASCII characters and ``##`` suffixes."""
    characters = sorted(set(string.printable) - set(string.whitespace))
    words = [word.lower() for word in _words(pre_tokenizers.BertPreTokenizer())]
    pieces = [*special_tokens, *characters, *(f"##{c}" for c in characters), *words]
    return {piece: i for i, piece in enumerate(dict.fromkeys(pieces))}


def unigram(special_tokens: list[str], sentinels: int = 0) -> list[tuple[str, float]]:
    """Pieces and log-probabilities of a SentencePiece-style Unigram (T5, SigLIP), ``▁`` marking word starts.

    Corpus words score by frequency, single characters far lower, so known words stay whole.
    ``sentinels`` appends ``<extra_id_N>`` pieces as T5 does: ``<extra_id_0>`` gets the highest id.
    """
    words = [word for line in CORPUS for word, _ in pre_tokenizers.Metaspace().pre_tokenize_str(line)]
    counts = Counter(words)
    total = sum(counts.values())
    characters = sorted(set(string.printable) - set(string.whitespace)) + ["▁"]
    pieces = [(token, 0.0) for token in special_tokens]
    pieces += [(word, math.log(count / total)) for word, count in counts.items()]
    pieces += [(c, -20.0) for c in characters if c not in counts]
    pieces += [(f"<extra_id_{i}>", 0.0) for i in reversed(range(sentinels))]
    return pieces
