"""GLM-V video LLMs (Zhipu AI): GLM-4.1V (``glm4v``), GLM-4.6V (``glm46v``), GLM-GA (``glmga``)
and GLM-5 Next (``glm5_next``).

All write a video as the chat template's ``<|begin_of_video|><|video|><|end_of_video|>``, which
the processor expands into one ``<|begin_of_image|>`` + ``<|image|>`` x tokens +
``<|end_of_image|>`` + timestamp block per temporal patch (two frames): GLM-4.1V writes the
patch's first frame time as whole seconds (``3``), the others as ``3.0 seconds``. The frame times
come from ``video_metadata`` (24 fps when it is missing). Their tokenizers are GLM-4's byte-level
BPE (151,552 ids): the twins use a tiny byte-level BPE with GLM's special tokens, and the chat
templates of the published checkpoints (``zai-org/GLM-4.1V-9B-Thinking``, ``zai-org/GLM-4.6V``).
"""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import (
    PATCH_SIZE,
    VIDEO_LLM_TEXT,
    _media,
    _register,
    _save,
    _save_twin,
    _text_config,
)
from foilkit.synthetic.models._qwen_vision import QWEN2_VL_MROPE, QWEN_VL_VISION

#: GLM-4's special tokens (``tokenizer_config.json`` of the GLM-V checkpoints), then the
#: multimodal ones; ``<|endoftext|>`` is EOS and padding.
GLM_SPECIAL_TOKENS = (
    "<|endoftext|> [MASK] [gMASK] [sMASK] <sop> <eop> <|system|> <|user|> <|assistant|> "
    "<|observation|> <|begin_of_image|> <|end_of_image|> <|begin_of_video|> <|end_of_video|> "
    "<|image|> <|video|> <think> </think>"
).split()

#: GLM-4.1V-9B-Thinking's ``chat_template.jinja``: a system turn's and an assistant turn's
#: ``content`` are written as they are (a string), a user turn's parts one by one.
GLM4V_CHAT_TEMPLATE = """[gMASK]<sop>
{%- for msg in messages %}
    {%- if msg.role == 'system' %}
<|system|>
{{ msg.content }}
    {%- elif msg.role == 'user' %}
<|user|>{{ '\\n' }}
        {%- if msg.content is string %}
{{ msg.content }}
        {%- else %}
            {%- for item in msg.content %}
                {%- if item.type == 'video' or 'video' in item %}
<|begin_of_video|><|video|><|end_of_video|>
                {%- elif item.type == 'image' or 'image' in item %}
<|begin_of_image|><|image|><|end_of_image|>
                {%- elif item.type == 'text' %}
{{ item.text }}
                {%- endif %}
            {%- endfor %}
        {%- endif %}
    {%- elif msg.role == 'assistant' %}
        {%- if msg.metadata %}
<|assistant|>{{ msg.metadata }}
{{ msg.content }}
        {%- else %}
<|assistant|>
{{ msg.content }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{% if add_generation_prompt %}<|assistant|>
{% endif %}"""

#: GLM-4.5V / GLM-4.6V's ``chat_template.jinja`` (its tool-calling branches left out): an
#: assistant turn opens with ``<think></think>`` (empty reasoning) before the answer, so the
#: answer follows ``<|assistant|>\\n<think></think>\\n``, not the generation prompt's end.
GLM46V_CHAT_TEMPLATE = """[gMASK]<sop>
{%- macro visible_text(content) -%}
    {%- if content is string -%}
        {{- content }}
    {%- elif content is iterable and content is not mapping -%}
        {%- for item in content -%}
            {%- if item is mapping and item.type == 'text' -%}
                {{- item.text }}
            {%- elif item is mapping and (item.type == 'image' or 'image' in item) -%}
                <|begin_of_image|><|image|><|end_of_image|>
            {%- elif item is mapping and (item.type == 'video' or 'video' in item) -%}
                <|begin_of_video|><|video|><|end_of_video|>
            {%- elif item is string -%}
                {{- item }}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{- content }}
    {%- endif -%}
{%- endmacro -%}
{%- set ns = namespace(last_user_index=-1) %}
{%- for m in messages %}
    {%- if m.role == 'user' %}
        {% set ns.last_user_index = loop.index0 -%}
    {%- endif %}
{%- endfor %}
{% for m in messages %}
{%- if m.role == 'user' -%}<|user|>
{% if m.content is string %}
{{ m.content }}
{%- else %}
{%- for item in m.content %}
{% if item.type == 'video' or 'video' in item %}
<|begin_of_video|><|video|><|end_of_video|>{% elif item.type == 'image' or 'image' in item %}
<|begin_of_image|><|image|><|end_of_image|>{% elif item.type == 'text' %}
{{ item.text }}
{%- endif %}
{%- endfor %}
{%- endif %}
{{- '/nothink' if (enable_thinking is defined and not enable_thinking and not \
visible_text(m.content).endswith("/nothink")) else '' -}}
{%- elif m.role == 'assistant' -%}
<|assistant|>
{%- set reasoning_content = '' %}
{%- set content = visible_text(m.content) %}
{%- if m.reasoning_content is string %}
    {%- set reasoning_content = m.reasoning_content %}
{%- else %}
    {%- if '</think>' in content %}
        {%- set reasoning_content = \
content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') %}
        {%- set content = content.split('</think>')[-1].lstrip('\\n') %}
    {%- endif %}
{%- endif %}
{%- if loop.index0 > ns.last_user_index and reasoning_content -%}
{{ '\\n<think>' + reasoning_content.strip() +  '</think>'}}
{%- else -%}
{{ '\\n<think></think>' }}
{%- endif -%}
{%- if content.strip() -%}
{{ '\\n' + content.strip() }}
{%- endif -%}
{%- elif m.role == 'system' -%}
<|system|>
{{ visible_text(m.content) }}
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}
<|assistant|>
{{'<think></think>\\n' if (enable_thinking is defined and not enable_thinking) else ''}}
{%- endif -%}"""

#: The GLM-V pixel settings of the twins: 8x8 patches merged 2x2 (16-pixel multiples), two
#: frames a temporal patch, at most 8 frames of 32x32 pixels a video (an image 32x32).
GLM_VIDEO_PIXELS = {
    "size": {"shortest_edge": 16 * 16, "longest_edge": 8 * 32 * 32},
    "patch_size": PATCH_SIZE,
    "temporal_patch_size": 2,
    "merge_size": 2,
}
GLM_IMAGE_PIXELS = {**GLM_VIDEO_PIXELS, "size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32}}


#: The GLM-V vision tower: the tiny Qwen-VL one, for 32x32 images.
GLM_VISION = {**QWEN_VL_VISION, "image_size": 32}


def _glm_tokenizer():
    from transformers import Qwen2Tokenizer

    return tiny_tokenizers.byte_level_bpe(
        Qwen2Tokenizer, GLM_SPECIAL_TOKENS, eos_token="<|endoftext|>", pad_token="<|endoftext|>"
    )


def _glm_token_ids(tokenizer) -> dict[str, int]:
    """The GLM-V configs' multimodal token ids, from the tokenizer."""
    names = ("image_start", "image_end", "video_start", "video_end", "image", "video")
    ids = tokenizer.convert_tokens_to_ids(GLM_SPECIAL_TOKENS[10:16])
    return {f"{name}_token_id": id_ for name, id_ in zip(names, ids)}


def _save_glm_v(out: Path, model: str, chat_template: str, own: str | None = None) -> None:
    """A GLM-V twin in transformers' ``<model>ForConditionalGeneration`` and ``<model>Processor``,
    with the config and the image and video processors of prefix ``own`` (default: ``model``; a
    family with those classes of its own but not a model or processor class): a 2-layer GLM-4
    text model, :data:`GLM_VISION`, the tiny GLM tokenizer and ``chat_template``."""
    own = own or model
    tokenizer = _glm_tokenizer()
    text = _text_config(tokenizer, **VIDEO_LLM_TEXT, rope_parameters=QWEN2_VL_MROPE)
    config = {"text_config": text, "vision_config": GLM_VISION, **_glm_token_ids(tokenizer)}
    processor = {
        **_media(own, GLM_IMAGE_PIXELS, GLM_VIDEO_PIXELS),
        "tokenizer": tokenizer,
        "chat_template": chat_template,
    }
    _save_twin(out, model, config, processor, config_prefix=own)


@_register("glm4v", "Glm4vForConditionalGeneration + Glm4vProcessor (GLM-4.1V), video input")
def _build_glm4v(out: Path) -> None:
    """GLM-4.1V: each temporal patch of a video is written with its first frame's whole
    second; with 8 frames of 48x64 resized to 16x32, 4 blocks of 2 ``<|image|>`` tokens."""
    _save_glm_v(out, "Glm4v", GLM4V_CHAT_TEMPLATE)


@_register("glm46v", "Glm46VForConditionalGeneration + Glm46VProcessor (GLM-4.6V), video input")
def _build_glm46v(out: Path) -> None:
    """GLM-4.6V: as GLM-4.1V, its timestamps written ``3.0 seconds``, and an assistant turn that
    opens with an empty ``<think></think>``."""
    _save_glm_v(out, "Glm46V", GLM46V_CHAT_TEMPLATE)


@_register(
    "glmga",
    "Glm46VForConditionalGeneration of a GlmgaConfig + Glm46VProcessor around the Glmga image "
    "and video processors, video input",
)
def _build_glmga(out: Path) -> None:
    """GLM-GA: transformers reads it with GLM-4.6V's model (``glmga`` -> ``Glm46VModel``) and
    declares its own image and video processors but no processor class, so a checkpoint names
    ``Glm46VProcessor`` (its template and timestamps are GLM-4.6V's)."""
    _save_glm_v(out, "Glm46V", GLM46V_CHAT_TEMPLATE, own="Glmga")


@_register(
    "glm5-next",
    "Glm5NextForConditionalGeneration (a linear-attention and an indexed sparse-attention layer, "
    "a dense and a mixture-of-experts MLP) + Glm5NextProcessor, video input",
)
def _build_glm5_next(out: Path) -> None:
    """GLM-5 Next: GLM-4.6V's processor (timestamps ``3.0 seconds`` a temporal patch) on a
    2-layer hybrid text model (KDA linear attention, then DeepSeek-style indexed attention over
    low-rank queries and keys; 4 experts, 2 a token, and a shared one in the second layer, 2
    hyper-connection streams), a 1-layer vision tower. The published GLM-5.3-Flash template
    writes a reminder instead of a video (foilkit refuses such a checkpoint on load: its template
    writes no video placeholder); the twin's is GLM-4.6V's, with GLM's video markers."""
    from transformers import (
        Glm5NextConfig,
        Glm5NextForConditionalGeneration,
        Glm5NextImageProcessor,
        Glm5NextProcessor,
        Glm5NextVideoProcessor,
    )

    tokenizer = _glm_tokenizer()
    text = {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "intermediate_size": 32,
        "moe_intermediate_size": 16,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "n_shared_experts": 1,
        "n_routed_experts": 4,
        "num_experts_per_tok": 2,
        "kv_lora_rank": 16,
        "q_lora_rank": 16,
        "qk_rope_head_dim": 0,
        "qk_nope_head_dim": 8,
        "v_head_dim": 8,
        "index_topk": 16,
        "index_kpool": 4,
        "index_head_dim": 8,
        "index_n_heads": 2,
        "linear_head_dim": 8,
        "linear_num_heads": 4,
        "hc_mult": 2,
        "mlp_layer_types": ["dense", "sparse"],
        "layer_types": ["linear_attention", "indexed_attention"],
        "max_position_embeddings": 512,
        "pad_token_id": tokenizer.pad_token_id,
        "eos_token_id": tokenizer.eos_token_id,
    }
    vision = {**GLM_VISION, "projection_intermediate_size": 32}
    config = Glm5NextConfig(text_config=text, vision_config=vision, **_glm_token_ids(tokenizer))
    processor = Glm5NextProcessor(
        image_processor=Glm5NextImageProcessor(**GLM_IMAGE_PIXELS),
        # a budget in merged tokens (not pixels): 8 frames of 48x64 fit 16x32, as the others'
        video_processor=Glm5NextVideoProcessor(
            **{**GLM_VIDEO_PIXELS, "size": {"longest_edge": 1}},
            min_image_tokens=1,
            max_image_tokens=8,
        ),
        tokenizer=tokenizer,
        chat_template=GLM46V_CHAT_TEMPLATE,
    )
    _save(out, Glm5NextForConditionalGeneration(config), processor)
