"""Gemma 4 and Gemma 4 unified, video LLMs whose chat template writes video parts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import (
    _CONTENT,
    NUM_FRAMES,
    PATCH_SIZE,
    VIDEO_LLM_TEXT,
    VIDEO_LLM_VISION,
    _media,
    _register,
    _save_twin,
    _text_config,
)

GEMMA_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<start_of_turn>"
    "{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    + _CONTENT.replace("VIDEO", "<|video|>").replace("IMAGE", "<|image|>")
    + "<end_of_turn>\n{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


GEMMA4_TOKENS = {
    "image_token": "<|image|>",
    "video_token": "<|video|>",
    "boi_token": "<start_of_image>",
    "eoi_token": "<end_of_image>",
    "audio_token": "<audio_soft_token>",
    "boa_token": "<start_of_audio>",
    "eoa_token": "<end_of_audio>",
}
GEMMA4_SLIDING_WINDOW = 8  # tokens: far shorter than any video prompt, so the window is full


def _gemma4_tokenizer():
    """Byte-level BPE with Gemma 4's turn and multimodal tokens (``extra_special_tokens``)."""
    from transformers import Qwen2Tokenizer

    return tiny_tokenizers.byte_level_bpe(
        Qwen2Tokenizer,
        ["<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>", *GEMMA4_TOKENS.values()],
        pad_token="<pad>",
        eos_token="<eos>",
        bos_token="<bos>",
        extra_special_tokens=GEMMA4_TOKENS,
    )


def _save_gemma4(out: Path, model: str, tokenizer: Any, vision: dict, **text: Any) -> None:
    """A Gemma 4 twin in the transformers classes of prefix ``model`` (``<model>Config``,
    ``<model>Processor``, ...): a 2-layer text model (an 8-token sliding-window layer, then a full
    one; ``text``: further settings), the ``vision`` tower and no audio tower, around
    ``tokenizer`` (:func:`_gemma4_tokenizer`) and Gemma's chat template; the processor makes 70
    soft tokens a frame of 8x8 patches pooled 2x2."""
    import transformers

    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in GEMMA4_TOKENS.items()}
    text_config = _text_config(
        tokenizer,
        **VIDEO_LLM_TEXT,
        head_dim=8,
        global_head_dim=8,
        sliding_window=GEMMA4_SLIDING_WINDOW,
        layer_types=["sliding_attention", "full_attention"],
        **text,
    )
    config = {
        "text_config": text_config,
        "vision_config": vision,
        "audio_config": None,
        **{f"{name}_id": ids[name] for name in GEMMA4_TOKENS if name != "eoa_token"},
        "eoa_token_index": ids["eoa_token"],  # Gemma4Config's name for it
    }
    pixels = {"patch_size": PATCH_SIZE, "max_soft_tokens": 70, "pooling_kernel_size": 2}
    processor = {
        "feature_extractor": getattr(transformers, f"{model}AudioFeatureExtractor")(),
        **_media(model, pixels, {**pixels, "num_frames": NUM_FRAMES}),
        "tokenizer": tokenizer,
        "chat_template": GEMMA_CHAT_TEMPLATE,
        "image_seq_length": 70,
    }
    _save_twin(out, model, config, processor)


@_register(
    "gemma4",
    f"Gemma4ForConditionalGeneration (a {GEMMA4_SLIDING_WINDOW}-token sliding-window layer and "
    "a full-attention layer) + Gemma4Processor, video input",
)
def _build_gemma4(out: Path) -> None:
    """Gemma 4 with a sliding window of 8 tokens in its first layer (a video prompt is hundreds
    of tokens, so that layer's cache keeps only the last 7 and cannot be cut back), a 1-layer
    vision tower (8x8 patches pooled 2x2, 70 soft tokens a frame, each frame preceded by its
    ``mm:ss`` timestamp) and no audio tower. Tokenizer: byte-level BPE with Gemma 4's
    multimodal tokens; chat template in Gemma's turn format, ``<|video|>`` for a video part.
    """
    tokenizer = _gemma4_tokenizer()
    vision = {
        **VIDEO_LLM_VISION,
        "num_key_value_heads": 4,
        "head_dim": 8,
        "pooling_kernel_size": 2,
        "position_embedding_size": 64,
    }
    # per-layer input embeddings: an 8-wide row per vocabulary id
    _save_gemma4(
        out,
        "Gemma4",
        tokenizer,
        vision,
        vocab_size_per_layer_input=len(tokenizer),
        hidden_size_per_layer_input=8,
    )


@_register(
    "gemma4-unified",
    f"Gemma4UnifiedForConditionalGeneration (a {GEMMA4_SLIDING_WINDOW}-token sliding-window "
    "layer and a full-attention layer; frames embedded by patches) + Gemma4UnifiedProcessor, "
    "video input",
)
def _build_gemma4_unified(out: Path) -> None:
    """Gemma 4 unified: as ``gemma4``, but no vision tower: a frame's 8x8 patches (pooled 2x2)
    are projected into the text model, where vision tokens attend to each other both ways; no
    audio tower (the video path needs none). Each frame is written ``mm:ss <start_of_image>``
    + soft tokens + ``<end_of_image>``, its time from ``video_metadata``."""
    vision = {
        "patch_size": PATCH_SIZE,
        "pooling_kernel_size": 2,
        "mm_embed_dim": 32,
        "mm_posemb_size": 64,
        "output_proj_dims": VIDEO_LLM_TEXT["hidden_size"],
    }
    _save_gemma4(out, "Gemma4Unified", _gemma4_tokenizer(), vision)
