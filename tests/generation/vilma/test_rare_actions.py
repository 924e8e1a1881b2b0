"""Rare-actions filters: excluded general/touching actions, objects the detector sees."""

from __future__ import annotations

import pytest
import torch
from foilkit.generation.foil import Foil
from foilkit.generation.vilma.rare_actions import (
    ActionExclusionFilter,
    DetectedObjectFilter,
    detect_objects,
)


def _foil(caption: str, replacement: str) -> Foil:
    return Foil(caption, "rare_action", "test", source={"replacement": replacement})


def test_action_exclusion(nlp):
    foils = [_foil("holding a keyboard", "holding"), _foil("typing on a keyboard", "typing on"),
             _foil("using a keyboard", "using"), _foil("washing a keyboard", "washing")]  # fmt: skip
    kept = ActionExclusionFilter(nlp)("cutting a keyboard", foils)
    assert [f.text for f in kept] == ["typing on a keyboard", "washing a keyboard"]
    assert [f.text for f in ActionExclusionFilter(nlp, ["wash"])("c", foils)] == [
        "holding a keyboard", "typing on a keyboard", "using a keyboard"
    ]  # fmt: skip


@pytest.fixture(scope="module")
def detector():
    """A tiny random DETR (labels keyboard/bread) with its image processor."""
    from transformers import DetrConfig, DetrForObjectDetection, DetrImageProcessor, ResNetConfig

    torch.manual_seed(0)
    backbone = ResNetConfig(
        embedding_size=8, hidden_sizes=[8] * 4, depths=[1] * 4, out_features=["stage4"]
    )
    config = DetrConfig(
        use_timm_backbone=False, use_pretrained_backbone=False, backbone_config=backbone,
        d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=16, decoder_ffn_dim=16, num_queries=4,
        id2label={0: "Keyboard", 1: "bread"}, label2id={"Keyboard": 0, "bread": 1},
    )  # fmt: skip
    processor = DetrImageProcessor(size={"shortest_edge": 32, "longest_edge": 32})
    return DetrForObjectDetection(config).eval(), processor


def test_detected_objects_remove_foils(detector):
    frames = torch.randint(0, 256, (2, 3, 24, 32), dtype=torch.uint8)
    everything = detect_objects(*detector, frames, threshold=0.0)
    assert everything and set(everything) <= {"keyboard", "bread"}
    assert detect_objects(*detector, frames, threshold=1.0) == {}
    foils = [_foil("cutting a bread", "bread"), _foil("cutting some keyboards", "keyboards"),
             _foil("cutting a lemon", "lemon")]  # fmt: skip
    kept = DetectedObjectFilter(everything, model_id="tiny-detr")("cutting a melon", foils)
    assert [f.text for f in kept] == [
        f.text for f in foils if f.source["replacement"].rstrip("s") not in everything
    ]
    assert "cutting a lemon" in [f.text for f in kept]
    assert kept[-1].model_ids["object_detector"] == "tiny-detr"
    with pytest.raises(ValueError, match="uint8"):
        detect_objects(*detector, frames.float())
