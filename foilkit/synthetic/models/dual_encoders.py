"""Image-text dual encoders scored frame by frame: CLIP, ALIGN, TIPSv2, SigLIP, SigLIP 2,
Chinese-CLIP, MetaCLIP 2, AltCLIP."""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import (
    CLIP_TEXT_LENGTH,
    IMAGE_SIZE,
    PATCH_SIZE,
    SIGLIP_TEXT_LENGTH,
    SQUARE,
    VISION,
    _bert_tokenizer,
    _clip_tokenizer,
    _media,
    _register,
    _save,
    _save_twin,
    _t5_tokenizer,
    _text_config,
)


@_register("clip", "CLIPModel + CLIPProcessor (CLIPImageProcessor, byte-level BPE CLIPTokenizer)")
def _build_clip(out: Path) -> None:
    tokenizer = _clip_tokenizer()
    text = _text_config(tokenizer, max_position_embeddings=CLIP_TEXT_LENGTH)
    config = {"text_config": text, "vision_config": VISION, "projection_dim": 16}
    processor = {**_media("CLIP", SQUARE), "tokenizer": tokenizer}
    _save_twin(out, "CLIP", config, processor, head="Model")


@_register(
    "align", "AlignModel + AlignProcessor (EfficientNetImageProcessor, WordPiece BertTokenizer)"
)
def _build_align(out: Path) -> None:
    """The EfficientNet sizes of transformers' ``AlignVisionModelTester``; the text projection
    maps to the vision tower's ``hidden_dim``, as in ``kakaobrain/align-base``."""
    from transformers import AlignConfig, AlignModel, AlignProcessor, EfficientNetImageProcessor

    tokenizer = _bert_tokenizer()
    vision = {
        "image_size": IMAGE_SIZE,
        "kernel_sizes": [3, 3, 5],
        "in_channels": [32, 16, 24],
        "out_channels": [16, 24, 30],
        "hidden_dim": 64,
        "strides": [1, 1, 2],
        "num_block_repeats": [1, 1, 2],
        "expand_ratios": [1, 6, 6],
    }
    text = _text_config(tokenizer, bos_token_id=tokenizer.cls_token_id)
    config = AlignConfig(text_config=text, vision_config=vision, projection_dim=64)
    image_processor = EfficientNetImageProcessor(
        size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}, do_center_crop=False
    )
    _save(out, AlignModel(config), AlignProcessor(image_processor, tokenizer))


@_register("tipsv2", "Tipsv2Model + Tipsv2Processor (Tipsv2ImageProcessor, BPE Tipsv2Tokenizer)")
def _build_tipsv2(out: Path) -> None:
    """A one-layer ViT (one register token) and text tower, both 32 wide (TIPSv2 compares them
    without projections); texts padded to 64 tokens, as the real processor does."""
    from transformers import Tipsv2Tokenizer

    tokenizer = tiny_tokenizers.metaspace_bpe(Tipsv2Tokenizer, ["<pad>", "<unk>"])
    vision = {
        "hidden_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "image_size": IMAGE_SIZE,
        "patch_size": PATCH_SIZE,
    }
    text = {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "max_position_embeddings": SIGLIP_TEXT_LENGTH,
    }
    config = {"text_config": text, "vision_config": vision}
    image = {"size": {"height": IMAGE_SIZE, "width": IMAGE_SIZE}}
    processor = {**_media("Tipsv2", image), "tokenizer": tokenizer}
    _save_twin(out, "Tipsv2", config, processor, head="Model")


@_register(
    "siglip", "SiglipModel + SiglipProcessor (SiglipImageProcessor, Unigram T5-style tokenizer)"
)
def _build_siglip(out: Path) -> None:
    """SigLIP's text tower pools the last position: call the processor with ``padding="max_length"``
    (as for real SigLIP); the tokenizer's ``model_max_length`` is the text length, 64."""
    tokenizer = _t5_tokenizer(sentinels=0, model_max_length=SIGLIP_TEXT_LENGTH)
    text = _text_config(tokenizer, max_position_embeddings=SIGLIP_TEXT_LENGTH)
    config = {"text_config": text, "vision_config": VISION}
    image = {"size": {"height": IMAGE_SIZE, "width": IMAGE_SIZE}}
    processor = {**_media("Siglip", image), "tokenizer": tokenizer}
    _save_twin(out, "Siglip", config, processor, head="Model")


@_register(
    "siglip2",
    "Siglip2Model + Siglip2Processor (NaFlex Siglip2ImageProcessor, lowercasing Gemma-style BPE "
    "Siglip2Tokenizer)",
)
def _build_siglip2(out: Path) -> None:
    """SigLIP 2 (NaFlex): frames resized at their own aspect ratio to at most 256 patches of
    16x16, the real processor's settings (``Siglip2Processor``'s call defaults override its image
    processor's), ``pixel_attention_mask`` and ``spatial_shapes`` telling the tower which patches
    are real; a 4x4 grid of learned positions, interpolated; texts padded to 64 tokens, the tower
    pooling the last position."""
    from transformers import Siglip2Tokenizer

    tokenizer = tiny_tokenizers.metaspace_bpe(
        Siglip2Tokenizer, ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>"]
    )
    text = _text_config(tokenizer, max_position_embeddings=SIGLIP_TEXT_LENGTH)
    vision = {**VISION, "patch_size": 16, "num_patches": 16}
    del vision["image_size"]
    config = {"text_config": text, "vision_config": vision}
    processor = {
        **_media("Siglip2", {"patch_size": 16, "max_num_patches": 256}),
        "tokenizer": tokenizer,
    }
    _save_twin(out, "Siglip2", config, processor, head="Model")


@_register(
    "chinese-clip",
    "ChineseCLIPModel + ChineseCLIPProcessor (ChineseCLIPImageProcessor, WordPiece BertTokenizer)",
)
def _build_chinese_clip(out: Path) -> None:
    """Chinese-CLIP: a BERT text tower read at ``[CLS]``, a CLIP vision tower, both projected."""
    tokenizer = _bert_tokenizer()
    text = _text_config(tokenizer, bos_token_id=tokenizer.cls_token_id)
    config = {"text_config": text, "vision_config": VISION, "projection_dim": 16}
    processor = {**_media("ChineseCLIP", SQUARE), "tokenizer": tokenizer}
    _save_twin(out, "ChineseCLIP", config, processor, head="Model")


def _xlm_roberta_tokenizer():
    """XLM-RoBERTa's SentencePiece Unigram layout: ``<s>`` 0, ``<pad>`` 1, ``</s>`` 2,
    ``<unk>`` 3."""
    from transformers import XLMRobertaTokenizer

    return tiny_tokenizers.unigram(XLMRobertaTokenizer, ["<s>", "<pad>", "</s>", "<unk>"])


@_register(
    "metaclip-2",
    "MetaClip2Model + CLIPProcessor (CLIPImageProcessor, XLM-RoBERTa Unigram tokenizer)",
)
def _build_metaclip_2(out: Path) -> None:
    """MetaCLIP 2 (worldwide): CLIP's towers around XLM-RoBERTa's tokenizer; the text tower pools
    at the first ``</s>`` (``eos_token_id`` 2), 77 positions."""
    tokenizer = _xlm_roberta_tokenizer()
    text = _text_config(tokenizer, max_position_embeddings=CLIP_TEXT_LENGTH)
    config = {"text_config": text, "vision_config": VISION, "projection_dim": 16}
    processor = {**_media("CLIP", SQUARE), "tokenizer": tokenizer}
    _save_twin(out, "MetaClip2", config, processor, "CLIP", head="Model")


@_register(
    "altclip",
    "AltCLIPModel + AltCLIPProcessor (CLIPImageProcessor, XLM-RoBERTa Unigram tokenizer)",
)
def _build_altclip(out: Path) -> None:
    """AltCLIP: an XLM-RoBERTa text tower (positions offset past the padding id, as RoBERTa's)
    read at ``<s>`` and projected, with CLIP's vision tower."""
    from transformers import AltCLIPConfig, AltCLIPModel, AltCLIPProcessor, CLIPImageProcessor

    tokenizer = _xlm_roberta_tokenizer()
    text = {
        **_text_config(tokenizer, max_position_embeddings=CLIP_TEXT_LENGTH + 2),
        "project_dim": 16,
    }
    config = AltCLIPConfig(text_config=text, vision_config=VISION, projection_dim=16)
    processor = AltCLIPProcessor(CLIPImageProcessor(**SQUARE), tokenizer)
    _save(out, AltCLIPModel(config), processor)
