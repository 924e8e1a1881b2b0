"""ERNIE 4.5 VL (Baidu, ``ernie4_5_vl_moe``): a mixture-of-experts video LLM that draws each
frame's time onto the frame itself.

Its video processor writes ``time: hh:mm:ss.ss`` in the corner of every frame (from
``video_metadata``; 24 fps when it is missing) with a TrueType font the checkpoint ships
(``Roboto-Regular.ttf``; the twin ships matplotlib's DejaVu Sans instead, as no font can be
downloaded here). The chat template writes a video part as
``Video 1:<|VIDEO_START|><|VIDEO_PLACEHOLDER|><|VIDEO_END|>``, which the processor expands to one
placeholder per 2 frames x 2x2 patches, and its generation prompt ends with an empty reasoning
block (``\\nAssistant: <think>\\n\\n</think>\\n\\n``) unless thinking is asked for.
"""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import (
    PATCH_SIZE,
    VIDEO_LLM_TEXT,
    _media,
    _register,
    _save_twin,
    _text_config,
)

#: The multimodal tokens of the ERNIE 4.5 VL tokenizer, as its ``tokenizer_config.json`` names
#: them (``image_token`` ... ``video_start_token``).
ERNIE_VL_TOKENS = {
    "image_token": "<|IMAGE_PLACEHOLDER|>",
    "image_start_token": "<|IMAGE_START|>",
    "image_end_token": "<|IMAGE_END|>",
    "video_token": "<|VIDEO_PLACEHOLDER|>",
    "video_start_token": "<|VIDEO_START|>",
    "video_end_token": "<|VIDEO_END|>",
}

#: baidu/ERNIE-4.5-VL-28B-A3B-PT's chat template (transformers' conversion script for it).
ERNIE_VL_CHAT_TEMPLATE = """
{%- set image_count = namespace(value=0) -%}
{%- set video_count = namespace(value=0) -%}
{{- '<|begin_of_sentence|>' }}
{%- for message in messages -%}
    {%- if message.role in ['system', 'user'] -%}
        {%- if message.role == 'user' -%}
            {{- 'User: ' -}}
        {%- endif -%}
        {%- if message.content is string -%}
            {{- message.content -}}
        {%- else -%}
            {%- for content_item in message.content -%}
                {%- if content_item.type == 'text' -%}
                    {{- content_item.text -}}
                {%- elif content_item.type in ['image_url', 'image'] -%}
                    {%- set image_count.value = image_count.value + 1 -%}
                Picture {{ image_count.value }}:<|IMAGE_START|><|IMAGE_PLACEHOLDER|><|IMAGE_END|>
                {%- elif content_item.type in ['video_url', 'video'] -%}
                    {%- set video_count.value = video_count.value + 1 -%}
                Video {{ video_count.value }}:<|VIDEO_START|><|VIDEO_PLACEHOLDER|><|VIDEO_END|>
                {%- endif -%}
            {%- endfor -%}
        {%- endif -%}
        {%- if message.role == 'system' -%}
            {{- '\\n' -}}
        {%- endif -%}
    {%- elif message.role == 'assistant' -%}
        {%- macro extract_text_content(content_field) -%}
            {%- if content_field is string -%}
                {{- content_field -}}
            {%- elif content_field is iterable and content_field is not string -%}
                {%- set ns = namespace(text_parts=[]) -%}
                {%- for item in content_field -%}
                    {%- if item.type == 'text' -%}
                        {%- set ns.text_parts = ns.text_parts + [item.text] -%}
                    {%- endif -%}
                {%- endfor -%}
                {{- ns.text_parts | join("") -}}
            {%- else -%}
                {{- '' -}}
            {%- endif -%}
        {%- endmacro -%}
        {%- set reasoning_content = extract_text_content(message.reasoning_content) -%}
        {%- set content = extract_text_content(message.content) -%}
        {%- if '</think>' in content %}
            {%- set reasoning_content = \
content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}
            {%- set content = content.split('</think>')[-1].lstrip('\\n') %}
        {%- endif %}
        {%- if reasoning_content %}
            {{- '\\n' + 'Assistant: ' + '<think>\\n' + reasoning_content.strip('\\n') + \
'\\n</think>\\n' + content.lstrip('\\n') }}
        {%- else %}
            {{- '\\n' + 'Assistant: ' + content }}
        {%- endif %}
        {{- '<|end_of_sentence|>' }}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt is not defined or add_generation_prompt is true %}
    {{- '\\nAssistant: ' -}}
    {%- if (enable_thinking is defined and enable_thinking is false) or \
enable_thinking is not defined %}
        {{- '<think>\\n\\n</think>\\n\\n' }}
    {%- endif %}
    {%- if enable_thinking is defined and enable_thinking is true %}{{- '<think>' }}{%- endif %}
{%- endif %}"""

#: The twin's pixels: 8x8 patches merged 2x2 and 2 frames at a time; a frame at most 32x32
#: pixels (a 48x64 frame becomes 16x32: 2x4 patches).
ERNIE_VL_PIXELS = {
    "size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32},
    "patch_size": PATCH_SIZE,
    "merge_size": 2,
    "temporal_patch_size": 2,
}


def font_path() -> Path:
    """A TrueType font for the frames' drawn times: matplotlib's DejaVu Sans."""
    import matplotlib

    return Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"


@_register(
    "ernie4.5-vl",
    "Ernie4_5_VLMoeForConditionalGeneration (a dense and a mixture-of-experts layer) + "
    "Ernie4_5_VLMoeProcessor (times drawn on the frames), video input",
)
def _build_ernie4_5_vl(out: Path) -> None:
    """ERNIE 4.5 VL: a 2-layer text model (a dense MLP layer, then a layer of 4 experts, 2 a
    token, and a shared one, per modality), a 1-layer vision tower (8x8 patches, 2x2 spatial
    and 2-frame temporal merge); 8 frames of 16x32 pixels are 8 ``<|VIDEO_PLACEHOLDER|>``."""
    from transformers import Qwen2Tokenizer

    specials = ["<unk>", "<|begin_of_sentence|>", "<|end_of_sentence|>", "<think>", "</think>"]
    tokenizer = tiny_tokenizers.byte_level_bpe(
        Qwen2Tokenizer,
        [*specials, *ERNIE_VL_TOKENS.values()],
        pad_token="<unk>",
        bos_token="<|begin_of_sentence|>",
        eos_token="<|end_of_sentence|>",
        extra_special_tokens=ERNIE_VL_TOKENS,
    )
    ids = {
        f"{name}_id": tokenizer.convert_tokens_to_ids(token)
        for name, token in ERNIE_VL_TOKENS.items()
    }
    text = _text_config(
        tokenizer,
        **VIDEO_LLM_TEXT,
        rope_parameters={
            "rope_type": "default",
            "rope_theta": 500_000.0,
            "mrope_section": [1, 1, 2],
        },
        mlp_layer_types=["dense", "sparse"],
        moe_intermediate_size=[16, 16],
        moe_k=2,
        moe_num_experts=4,
        moe_num_shared_experts=1,
    )
    vision = {
        "depth": 1,
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_heads": 4,
        "patch_size": PATCH_SIZE,
        "spatial_merge_size": 2,
        "temporal_merge_size": 2,
    }
    config = {"text_config": text, "vision_config": vision, **ids}
    video = {**ERNIE_VL_PIXELS, "font": str(font_path())}
    processor = {
        **_media("Ernie4_5_VLMoe", ERNIE_VL_PIXELS, video),
        "tokenizer": tokenizer,
        "chat_template": ERNIE_VL_CHAT_TEMPLATE,
    }
    _save_twin(out, "Ernie4_5_VLMoe", config, processor)
