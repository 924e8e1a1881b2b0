"""Muse Glimmer and Muse Spark (Meta, ``muse_glimmer``, ``muse_spark``): a windowed-attention
vision tower whose patches are pixel-shuffled 2x2 into a projector, on a text model of
sliding-window and global layers (Muse Spark's with mixture-of-experts layers and an audio
tower, which the video path does not use).

Its processor writes a video as ``<|vid_start|>``, then per temporal patch (2 frames) its time
(``Time: 1.9s``, from ``video_metadata``) and its ``<|video|>`` tokens, separated by
``<|vid_frame_separator|>``, then ``<|vid_end|>``. The twin's chat template is in Llama 4's turn
format (``<|header_start|>role<|header_end|>``, ``<|eot|>``; the family's 202,048-id vocabulary
with BOS 200000 and EOS 200001 is Llama 4's), the video part the processor's ``<|video|>``: the
checkpoint's own template is not in the sources available here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import (
    _CONTENT,
    PATCH_SIZE,
    VIDEO_LLM_TEXT,
    VIDEO_LLM_VISION,
    _media,
    _register,
    _save_twin,
    _text_config,
)

#: The processor's multimodal tokens (its own names for them).
MUSE_TOKENS = (
    "<|patch|> <|image_start|> <|image_end|> <|video|> <|vid_frame_separator|> <|vid_start|> "
    "<|vid_end|>"
).split()
MUSE_SLIDING_WINDOW = 8  # tokens: far shorter than a video prompt, so the window is full
MUSE_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "<|header_start|>{{ message['role'] }}<|header_end|>\n\n"
    + _CONTENT.replace("VIDEO", "<|video|>").replace("IMAGE", "<|patch|>")
    + "<|eot|>{% endfor %}"
    "{% if add_generation_prompt %}<|header_start|>assistant<|header_end|>\n\n{% endif %}"
)


#: The twins' vision tower: one block, 8x8 patches, a 4x4 grid of learned positions.
MUSE_VISION = {
    **VIDEO_LLM_VISION,
    "pos_emb_height": 4,
    "pos_emb_width": 4,
    "max_position_embeddings": 16,
    "layer_types": ["full_attention"],
}
#: The projector's input is the vision width with 2x2 patches shuffled into channels.
MUSE_PROJECTOR = {"out_hidden_size": 32 * 4, "projector_hidden_size": VIDEO_LLM_TEXT["hidden_size"]}


def _muse_tokenizer(extra: list[str] = ()):
    """Byte-level BPE with Llama 4's turn tokens, the processor's multimodal ones and ``extra``."""
    from transformers import Qwen2Tokenizer

    return tiny_tokenizers.byte_level_bpe(
        Qwen2Tokenizer,
        [
            "<|begin_of_text|>",
            "<|eot|>",
            "<|header_start|>",
            "<|header_end|>",
            *MUSE_TOKENS,
            *extra,
        ],
        bos_token="<|begin_of_text|>",
        eos_token="<|eot|>",
        pad_token="<|eot|>",
    )


def _muse_text(tokenizer, **overrides) -> dict:
    """A 2-layer text model: a sliding-window layer, then a global one."""
    return _text_config(
        tokenizer,
        **VIDEO_LLM_TEXT,
        head_dim=8,
        sliding_window=MUSE_SLIDING_WINDOW,
        layer_types=["sliding_attention", "full_attention"],
        **overrides,
    )


def _save_muse(
    out: Path, model: str, tokenizer: Any, text: dict, audio: dict | None = None
) -> None:
    """A Muse twin in the transformers classes of prefix ``model`` (``<model>Config``,
    ``<model>Processor``, ...): ``text`` settings, :data:`MUSE_VISION` and the projector, Muse
    Glimmer's image and video processors (a timestamp per 2 frames), Llama 4's turns; ``audio``:
    an audio tower's settings, with ``<|audio|>``'s id and the feature extractor (Muse Spark)."""
    import transformers

    image, video = tokenizer.convert_tokens_to_ids(["<|patch|>", "<|video|>"])
    config = {
        "text_config": text,
        "vision_config": MUSE_VISION,
        "image_token_id": image,
        "video_token_id": video,
        **MUSE_PROJECTOR,
    }
    processor = {
        **_media(
            "MuseGlimmer",
            {"patch_size": PATCH_SIZE},
            {"patch_size": PATCH_SIZE, "max_video_frame_tokens": 8},
        ),
        "tokenizer": tokenizer,
        "chat_template": MUSE_CHAT_TEMPLATE,
    }
    if audio is not None:
        config["audio_config"] = audio
        config["audio_token_id"] = tokenizer.convert_tokens_to_ids("<|audio|>")
        processor["feature_extractor"] = getattr(transformers, f"{model}FeatureExtractor")()
    _save_twin(out, model, config, processor)


@_register(
    "muse-glimmer",
    f"MuseGlimmerForConditionalGeneration (a {MUSE_SLIDING_WINDOW}-token sliding-window layer "
    "and a global layer) + MuseGlimmerProcessor (a timestamp per 2 frames), video input",
)
def _build_muse_glimmer(out: Path) -> None:
    """Muse Glimmer: a 2-layer text model, a 1-layer vision tower (8x8 patches, 2 frames a
    temporal patch, 2x2 pixel shuffle into a 2-layer projector); 8 frames are 4 timestamped
    groups of ``<|video|>`` tokens."""
    tokenizer = _muse_tokenizer()
    _save_muse(out, "MuseGlimmer", tokenizer, _muse_text(tokenizer))


@_register(
    "muse-spark",
    "MuseSparkForConditionalGeneration (a dense and a mixture-of-experts layer, an audio tower "
    "the video path leaves unused) + MuseSparkProcessor, video input",
)
def _build_muse_spark(out: Path) -> None:
    """Muse Spark: as ``muse-glimmer``, its second text layer 4 experts (2 a token), with a
    2-stage audio tower; a video is written as Muse Glimmer's, through the same video
    processor."""
    tokenizer = _muse_tokenizer(["<|audio|>", "<|soft_audio_start|>", "<|soft_audio_end|>"])
    text = _muse_text(
        tokenizer,
        mlp_layer_types=["dense", "sparse"],
        moe_intermediate_size=16,
        moe_hidden_size=16,
        num_local_experts=4,
        num_experts_per_tok=2,
    )
    audio_tower = {
        "patch_sizes": (4, 2),
        "hidden_sizes": (16, 32),
        "depths": (1, 1),
        "num_hidden_layers": 2,
        "out_hidden_size": VIDEO_LLM_TEXT["hidden_size"],
    }
    _save_muse(out, "MuseSpark", tokenizer, text, audio_tower)
