"""Kimi K2.5 (Moonshot AI, ``kimi_k25``; also K2.6 and K2.7): a MoonViT vision tower that pools
each chunk of 4 frames over time, and a DeepSeek-V3 (MLA, mixture-of-experts) text model.

Its processor expands the chat template's ``<|kimi_k25_video_placeholder|>`` into one
``HH:MM:SS.mmm<|media_begin|>video<|media_content|>`` + tokens + ``<|media_end|>`` segment per
chunk of ``temporal_patch_size`` frames, the time that of the chunk's first frame from
``video_metadata``.

The chat template and the tokenizer's named special tokens live only in moonshotai/Kimi-K2.5 on
the Hub; :data:`KIMI_K25_CHAT_TEMPLATE` is reconstructed, not copied:

* the turns (``<|im_user|>`` / ``<|im_assistant|>`` / ``<|im_system|>`` + role + ``<|im_middle|>``
  ... ``<|im_end|>``, no newline between turns, **no default system turn**), the media parts
  (an image as ``<|media_begin|>image<|media_content|><|media_pad|><|media_end|>`` and a video as
  ``<|kimi_k25_video_placeholder|>``, each followed by a newline), the assistant turns' reasoning
  (``<think></think>`` before the answer of every turn up to the last plain assistant turn,
  ``<think>{reasoning_content}</think>`` after it) and the generation prompt
  (``<|im_assistant|>assistant<|im_middle|>`` then ``<think>``, or ``<think></think>`` with
  ``thinking=False``) follow radixark/miles' ``kimi_k25_fixed.jinja``, a copy of the
  checkpoint's ``chat_template.jinja`` that its docstring says differs only by a
  ``preserve_thinking`` switch (left out here). Where third-party re-implementations disagree
  (a default "You are Kimi" system turn, as Kimi-K2-Instruct's template writes; a generation
  prompt ending ``<think></think>``), that copy, the closest to the official repository, wins;
  the ``{% if thinking is defined and thinking is false %}<think></think>{% else %}<think>``
  ending is also quoted from the official template by several independent projects;
* the video placeholder is the processor's default ``video_token`` and vLLM's
  ``KimiK25ForConditionalGeneration.get_placeholder_str``; the image and video token ids the
  config names (``<|media_pad|>``, ``<|kimi_k25_video_placeholder|>``, ``<|media_begin|>``,
  ``<|media_end|>``) come from ``Kimi_K25Config``.

Tool declarations and tool calls are left out (foilkit never passes tools). The tokenizer is a
tiny byte-level BPE in ``TokenizersBackend``, the class transformers maps ``kimi_k25`` to (the
checkpoint's own is tiktoken-based), with the checkpoint's named special tokens.
"""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic.models._base import (
    PATCH_SIZE,
    VIDEO_LLM_VISION,
    _media,
    _register,
    _save_twin,
    _tokenizers_backend,
)

#: The named special tokens the template and the processor write, and the tokenizer's own.
KIMI_TOKENS = (
    "[BOS] [EOS] [PAD] <|im_end|> <|im_user|> <|im_assistant|> <|im_system|> <|im_middle|> "
    "<|media_begin|> <|media_content|> <|media_end|> <|media_pad|> <|kimi_k25_video_placeholder|> "
    "<think> </think>"
).split()

#: Reconstructed (see the module docstring): moonshotai/Kimi-K2.5's turns, media parts,
#: reasoning blocks and generation prompt, without tools.
KIMI_K25_CHAT_TEMPLATE = (
    "{%- macro content(message) -%}"
    "{%- if message['content'] is string -%}{{ message['content'] }}"
    "{%- elif message['content'] is not none -%}{%- for part in message['content'] -%}"
    "{%- if part['type'] in ('image', 'image_url') -%}"
    "{{ '<|media_begin|>image<|media_content|><|media_pad|><|media_end|>\\n' }}"
    "{%- elif part['type'] in ('video', 'video_url') -%}"
    "{{ '<|kimi_k25_video_placeholder|>\\n' }}"
    "{%- else -%}{{ part['text'] }}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{%- endmacro -%}"
    "{%- set ns = namespace(last=-1) -%}"
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'assistant' and not message.get('tool_calls') -%}"
    "{%- set ns.last = loop.index0 -%}{%- endif -%}"
    "{%- endfor -%}"
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'user' -%}<|im_user|>"
    "{%- elif message['role'] == 'assistant' -%}<|im_assistant|>"
    "{%- else -%}<|im_system|>{%- endif -%}"
    "{{ message.get('name') or message['role'] }}<|im_middle|>"
    "{%- if message['role'] == 'assistant' -%}"
    "{%- if loop.index0 <= ns.last or (thinking is defined and thinking is false) -%}"
    "<think></think>"
    "{%- else -%}<think>{{ message.get('reasoning_content', '') }}</think>{%- endif -%}"
    "{{ content(message) }}"
    "{%- elif message['role'] == 'tool' -%}"
    "{{ '## Return of ' ~ message['tool_call_id'] ~ '\\n' }}{{ content(message) }}"
    "{%- else -%}{{ content(message) }}{%- endif -%}"
    "<|im_end|>"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}<|im_assistant|>assistant<|im_middle|>"
    "{%- if thinking is defined and thinking is false -%}<think></think>"
    "{%- else -%}<think>{%- endif -%}"
    "{%- endif -%}"
)
#: MoonViT's pixel settings, tiny: 8x8 patches merged 2x2, at most 16 patches a frame (48x64
#: frames become 27x36, padded to 32x48: 4x6 patches, 6 tokens a chunk), 4 frames a chunk.
KIMI_PIXELS = {
    "size": {"max_height": 8, "max_width": 8},
    "patch_size": PATCH_SIZE,
    "merge_size": 2,
    "max_patches": 16,
}
KIMI_FRAMES_PER_CHUNK = 4


def _kimi_tokenizer():
    """A tiny byte-level BPE in ``TokenizersBackend`` with Kimi K2.5's named special tokens."""
    return _tokenizers_backend(
        KIMI_TOKENS, bos_token="[BOS]", eos_token="<|im_end|>", pad_token="[PAD]"
    )


@_register(
    "kimi-k2.5",
    "Kimi_K25ForConditionalGeneration + Kimi_K25Processor (a timed media segment per chunk of "
    "4 frames), video input; refused: its video forward is broken in transformers 5.23",
)
def _build_kimi_k25(out: Path) -> None:
    """Kimi K2.5: a 2-layer DeepSeek-V3 text model (MLA, the second layer a 4-expert MoE), a
    1-layer MoonViT (8x8 patches, 2x2 merge, 4 frames pooled into one chunk)."""
    tokenizer = _kimi_tokenizer()
    token = dict(zip(KIMI_TOKENS, tokenizer.convert_tokens_to_ids(KIMI_TOKENS), strict=True))
    text = {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "intermediate_size": 37,
        "moe_intermediate_size": 16,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "n_routed_experts": 4,
        "num_experts_per_tok": 2,
        "n_shared_experts": 1,
        "first_k_dense_replace": 1,
        "n_group": 1,
        "topk_group": 1,
        "kv_lora_rank": 16,
        "q_lora_rank": 32,
        "qk_rope_head_dim": 8,
        "qk_nope_head_dim": 16,
        "v_head_dim": 16,
        "max_position_embeddings": 512,
        "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
        "pad_token_id": token["[PAD]"],
        "bos_token_id": token["[BOS]"],
        "eos_token_id": token["<|im_end|>"],
    }
    vision = {
        **VIDEO_LLM_VISION,
        "pos_emb_height": 8,
        "pos_emb_width": 8,
        "pos_emb_time": KIMI_FRAMES_PER_CHUNK,
        "merge_kernel_size": [2, 2],
    }
    config = {
        "text_config": text,
        "vision_config": vision,
        "projection_hidden_size": 32,
        "image_token_id": token["<|media_pad|>"],
        "video_token_id": token["<|kimi_k25_video_placeholder|>"],
        "vision_start_token_id": token["<|media_begin|>"],
        "vision_end_token_id": token["<|media_end|>"],
    }
    video = {**KIMI_PIXELS, "temporal_patch_size": KIMI_FRAMES_PER_CHUNK}
    processor = {
        **_media("Kimi_K25", KIMI_PIXELS, video),
        "tokenizer": tokenizer,
        "chat_template": KIMI_K25_CHAT_TEMPLATE,
    }
    _save_twin(out, "Kimi_K25", config, processor)
