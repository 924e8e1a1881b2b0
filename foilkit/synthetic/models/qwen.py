"""Qwen vision-language video LLMs: Qwen2-VL, Qwen3.5, the Qwen3-VL-processor families (Qwen3-VL,
Qwen3-VL-MoE, Qwen3.5-MoE, Qwen4-Exp) and the Qwen2.5-VL and real-tokenizer fidelity twins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foilkit.synthetic.models._base import (
    IMAGE_SIZE,
    PATCH_SIZE,
    QWEN2_VL_CHAT_TEMPLATE,
    VIDEO_LLM_TEXT,
    _qwen2_tokenizer,
    _register,
    _register_fidelity,
    _save,
    _text_config,
)

QWEN_VISION_TOKENS = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
#: Qwen2-VL / Qwen2.5-VL processors' pixel settings: one 32x32 image, 8x8 patches merged 2x2,
#: two frames a temporal patch.
QWEN_VL_PIXELS = {
    "size": {"shortest_edge": IMAGE_SIZE * IMAGE_SIZE, "longest_edge": IMAGE_SIZE * IMAGE_SIZE},
    "patch_size": PATCH_SIZE,
    "merge_size": 2,
    "temporal_patch_size": 2,
}


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
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLProcessor

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
        _qwen2_tokenizer(QWEN_VISION_TOKENS),
        vision,
        (Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLProcessor),
        QWEN2_VL_CHAT_TEMPLATE,
    )


def _save_qwen_vl(
    out: Path,
    tokenizer: Any,
    vision: dict,
    classes: tuple[type, type, type],
    chat_template: str,
    **config: Any,
) -> None:
    """A Qwen2-VL-style model (``classes``: its config, model and processor classes) of a
    2-layer text model around ``tokenizer``, which holds :data:`QWEN_VISION_TOKENS`, and the
    ``vision`` tower; ``config``: further config fields."""
    from transformers import Qwen2VLImageProcessor, Qwen2VLVideoProcessor

    config_class, model_class, processor_class = classes
    start, end, image, video = tokenizer.convert_tokens_to_ids(QWEN_VISION_TOKENS)
    head_dim = VIDEO_LLM_TEXT["hidden_size"] // VIDEO_LLM_TEXT["num_attention_heads"]
    text = _text_config(
        tokenizer,
        **VIDEO_LLM_TEXT,
        rope_parameters={
            "rope_type": "default",
            "rope_theta": 10000.0,
            "mrope_section": [head_dim // 4, head_dim // 8, head_dim // 8],
        },
    )
    model_config = config_class(
        text_config=text,
        vision_config=vision,
        image_token_id=image,
        video_token_id=video,
        vision_start_token_id=start,
        vision_end_token_id=end,
        **config,
    )
    processor = processor_class(
        image_processor=Qwen2VLImageProcessor(**QWEN_VL_PIXELS),
        video_processor=Qwen2VLVideoProcessor(**QWEN_VL_PIXELS),
        tokenizer=tokenizer,
        chat_template=chat_template,
    )
    _save(out, model_class(model_config), processor)


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
    from transformers import (
        Qwen2VLImageProcessor,
        Qwen3_5Config,
        Qwen3_5ForConditionalGeneration,
        Qwen3VLProcessor,
        Qwen3VLVideoProcessor,
    )

    tokenizer = _qwen2_tokenizer(QWEN_VISION_TOKENS)
    start, end, image, video = tokenizer.convert_tokens_to_ids(QWEN_VISION_TOKENS)
    text = _text_config(
        tokenizer,
        **VIDEO_LLM_TEXT,
        head_dim=8,
        layer_types=["linear_attention", "full_attention"],
        linear_conv_kernel_dim=4,
        linear_key_head_dim=8,
        linear_value_head_dim=8,
        linear_num_key_heads=2,
        linear_num_value_heads=4,
        rope_parameters={
            "rope_type": "default",
            "rope_theta": 10000.0,
            "partial_rotary_factor": 0.5,
            "mrope_section": [1, 1, 0],
            "mrope_interleaved": True,
        },
    )
    vision = {
        "depth": 1,
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_heads": 4,
        "out_hidden_size": VIDEO_LLM_TEXT["hidden_size"],
        "patch_size": PATCH_SIZE,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "num_position_embeddings": 16,  # a 4x4 grid of learned positions, interpolated
    }
    config = Qwen3_5Config(
        text_config=text,
        vision_config=vision,
        image_token_id=image,
        video_token_id=video,
        vision_start_token_id=start,
        vision_end_token_id=end,
    )
    processor = Qwen3VLProcessor(
        image_processor=Qwen2VLImageProcessor(**QWEN_VL_PIXELS),
        video_processor=Qwen3VLVideoProcessor(**QWEN_VL_PIXELS),
        tokenizer=tokenizer,
        chat_template=QWEN2_VL_CHAT_TEMPLATE,
    )
    _save(out, Qwen3_5ForConditionalGeneration(config), processor)


#: Gemma 4's multimodal tokens, as its tokenizer names them (``extra_special_tokens``).


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
    from transformers import (
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
    )

    vision = {
        "depth": 1,
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_heads": 4,
        "out_hidden_size": VIDEO_LLM_TEXT["hidden_size"],
        "patch_size": PATCH_SIZE,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "tokens_per_second": TOKENS_PER_SECOND,
        "window_size": 2 * PATCH_SIZE * 2,
        "fullatt_block_indexes": [0],
    }
    _save_qwen_vl(
        out,
        tokenizer,
        vision,
        (Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2_5_VLProcessor),
        QWEN2_5_VL_REAL_CHAT_TEMPLATE,
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
#: The Qwen3-VL vision tower of every Qwen3-VL-processor twin: one block, 8x8 patches, 2 frames a
#: temporal patch, 2x2 merge, a 4x4 grid of learned positions (interpolated).
QWEN3_VL_VISION = {
    "depth": 1,
    "hidden_size": 32,
    "intermediate_size": 37,
    "num_heads": 4,
    "out_hidden_size": VIDEO_LLM_TEXT["hidden_size"],
    "patch_size": PATCH_SIZE,
    "spatial_merge_size": 2,
    "temporal_patch_size": 2,
    "num_position_embeddings": 16,
}
#: Interleaved multimodal RoPE over a head of 8: (t, h, w) sections of 2, 1, 1 frequencies.
QWEN3_VL_ROPE = {
    "rope_type": "default",
    "rope_theta": 10000.0,
    "mrope_section": [2, 1, 1],
    "mrope_interleaved": True,
}
#: Four experts, two a token, 16 wide (Qwen3-VL-MoE, Qwen3.5-MoE, Qwen4-Exp).
TINY_MOE = {"num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 16}


def _save_qwen3_vl(
    out: Path,
    model: str,
    text: dict,
    vision: dict,
    tokenizer: Any = None,
    chat_template: str = "",
    **config: Any,
) -> None:
    """A ``<model>Config`` / ``<model>ForConditionalGeneration`` (transformers class prefix
    ``model``) of ``text`` and ``vision`` settings around ``tokenizer`` (default: the tiny Qwen
    one), with ``Qwen3VLProcessor`` (``Qwen3VLVideoProcessor``: frame timestamps from
    ``video_metadata``) and Qwen3-VL-Instruct's chat template; ``config``: further fields."""
    import transformers
    from transformers import Qwen2VLImageProcessor, Qwen3VLProcessor, Qwen3VLVideoProcessor

    tokenizer = tokenizer if tokenizer is not None else _qwen2_tokenizer(QWEN_VISION_TOKENS)
    start, end, image, video = tokenizer.convert_tokens_to_ids(QWEN_VISION_TOKENS)
    model_config = getattr(transformers, f"{model}Config")(
        text_config=_text_config(tokenizer, **VIDEO_LLM_TEXT, **text),
        vision_config=vision,
        image_token_id=image,
        video_token_id=video,
        vision_start_token_id=start,
        vision_end_token_id=end,
        **config,
    )
    processor = Qwen3VLProcessor(
        image_processor=Qwen2VLImageProcessor(**QWEN_VL_PIXELS),
        video_processor=Qwen3VLVideoProcessor(**QWEN_VL_PIXELS),
        tokenizer=tokenizer,
        chat_template=chat_template or QWEN3_VL_CHAT_TEMPLATE,
    )
    model_class = getattr(transformers, f"{model}ForConditionalGeneration")
    _save(out, model_class(model_config), processor)


@_register("qwen3-vl", "Qwen3VLForConditionalGeneration + Qwen3VLProcessor, video input")
def _build_qwen3_vl(out: Path) -> None:
    """Qwen3-VL: a 2-layer Qwen3 text model (interleaved M-RoPE) and a 1-block vision tower whose
    output is also added to the first text layer (DeepStack, ``deepstack_visual_indexes=[0]``).

    The processor writes each temporal patch (2 frames) as ``<t seconds>`` then its own
    ``<|vision_start|>`` + ``<|video_pad|>`` tokens + ``<|vision_end|>``, ``t`` the mean time of
    its frames from ``video_metadata``."""
    vision = {**QWEN3_VL_VISION, "deepstack_visual_indexes": [0]}
    _save_qwen3_vl(out, "Qwen3VL", {"head_dim": 8, "rope_parameters": QWEN3_VL_ROPE}, vision)


@_register_fidelity(
    "qwen3-vl-qwen3",
    "Qwen3-VL around the real Qwen3 tokenizer (151669 ids; Qwen3-VL's own) and its chat template",
)
def _build_qwen3_vl_qwen3(out: Path) -> None:
    """``qwen3-vl`` around the tokenizer of the Qwen3-VL checkpoints (Qwen3's), embeddings tied:
    the frames' ``<t seconds>`` texts and the prompt are segmented as a real checkpoint's."""
    from foilkit.synthetic.real_tokenizers import load_real_tokenizer

    vision = {**QWEN3_VL_VISION, "deepstack_visual_indexes": [0]}
    text = {"head_dim": 8, "rope_parameters": QWEN3_VL_ROPE}
    tokenizer = load_real_tokenizer("qwen3")
    _save_qwen3_vl(out, "Qwen3VL", text, vision, tokenizer, tie_word_embeddings=True)


@_register("qwen3-vl-moe", "Qwen3VLMoeForConditionalGeneration + Qwen3VLProcessor, video input")
def _build_qwen3_vl_moe(out: Path) -> None:
    """Qwen3-VL-MoE: ``qwen3-vl`` with a mixture of 4 experts (2 a token) in each text layer."""
    vision = {**QWEN3_VL_VISION, "deepstack_visual_indexes": [0]}
    text = {"head_dim": 8, "rope_parameters": QWEN3_VL_ROPE, **TINY_MOE}
    _save_qwen3_vl(out, "Qwen3VLMoe", text, vision)


#: Qwen3.5's hybrid text layers: a linear-attention (gated delta) layer, then full attention.
QWEN3_5_LINEAR = {
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 8,
    "linear_value_head_dim": 8,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
}


@_register(
    "qwen3.5-moe",
    "Qwen3_5MoeForConditionalGeneration (linear + full attention, 4 experts) + Qwen3VLProcessor",
)
def _build_qwen3_5_moe(out: Path) -> None:
    """Qwen3.5-MoE: ``qwen3.5``'s hybrid layers (linear attention, then full attention) with a
    mixture of 4 experts and a shared expert in each, and Qwen3.5's thinking chat template
    (:data:`QWEN3_5_CHAT_TEMPLATE`; ``<think>`` and ``</think>`` single tokens)."""
    text = {
        "head_dim": 8,
        "layer_types": ["linear_attention", "full_attention"],
        **QWEN3_5_LINEAR,
        **TINY_MOE,
        "shared_expert_intermediate_size": 16,
        "rope_parameters": {
            **QWEN3_VL_ROPE,
            "partial_rotary_factor": 0.5,
            "mrope_section": [1, 1, 0],
        },
    }
    tokenizer = _qwen2_tokenizer([*QWEN_VISION_TOKENS, *THINK_TOKENS])
    _save_qwen3_vl(
        out, "Qwen3_5Moe", text, QWEN3_VL_VISION, tokenizer, chat_template=QWEN3_5_CHAT_TEMPLATE
    )


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
        "head_dim": 8,
        "layer_types": ["linear_attention", "indexed_attention"],
        **QWEN3_5_LINEAR,
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
        "rope_parameters": {
            **QWEN3_VL_ROPE,
            "partial_rotary_factor": 0.5,
            "mrope_section": [1, 1, 0],
        },
    }
    tokenizer = _qwen2_tokenizer([*QWEN_VISION_TOKENS, *THINK_TOKENS])
    _save_qwen3_vl(
        out, "Qwen4Exp", text, QWEN3_VL_VISION, tokenizer, chat_template=QWEN3_5_CHAT_TEMPLATE
    )
