"""EXAONE 4.5 (LG AI Research, ``exaone4_5``): a Qwen2.5-VL-style vision tower on the EXAONE 4
text model (sliding-window and global attention layers, the global ones without RoPE).

Video goes through ``Qwen2VLVideoProcessor``: 2 frames a temporal patch, 2x2 patches merged into
one ``<|video_pad|>``, and no time axis (no timestamps, 1-D positions). The chat template is
EXAONE 4.0's (``LGAI-EXAONE/EXAONE-4.0-*``: a system turn's content written as it is, the
generation prompt's empty reasoning ``<think>\\n\\n</think>\\n\\n``), with user turns' video and
image parts written as the processor's placeholders: EXAONE 4.5's own template is not in the
sources available here.
"""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import VIDEO_LLM_TEXT, _register, _save_twin, _text_config
from foilkit.synthetic.models._qwen_vision import QWEN2_5_VL_VISION, qwen_vl_processors

EXAONE_TOKENS = ["[|system|]", "[|user|]", "[|assistant|]", "[|endofturn|]", "[|tool|]"]
EXAONE_SLIDING_WINDOW = 8  # tokens: far shorter than a video prompt, so the window is full

#: EXAONE 4.0's chat template without its tool branches; a user turn's parts one by one.
EXAONE_CHAT_TEMPLATE = """{%- if not skip_think is defined %}{%- set skip_think = true %}\
{%- endif %}
{%- set role_indicators = {'user': '[|user|]\\n', 'assistant': '[|assistant|]\\n', \
'system': '[|system|]\\n', 'tool': '[|tool|]\\n'} %}
{%- set end_of_turn = '[|endofturn|]\\n' %}
{%- for i in range(messages | length) %}
    {%- set msg = messages[i] %}
    {%- set role = msg.role %}
    {%- if i == 0 and role == 'system' %}
        {{- role_indicators['system'] }}
        {{- msg.content }}
        {{- end_of_turn -}}
        {%- continue %}
    {%- endif %}
    {%- if role == 'assistant' %}
        {{- role_indicators['assistant'] }}
        {%- if msg.content %}
            {%- if "</think>" in msg.content %}
                {%- set content = msg.content.split('</think>')[-1].strip() %}
                {%- set reasoning_content = msg.content.split('</think>')[0].strip() %}
                {%- if reasoning_content.startswith("<think>") %}
                    {%- set reasoning_content = reasoning_content[9:].strip() %}
                {%- endif %}
            {%- else %}
                {%- set content = msg.content %}
            {%- endif %}
            {%- if (not skip_think and loop.last) and reasoning_content is defined %}
                {{- "<think>\\n" }}{{- reasoning_content }}{{- "\\n</think>\\n\\n" }}
            {%- else %}
                {{- "<think>\\n\\n</think>\\n\\n" }}
            {%- endif %}
            {{- content }}
        {%- endif %}
        {{- end_of_turn -}}
    {%- else %}
        {{- role_indicators[role] }}
        {%- if msg.content is string %}
            {{- msg.content }}
        {%- else %}
            {%- for part in msg.content %}
                {%- if part.type == 'video' %}{{- '<|video_pad|>' }}
                {%- elif part.type == 'image' %}{{- '<|image_pad|>' }}
                {%- elif part.type == 'text' %}{{- part.text }}{%- endif %}
            {%- endfor %}
        {%- endif %}
        {{- end_of_turn -}}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- role_indicators['assistant'] }}
    {%- if enable_thinking is defined and enable_thinking is true %}
        {{- "<think>\\n" }}
    {%- else %}
        {{- "<think>\\n\\n</think>\\n\\n" }}
    {%- endif %}
{%- endif %}"""


@_register(
    "exaone4.5",
    f"Exaone4_5_ForConditionalGeneration (a {EXAONE_SLIDING_WINDOW}-token sliding-window layer "
    "and a global layer without RoPE) + Exaone4_5_Processor (Qwen2-VL video processor), "
    "video input",
)
def _build_exaone4_5(out: Path) -> None:
    """EXAONE 4.5: a 2-layer EXAONE 4 text model (sliding window, then global attention), a
    1-layer windowed vision tower (8x8 patches, 2 frames a temporal patch, 2x2 merge); 8 frames
    of 48x64 resized to 16x32 are 8 ``<|video_pad|>``."""
    from transformers import Qwen2Tokenizer

    specials = ["[PAD]", "[BOS]", *EXAONE_TOKENS, "<think>", "</think>"]
    tokenizer = tiny_tokenizers.byte_level_bpe(
        Qwen2Tokenizer,
        [*specials, "<|image_pad|>", "<|video_pad|>"],
        pad_token="[PAD]",
        bos_token="[BOS]",
        eos_token="[|endofturn|]",
    )
    image, video = tokenizer.convert_tokens_to_ids(["<|image_pad|>", "<|video_pad|>"])
    text = _text_config(
        tokenizer,
        **VIDEO_LLM_TEXT,
        model_type="exaone4",
        sliding_window=EXAONE_SLIDING_WINDOW,
        layer_types=["sliding_attention", "full_attention"],
    )
    vision = {**QWEN2_5_VL_VISION, "num_key_value_heads": 2}
    config = {
        "text_config": text,
        "vision_config": vision,
        "image_token_id": image,
        "video_token_id": video,
    }
    processor = {
        **qwen_vl_processors("Qwen2VL"),
        "tokenizer": tokenizer,
        "chat_template": EXAONE_CHAT_TEMPLATE,
    }
    _save_twin(out, "Exaone4_5_", config, processor)
