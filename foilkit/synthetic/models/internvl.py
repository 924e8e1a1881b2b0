"""InternVL (the ``-hf`` checkpoints, e.g. OpenGVLab/InternVL3-1B-hf): a video LLM that reads a
video as its frames' image tiles."""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic.models._base import (
    IMAGE_SIZE,
    PATCH_SIZE,
    VIDEO_LLM_TEXT,
    _media,
    _qwen2_tokenizer,
    _register,
    _save_twin,
    _text_config,
)

#: The InternVL tokenizer's multimodal tokens, as its ``extra_special_tokens`` name them.
INTERNVL_TOKENS = {
    "start_image_token": "<img>",
    "end_image_token": "</img>",
    "context_image_token": "<IMG_CONTEXT>",
    "video_token": "<video>",
}
#: The ``-hf`` checkpoints' chat template (transformers' InternVL conversion script): a video
#: part is ``<video>`` and a new line, which the processor expands frame by frame.
INTERNVL_CHAT_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n'}}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for content in message['content'] %}{% if content['type'] == 'image' %}"
    "{{ '<IMG_CONTEXT>\\n' }}{% elif content['type'] == 'video' %}{{ '<video>\\n' }}"
    "{% elif content['type'] == 'text' %}{{ content['text'] }}{% endif %}{% endfor %}"
    "{% endif %}{{'<|im_end|>\\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{'<|im_start|>assistant\\n' }}{% endif %}"
)
#: Tokens a frame (or an image tile): 4x4 patches, pixel-shuffled by 0.5 to 2x2.
INTERNVL_FRAME_TOKENS = (IMAGE_SIZE // PATCH_SIZE // 2) ** 2


@_register(
    "internvl",
    "InternVLForConditionalGeneration + InternVLProcessor (InternVLVideoProcessor, Qwen2), "
    "video input as per-frame image tiles",
)
def _build_internvl(out: Path) -> None:
    """InternVL3: a 1-layer InternViT (32x32 frames, 8x8 patches), pixel shuffle by 0.5 and an
    MLP projector, a 2-layer Qwen2 with its byte-level BPE and InternVL's multimodal tokens.

    The processor expands the chat template's ``<video>`` into one line per frame,
    ``Frame{i}: <img>`` + 4 ``<IMG_CONTEXT>`` + ``</img>``, and feeds the frames as
    ``pixel_values`` (one 32x32 tile a frame); ``config.image_token_id`` is ``<IMG_CONTEXT>``.
    """
    from transformers import GotOcr2ImageProcessor

    tokenizer = _qwen2_tokenizer(
        list(INTERNVL_TOKENS.values()), extra_special_tokens=INTERNVL_TOKENS
    )
    vision = {
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "image_size": [IMAGE_SIZE, IMAGE_SIZE],
        "patch_size": [PATCH_SIZE, PATCH_SIZE],
    }
    config = {
        "text_config": _text_config(tokenizer, model_type="qwen2", **VIDEO_LLM_TEXT),
        "vision_config": vision,
        "image_token_id": tokenizer.convert_tokens_to_ids(INTERNVL_TOKENS["context_image_token"]),
        "image_seq_length": INTERNVL_FRAME_TOKENS,
        "downsample_ratio": 0.5,
    }
    pixels = {"size": {"height": IMAGE_SIZE, "width": IMAGE_SIZE}}
    processor = {
        "image_processor": GotOcr2ImageProcessor(**pixels, crop_to_patches=False),
        **_media("InternVL", video=pixels),
        "tokenizer": tokenizer,
        "chat_template": INTERNVL_CHAT_TEMPLATE,
        "image_seq_length": INTERNVL_FRAME_TOKENS,
    }
    _save_twin(out, "InternVL", config, processor)
