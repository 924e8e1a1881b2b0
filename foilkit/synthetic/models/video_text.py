"""Native video-text encoders: X-CLIP, VideoPrism, Perception Encoder video (PE-Video, PE-AV)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import (
    CLIP_TEXT_LENGTH,
    IMAGE_SIZE,
    NUM_FRAMES,
    PATCH_SIZE,
    PE_CORE,
    SIGLIP_TEXT_LENGTH,
    SQUARE,
    VISION,
    _bert_tokenizer,
    _clip_tokenizer,
    _register,
    _save,
    _text_config,
)


@_register(
    "xclip", f"XCLIPModel + XCLIPProcessor (VideoMAEImageProcessor), {NUM_FRAMES}-frame video input"
)
def _build_xclip(out: Path) -> None:
    """X-CLIP takes ``pixel_values`` (batch, NUM_FRAMES, 3, 32, 32): the processor's ``videos=``."""
    from transformers import VideoMAEImageProcessor, XCLIPConfig, XCLIPModel, XCLIPProcessor

    tokenizer = _clip_tokenizer()
    vision = dict(
        VISION,
        num_frames=NUM_FRAMES,
        mit_hidden_size=16,
        mit_intermediate_size=37,
        mit_num_hidden_layers=1,
        mit_num_attention_heads=4,
    )
    text = _text_config(tokenizer, max_position_embeddings=CLIP_TEXT_LENGTH)
    config = XCLIPConfig(
        text_config=text,
        vision_config=vision,
        projection_dim=16,
        prompt_layers=1,
        prompt_attention_heads=4,
    )
    processor = XCLIPProcessor(
        image_processor=VideoMAEImageProcessor(**SQUARE), tokenizer=tokenizer
    )
    _save(out, XCLIPModel(config), processor)


VIDEOPRISM_FRAMES = 4  # the tiny VideoPrism's vision_config.num_frames (the real ones: 16)
PE_VIDEO_FRAMES = 6  # the tiny PE-Video's video processor num_frames (pe-av-*-16-frame: 16)


@_register(
    "videoprism",
    f"VideoPrismClipModel + VideoPrismProcessor (LlavaOnevisionVideoProcessor, Unigram "
    f"VideoPrismTokenizer), {VIDEOPRISM_FRAMES}-frame video input",
)
def _build_videoprism(out: Path) -> None:
    """Sizes of transformers' ``VideoPrismClipModelTester`` at 32x32 frames in 8x8 tubelets;
    pixels in [0, 1] and texts padded to 64 tokens, as the real processor does."""
    from transformers import (
        LlavaOnevisionVideoProcessor,
        VideoPrismClipModel,
        VideoPrismConfig,
        VideoPrismProcessor,
        VideoPrismTokenizer,
    )

    tokenizer = tiny_tokenizers.unigram(VideoPrismTokenizer, ["<pad>", "</s>", "<unk>"])
    vision = {
        "image_size": IMAGE_SIZE,
        "num_frames": VIDEOPRISM_FRAMES,
        "tubelet_size": [1, PATCH_SIZE, PATCH_SIZE],
        "hidden_size": 32,
        "num_spatial_layers": 1,
        "num_temporal_layers": 1,
        "num_auxiliary_layers": 1,
        "num_attention_heads": 4,
        "intermediate_size": 64,
    }
    text = {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "max_position_embeddings": SIGLIP_TEXT_LENGTH,
    }
    config = VideoPrismConfig(text_config=text, vision_config=vision)
    video_processor = LlavaOnevisionVideoProcessor(
        size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}, do_normalize=False
    )
    processor = VideoPrismProcessor(video_processor=video_processor, tokenizer=tokenizer)
    _save(out, VideoPrismClipModel(config), processor)


# PE-Video's sizes: transformers' PeVideoModelTester at 32x32 frames in 8x8 patches
PE_ENCODER = {
    "hidden_size": 32,
    "intermediate_size": 37,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "max_position_embeddings": 64,
}
PE_VISION = {**PE_CORE, "num_classes": 16}


def _pe_text_config(tokenizer) -> dict:
    """A one-layer ModernBERT around ``tokenizer`` (PE's text tower)."""
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    return {
        "vocab_size": len(tokenizer),
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": cls_id,
        "cls_token_id": cls_id,
        "eos_token_id": sep_id,
        "sep_token_id": sep_id,
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "max_position_embeddings": 128,
    }


def _pe_video_processor():
    """``PeVideoVideoProcessor`` as ``facebook/pe-av-*-16-frame`` configure it, at 32x32 and
    :data:`PE_VIDEO_FRAMES` frames."""
    from transformers import PeVideoVideoProcessor

    return PeVideoVideoProcessor(
        do_resize=True,
        do_rescale=True,
        do_normalize=True,
        do_convert_rgb=True,
        do_sample_frames=True,
        num_frames=PE_VIDEO_FRAMES,
        size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
    )


def _set_pe_logits(*heads: Any) -> None:
    """Logit scale 10 and bias -10 on each ``(scale, bias)`` pair (zero at init, which would
    make every logit equal)."""
    import torch

    with torch.no_grad():
        for scale, bias in heads:
            scale.fill_(10.0)
            bias.fill_(-10.0)


@_register(
    "pe-video",
    f"PeVideoModel (timm PE vision tower, ModernBERT text) + PeVideoProcessor "
    f"(PeVideoVideoProcessor, WordPiece BertTokenizer), {PE_VIDEO_FRAMES}-frame video input; "
    "needs timm",
    requires=("timm",),
)
def _build_pe_video(out: Path) -> None:
    from transformers import PeVideoConfig, PeVideoModel, PeVideoProcessor

    tokenizer = _bert_tokenizer()
    video = {"vision_config": PE_VISION, **PE_ENCODER}
    model = PeVideoModel(PeVideoConfig(text_config=_pe_text_config(tokenizer), video_config=video))
    _set_pe_logits((model.text_video_logit_scale, model.text_video_logit_bias))
    processor = PeVideoProcessor(video_processor=_pe_video_processor(), tokenizer=tokenizer)
    _save(out, model, processor)


@_register(
    "pe-audio-video",
    "PeAudioVideoModel (the layout of facebook/pe-av-*: PE-Video inside, a tiny DAC audio "
    f"tower) + PeAudioVideoProcessor, {PE_VIDEO_FRAMES}-frame video input; needs timm. In "
    "transformers 5.23 it does not load back through from_pretrained (tied audio weights)",
    requires=("timm",),
)
def _build_pe_audio_video(out: Path) -> None:
    _save(out, *tiny_pe_audio_video())


def tiny_pe_audio_video() -> tuple[Any, Any]:
    """The ``pe-audio-video`` model and processor in memory (the model drawn from the global
    torch RNG: seed it with :data:`SEED` for the saved weights), for tests that need the model
    ``from_pretrained`` cannot load back."""
    from transformers import (
        PeAudioFeatureExtractor,
        PeAudioVideoConfig,
        PeAudioVideoModel,
        PeAudioVideoProcessor,
    )

    tokenizer = _bert_tokenizer()
    dac = {
        "encoder_hidden_size": 16,
        "downsampling_ratios": [2, 4, 4],
        "decoder_hidden_size": 16,
        "n_codebooks": 6,
        "codebook_size": 512,
        "codebook_dim": 32,
    }
    encoders = {
        "audio_config": {"dac_config": dac, **PE_ENCODER},
        "video_config": {"vision_config": PE_VISION, **PE_ENCODER},
        **PE_ENCODER,
    }
    config = PeAudioVideoConfig(text_config=_pe_text_config(tokenizer), audio_video_config=encoders)
    model = PeAudioVideoModel(config)
    _set_pe_logits(
        (model.video_model.text_video_logit_scale, model.video_model.text_video_logit_bias)
    )
    processor = PeAudioVideoProcessor(
        feature_extractor=PeAudioFeatureExtractor(),
        video_processor=_pe_video_processor(),
        tokenizer=tokenizer,
    )
    return model, processor
