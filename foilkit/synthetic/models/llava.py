"""LLaVA family video LLMs: LLaVA-NeXT-Video (tiny and its Vicuna-template fidelity twin),
LLaVA-OneVision, and the image-only LLaVA 1.5."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foilkit.synthetic.models._base import (
    IMAGE_SIZE,
    LLAVA_CHAT_TEMPLATE,
    PATCH_SIZE,
    SQUARE,
    VIDEO_LLM_TEXT,
    VISION,
    _media,
    _qwen2_tokenizer,
    _register,
    _register_fidelity,
    _save_twin,
    _text_config,
)

#: The CLIP towers' features as LLaVA reads them: the last layer's, without the CLS token.
CLIP_FEATURES = {"vision_feature_layer": -1, "vision_feature_select_strategy": "default"}
#: A LLaVA processor's count of the tokens a CLIP image becomes: 8x8 patches and the CLS
#: token it drops.
CLIP_TOKENS = {
    "patch_size": PATCH_SIZE,
    "vision_feature_select_strategy": "default",
    "num_additional_image_tokens": 1,
}


def _save_llava_next_video(out: Path, tokenizer: Any, chat_template: str) -> None:
    """A tiny LLaVA-NeXT-Video (CLIP vision tower, 2-layer Llama) around ``tokenizer``, which
    holds the ``<video>`` and ``<image>`` tokens, with its processor and ``chat_template``."""
    from transformers import LlavaNextImageProcessor

    video_token_id, image_token_id = tokenizer.convert_tokens_to_ids(["<video>", "<image>"])
    config = {
        "text_config": _text_config(tokenizer, model_type="llama", **VIDEO_LLM_TEXT),
        "vision_config": dict(VISION, model_type="clip_vision_model"),
        "video_token_id": video_token_id,
        "image_token_id": image_token_id,
        "spatial_pool_stride": 2,
        "image_grid_pinpoints": [[IMAGE_SIZE, IMAGE_SIZE]],
        **CLIP_FEATURES,
    }
    processor = {
        **_media("LlavaNextVideo", video=SQUARE),
        "image_processor": LlavaNextImageProcessor(
            **SQUARE, image_grid_pinpoints=[[IMAGE_SIZE, IMAGE_SIZE]]
        ),
        "tokenizer": tokenizer,
        "chat_template": chat_template,
        **CLIP_TOKENS,
    }
    _save_twin(out, "LlavaNextVideo", config, processor)


@_register(
    "llava-next-video",
    "LlavaNextVideoForConditionalGeneration + LlavaNextVideoProcessor, video input",
)
def _build_llava_next_video(out: Path) -> None:
    """LLaVA-NeXT-Video with a CLIP vision tower (32x32 frames, 8x8 patches) and a 2-layer Llama.

    Feed video as ``processor(text=[prompt], videos=[frames], return_tensors="pt")``, ``frames``
    a T x H x W x 3 uint8 array (or list of frames), ``prompt`` from
    ``processor.apply_chat_template([{"role": "user", "content": [{"type": "video"},
    {"type": "text", "text": ...}]}], add_generation_prompt=True)``, which renders
    ``"USER: <video>\\n...\\nASSISTANT:"``. Frames are resized and centre-cropped to 32x32; the
    processor expands the single ``<video>`` (``config.video_token_id``) into one token per
    pooled patch per frame: 4x4 patches pooled with stride 2 = 4 tokens a frame, 32 for 8 frames.
    ``<image>`` (``config.image_token_id``) is the image placeholder. Tokenizer: byte-level BPE
    (Qwen2Tokenizer class, as in LLaVA-Video-Qwen2 checkpoints), EOS ``<|im_end|>``.
    """

    _save_llava_next_video(out, _qwen2_tokenizer(["<video>", "<image>"]), LLAVA_CHAT_TEMPLATE)


@_register("llava", "LlavaForConditionalGeneration + LlavaProcessor: image input only, no video")
def _build_llava(out: Path) -> None:
    """LLaVA 1.5's shape: a CLIP vision tower (32x32 images, 8x8 patches: 16 ``<image>`` tokens
    an image) and a 2-layer Llama. Its processor has no video processor: the video-llm adapter
    refuses it (it would score the texts without the video)."""
    from transformers import CLIPImageProcessor

    tokenizer = _qwen2_tokenizer(["<image>"])
    config = {
        "text_config": _text_config(tokenizer, model_type="llama", **VIDEO_LLM_TEXT),
        "vision_config": dict(VISION, model_type="clip_vision_model"),
        "image_token_id": tokenizer.convert_tokens_to_ids("<image>"),
        **CLIP_FEATURES,
    }
    processor = {
        "image_processor": CLIPImageProcessor(**SQUARE),
        "tokenizer": tokenizer,
        **CLIP_TOKENS,
        "chat_template": LLAVA_CHAT_TEMPLATE,
    }
    _save_twin(out, "Llava", config, processor)


LLAVA_NEXT_VIDEO_VICUNA_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'].upper() "
    "+ ': '}}{% endif %}{# Render all images first #}{% for content in message['content'] | "
    "selectattr('type', 'equalto', 'image') %}{{ '<image>\\n' }}{% endfor %}{# Render all video "
    "then #}{% for content in message['content'] | selectattr('type', 'equalto', 'video') %}{{ "
    "'<video>\\n' }}{% endfor %}{# Render all text next #}{% if message['role'] != 'assistant' "
    "%}{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}{{ "
    "content['text'] + ' '}}{% endfor %}{% else %}{% for content in message['content'] | "
    "selectattr('type', 'equalto', 'text') %}{% generation %}{{ content['text'] + ' '}}{% "
    "endgeneration %}{% endfor %}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ "
    "'ASSISTANT:' }}{% endif %}"
)


@_register_fidelity(
    "llava-next-video-llama2",
    "LLaVA-NeXT-Video around the real Llama-2 tokenizer (+ <image>, <video>) and its Vicuna "
    "template",
)
def _build_llava_next_video_llama2(out: Path) -> None:
    """As ``llava-next-video``, with LLaVA-NeXT-Video-7B's tokenizer: Llama-2's SentencePiece
    BPE plus ``<image>`` (32000) and ``<video>`` (32001), BOS ``<s>`` added to every prompt."""
    from foilkit.synthetic.real_tokenizers import load_real_tokenizer

    tokenizer = load_real_tokenizer("llama2")
    tokenizer.add_special_tokens({"additional_special_tokens": ["<image>", "<video>"]})
    _save_llava_next_video(out, tokenizer, LLAVA_NEXT_VIDEO_VICUNA_CHAT_TEMPLATE)


#: llava-hf/llava-onevision-qwen2-*-hf's chat template (as transformers' processor tests carry
#: it): the role and a space, images, then videos, then each text part on its own line.
LLAVA_ONEVISION_CHAT_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + ' '}}{# Render all images "
    "first #}{% for content in message['content'] | selectattr('type', 'equalto', 'image') %}{{ "
    "'<image>' }}{% endfor %}{# Render all video then #}{% for content in message['content'] | "
    "selectattr('type', 'equalto', 'video') %}{{ '<video>' }}{% endfor %}{# Render all text next "
    "#}{% if message['role'] != 'assistant' %}{% for content in message['content'] | "
    "selectattr('type', 'equalto', 'text') %}{{ '\\n' + content['text'] }}{% endfor %}{% else %}"
    "{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}"
    "{% generation %}{{ '\\n' + content['text'] }}{% endgeneration %}{% endfor %}{% endif %}"
    "{{'<|im_end|>'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{% endif %}"
)


@_register(
    "llava-onevision",
    "LlavaOnevisionForConditionalGeneration + LlavaOnevisionProcessor (SigLIP tower, Qwen2), "
    "video input",
)
def _build_llava_onevision(out: Path) -> None:
    """LLaVA-OneVision as the llava-onevision-qwen2 checkpoints are shaped: a SigLIP vision
    tower (32x32 frames, 8x8 patches, every patch kept: ``vision_feature_select_strategy
    "full"``), a 2-layer Qwen2 and its byte-level BPE with ``<image>`` and ``<video>``.

    Each frame's 4x4 patch features are pooled bilinearly to 2x2, and one ``image_newline``
    follows the video: the processor expands ``<video>`` to ``frames * 4 + 1`` tokens (33 for
    8 frames). Frames are resized to 32x32 (no crop), as the checkpoints resize to 384x384.
    """
    tokenizer = _qwen2_tokenizer(["<image>", "<video>"])
    image_token_id, video_token_id = tokenizer.convert_tokens_to_ids(["<image>", "<video>"])
    pinpoints = [[IMAGE_SIZE, IMAGE_SIZE]]
    config = {
        "text_config": _text_config(tokenizer, model_type="qwen2", **VIDEO_LLM_TEXT),
        "vision_config": dict(VISION, model_type="siglip_vision_model"),
        "image_token_id": image_token_id,
        "video_token_id": video_token_id,
        "image_grid_pinpoints": pinpoints,
        "vision_feature_layer": -1,
        "vision_feature_select_strategy": "full",
    }
    pixels = {"size": {"height": IMAGE_SIZE, "width": IMAGE_SIZE}}
    processor = {
        **_media("LlavaOnevision", {**pixels, "image_grid_pinpoints": pinpoints}, pixels),
        "tokenizer": tokenizer,
        "chat_template": LLAVA_ONEVISION_CHAT_TEMPLATE,
        "num_image_tokens": (IMAGE_SIZE // PATCH_SIZE) ** 2,
        "vision_feature_select_strategy": "full",
    }
    _save_twin(out, "LlavaOnevision", config, processor)


@_register_fidelity(
    "video-llava",
    "VideoLlavaForConditionalGeneration + VideoLlavaProcessor around the real Llama-2 tokenizer "
    "(+ <image>, <video>) and the Vicuna template, video input",
)
def _build_video_llava(out: Path) -> None:
    """Video-LLaVA as LanguageBind/Video-LLaVA-7B-hf is shaped: CLIP image and video towers
    (32x32 frames resized and centre-cropped, 8x8 patches), a 2-layer Llama, Vicuna's
    tokenizer (Llama-2's SentencePiece BPE plus ``<image>`` 32000 and ``<video>`` 32001, BOS
    added to every prompt) and the Vicuna ``USER: <video>\\n... ASSISTANT:`` template.

    A frame keeps its CLS token in the video features: ``<video>`` becomes ``frames * (16 + 1)``
    tokens (136 for 8 frames), fed as ``pixel_values_videos``.
    """
    from foilkit.synthetic.real_tokenizers import load_real_tokenizer

    tokenizer = load_real_tokenizer("llama2")
    tokenizer.add_special_tokens({"additional_special_tokens": ["<image>", "<video>"]})
    image_token_id, video_token_id = tokenizer.convert_tokens_to_ids(["<image>", "<video>"])
    config = {
        "text_config": _text_config(tokenizer, model_type="llama", **VIDEO_LLM_TEXT),
        "vision_config": dict(VISION, model_type="clip_vision_model"),
        "image_token_id": image_token_id,
        "video_token_id": video_token_id,
        **CLIP_FEATURES,
    }
    processor = {
        **_media("VideoLlava", SQUARE, SQUARE),
        "tokenizer": tokenizer,
        "patch_size": PATCH_SIZE,
        "vision_feature_select_strategy": "default",
        "chat_template": LLAVA_NEXT_VIDEO_VICUNA_CHAT_TEMPLATE,
    }
    _save_twin(out, "VideoLlava", config, processor)
