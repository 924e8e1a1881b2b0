"""Rare Actions: captions and proficiency items as ViLMA published them, foils from tiny models,
and the filters (excluded general/touching actions, objects the detector sees)."""

from __future__ import annotations

import json
import random

import pytest
import torch

from foilkit.generation.foil import Foil
from foilkit.generation.vilma.english import present_participle
from foilkit.generation.vilma.masked_lm import MaskedLM
from foilkit.generation.vilma.rare_actions import (
    SOME_NOUNS,
    ActionExclusionFilter,
    DetectedObjectFilter,
    action_caption,
    action_foils,
    detect_objects,
    existence_caption,
    existence_pair,
    object_foils,
)


def _rareact_noun(item: dict) -> str:
    """The RareAct object of a published object item: its class, which ViLMA's files give in the
    singular also where RareAct has the plural ("eggs" and "egg" are two RareAct objects); the
    proficiency caption says which ("there are some eggs")."""
    noun, plural = item["class"], f"{item['class']}s"
    if plural in SOME_NOUNS and item["proficiency"]["caption"] == f"there are some {plural}":
        return plural
    return noun


@pytest.mark.parametrize(
    ("verb", "participle"),
    [
        ("ride", "riding"),
        ("cut", "cutting"),
        ("shed", "shedding"),
        ("lie on", "lying on"),
        ("see", "seeing"),
        ("open", "opening"),
        ("unplug", "unplugging"),
        ("type on", "typing on"),
        ("microwave", "microwaving"),
        ("wrap", "wrapping"),
        ("fry", "frying"),
        ("row", "rowing"),
    ],
)
def test_present_participle(verb, participle):
    assert present_participle(verb) == participle


@pytest.fixture(scope="module")
def published(shared_data):
    files = [shared_data / "vilma" / f"rare-actions-{kind}-foils.json" for kind in ("verb", "noun")]
    if not all(path.exists() for path in files):
        pytest.skip("ViLMA's rare-actions files are not present")
    return [json.loads(path.read_text()) for path in files]


def test_captions_and_proficiency_items_are_vilmas_published_ones(published):
    """Every published item whose (verb, object) pair is known regenerates word for word: the
    caption, the action replacement foil from its verb class, the proficiency caption and (where
    its object class is published) the proficiency foil."""
    verbs, objects = published
    noun_of = {it["dataset_idx"]: _rareact_noun(it) for it in objects.values()}
    verb_of = {it["dataset_idx"]: it["class"] for it in verbs.values()}
    checked = 0
    for item in verbs.values():  # class: the verb; classes_foil: the foil's verb
        noun = noun_of.get(item["dataset_idx"])
        if noun is None:
            continue
        assert action_caption(item["class"], noun) == item["caption"]
        assert action_caption(item["classes_foil"][0], noun) == item["foils"][0]
        assert existence_caption(noun) == item["proficiency"]["caption"]
        checked += 1
    for item in objects.values():  # class: the object; classes_foil: the proficiency foil's
        noun = _rareact_noun(item)
        assert existence_caption(noun) == item["proficiency"]["caption"]
        assert existence_caption(item["classes_foil"][0]) == item["proficiency"]["foils"][0]
        if item["dataset_idx"] in verb_of:
            assert action_caption(verb_of[item["dataset_idx"]], noun) == item["caption"]
        checked += 1
    assert checked == 548 + 972  # the verb items with a published object class, every object item


def test_existence_pair_draws_another_object_not_in_the_video():
    nouns = ["keyboard", "corn", "apple", "shoes", "egg"]
    drawn = set()
    for seed in range(30):
        caption, foil = existence_pair(
            "keyboard", nouns, rng=random.Random(seed), detected=["apple"]
        )
        assert caption == "there is at least one keyboard" and foil.foil_type == "proficiency"
        drawn.add(foil.source["replacement"])
    assert drawn == {"corn", "shoes", "egg"}
    assert existence_caption("corn") == "there are some corns"
    with pytest.raises(ValueError, match="no other object"):
        existence_pair("keyboard", ["keyboard", "apple"], rng=random.Random(0), detected=["apple"])


@pytest.mark.parametrize("replace", ["action", "object"])
def test_foils_from_tiny_models_are_captions_of_another_action_or_object(t5, roberta_mlm, replace):
    model, tokenizer = t5 if replace == "action" else roberta_mlm
    lm = MaskedLM(model, tokenizer, "t5" if replace == "action" else "fill-mask", f"tiny-{replace}")
    make = action_foils if replace == "action" else object_foils
    foils = make("peel", "corn", [lm], top_k=8)
    assert foils and len({f.text for f in foils}) == len(foils)
    for foil in foils:
        assert foil.text != "peeling some corns" and foil.model_ids == {"mlm0": f"tiny-{replace}"}
        assert foil.foil_type == f"{replace}_replacement"
        if replace == "action":
            assert foil.text == action_caption(foil.source["action"], "corn")
        else:
            determiner, word = foil.source["determiner"], foil.source["replacement"]
            assert foil.text == f"peeling {determiner} {word}"
            assert determiner == "some" or (determiner == "an") == (word[0] in "aeio")


def _foil(caption: str, replacement: str) -> Foil:
    return Foil(caption, "rare_action", "test", source={"replacement": replacement})


def test_action_exclusion(nlp):
    foils = [
        _foil("holding a keyboard", "holding"),
        _foil("typing on a keyboard", "typing on"),
        _foil("using a keyboard", "using"),
        _foil("washing a keyboard", "washing"),
    ]
    kept = ActionExclusionFilter(nlp)("cutting a keyboard", foils)
    assert [f.text for f in kept] == ["typing on a keyboard", "washing a keyboard"]
    assert [f.text for f in ActionExclusionFilter(nlp, ["wash"])("c", foils)] == [
        "holding a keyboard",
        "typing on a keyboard",
        "using a keyboard",
    ]


@pytest.fixture(scope="module")
def detector():
    """A tiny random DETR (labels keyboard/bread) with its image processor."""
    from transformers import DetrConfig, DetrForObjectDetection, DetrImageProcessor, ResNetConfig

    torch.manual_seed(0)
    backbone = ResNetConfig(
        embedding_size=8, hidden_sizes=[8] * 4, depths=[1] * 4, out_features=["stage4"]
    )
    config = DetrConfig(
        use_timm_backbone=False,
        use_pretrained_backbone=False,
        backbone_config=backbone,
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=16,
        decoder_ffn_dim=16,
        num_queries=4,
        id2label={0: "Keyboard", 1: "bread"},
        label2id={"Keyboard": 0, "bread": 1},
    )
    processor = DetrImageProcessor(size={"shortest_edge": 32, "longest_edge": 32})
    return DetrForObjectDetection(config).eval(), processor


def test_detected_objects_remove_foils(detector):
    frames = torch.randint(0, 256, (2, 3, 24, 32), dtype=torch.uint8)
    everything = detect_objects(*detector, frames, threshold=0.0)
    assert everything and set(everything) <= {"keyboard", "bread"}
    assert detect_objects(*detector, frames, threshold=1.0) == {}
    foils = [
        _foil("cutting a bread", "bread"),
        _foil("cutting some keyboards", "keyboards"),
        _foil("cutting a lemon", "lemon"),
    ]
    kept = DetectedObjectFilter(everything, model_id="tiny-detr")("cutting a melon", foils)
    assert [f.text for f in kept] == [
        f.text for f in foils if f.source["replacement"].rstrip("s") not in everything
    ]
    assert "cutting a lemon" in [f.text for f in kept]
    assert kept[-1].model_ids["object_detector"] == "tiny-detr"
    with pytest.raises(ValueError, match="uint8"):
        detect_objects(*detector, frames.float())
