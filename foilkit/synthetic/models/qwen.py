"""Qwen vision-language video LLMs: Qwen2-VL, Qwen3.5, the Qwen3-VL-processor families (Qwen3-VL,
Qwen3-VL-MoE, Qwen3.5-MoE, Qwen4-Exp) and the Qwen2.5-VL and real-tokenizer fidelity twins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foilkit.synthetic.models._base import (
    PATCH_SIZE,
    QWEN2_VL_CHAT_TEMPLATE,
    VIDEO_LLM_TEXT,
    _qwen2_tokenizer,
    _register,
    _register_fidelity,
    _save_twin,
    _text_config,
)
from foilkit.synthetic.models._qwen_vision import (
    QWEN2_5_VL_VISION,
    QWEN2_VL_MROPE,
    QWEN3_VL_DEEPSTACK_VISION,
    QWEN3_VL_VISION,
    QWEN_VISION_TOKENS,
    qwen_vision_token_ids,
    qwen_vl_processors,
)


@_register("qwen2-vl", "Qwen2VLForConditionalGeneration + Qwen2VLProcessor, video input")
def _build_qwen2_vl(out: Path) -> None:
    """Qwen2-VL: 1-layer vision tower (8x8 patches, 2 frames a temporal patch), 2-layer Qwen2.

    Feed video as ``processor(text=[prompt], videos=[frames], return_tensors="pt")``: frames are
    resized to at most 32*32 pixels keeping their aspect ratio, in multiples of 16 (a 48x64 frame
    becomes 16x32); every 2 frames form one temporal patch and 2x2 patches merge into one token,
    so 8 such frames give ``video_grid_thw == [[4, 2, 4]]`` and 8 ``<|video_pad|>`` tokens
    (``config.video_token_id``) between ``<|vision_start|>`` and ``<|vision_end|>``. The prompt
    comes from ``processor.apply_chat_template`` with a ``{"type": "video"}`` part, which writes
    one ``<|video_pad|>`` for the processor to expand; EOS is ``<|im_end|>``.
    ``<|image_pad|>`` (``config.image_token_id``) is the image placeholder.
    """
    vision = {
        "depth": 1,
        "embed_dim": 32,
        "hidden_size": VIDEO_LLM_TEXT["hidden_size"],
        "num_heads": 4,
        "mlp_ratio": 2,
        "patch_size": PATCH_SIZE,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
    }
    _save_qwen_vl(
        out,
        "Qwen2VL",
        {"rope_parameters": QWEN2_VL_MROPE},
        vision,
        chat_template=QWEN2_VL_CHAT_TEMPLATE,
        processor_prefix="Qwen2VL",
        video_prefix="Qwen2VL",
    )


def _save_qwen_vl(
    out: Path,
    model: str,
    text: dict,
    vision: dict,
    tokenizer: Any = None,
    *,
    chat_template: str | None = None,
    processor_prefix: str = "Qwen3VL",
    video_prefix: str = "Qwen3VL",
    **config: Any,
) -> None:
    """A Qwen-VL-style twin: ``<model>Config`` / ``<model>ForConditionalGeneration``
    (transformers class prefix ``model``) of a 2-layer text model (:data:`VIDEO_LLM_TEXT` with
    ``text``) and the ``vision`` tower around ``tokenizer`` (default: the tiny Qwen one; it holds
    :data:`QWEN_VISION_TOKENS`), with ``<processor_prefix>Processor`` of Qwen2-VL's image processor
    and ``<video_prefix>VideoProcessor`` (Qwen3-VL's by default: frame timestamps from
    ``video_metadata``) and ``chat_template`` (default: Qwen3-VL-Instruct's); ``config``: further
    config fields.

    One builder for all of them, so the Qwen2-VL, Qwen2.5-VL, Qwen3-VL and Qwen3.5 families and
    the families built on their classes share their token ids, pixels and text sizes."""
    tokenizer = tokenizer if tokenizer is not None else _qwen2_tokenizer(QWEN_VISION_TOKENS)
    model_config = {
        "text_config": _text_config(tokenizer, **VIDEO_LLM_TEXT, **text),
        "vision_config": vision,
        **qwen_vision_token_ids(tokenizer),
        **config,
    }
    processor = {
        **qwen_vl_processors(video_prefix),
        "tokenizer": tokenizer,
        "chat_template": chat_template or QWEN3_VL_CHAT_TEMPLATE,
    }
    _save_twin(out, model, model_config, processor, processor_prefix)


@_register(
    "qwen3.5",
    "Qwen3_5ForConditionalGeneration (a linear-attention and a full-attention layer) + "
    "Qwen3VLProcessor, video input",
)
def _build_qwen3_5(out: Path) -> None:
    """Qwen3.5: a hybrid text model whose first layer is linear attention (a causal convolution
    and a recurrent state in its cache, which cannot be cut back) and whose second is full
    attention, with a 1-layer vision tower (8x8 patches, 2 frames a temporal patch, 2x2 merge).

    Video goes through ``Qwen3VLVideoProcessor`` (frame timestamps come from ``video_metadata``);
    the chat template writes ``<|vision_start|><|video_pad|><|vision_end|>`` for a video part.
    """
    _save_qwen_vl(
        out, "Qwen3_5", QWEN3_5_TEXT, QWEN3_VL_VISION, chat_template=QWEN2_VL_CHAT_TEMPLATE
    )


QWEN2_5_VL_REAL_CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}"
    "{{ message['content'] }}<|im_end|>\n{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}{% if add_vision_id %}"
    "Picture {{ image_count.value }}: {% endif %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}{% if add_vision_id %}"
    "Video {{ video_count.value }}: {% endif %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TOKENS_PER_SECOND = 2  # Qwen2.5-VL-7B-Instruct's vision_config.tokens_per_second


def _save_qwen2_5_vl(out: Path, tokenizer, *, tie: bool = False) -> None:
    """A Qwen2.5-VL (1-layer windowed vision tower, 2-layer text model) around ``tokenizer``."""
    _save_qwen_vl(
        out,
        "Qwen2_5_VL",
        {"rope_parameters": QWEN2_VL_MROPE},
        {**QWEN2_5_VL_VISION, "tokens_per_second": TOKENS_PER_SECOND},
        tokenizer,
        chat_template=QWEN2_5_VL_REAL_CHAT_TEMPLATE,
        processor_prefix="Qwen2_5_VL",
        video_prefix="Qwen2VL",
        tie_word_embeddings=tie,
    )


@_register_fidelity(
    "qwen2.5-vl",
    "Qwen2_5_VLForConditionalGeneration + Qwen2_5_VLProcessor (tiny byte-level BPE), video input",
)
def _build_qwen2_5_vl(out: Path) -> None:
    """Qwen2.5-VL as ``qwen2-vl`` (8 frames -> ``video_grid_thw == [[4, 2, 4]]``), whose temporal
    position ids step by ``tokens_per_second * second_per_grid_ts`` (2 x 2 frames / sampled fps)."""
    _save_qwen2_5_vl(out, _qwen2_tokenizer(QWEN_VISION_TOKENS))


@_register_fidelity(
    "qwen2.5-vl-qwen3",
    "Qwen2.5-VL around the real Qwen3 tokenizer (151669 ids) and Qwen2.5-VL's chat template",
)
def _build_qwen2_5_vl_qwen3(out: Path) -> None:
    from foilkit.synthetic.real_tokenizers import load_real_tokenizer

    _save_qwen2_5_vl(out, load_real_tokenizer("qwen3"), tie=True)


# --- the Qwen3-VL processor families: Qwen3-VL (dense, MoE), Qwen3.5-MoE, Qwen4-Exp ---------------

#: Qwen3-VL-Instruct's chat template (the ``Qwen/Qwen3-VL-*-Instruct`` checkpoints) for what foilkit
#: renders: a system turn (a string or text parts, no default system prompt, unlike Qwen2.5-VL's),
#: user turns of video / image / text parts, assistant text; tool calls left out.
QWEN3_VL_CHAT_TEMPLATE = (
    "{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\\n' }}"
    "{%- if messages[0]['content'] is string %}{{- messages[0]['content'] }}"
    "{%- else %}{%- for content in messages[0]['content'] %}"
    "{%- if 'text' in content %}{{- content['text'] }}{%- endif %}{%- endfor %}{%- endif %}"
    "{{- '<|im_end|>\\n' }}{%- endif %}"
    "{%- set image_count = namespace(value=0) %}{%- set video_count = namespace(value=0) %}"
    "{%- for message in messages %}"
    "{%- if message['role'] == 'user' %}{{- '<|im_start|>' + message['role'] + '\\n' }}"
    "{%- if message['content'] is string %}{{- message['content'] }}{%- else %}"
    "{%- for content in message['content'] %}"
    "{%- if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{%- set image_count.value = image_count.value + 1 %}"
    "{%- if add_vision_id %}Picture {{ image_count.value }}: {% endif -%}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{%- elif content['type'] == 'video' or 'video' in content %}"
    "{%- set video_count.value = video_count.value + 1 %}"
    "{%- if add_vision_id %}Video {{ video_count.value }}: {% endif -%}"
    "<|vision_start|><|video_pad|><|vision_end|>"
    "{%- elif 'text' in content %}{{- content['text'] }}{%- endif %}{%- endfor %}{%- endif %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- elif message['role'] == 'assistant' %}{{- '<|im_start|>' + message['role'] + '\\n' }}"
    "{%- if message['content'] is string %}{{- message['content'] }}{%- else %}"
    "{%- for content in message['content'] %}{%- if 'text' in content %}{{- content['text'] }}"
    "{%- endif %}{%- endfor %}{%- endif %}{{- '<|im_end|>\\n' }}"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)
#: Qwen3.5's chat template (the ``Qwen/Qwen3.5-*`` checkpoints; tools left out): a thinking
#: template. Its generation prompt opens a reasoning block (``<think>\n``; ``enable_thinking=False``
#: writes it empty and closed), and an assistant turn after the last user query is written with its
#: reasoning block, empty when there is none: ``<think>\n\n</think>\n\n`` + the answer. System
#: text is trimmed; a system turn takes no image or video.
QWEN3_5_CHAT_TEMPLATE = (
    "{%- set image_count = namespace(value=0) %}{%- set video_count = namespace(value=0) %}"
    "{%- macro render_content(content, is_system_content=false) %}"
    "{%- if content is string %}{{- content }}"
    "{%- elif content is iterable and content is not mapping %}{%- for item in content %}"
    "{%- if 'image' in item or 'image_url' in item or item['type'] == 'image' %}"
    "{%- if is_system_content %}{{- raise_exception('System message cannot contain images.') }}"
    "{%- endif %}{%- set image_count.value = image_count.value + 1 %}"
    "{%- if add_vision_id %}{{- 'Picture ' ~ image_count.value ~ ': ' }}{%- endif %}"
    "{{- '<|vision_start|><|image_pad|><|vision_end|>' }}"
    "{%- elif 'video' in item or item['type'] == 'video' %}"
    "{%- if is_system_content %}{{- raise_exception('System message cannot contain videos.') }}"
    "{%- endif %}{%- set video_count.value = video_count.value + 1 %}"
    "{%- if add_vision_id %}{{- 'Video ' ~ video_count.value ~ ': ' }}{%- endif %}"
    "{{- '<|vision_start|><|video_pad|><|vision_end|>' }}"
    "{%- elif 'text' in item %}{{- item['text'] }}{%- endif %}{%- endfor %}{%- endif %}"
    "{%- endmacro %}"
    "{%- if messages[0]['role'] == 'system' %}"
    "{{- '<|im_start|>system\\n' + render_content(messages[0]['content'], true)|trim"
    " + '<|im_end|>\\n' }}{%- endif %}"
    "{%- set ns = namespace(last_query_index=messages|length - 1, found=false) %}"
    "{%- for message in messages[::-1] %}"
    "{%- if not ns.found and message['role'] == 'user' %}{%- set ns.found = true %}"
    "{%- set ns.last_query_index = messages|length - 1 - loop.index0 %}{%- endif %}"
    "{%- endfor %}"
    "{%- for message in messages %}"
    "{%- if message['role'] != 'system' %}"
    "{%- set content = render_content(message['content'])|trim %}"
    "{%- if message['role'] == 'user' %}"
    "{{- '<|im_start|>user\\n' + content + '<|im_end|>\\n' }}"
    "{%- elif message['role'] == 'assistant' %}"
    "{%- set reasoning = message['reasoning_content'] if message['reasoning_content'] is string"
    " else '' %}"
    "{%- if loop.index0 > ns.last_query_index %}"
    "{{- '<|im_start|>assistant\\n<think>\\n' + reasoning|trim + '\\n</think>\\n\\n' + content }}"
    "{%- else %}{{- '<|im_start|>assistant\\n' + content }}{%- endif %}"
    "{{- '<|im_end|>\\n' }}{%- endif %}{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}{%- else %}{{- '<think>\\n' }}{%- endif %}{%- endif %}"
)
#: Qwen3.5's reasoning delimiters, single tokens of its vocabulary
THINK_TOKENS = ["<think>", "</think>"]
#: Interleaved multimodal RoPE over a head of 8: (t, h, w) sections of 2, 1, 1 frequencies.
QWEN3_VL_ROPE = {**QWEN2_VL_MROPE, "mrope_interleaved": True}
#: The Qwen3-VL text model's settings beyond :data:`VIDEO_LLM_TEXT`.
QWEN3_VL_TEXT = {"head_dim": 8, "rope_parameters": QWEN3_VL_ROPE}
#: Four experts, two a token, 16 wide (Qwen3-VL-MoE, Qwen3.5-MoE, Qwen4-Exp).
TINY_MOE = {"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 16}
#: Qwen3.5's hybrid text layers: a linear-attention (gated delta) layer, then full attention,
#: with partial interleaved multimodal RoPE.
QWEN3_5_TEXT = {
    "head_dim": 8,
    "layer_types": ["linear_attention", "full_attention"],
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 8,
    "linear_value_head_dim": 8,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
    "rope_parameters": {
        **QWEN3_VL_ROPE,
        "partial_rotary_factor": 0.5,
        "mrope_section": [1, 1, 0],
    },
}


@_register("qwen3-vl", "Qwen3VLForConditionalGeneration + Qwen3VLProcessor, video input")
def _build_qwen3_vl(out: Path) -> None:
    """Qwen3-VL: a 2-layer Qwen3 text model (interleaved M-RoPE) and a 1-block vision tower whose
    output is also added to the first text layer (DeepStack, ``deepstack_visual_indexes=[0]``).

    The processor writes each temporal patch (2 frames) as ``<t seconds>`` then its own
    ``<|vision_start|>`` + ``<|video_pad|>`` tokens + ``<|vision_end|>``, ``t`` the mean time of
    its frames from ``video_metadata``."""
    _save_qwen_vl(out, "Qwen3VL", QWEN3_VL_TEXT, QWEN3_VL_DEEPSTACK_VISION)


@_register_fidelity(
    "qwen3-vl-qwen3",
    "Qwen3-VL around the real Qwen3 tokenizer (151669 ids; Qwen3-VL's own) and its chat template",
)
def _build_qwen3_vl_qwen3(out: Path) -> None:
    """``qwen3-vl`` around the tokenizer of the Qwen3-VL checkpoints (Qwen3's), embeddings tied:
    the frames' ``<t seconds>`` texts and the prompt are segmented as a real checkpoint's."""
    from foilkit.synthetic.real_tokenizers import load_real_tokenizer

    tokenizer = load_real_tokenizer("qwen3")
    _save_qwen_vl(
        out,
        "Qwen3VL",
        QWEN3_VL_TEXT,
        QWEN3_VL_DEEPSTACK_VISION,
        tokenizer,
        tie_word_embeddings=True,
    )


@_register("qwen3-vl-moe", "Qwen3VLMoeForConditionalGeneration + Qwen3VLProcessor, video input")
def _build_qwen3_vl_moe(out: Path) -> None:
    """Qwen3-VL-MoE: ``qwen3-vl`` with a mixture of 4 experts (2 a token) in each text layer."""
    text = {**QWEN3_VL_TEXT, **TINY_MOE}
    _save_qwen_vl(out, "Qwen3VLMoe", text, QWEN3_VL_DEEPSTACK_VISION)


@_register(
    "qwen3.5-moe",
    "Qwen3_5MoeForConditionalGeneration (linear + full attention, 4 experts) + Qwen3VLProcessor",
)
def _build_qwen3_5_moe(out: Path) -> None:
    """Qwen3.5-MoE: ``qwen3.5``'s hybrid layers (linear attention, then full attention) with a
    mixture of 4 experts and a shared expert in each, and Qwen3.5's thinking chat template
    (:data:`QWEN3_5_CHAT_TEMPLATE`; ``<think>`` and ``</think>`` single tokens)."""
    text = {**QWEN3_5_TEXT, **TINY_MOE, "shared_expert_intermediate_size": 16}
    _save_qwen3_5_thinking(out, "Qwen3_5Moe", text)


@_register(
    "qwen4-exp",
    "Qwen4ExpForConditionalGeneration (linear + indexed sparse attention, hyper-connections, "
    "per-layer n-gram embeddings, 4 experts) + Qwen3VLProcessor",
)
def _build_qwen4_exp(out: Path) -> None:
    """Qwen4-Exp: the sizes of transformers' ``Qwen4ExpVisionText2TextModelTester``: a linear-
    attention layer with per-layer n-gram embeddings (PLE) and a QSA indexed-attention layer, two
    hyper-connection streams, 4 experts; but a QSA budget of 256 tokens, not the tester's 4, with
    which the answer position would see only the prompt's last tokens and never the options.
    Its config's token ids are Qwen3.5's (the same 248k vocabulary), so it gets Qwen3.5's
    thinking chat template."""
    text = {
        **QWEN3_5_TEXT,
        "layer_types": ["linear_attention", "indexed_attention"],
        "linear_key_head_dim": 16,
        "linear_value_head_dim": 16,
        **TINY_MOE,
        "shared_expert_intermediate_size": 16,
        "hc_count": 2,
        "hc_lowrank": 8,
        "ple_layer_ids": [1],
        "ple_embed_dim": 16,
        "ple_conv_kernel_size": 2,
        "ngram_size": 3,
        "heads_per_ngram": 2,
        "ngram_vocab_size_base": 31,
        "make_ngram_vocab_size_divisible_by": 8,
        "split_ngram_parts": 4,
        "indexer_n_heads": 2,
        "indexer_kv_heads": 1,
        "indexer_head_dim": 8,
        "indexer_budget": 256,
        "indexer_compress_ratio": 2,
    }
    _save_qwen3_5_thinking(out, "Qwen4Exp", text)


def _save_qwen3_5_thinking(out: Path, model: str, text: dict) -> None:
    """A ``model`` twin (Qwen3.5's vocabulary and token ids) of ``text`` settings and the
    Qwen3-VL vision tower, with ``<think>`` and ``</think>`` single tokens and Qwen3.5's thinking
    chat template."""
    tokenizer = _qwen2_tokenizer([*QWEN_VISION_TOKENS, *THINK_TOKENS])
    _save_qwen_vl(out, model, text, QWEN3_VL_VISION, tokenizer, chat_template=QWEN3_5_CHAT_TEMPLATE)
