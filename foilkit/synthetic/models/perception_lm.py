"""Perception LM (facebook/Perception-LM-*): a Llama 3 video LLM around a timm Perception
Encoder, whose chat template writes the BOS token its tokenizer also adds."""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import (
    IMAGE_SIZE,
    PATCH_SIZE,
    PE_CORE,
    VIDEO_LLM_TEXT,
    _media,
    _register,
    _save_twin,
    _text_config,
)

#: Perception LM's Llama 3 special tokens and its image and video placeholders.
PERCEPTION_LM_TOKENS = {
    "bos_token": "<|begin_of_text|>",
    "pad_token": "<|end_of_text|>",
    "eos_token": "<|eot_id|>",
}
PERCEPTION_LM_MEDIA = {"image_token": "<|image|>", "video_token": "<|video|>"}
#: The checkpoints' chat template (as transformers' processor tests carry it): BOS, a default
#: system prompt, Llama 3 headers, images then videos then the trimmed text of each turn.
PERCEPTION_LM_CHAT_TEMPLATE = (
    "{{- bos_token }}"
    "{%- if messages[0]['role'] == 'system' -%}"
    "    {%- set system_message = messages[0]['content']|trim %}\n"
    "    {%- set messages = messages[1:] %}\n"
    "{%- else %}"
    "    {%- set system_message = 'You are a helpful language and vision assistant. You are able "
    "to understand the visual content that the user provides, and assist the user with a variety "
    "of tasks using natural language.' %}"
    "{%- endif %}"
    "{{- '<|start_header_id|>system<|end_header_id|>\\n\\n' }}"
    "{{- system_message }}"
    "{{- '<|eot_id|>' }}"
    "{%- for message in messages %}"
    "{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}"
    "{%- for content in message['content'] | selectattr('type', 'equalto', 'image') %}"
    "{{ '<|image|>' }}"
    "{%- endfor %}"
    "{%- for content in message['content'] | selectattr('type', 'equalto', 'video') %}"
    "{{ '<|video|>' }}"
    "{%- endfor %}"
    "{%- for content in message['content'] | selectattr('type', 'equalto', 'text') %}"
    "{{- content['text'] | trim }}"
    "{%- endfor %}"
    "{{'<|eot_id|>' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}"
    "{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
    "{%- endif %}"
)


@_register(
    "perception-lm",
    "PerceptionLMForConditionalGeneration (timm Perception Encoder) + PerceptionLMProcessor, "
    "video input",
    requires=("timm",),
)
def _build_perception_lm(out: Path) -> None:
    """Perception LM: a 1-layer timm ``vit_pe_core`` (32x32 frames, 8x8 patches, a CLS token
    the model drops), a projector pooling 2x2, a 2-layer Llama and a byte-level BPE with
    Llama 3's special tokens that adds ``<|begin_of_text|>`` to every text, as Llama 3's does.

    The processor expands the template's ``<|video|>`` to 4 tokens a frame (32 for 8 frames),
    fed as ``pixel_values_videos``. Needs ``timm``.
    """
    from transformers import Qwen2Tokenizer

    tokenizer = tiny_tokenizers.byte_level_bpe(
        Qwen2Tokenizer,
        [*PERCEPTION_LM_TOKENS.values(), "<|start_header_id|>", "<|end_header_id|>"]
        + list(PERCEPTION_LM_MEDIA.values()),
        **PERCEPTION_LM_TOKENS,
        add_bos_token=True,
        extra_special_tokens=PERCEPTION_LM_MEDIA,
    )
    grid = IMAGE_SIZE // PATCH_SIZE
    vision = {
        **PE_CORE,
        "model_args": {
            **PE_CORE["model_args"],
            "global_pool": "",
            "use_post_transformer_norm": False,
            "init_values": 0.1,
            "ref_feat_shape": (grid, grid),
        },
    }
    media = tokenizer.convert_tokens_to_ids(list(PERCEPTION_LM_MEDIA.values()))
    config = {
        "text_config": _text_config(tokenizer, model_type="llama", **VIDEO_LLM_TEXT),
        "vision_config": vision,
        "vision_use_cls_token": True,
        "projector_pooling_ratio": 2,
        "image_token_id": media[0],
        "video_token_id": media[1],
    }
    image = {"tile_size": IMAGE_SIZE, "max_num_tiles": 1, "vision_input_type": "vanilla"}
    processor = {
        **_media("PerceptionLM", image, {"size": {"height": IMAGE_SIZE, "width": IMAGE_SIZE}}),
        "tokenizer": tokenizer,
        "patch_size": PATCH_SIZE,
        "pooling_ratio": 2,
        "chat_template": PERCEPTION_LM_CHAT_TEMPLATE,
    }
    _save_twin(out, "PerceptionLM", config, processor)
