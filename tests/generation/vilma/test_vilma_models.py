"""ViLMA's model-based tools on CPU with tiny models: masked-LM foils, filters, spatial swaps."""

from __future__ import annotations

from collections import Counter

import pytest

from foilkit.generation.foil import Foil, foil_row, foils_dataset
from foilkit.generation.nli import NLIFilter
from foilkit.generation.vilma.grammaticality import GrammaticalityFilter, acceptable_index
from foilkit.generation.vilma.masked_lm import (
    ROLES,
    MaskedLM,
    best_foil,
    mask_targets,
    masked_lm_candidates,
    masked_lm_foils,
)
from foilkit.generation.vilma.spatial import (
    match_caption_distribution,
    preposition_candidates,
    preposition_slots,
    rank_by_t5,
    spatial_foils,
    spatial_prepositions,
)
from foilkit.synthetic.models import tiny_model_path


@pytest.fixture(scope="module")
def cola():
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    path = tiny_model_path("cola")
    return AutoModelForSequenceClassification.from_pretrained(path), AutoTokenizer.from_pretrained(
        path
    )


@pytest.fixture(scope="module")
def lenient_nli(nli_model):
    """The tiny NLI model is random: name its favourite output 'neutral' so foils get through."""
    favourite = nli_model.config.id2label[
        int(nli_model.predict([("someone peels a melon", "someone peels a lemon")])[0].argmax())
    ]
    swap = {favourite: "neutral", "neutral": favourite}
    labels = [swap.get(label, label) for _, label in sorted(nli_model.config.id2label.items())]
    return NLIFilter(nli_model, model_id="tiny-nli", labels=labels)


@pytest.mark.parametrize(
    ("role", "caption", "targets"),
    [
        ("noun", "The athlete jumps over a bar", ["athlete", "bar"]),
        ("verb", "The athlete jumps over a bar", ["jumps"]),
        ("subject", "someone peels a melon", ["someone"]),
        ("object", "someone peels a melon", ["melon"]),
        ("object", "The athlete jumps over a bar", []),
        ("argument", "someone peels a melon", ["melon"]),  # transitive: the object
        ("argument", "The athlete jumps over a bar", ["athlete"]),  # intransitive: the subject
    ],
)
def test_mask_targets_by_role(nlp, role, caption, targets):
    assert [t.text for t in mask_targets(nlp(caption), role)] == targets
    assert set(ROLES) >= {role}


def test_ensemble_ranks_by_votes_then_probability(nlp, roberta_mlm):
    single = MaskedLM(*roberta_mlm, model_id="mlm-a")
    twin = MaskedLM(*roberta_mlm, model_id="mlm-b")
    alone = masked_lm_candidates(
        "someone peels a melon", [single], nlp=nlp, role="object", foil_type="proficiency", top_k=5
    )
    both = masked_lm_candidates(
        "someone peels a melon",
        [single, twin],
        nlp=nlp,
        role="object",
        foil_type="proficiency",
        top_k=5,
    )
    assert len(alone) == 5 and [f.text for f in both] == [f.text for f in alone]
    assert all(f.source["votes"] == 2 for f in both)
    scores = [f.source["ensemble_score"] for f in alone]
    assert scores == sorted(scores, reverse=True)
    assert all(f.text.startswith("someone peels a ") and f.source["span"] == "melon" for f in alone)
    assert both[0].model_ids["mlm0"] == "mlm-a" and both[0].model_ids["mlm1"] == "mlm-b"


def test_grammaticality_filter_threshold_and_labels(cola):
    model, tokenizer = cola
    assert acceptable_index(model) == model.config.label2id["acceptable"]
    assert acceptable_index(model, 0) == 0
    with pytest.raises(ValueError, match="acceptable_label"):
        acceptable_index(model, "grammatical")
    foils = [Foil(text, "verb", "test") for text in ("a man runs", "runs man a the", "a dog")]
    scores = GrammaticalityFilter(model, tokenizer).scores([f.text for f in foils])
    threshold = sorted(scores)[1]
    kept = GrammaticalityFilter(model, tokenizer, threshold=threshold, model_id="tiny-cola")(
        "caption", foils
    )
    assert [f.text for f in kept] == [f.text for f, s in zip(foils, scores) if s >= threshold]
    assert len(kept) == 2
    assert all(f.parameters["grammaticality.threshold"] == threshold for f in kept)
    assert GrammaticalityFilter(model, tokenizer).threshold == 0.8  # ViLMA's GRUEN threshold


def test_masked_lm_pipeline_end_to_end(nlp, roberta_mlm, t5, cola, lenient_nli):
    models = [MaskedLM(*roberta_mlm), MaskedLM(*t5, kind="t5")]
    grammar = GrammaticalityFilter(*cola, threshold=0.0)
    caption = "someone peels a melon"
    foils = masked_lm_foils(
        caption,
        models,
        nlp=nlp,
        role="argument",
        foil_type="proficiency",
        filters=[lenient_nli, grammar],
        top_k=4,
    )
    assert foils and all(list(f.filter_scores) == ["nli", "grammaticality"] for f in foils)
    best = best_foil(foils)
    assert best.filter_scores["grammaticality"] == max(
        f.filter_scores["grammaticality"] for f in foils
    )
    rows = [foil_row("vilma-0", caption, [best], video_path="melon.mp4", test="proficiency")]
    import datasets

    dataset = foils_dataset(rows, test=datasets.Value("string"))
    assert dataset[0]["foils"] == [best.text]
    assert best_foil([]) is None


CAPTIONS = [
    "rolling a can on a flat surface",
    "pouring water onto a chair",
    "pouring water onto a table",
    "taking a pen out of a cup",
    "putting a pen into a cup",
]


def test_preposition_slots_prefer_multiword():
    assert [s.preposition for s in preposition_slots("taking a pen out of a cup on a desk")] == [
        "out of",
        "on",
    ]
    assert spatial_prepositions(CAPTIONS) == Counter({"onto": 2, "on": 1, "out of": 1, "into": 1})
    candidates = preposition_candidates("putting a pen into a cup", ["into", "onto", "out of"])
    assert [c.text for c in candidates] == [
        "putting a pen onto a cup",
        "putting a pen out of a cup",
    ]


def _foil(caption_index: int, preposition: str) -> Foil:
    return Foil(
        f"caption {caption_index} {preposition}",
        "spatial",
        "test",
        source={"replacement": preposition},
    )


def test_distribution_matching_golden():
    # Captions use "on" twice and "into" once; every caption's favourite foil is "on".
    caption_counts = Counter({"on": 2, "into": 1})
    ranked = [
        [_foil(0, "on"), _foil(0, "into")],
        [_foil(1, "on"), _foil(1, "into")],
        [_foil(2, "on"), _foil(2, "into")],
        [_foil(3, "on")],
    ]
    chosen = match_caption_distribution(ranked, caption_counts)
    assert [f.text if f else None for f in chosen] == [
        "caption 0 on",
        "caption 1 on",
        "caption 2 into",
        None,
    ]
    foil_counts = Counter(f.source["replacement"] for f in chosen if f)
    assert all(foil_counts[p] <= caption_counts[p] for p in foil_counts)


def test_t5_ranking_and_spatial_pipeline(t5):
    model, tokenizer = t5
    caption = CAPTIONS[0]
    candidates = preposition_candidates(caption, spatial_prepositions(CAPTIONS))
    ranked = rank_by_t5(caption, candidates, model, tokenizer, top_k=2, model_id="tiny-t5")
    assert len(ranked) == 2
    assert ranked[0].filter_scores["t5_plausibility"] >= ranked[1].filter_scores["t5_plausibility"]
    everything = rank_by_t5(caption, candidates, model, tokenizer, top_k=len(candidates))
    assert [f.text for f in everything[:2]] == [f.text for f in ranked]

    chosen = spatial_foils(CAPTIONS, model, tokenizer, top_k=3)
    assert len(chosen) == len(CAPTIONS)
    used = Counter(f.source["replacement"] for f in chosen if f is not None)
    counts = spatial_prepositions(CAPTIONS)
    assert all(used[p] <= counts[p] for p in used)
    for caption, foil in zip(CAPTIONS, chosen):
        if foil is not None:
            assert foil.text != caption and foil.source["preposition"] in caption
