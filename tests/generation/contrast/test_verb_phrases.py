"""Verb-phrase contrast foils (paper 001, appendix A.3): patterns, each filter, end to end."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from foilkit.generation.contrast.lexicon import (
    BuiltinVerbLexicon,
    WordNetVerbLexicon,
    is_antonym,
)
from foilkit.generation.contrast.verb_phrases import (
    PAPER_COSINE_MAX,
    VerbFoilModels,
    VerbFoilSettings,
    count_verb_lemmas,
    inconsistent_foils,
    perplexity_rule,
    verb_lemmas,
    verb_phrase_foils,
    verb_phrases,
)
from foilkit.generation.foil import PROVENANCE_COLUMN, Foil, foil_row


@pytest.fixture(scope="module")
def models(nlp, t5, text_lm, sentence_embedder):
    return VerbFoilModels(nlp, t5[0], t5[1], text_lm, sentence_embedder)


def test_defaults():
    """The paper's values, except the cosine thresholds: recalibrated for MiniLM with the
    WordNet synonym check on (their targets: test_verb_filter_on_the_published_contrast_sets)."""
    config = VerbFoilSettings()
    assert (config.num_beams, config.num_candidates, config.min_verb_frequency) == (50, 50, 30)
    assert (config.ppl_diff_max, config.ppl_diff_relaxed_max, config.ppl_m_max) == (0.6, 1.4, 750)
    assert PAPER_COSINE_MAX == (0.4, 0.8)
    assert config.synonym_check and config.synonym_senses == 2


@pytest.mark.parametrize(
    ("caption", "phrases"),
    [
        ("a man is cutting a tomato on the table", [("cutting", "cut")]),
        ("The girl falls down", [("falls down", "fall down")]),
        ("a boy picks up a ball and throws it", [("picks up", "pick up"), ("throws", "throw")]),
        ("two dogs on a beach", []),
    ],
)
def test_verb_phrase_patterns(nlp, caption, phrases):
    found = verb_phrases(nlp(caption))
    assert [(p.text, p.lemma) for p in found] == phrases
    assert all(caption[p.start : p.end] == p.text for p in found)


@pytest.mark.parametrize(
    ("ppl_o", "ppl_m", "kept"),
    [
        (100.0, 159.0, True),  # ppl_diff 0.59 < 0.6
        (100.0, 161.0, True),  # 0.61: relaxed rule, ppl_m < 750
        (400.0, 800.0, False),  # 1.0 but ppl_m >= 750
        (100.0, 241.0, False),  # 1.41 >= 1.4
        (100.0, 50.0, True),  # more fluent than the caption
    ],
)
def test_perplexity_rule(ppl_o, ppl_m, kept):
    assert perplexity_rule(ppl_o, ppl_m, VerbFoilSettings())[0] is kept
    assert perplexity_rule(ppl_o, ppl_m, VerbFoilSettings())[1] == pytest.approx(
        (ppl_m - ppl_o) / ppl_o
    )


def test_lexicons():
    lexicon = BuiltinVerbLexicon()
    assert is_antonym(lexicon, "push", "pull") and is_antonym(lexicon, "pull", "push")
    assert is_antonym(lexicon, "turn off", "turn on")
    assert not is_antonym(lexicon, "push", "shove")
    custom = BuiltinVerbLexicon([("juggle", "drop")], name="mine")
    assert custom.antonyms("drop") == {"juggle"} and custom.name == "mine"
    try:
        WordNetVerbLexicon()
    except RuntimeError as error:
        assert "wordnet" in str(error)
    else:  # nltk and its corpus are installed: check a real antonym
        assert "fall" in WordNetVerbLexicon().antonyms("rise")


@pytest.mark.parametrize(
    ("verb", "kept_by"),
    [("pulling", "antonym"), ("eating", "word_cosine"), ("shoving", None)],
)
def test_semantic_inconsistency_with_a_real_sentence_embedder(models, verb, kept_by):
    caption = "a man is pushing a cart"
    foil = Foil(f"a man is {verb} a cart", "verb", "test")
    lemma = {"pulling": "pull", "eating": "eat", "shoving": "shove"}[verb]
    config = VerbFoilSettings()
    kept = inconsistent_foils(caption, [(foil, "push", lemma)], models)
    if kept_by is None:
        assert kept == []
    else:
        assert kept_by in kept[0].filter_scores
    if kept_by == "word_cosine":
        assert kept[0].filter_scores["synonym"] == 0
        assert kept[0].filter_scores["word_cosine"] < config.word_cosine_max
        assert kept[0].filter_scores["sentence_cosine"] < config.sentence_cosine_max


def test_count_verb_lemmas(nlp):
    counts = count_verb_lemmas(nlp, ["a man runs", "two men are running fast", "a dog sleeps"])
    assert counts["run"] == 2 and counts["sleep"] == 1


def test_end_to_end_with_tiny_models(models):
    caption = "a woman is pushing her stroller"
    config = VerbFoilSettings(num_beams=8, num_candidates=8)
    foils = verb_phrase_foils(caption, models, config=config)
    assert foils  # the tiny T5's fillers pass the default thresholds for this caption
    for foil in foils:  # every foil kept satisfies every threshold it records
        assert foil.filter_scores["verb"] >= 1
        ppl = foil.filter_scores["perplexity"]
        assert ppl < 0.6 or (ppl < 1.4 and foil.parameters["perplexity.ppl_m"] < 750)
        assert "antonym" in foil.filter_scores or (
            foil.filter_scores["synonym"] == 0
            and foil.filter_scores["word_cosine"] < config.word_cosine_max
            and foil.filter_scores["sentence_cosine"] < config.sentence_cosine_max
        )
        assert foil.parameters["synonyms"] == models.synonyms.name
        assert foil.text.startswith("a woman is ") and foil.text.endswith(" her stroller")

    relaxed = VerbFoilSettings(
        num_beams=8,
        num_candidates=8,
        require_verb=False,
        ppl_diff_max=float("inf"),
        synonym_check=False,
        word_cosine_max=2.0,
        sentence_cosine_max=2.0,
    )
    loose = verb_phrase_foils(caption, models, config=relaxed)
    assert loose and len({f.text for f in loose}) == len(loose)
    assert {f.source["span"] for f in loose} == {"pushing"}
    row = foil_row("msrvtt-0", caption, loose, video="video0.mp4")
    assert row["foils"] == [f.text for f in loose] and row["foil_type"] == "verb"
    provenance = json.loads(row[PROVENANCE_COLUMN][0])
    assert provenance["model_ids"]["infill"] == models.model_ids["infill"]
    assert provenance["parameters"]["num_beams"] == 8

    # Verbs never seen in training captions fail the frequency filter.
    assert verb_phrase_foils(caption, models, config=config, verb_counts=Counter()) == []


@pytest.mark.parametrize(
    ("caption", "lemmas"),
    [
        ("a man is riding a horse", ["ride"]),  # spaCy alone: "rid"
        ("a man rides a horse", ["ride"]),
        ("a girl is hoping to win", ["hope", "win"]),
        ("a boy is hopping", ["hop"]),
        ("a man rode a bike and wrote a letter", ["ride", "write"]),
        ("a man is visiting friends", ["visit"]),
        ("he fixes a car", ["fix"]),
        ("a man ran to the car and sat down", ["run", "sit"]),
        ("a dog is lying on the floor", ["lie"]),
        ("a plant is dying", ["die"]),
        ("a woman is tying her shoes", ["tie"]),
        ("a man caught a fish and threw it back", ["catch", "throw"]),
        ("the kids went home", ["go"]),
        ("a man dove into the water", ["dive"]),
    ],
)
def test_verb_lemmas_of_irregular_and_e_final_forms(nlp, caption, lemmas):
    assert verb_lemmas(nlp(caption)) == lemmas


def test_inflect_and_the_contrast_foil_of_a_published_item():
    from foilkit.generation.contrast.verb_calibration import contrast_foil, inflect

    assert [inflect("ride", t) for t in ("VBG", "VBZ", "VBD", "VB")] == [
        "riding",
        "rides",
        "rided",
        "ride",
    ]
    assert inflect("hop", "VBG") == "hopping" and inflect("make fun", "VBZ") == "makes fun"
    options = ["a group is dancing", "a child is laying around on a mat", "a game show host"]
    found = contrast_foil("a child is running around on a mat", options)
    assert found == ("a child is laying around on a mat", 3, 4, 4)


# The first items of each published contrast set (the issue measured 400 T5 foils).
PUBLISHED_ITEMS = 400


@pytest.mark.integration
@pytest.mark.slow
def test_verb_filter_on_the_published_contrast_sets(shared_data, nlp, sentence_embedder):
    """Issue 19's targets for the semantic filter, at the configured defaults (the WordNet
    synonym check on, the cosine thresholds calibrated for all-MiniLM-L6-v2)."""
    from foilkit.generation.contrast.verb_calibration import filter_rates, load_pairs

    config = VerbFoilSettings()
    pairs = load_pairs(
        shared_data / "contrast_sets",
        nlp,
        sentence_embedder,
        synonym_senses=config.synonym_senses,
        limit=PUBLISHED_ITEMS,
    )
    thresholds = (config.word_cosine_max, config.sentence_cosine_max)
    rates = filter_rates(pairs, *thresholds, synonym_check=config.synonym_check)
    alone = filter_rates(pairs, *thresholds, synonym_check=False)
    paper = filter_rates(pairs, *PAPER_COSINE_MAX, synonym_check=False)
    print(f"verb filter at {thresholds} + synonym check: {rates}")
    print(f"the same thresholds without the check: {alone}; the paper's rule: {paper}")
    assert rates["keep_lm"] >= 0.90
    assert rates["keep_human"] >= 0.85
    assert rates["reject_synonyms"] >= 0.90
    # The check is what rejects WordNet's synonyms: the paper's rule with MiniLM falls short of
    # both sides of the target, and the recalibrated cosines alone reject too few synonyms.
    assert paper["keep_lm"] < 0.90 and paper["reject_synonyms"] < 0.90
    assert alone["reject_synonyms"] < 0.90
