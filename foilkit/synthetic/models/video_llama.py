"""VideoLLaMA3 (the ``-HF`` checkpoints, e.g. lkhl/VideoLLaMA3-2B-Image-HF): a video LLM that
writes each frame's time before its tokens and drops the patches a frame repeats."""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic.models._base import (
    IMAGE_SIZE,
    NUM_FRAMES,
    PATCH_SIZE,
    VIDEO_LLM_TEXT,
    VIDEO_LLM_VISION,
    _media,
    _qwen2_tokenizer,
    _register,
    _save_twin,
    _text_config,
)

#: The ``-HF`` checkpoints' chat template (its ``chat_template.jinja``): ``<|video_pad|>`` and a
#: new line for a video part, which the processor expands frame by frame.
VIDEO_LLAMA_3_CHAT_TEMPLATE = """
{%- set identifier = 'im' %}
{% for message in messages %}
    {% if add_system_prompt and loop.first and message['role'] != 'system' %}
        {{- '<|im_start|>system
You are VideoLLaMA3 created by Alibaba DAMO Academy, a helpful assistant to help people \
understand images and videos.<|im_end|>
' -}}
    {% endif %}
    {% if message['role'] == 'stream' %}
        {% set identifier = 'stream' %}
    {% else %}
        {% set identifier = 'im' %}
    {% endif %}
    {{- '<|' + identifier + '_start|>' + message['role'] + '
' -}}
    {% if message['content'] is string %}
        {{- message['content'] -}}
    {% else %}
        {% for content in message['content'] %}
            {% if content['type'] == 'text' %}
                {{- content['text'] -}}
            {% elif content['type'] == 'image' %}
                {{- '<|image_pad|>' + '
' -}}
            {% elif content['type'] == 'video' %}
                {{- '<|video_pad|>' + '
' -}}
            {% endif %}
        {% endfor %}
    {% endif %}
    {{- '<|' + identifier + '_end|>' -}}
    {% if identifier != 'stream' %}
        {{- '
' -}}
    {% endif %}
{% endfor %}
{% if add_generation_prompt %}
    {{- '<|im_start|>assistant
' -}}
{% endif %}
"""
VIDEO_LLAMA_3_TOKENS = ["<|image_pad|>", "<|video_pad|>", "<|stream_start|>", "<|stream_end|>"]


@_register(
    "video-llama-3",
    "VideoLlama3ForConditionalGeneration + VideoLlama3Processor (VideoLlama3VideoProcessor), "
    "video input with frame times in the prompt",
)
def _build_video_llama_3(out: Path) -> None:
    """VideoLLaMA3: a 1-layer SigLIP-style vision encoder with 2D rotary positions (8x8
    patches, 2x2 merge), a 2-layer Qwen2 and its byte-level BPE with ``<|image_pad|>`` and
    ``<|video_pad|>``.

    The video processor shares ``32 * 32 * 8`` pixels among a view's frames (a 48x64 frame of
    8 becomes 16x32: 2 merged tokens) and marks the patches that repeat the previous frame's,
    which the model drops (``video_compression_mask``); the processor writes
    ``Time {t:.1f}s:`` (from the ``video_metadata`` times) then the frame's kept tokens, frames
    joined by commas.
    """
    tokenizer = _qwen2_tokenizer(VIDEO_LLAMA_3_TOKENS)
    image_token_id, video_token_id = tokenizer.convert_tokens_to_ids(VIDEO_LLAMA_3_TOKENS[:2])
    config = {
        "text_config": _text_config(tokenizer, model_type="qwen2", **VIDEO_LLM_TEXT),
        "vision_config": VIDEO_LLM_VISION,
        "image_token_id": image_token_id,
        "video_token_id": video_token_id,
    }
    pixels = {"patch_size": PATCH_SIZE, "merge_size": 2}
    image = {"shortest_edge": 16 * 16, "longest_edge": IMAGE_SIZE * IMAGE_SIZE}
    video = {**image, "longest_edge": IMAGE_SIZE * IMAGE_SIZE * NUM_FRAMES}
    processor = {
        **_media("VideoLlama3", {**pixels, "size": image}, {**pixels, "size": video}),
        "tokenizer": tokenizer,
        "chat_template": VIDEO_LLAMA_3_CHAT_TEMPLATE,
    }
    _save_twin(out, "VideoLlama3", config, processor)
