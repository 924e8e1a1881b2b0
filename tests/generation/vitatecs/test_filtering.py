"""The filters applied to candidates: NLI (criterion (a)), the filter model, the safety hook."""

from __future__ import annotations

import pytest
from vitatecs_candidates import make_candidate

from foilkit.generation.nli import ENTAILMENT, NLIFilter, load_nli_model
from foilkit.generation.vitatecs.filter_model import AspectFilter
from foilkit.generation.vitatecs.filtering import apply_filter_model, apply_nli, apply_toxicity
from foilkit.generation.vitatecs.generate import (
    ACCEPTED,
    CANDIDATE,
    ENTAILED,
    NA_ANSWER,
    OTHER_ASPECT,
    REJECTED,
    TOXIC,
)
from foilkit.generation.vitatecs.toxicity import ToxicityFilter, TransformersToxicityScorer

PAIRS = [
    ("a man opens a door", "a man closes a door", "direction"),
    ("a dog runs slowly", "a dog runs quickly", "intensity"),
    ("a girl jumps then sits", "a girl sits then jumps", "sequence"),
    ("a cat sleeps", None, "direction"),  # an NA answer: no filter looks at it
]


def _candidates():
    return [
        make_candidate(
            i, caption, counterfactual, aspect, CANDIDATE if counterfactual else NA_ANSWER
        )
        for i, (caption, counterfactual, aspect) in enumerate(PAIRS)
    ]


@pytest.fixture(scope="module")
def nli(tiny_nli):
    return NLIFilter(load_nli_model(tiny_nli), policy="vitatecs", model_id="tiny-nli")


def test_nli_rejects_exactly_the_entailed_in_either_direction(nli):
    filtered = apply_nli(_candidates(), nli)
    assert filtered[3].status == NA_ANSWER and "nli" not in filtered[3].scores
    for candidate in filtered[:3]:
        scores = candidate.scores["nli"]
        labels = [max(scores[d], key=scores[d].get) for d in ("forward", "backward")]
        assert candidate.status == (ENTAILED if ENTAILMENT in labels else CANDIDATE)
        assert scores["entailment"] == max(
            scores["forward"][ENTAILMENT], scores["backward"][ENTAILMENT]
        )
        assert scores["model"] == "tiny-nli" and scores["policy"] == "vitatecs"


@pytest.mark.parametrize("label, status", [("entailment", ENTAILED), ("neutral", CANDIDATE)])
def test_nli_verdicts(tiny_nli, tmp_path, biased_classifier, label, status):
    model = load_nli_model(biased_classifier(tiny_nli, tmp_path / label, label))
    filtered = apply_nli(_candidates(), NLIFilter(model, policy="vitatecs"))
    assert [c.status for c in filtered] == [status] * 3 + [NA_ANSWER]


@pytest.fixture(scope="module")
def direction_filter(tiny_nli, tmp_path_factory, biased_classifier):
    """A filter model that classifies every pair as Direction with near certainty."""
    folder = tmp_path_factory.mktemp("filter")
    AspectFilter.from_nli(tiny_nli, device="cpu").save(folder / "untrained")
    biased = biased_classifier(folder / "untrained", folder / "direction", "direction")
    return AspectFilter.load(biased, device="cpu")


def test_filter_model_predicted_policy_takes_the_filters_aspect(direction_filter):
    filtered = apply_filter_model(_candidates(), direction_filter, accept="predicted")
    assert [c.status for c in filtered] == [ACCEPTED, ACCEPTED, ACCEPTED, NA_ANSWER]
    assert [c.label for c in filtered] == ["direction", "direction", "direction", None]
    record = filtered[0].scores["filter"]
    assert record["margin"] > 0.99 and record["threshold"] == 0.3
    assert record["model"] == direction_filter.model_id


def test_filter_model_target_policy_needs_the_asked_aspect(direction_filter):
    filtered = apply_filter_model(_candidates(), direction_filter, accept="target")
    assert [c.status for c in filtered] == [ACCEPTED, OTHER_ASPECT, OTHER_ASPECT, NA_ANSWER]
    with pytest.raises(ValueError, match="unknown accept policy 'any'"):
        apply_filter_model(_candidates(), direction_filter, accept="any")


def test_filter_model_margin_rejects(direction_filter):
    direction_filter.margin = 1.5  # no probability product can lead by more than 1
    try:
        filtered = apply_filter_model(_candidates(), direction_filter)
    finally:
        direction_filter.margin = 0.3
    assert [c.status for c in filtered][:3] == [REJECTED] * 3
    assert {c.label for c in filtered[:3]} == {"invalid"}


def test_toxicity_hook_with_a_callable():
    accepted = [c.with_status(ACCEPTED, label=c.query.aspect) for c in _candidates()[:3]]

    def scorer(texts):
        return [0.95 if "quickly" in text else 0.1 for text in texts]

    filtered = apply_toxicity(accepted, ToxicityFilter(scorer, threshold=0.9))
    assert [c.status for c in filtered] == [ACCEPTED, TOXIC, ACCEPTED]
    assert filtered[1].scores["toxicity"] == {"score": 0.95, "threshold": 0.9, "scorer": "scorer"}
    with pytest.raises(ValueError, match="returned 1 scores for 3 texts"):
        apply_toxicity(accepted, ToxicityFilter(lambda texts: [0.0]))


def test_toxicity_with_a_local_text_classifier(tiny_nli):
    scorer = TransformersToxicityScorer(tiny_nli, labels=["contradiction"], device=-1)
    texts = [c.counterfactual for c in _candidates()[:3]]
    scores = scorer(texts)
    assert len(scores) == 3 and all(0.0 <= s <= 1.0 for s in scores)
    threshold = sorted(scores)[1]  # drop exactly the highest-scoring text
    accepted = [c.with_status(ACCEPTED) for c in _candidates()[:3]]
    filtered = apply_toxicity(accepted, ToxicityFilter(scorer, threshold=threshold))
    assert [c.status == TOXIC for c in filtered] == [s > threshold for s in scores]
    assert sum(c.status == TOXIC for c in filtered) == 1
    with pytest.raises(ValueError, match=r"has no label\(s\) \['toxic'\]"):
        TransformersToxicityScorer(tiny_nli, labels=["toxic"], device=-1)
