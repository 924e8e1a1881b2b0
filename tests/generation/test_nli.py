"""NLI filter: label mapping from id2label, both directions, ViLMA and VITATECS policies."""

from __future__ import annotations

import shutil

import pytest

from foilkit.generation.foil import Foil
from foilkit.generation.nli import (
    CONTRADICTION,
    ENTAILMENT,
    NEUTRAL,
    POLICIES,
    NLIFilter,
    NLIScores,
    label_names,
    load_nli_model,
    nli_scores,
)
from foilkit.synthetic.models import tiny_model_path

CAPTION = "A woman is pushing her stroller"
FOILS = ["A man is pushing his stroller", "A woman is pulling her stroller", "A dog sleeps"]


def _probs(label: str) -> dict[str, float]:
    return {name: (0.8 if name == label else 0.1) for name in (ENTAILMENT, NEUTRAL, CONTRADICTION)}


@pytest.mark.parametrize(
    ("forward", "backward", "vilma", "vitatecs"),
    [
        (NEUTRAL, NEUTRAL, True, True),
        (CONTRADICTION, CONTRADICTION, True, True),
        (ENTAILMENT, NEUTRAL, False, False),
        (NEUTRAL, ENTAILMENT, True, False),  # only VITATECS checks foil -> caption
        (CONTRADICTION, ENTAILMENT, True, False),
    ],
)
def test_policies(forward, backward, vilma, vitatecs):
    scores = NLIScores(forward=_probs(forward), backward=_probs(backward))
    assert POLICIES["vilma"](scores) is vilma
    assert POLICIES["vitatecs"](scores) is vitatecs


def test_scores_follow_id2label_in_both_directions(nli_model, tmp_path):
    scores = nli_scores(nli_model, [(CAPTION, foil) for foil in FOILS])
    assert len(scores) == len(FOILS)
    for s in scores:
        for direction in (s.forward, s.backward):
            assert set(direction) == {ENTAILMENT, NEUTRAL, CONTRADICTION}
            assert sum(direction.values()) == pytest.approx(1.0, abs=1e-5)
    raw = nli_model.predict([(CAPTION, FOILS[0]), (FOILS[0], CAPTION)], apply_softmax=True)
    id2label = nli_model.config.id2label
    for i, label in id2label.items():
        assert scores[0].forward[label] == pytest.approx(float(raw[0][i]), abs=1e-6)
        assert scores[0].backward[label] == pytest.approx(float(raw[1][i]), abs=1e-6)

    # The same weights under a permuted id2label: each probability follows its label name.
    permuted_dir = tmp_path / "permuted"
    shutil.copytree(tiny_model_path("nli"), permuted_dir)
    permuted = load_nli_model(str(permuted_dir))
    permuted.config.id2label = {0: ENTAILMENT, 1: CONTRADICTION, 2: NEUTRAL}
    again = nli_scores(permuted, [(CAPTION, FOILS[0])])[0]
    for i, label in permuted.config.id2label.items():
        assert again.forward[label] == pytest.approx(float(raw[0][i]), abs=1e-6)


def test_generic_labels_need_an_explicit_order(nli_model):
    original = dict(nli_model.config.id2label)
    try:
        nli_model.config.id2label = {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
        with pytest.raises(ValueError, match="labels="):
            label_names(nli_model)
        assert label_names(nli_model, ["Entailment", "NEUTRAL", "contradiction"]) == [
            ENTAILMENT,
            NEUTRAL,
            CONTRADICTION,
        ]
    finally:
        nli_model.config.id2label = original


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_filter_keeps_what_the_policy_keeps_and_records_scores(nli_model, policy):
    foils = [Foil(text, "verb", "test") for text in FOILS]
    nli = NLIFilter(nli_model, model_id="tiny-nli", policy=policy)
    scores = nli.scores(CAPTION, foils)
    expected = [f.text for f, s in zip(foils, scores) if POLICIES[policy](s)]
    kept = nli(CAPTION, foils)
    assert [f.text for f in kept] == expected
    for foil in kept:
        assert foil.model_ids["nli"] == "tiny-nli"
        assert foil.parameters["nli.policy"] == policy
        assert 0.0 <= foil.filter_scores["nli"] <= 1.0


def test_unknown_policy():
    with pytest.raises(ValueError, match="unknown NLI policy"):
        NLIFilter(object(), policy="strict")  # type: ignore[arg-type]
