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

from tokenizers import AddedToken, pre_tokenizers

PRINTABLE: tuple[str, ...] = tuple(sorted(set(string.printable) - set(string.whitespace)))

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
    " ".join(PRINTABLE),
)


def corpus_words(tokenizer) -> list[str]:
    """Distinct :data:`CORPUS` words as ``tokenizer``'s normalizer and pre-tokenizer make them."""
    backend = tokenizer.backend_tokenizer
    normalize = backend.normalizer.normalize_str if backend.normalizer else str
    words = (
        word
        for line in CORPUS
        for word, _ in backend.pre_tokenizer.pre_tokenize_str(normalize(line))
    )
    return list(dict.fromkeys(words))


def byte_level_bpe(
    tokenizer_class, special_tokens: list[str], *, end_of_word_suffix: str = "", **kwargs
):
    """A byte-level BPE ``tokenizer_class`` (GPT-2, RoBERTa, Qwen2; CLIP with ``"</w>"``).

    ``special_tokens`` get the first ids, in order, then the 256 byte symbols (with and without
    ``end_of_word_suffix``), so any Unicode text tokenizes without an unknown token; each corpus
    word is one token, reached by merging its symbols left to right.
    """
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    symbols = [
        *special_tokens,
        *alphabet,
        *([c + end_of_word_suffix for c in alphabet] if end_of_word_suffix else []),
    ]
    vocab = {token: i for i, token in enumerate(dict.fromkeys(symbols))}
    merges: dict[tuple[str, str], None] = {}
    for word in corpus_words(tokenizer_class(vocab=dict(vocab), merges=[], **kwargs)):
        parts = [*word[:-1], word[-1] + end_of_word_suffix]
        merged = parts[0]
        for part in parts[1:]:
            merges[merged, part] = None
            merged += part
            vocab.setdefault(merged, len(vocab))
    tokenizer = tokenizer_class(vocab=vocab, merges=list(merges), **kwargs)
    tokenizer.add_tokens(
        [AddedToken(token, special=True, normalized=False) for token in special_tokens],
        special_tokens=True,
    )  # already in the vocabulary: marks them unsplittable, ids unchanged
    return tokenizer


def wordpiece(tokenizer_class, special_tokens: list[str], **kwargs):
    """A WordPiece ``tokenizer_class`` (BERT): corpus words, ASCII characters, ``##`` pieces."""
    characters = PRINTABLE
    vocab = {
        piece: i
        for i, piece in enumerate([*special_tokens, *characters, *(f"##{c}" for c in characters)])
    }
    for word in corpus_words(tokenizer_class(vocab=dict(vocab), **kwargs)):
        vocab.setdefault(word, len(vocab))
    return tokenizer_class(vocab=vocab, **kwargs)


def unigram(tokenizer_class, special_tokens: list[str], *, sentinels: int = 0, **kwargs):
    """A SentencePiece-style Unigram ``tokenizer_class`` (T5, SigLIP), ``▁`` marking word starts.

    Corpus words score by frequency, single characters far lower, so known words stay whole;
    characters outside printable ASCII become the unknown token, as in T5. ``sentinels`` appends
    ``<extra_id_N>`` special tokens as T5 does: ``<extra_id_0>`` gets the highest id.
    """
    characters = [(c, -20.0) for c in [*PRINTABLE, "▁"]]
    bare = tokenizer_class(
        vocab=[(token, 0.0) for token in special_tokens] + characters, extra_ids=0, **kwargs
    )
    backend = bare.backend_tokenizer
    counts = Counter(
        word for line in CORPUS for word, _ in backend.pre_tokenizer.pre_tokenize_str(line)
    )
    total = sum(counts.values())
    words = [(word, math.log(count / total)) for word, count in counts.items()]
    extra = [f"<extra_id_{i}>" for i in range(sentinels)]
    vocab = (
        [(token, 0.0) for token in special_tokens]
        + words
        + characters
        + [(token, 0.0) for token in reversed(extra)]
    )
    return tokenizer_class(
        vocab=list(dict(vocab).items()), extra_ids=0, additional_special_tokens=extra, **kwargs
    )


def metaspace_bpe(tokenizer_class, special_tokens: list[str], **kwargs):
    """A SentencePiece-style BPE ``tokenizer_class`` (TIPSv2): ``▁`` marks word starts.

    ``special_tokens`` get the first ids, then ``▁`` and every printable ASCII character; each
    corpus word (as the class's normalizer and pre-tokenizer make it) is one token, reached by
    merging its characters left to right. Other characters fall back to the unknown token.
    """
    symbols = [*special_tokens, "▁", *PRINTABLE]
    vocab = {token: i for i, token in enumerate(dict.fromkeys(symbols))}
    merges: dict[tuple[str, str], None] = {}
    for word in corpus_words(tokenizer_class(vocab=dict(vocab), merges=[], **kwargs)):
        merged = word[0]
        for character in word[1:]:
            merges[merged, character] = None
            merged += character
            vocab.setdefault(merged, len(vocab))
    return tokenizer_class(vocab=vocab, merges=list(merges), **kwargs)
