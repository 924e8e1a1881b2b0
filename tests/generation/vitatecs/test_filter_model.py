"""The 7-way filter model: decision rule, metrics, fine-tuning from the NLI checkpoint."""

from __future__ import annotations

import random

import numpy as np
import pytest

from foilkit.generation.vitatecs.exemplars import FILTER_CLASSES, ExemplarSets, PairExemplar
from foilkit.generation.vitatecs.filter_model import (
    AspectFilter,
    FilterTraining,
    decide,
    evaluate_filter,
    macro_scores,
)
from foilkit.generation.vitatecs.synonyms import (
    BuiltinSynonyms,
    replace_synonym,
    synonym_source,
)


def _product(scores):
    return {name: scores.get(name, 0.0) for name in FILTER_CLASSES}


@pytest.mark.parametrize(
    "scores, margin, expected",
    [
        ({"direction": 0.8, "type": 0.1}, 0.3, ("direction", "direction")),
        ({"direction": 0.5, "type": 0.3}, 0.3, ("invalid", "direction")),  # lead 0.2 < 0.3
        ({"direction": 0.6, "type": 0.3}, 0.3, ("direction", "direction")),  # lead exactly 0.3
        ({"invalid": 0.9, "type": 0.05}, 0.3, ("invalid", "invalid")),
        ({"direction": 0.5, "type": 0.3}, 0.1, ("direction", "direction")),
    ],
)
def test_margin_rule(scores, margin, expected):
    label, best, lead = decide(_product(scores), margin)
    assert (label, best) == expected
    ranked = sorted(scores.values(), reverse=True) + [0.0]
    assert lead == pytest.approx(ranked[0] - ranked[1])


def test_macro_scores():
    truth = ["direction", "direction", "invalid", "type"]
    predicted = ["direction", "invalid", "invalid", "direction"]
    metrics = macro_scores(truth, predicted)
    # direction P 1/2 R 1/2; invalid P 1/2 R 1; type P 0 R 0
    assert metrics.precision == pytest.approx((0.5 + 0.5 + 0.0) / 3)
    assert metrics.recall == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    assert metrics.f1 == pytest.approx((0.5 + 2 / 3 + 0.0) / 3)
    assert metrics.per_class["type"]["support"] == 1 and metrics.n == 4
    with pytest.raises(ValueError, match="3 true labels but 2 predictions"):
        macro_scores(truth[:3], predicted[:2])


def test_filter_starts_from_the_nli_checkpoint_with_seven_classes(tiny_nli):
    from transformers import AutoModelForSequenceClassification

    model = AspectFilter.from_nli(tiny_nli, device="cpu")
    nli = AutoModelForSequenceClassification.from_pretrained(tiny_nli)
    assert [model.model.config.id2label[i] for i in range(7)] == list(FILTER_CLASSES)
    encoder = dict(model.model.bert.named_parameters())
    for name, weight in nli.bert.named_parameters():
        assert np.allclose(weight.detach().numpy(), encoder[name].detach().numpy()), name


def test_both_orders_are_multiplied(tiny_nli):
    model = AspectFilter.from_nli(tiny_nli, device="cpu", margin=0.3)
    pairs = [("a man opens a door", "a man closes a door"), ("a dog sits", "a dog lies down")]
    forward = model.probabilities(pairs)
    backward = model.probabilities([(b, a) for a, b in pairs])
    for decision, f, b in zip(model.decide(pairs), forward, backward, strict=True):
        product = [decision.product[name] for name in FILTER_CLASSES]
        assert np.allclose(product, f * b)
        assert (decision.label, decision.best, decision.margin) == decide(decision.product, 0.3)


def test_fine_tuning_learns_saves_and_reloads(tiny_nli, tmp_path):
    pairs = ExemplarSets.load().pairs()[::3]
    model = AspectFilter.from_nli(tiny_nli, device="cpu")
    training = FilterTraining(learning_rate=3e-3, batch_size=16, epochs=2, augment_copies=1)
    facts = model.fine_tune(pairs, training, synonyms=BuiltinSynonyms(), seed=0)
    assert (
        facts["examples"] == len(pairs) + facts["augmented"]
        and facts["augmented"] > len(pairs) // 3
    )
    losses = facts["epoch_losses"]
    assert len(losses) == 2 and losses[-1] < losses[0]
    path = model.save(tmp_path / "filter")
    reloaded = AspectFilter.load(path, device="cpu")
    sample = [(p.caption, p.counterfactual) for p in pairs[:5]]
    assert np.allclose(reloaded.probabilities(sample), model.probabilities(sample), atol=1e-6)
    metrics = evaluate_filter(reloaded, pairs)
    predicted = [d.label for d in reloaded.decide([(p.caption, p.counterfactual) for p in pairs])]
    assert metrics == macro_scores([p.label for p in pairs], predicted)


def test_fine_tuning_is_reproducible(tiny_nli):
    pairs = ExemplarSets.load().pairs()[:20]
    training = FilterTraining(epochs=1, learning_rate=1e-3)
    runs = []
    for _ in range(2):
        model = AspectFilter.from_nli(tiny_nli, device="cpu")
        model.fine_tune(pairs, training, synonyms=BuiltinSynonyms(), seed=7)
        runs.append(model.probabilities([("a b", "b a")]))
    assert np.allclose(runs[0], runs[1])


def test_a_model_with_other_classes_is_refused(tiny_nli):
    with pytest.raises(ValueError, match="has classes .*expected"):
        AspectFilter.load(tiny_nli)


def test_synonym_replacement_keeps_the_pairs_difference():
    source = BuiltinSynonyms()
    first, second = replace_synonym(
        "A man opens the car door", "A man closes the car door", rng=random.Random(0), source=source
    )
    changed = {w for w in first.split() if w not in ["A", "man", "opens", "the", "car", "door"]}
    assert changed and all(w in second.split() for w in changed)  # same word in both
    assert first.replace("opens", "closes") == second
    assert replace_synonym("xyz qrs", "qrs xyz", rng=random.Random(0), source=source) is None
    custom = BuiltinSynonyms([("door", "gate")], name="doors")
    assert replace_synonym("a door", "the door", rng=random.Random(0), source=custom) == (
        "a gate",
        "the gate",
    )


def test_wordnet_needs_its_corpus_and_auto_falls_back():
    try:
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
        pytest.skip("WordNet is installed here")
    except (ImportError, LookupError):
        pass
    with pytest.raises(RuntimeError, match="needs nltk with the 'wordnet' corpus"):
        synonym_source("wordnet")
    assert synonym_source("auto").name == "builtin"
    with pytest.raises(ValueError, match="unknown synonym source 'thesaurus'"):
        synonym_source("thesaurus")


def test_trained_filter_on_separable_pairs_gets_high_f1(tiny_nli):
    """A sanity check that the training loop really trains: two easy classes."""
    pairs = [
        PairExemplar(f"item {i} goes up", f"item {i} goes down", "direction") for i in range(24)
    ]
    pairs += [
        PairExemplar(f"item {i} goes up", f"item {i} is not up", "invalid") for i in range(24)
    ]
    model = AspectFilter.from_nli(tiny_nli, device="cpu", margin=0.0)
    training = FilterTraining(learning_rate=5e-3, epochs=6, augment_copies=0, both_orders=True)
    model.fine_tune(pairs, training, synonyms=None, seed=0)
    assert evaluate_filter(model, pairs).f1 > 0.9
