"""Nemotron-H Omni (NVIDIA Nemotron 3 Nano Omni, ``nemotron_h_omni``): a hybrid Mamba/attention
text model with a RADIO vision tower and an optional Parakeet audio tower.

foilkit refuses it on video with transformers 5.23 (``_video_llm_support.BROKEN_VIDEO``): its
forward cannot take ``pixel_values_videos``. The twin exists so that refusal, and the transformers
behaviour behind it, are checked on the real classes.
"""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import (
    _CONTENT,
    PATCH_SIZE,
    _media,
    _register,
    _save,
)

#: The processor's multimodal tokens (its defaults: a video is written as ``<video>`` and expanded
#: into ``<img>`` + ``<image>`` tokens + ``</img>`` per 2 frames, each labelled with its times).
NEMOTRON_OMNI_TOKENS = "<image> <video> <img> </img> <so_embedding> <so_start> <so_end>".split()
#: A ChatML template (Nemotron 3's turn format) writing ``<video>`` for a video part.
NEMOTRON_OMNI_CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    + _CONTENT.replace("VIDEO", "<video>").replace("IMAGE", "<image>")
    + "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@_register(
    "nemotron-h-omni",
    "NemotronH_Omni_Reasoning_V3 (a Mamba and an attention layer, RADIO vision, no audio tower) + "
    "its processor; refused on video (its forward cannot take video in transformers 5.23)",
)
def _build_nemotron_h_omni(out: Path) -> None:
    """A 2-layer Nemotron-H (a Mamba-2 layer, then attention), a 1-layer RADIO vision tower
    (8x8 patches, 2 frames packed a patch, pixel shuffle 2x2), no audio tower."""
    import transformers
    from transformers import ParakeetFeatureExtractor, Qwen2Tokenizer

    tokenizer = tiny_tokenizers.byte_level_bpe(
        Qwen2Tokenizer,
        ["<pad>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", *NEMOTRON_OMNI_TOKENS],
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="<|im_end|>",
    )
    image, video, audio = tokenizer.convert_tokens_to_ids(["<image>", "<video>", "<so_embedding>"])
    text = {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "intermediate_size": 37,
        "layers_block_type": ["mamba", "attention"],
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 8,
        "ssm_state_size": 8,
        "mamba_num_heads": 4,
        "mamba_head_dim": 8,
        "n_groups": 1,
        "chunk_size": 16,
        "max_position_embeddings": 512,
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }
    vision = {
        "hidden_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "patch_size": PATCH_SIZE,
        "image_size": 32,
        "max_img_size": 64,
        "num_cls_tokens": 1,
        "num_registers": 0,
        "summary_idxs": [0],
        "video_temporal_patch_size": 2,
    }
    config = transformers.NemotronH_Omni_Reasoning_V3_Config(
        text_config=text,
        vision_config=vision,
        audio_config=None,
        projector_hidden_size=32,
        vision_hidden_size=32,
        image_token_id=image,
        video_token_id=video,
        audio_token_id=audio,
    )
    pixels = {"patch_size": PATCH_SIZE, "norm_mean": [0.5] * 3, "norm_std": [0.5] * 3}
    processor = transformers.NemotronH_Omni_Reasoning_V3Processor(
        **_media("NemotronH_Omni_Reasoning_V3", pixels, {**pixels, "video_target_num_patches": 16}),
        tokenizer=tokenizer,
        feature_extractor=ParakeetFeatureExtractor(),
        chat_template=NEMOTRON_OMNI_CHAT_TEMPLATE,
    )
    _save(out, transformers.NemotronH_Omni_Reasoning_V3(config), processor)
