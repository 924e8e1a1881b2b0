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
    _register,
    _save,
    _t5_tokenizer,
    _text_config,
)


@_register("clip", "CLIPModel + CLIPProcessor (CLIPImageProcessor, byte-level BPE CLIPTokenizer)")
def _build_clip(out: Path) -> None:
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    tokenizer = _clip_tokenizer()
    text = _text_config(tokenizer, max_position_embeddings=CLIP_TEXT_LENGTH)
    config = CLIPConfig(text_config=text, vision_config=VISION, projection_dim=16)
    processor = CLIPProcessor(image_processor=CLIPImageProcessor(**SQUARE), tokenizer=tokenizer)
    _save(out, CLIPModel(config), processor)


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
    from transformers import (
        Tipsv2Config,
        Tipsv2ImageProcessor,
        Tipsv2Model,
        Tipsv2Processor,
        Tipsv2Tokenizer,
    )

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
    config = Tipsv2Config(text_config=text, vision_config=vision)
    image_processor = Tipsv2ImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    _save(out, Tipsv2Model(config), Tipsv2Processor(image_processor, tokenizer))


@_register(
    "siglip", "SiglipModel + SiglipProcessor (SiglipImageProcessor, Unigram T5-style tokenizer)"
)
def _build_siglip(out: Path) -> None:
    """SigLIP's text tower pools the last position: call the processor with ``padding="max_length"``
    (as for real SigLIP); the tokenizer's ``model_max_length`` is the text length, 64."""
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel, SiglipProcessor

    tokenizer = _t5_tokenizer(sentinels=0, model_max_length=SIGLIP_TEXT_LENGTH)
    text = _text_config(tokenizer, max_position_embeddings=SIGLIP_TEXT_LENGTH)
    config = SiglipConfig(text_config=text, vision_config=VISION)
    image_processor = SiglipImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    processor = SiglipProcessor(image_processor=image_processor, tokenizer=tokenizer)
    _save(out, SiglipModel(config), processor)


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
    from transformers import (
        Siglip2Config,
        Siglip2ImageProcessor,
        Siglip2Model,
        Siglip2Processor,
        Siglip2Tokenizer,
    )

    tokenizer = tiny_tokenizers.metaspace_bpe(
        Siglip2Tokenizer, ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>"]
    )
    text = _text_config(tokenizer, max_position_embeddings=SIGLIP_TEXT_LENGTH)
    vision = {**VISION, "patch_size": 16, "num_patches": 16}
    del vision["image_size"]
    config = Siglip2Config(text_config=text, vision_config=vision)
    image_processor = Siglip2ImageProcessor(patch_size=16, max_num_patches=256)
    processor = Siglip2Processor(image_processor=image_processor, tokenizer=tokenizer)
    _save(out, Siglip2Model(config), processor)


@_register(
    "chinese-clip",
    "ChineseCLIPModel + ChineseCLIPProcessor (ChineseCLIPImageProcessor, WordPiece BertTokenizer)",
)
def _build_chinese_clip(out: Path) -> None:
    """Chinese-CLIP: a BERT text tower read at ``[CLS]``, a CLIP vision tower, both projected."""
    from transformers import (
        ChineseCLIPConfig,
        ChineseCLIPImageProcessor,
        ChineseCLIPModel,
        ChineseCLIPProcessor,
    )

    tokenizer = _bert_tokenizer()
    text = _text_config(tokenizer, bos_token_id=tokenizer.cls_token_id)
    config = ChineseCLIPConfig(text_config=text, vision_config=VISION, projection_dim=16)
    image_processor = ChineseCLIPImageProcessor(**SQUARE)
    _save(out, ChineseCLIPModel(config), ChineseCLIPProcessor(image_processor, tokenizer))


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
    from transformers import CLIPImageProcessor, CLIPProcessor, MetaClip2Config, MetaClip2Model

    tokenizer = _xlm_roberta_tokenizer()
    text = _text_config(tokenizer, max_position_embeddings=CLIP_TEXT_LENGTH)
    config = MetaClip2Config(text_config=text, vision_config=VISION, projection_dim=16)
    processor = CLIPProcessor(image_processor=CLIPImageProcessor(**SQUARE), tokenizer=tokenizer)
    _save(out, MetaClip2Model(config), processor)


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
