"""Text-only models: GPT-2 and OPT (perplexity, ViLMA's unimodal baselines), the NLI and
CoLA classifiers, T5 and RoBERTa masked LM (foil generation)."""

from __future__ import annotations

import os
from pathlib import Path

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import (
    COLA_LABELS,
    NLI_LABELS,
    TEXT,
    _bert_tokenizer,
    _gpt2_tokenizer,
    _register,
    _roberta_tokenizer,
    _save,
    _seeded_build,
    _t5_tokenizer,
    _text_config,
    _token_ids,
)


@_register("gpt2", "GPT2LMHeadModel + byte-level BPE GPT2Tokenizer (for perplexity)")
def _build_gpt2(out: Path) -> None:
    """BOS = EOS = ``<|endoftext|>`` (id 0), no pad token, as the real GPT-2."""
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = _gpt2_tokenizer()
    sizes = {"n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 128}
    config = GPT2Config(vocab_size=len(tokenizer), **sizes, **_token_ids(tokenizer, "bos", "eos"))
    _save(out, GPT2LMHeadModel(config), tokenizer)


def _build_bert_classifier(out: Path, labels: tuple[str, ...]) -> None:
    from transformers import BertConfig, BertForSequenceClassification

    tokenizer = _bert_tokenizer()
    config = BertConfig(
        **_text_config(tokenizer),
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )
    _save(out, BertForSequenceClassification(config), tokenizer)


@_register(
    "nli",
    f"BertForSequenceClassification, labels {NLI_LABELS}; a sentence-transformers CrossEncoder",
)
def _build_nli(out: Path) -> None:
    """Sentence pairs (premise, hypothesis) -> 3 logits in the order of ``config.id2label``."""
    _build_bert_classifier(out, NLI_LABELS)


@_register(
    "cola", f"BertForSequenceClassification, labels {COLA_LABELS} (linguistic acceptability)"
)
def _build_cola(out: Path) -> None:
    """Single sentences -> 2 logits; ``config.label2id["acceptable"]`` is the grammatical class."""
    _build_bert_classifier(out, COLA_LABELS)


@_register("t5", "T5ForConditionalGeneration + Unigram T5Tokenizer with <extra_id_0..99> sentinels")
def _build_t5(out: Path) -> None:
    """Span infilling: ``"a man <extra_id_0> the door"`` -> ``generate`` -> ``<extra_id_0> ...``.

    As in real T5, the sentinels are the last 100 ids (``<extra_id_0>`` is the highest) and
    generation starts from the pad token.
    """
    from transformers import T5Config, T5ForConditionalGeneration

    tokenizer = _t5_tokenizer()
    sizes = {"d_model": 32, "d_kv": 8, "d_ff": 37, "num_layers": 2, "num_decoder_layers": 2}
    config = T5Config(
        vocab_size=len(tokenizer),
        **sizes,
        num_heads=4,
        relative_attention_num_buckets=8,
        **_token_ids(tokenizer, "pad", "eos"),
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    _save(out, T5ForConditionalGeneration(config), tokenizer)


@_register("roberta-mlm", "RobertaForMaskedLM + byte-level BPE RobertaTokenizer with <mask>")
def _build_roberta_mlm(out: Path) -> None:
    """Works with ``pipeline("fill-mask", model=path)``; positions start after ``pad_token_id``."""
    from transformers import RobertaConfig, RobertaForMaskedLM

    tokenizer = _roberta_tokenizer()
    config = RobertaConfig(
        **_text_config(tokenizer, max_position_embeddings=TEXT["max_position_embeddings"] + 2)
    )
    _save(out, RobertaForMaskedLM(config), tokenizer)


# --- OPT (ViLMA's text-only baseline) ------------------------------------------------------------


def _opt_tokenizer():
    """OPT's tokenizer shape: byte-level BPE (``GPT2Tokenizer``), ``<s>`` 0, ``<pad>`` 1,
    ``</s>`` 2, ``<unk>`` 3; BOS = EOS = ``</s>``, and it adds BOS to every text
    (``add_bos_token``), as the ``facebook/opt-*`` tokenizers do."""
    from transformers import GPT2Tokenizer

    return tiny_tokenizers.byte_level_bpe(
        GPT2Tokenizer,
        ["<s>", "<pad>", "</s>", "<unk>"],
        bos_token="</s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="</s>",
        add_bos_token=True,
    )


def build_tiny_opt(out_dir: str | os.PathLike) -> Path:
    """A tiny ``OPTForCausalLM`` + OPT-style tokenizer in ``out_dir``, with fixed seeds.

    Not in :data:`TINY_MODELS` (each registered family also needs a forward runner in
    ``tests/test_tiny_models.py``); used by the text-LM fidelity tests of ViLMA's OPT baseline.
    """
    from transformers import OPTConfig, OPTForCausalLM

    def build(out: Path) -> None:
        tokenizer = _opt_tokenizer()
        config = OPTConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            ffn_dim=37,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=128,
            word_embed_proj_dim=32,
            **_token_ids(tokenizer, "pad", "bos", "eos"),
        )
        _save(out, OPTForCausalLM(config), tokenizer)

    return _seeded_build(out_dir, build)
