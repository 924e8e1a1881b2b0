"""LFM3-VL (Liquid AI, ``lfm3_vl``): a vision tower of gated convolutions and attention over each
frame's patches, and an LFM3 text model (convolution, sliding-window and full attention layers).

Its processor is transformers' Qwen3-VL processor (``modular_lfm3_vl.py``: ``class
Lfm3VlProcessor(Qwen3VLProcessor)``) around Qwen2-VL's image and Qwen3-VL's video processor: it
expands ``<|video_pad|>`` into one ``<t seconds><|vision_start|>`` + tokens + ``<|vision_end|>``
segment per temporal patch (2 frames), ``t`` the mean time of its frames from ``video_metadata``.

The checkpoints' chat template lives only in LiquidAI's Hub repositories and no copy was found
(not in transformers' tests or docs, vLLM, lmms-eval, or Liquid4All's repositories);
:data:`LFM3_VL_CHAT_TEMPLATE` is reconstructed from two sources:

* the turns are LFM2-VL's (LiquidAI/LFM2-VL-*, ChatML after the ``<|startoftext|>`` BOS: no
  default system turn, a system prompt written as a string, ``<|im_start|>assistant\\n`` as the
  generation prompt). LFM3's config keeps LFM2's special-token order (pad, ``<|startoftext|>``
  BOS, ..., ``<|im_end|>`` EOS at 124,893 + the LFM2 ids 0, 1, 7), which is why LFM2's turns
  are taken to carry over;
* the image and video parts are Qwen3-VL's (``<|vision_start|><|image_pad|><|vision_end|>`` and
  ``<|vision_start|><|video_pad|><|vision_end|>``), the template of the processor LFM3-VL's
  derives from; its processor writes no vision pair around an image, so the template must.
  Whether the real template wraps the video in that pair too is unknown: foilkit writes the
  video part as the bare ``<|video_pad|>`` either way (``PER_FRAME_VIDEO_SEGMENTS``), so the
  per-frame segments the model was trained on are never nested in an outer pair.

The tokenizer is a tiny byte-level BPE in ``TokenizersBackend`` (LFM2's checkpoints name the
generic fast tokenizer) with the named special tokens.
"""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic.models._base import (
    PATCH_SIZE,
    VIDEO_LLM_TEXT,
    _register,
    _save_twin,
    _text_config,
    _tokenizers_backend,
)
from foilkit.synthetic.models._qwen_vision import (
    QWEN_VISION_TOKENS,
    qwen_vision_token_ids,
    qwen_vl_processors,
)

#: LFM2's named special tokens the template writes, then the Qwen3-VL vision tokens.
LFM_TOKENS = ["<|pad|>", "<|startoftext|>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]

#: Reconstructed (see the module docstring): LFM2-VL's turns with Qwen3-VL's vision parts.
LFM3_VL_CHAT_TEMPLATE = (
    "{{- bos_token -}}"
    "{%- if messages[0]['role'] == 'system' -%}"
    "{{- '<|im_start|>system\\n' + messages[0]['content'] + '<|im_end|>\\n' -}}"
    "{%- set messages = messages[1:] -%}{%- endif -%}"
    "{%- for message in messages -%}"
    "{{- '<|im_start|>' + message['role'] + '\\n' -}}"
    "{%- if message['content'] is string -%}{{- message['content'] -}}"
    "{%- else -%}{%- for part in message['content'] -%}"
    "{%- if part['type'] == 'image' -%}{{- '<|vision_start|><|image_pad|><|vision_end|>' -}}"
    "{%- elif part['type'] == 'video' -%}{{- '<|vision_start|><|video_pad|><|vision_end|>' -}}"
    "{%- elif part['type'] == 'text' -%}{{- part['text'] -}}"
    "{%- else -%}{{- part | tojson -}}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{{- '<|im_end|>\\n' -}}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}"
)


def _lfm_tokenizer():
    """A tiny byte-level BPE in ``TokenizersBackend`` with LFM3-VL's named special tokens."""
    return _tokenizers_backend(
        [*LFM_TOKENS, *QWEN_VISION_TOKENS],
        bos_token="<|startoftext|>",
        eos_token="<|im_end|>",
        pad_token="<|pad|>",
    )


@_register(
    "lfm3-vl",
    "Lfm3VlForConditionalGeneration + Lfm3VlProcessor (a timestamped segment per temporal "
    "patch), video input",
)
def _build_lfm3_vl(out: Path) -> None:
    """LFM3-VL: a 3-layer LFM3 text model (one convolution, one sliding-window (16) and one full
    attention layer: a cache that cannot be cut back), a 2-layer vision tower (a convolution and
    an attention layer; 8x8 patches, 2x2 merge, 2 frames a temporal patch)."""
    tokenizer = _lfm_tokenizer()
    text = _text_config(
        tokenizer,
        **{**VIDEO_LLM_TEXT, "num_hidden_layers": 3},
        model_type="lfm3",
        head_dim=8,
        sliding_window=16,
        layer_types=["conv", "sliding_attention", "full_attention"],
    )
    vision = {
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "patch_size": PATCH_SIZE,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "layer_types": ["conv", "full_attention"],
    }
    config = {
        "text_config": text,
        "vision_config": vision,
        "projector_hidden_size": 32,
        **qwen_vision_token_ids(tokenizer),
    }
    processor = {
        **qwen_vl_processors("Qwen3VL"),
        "tokenizer": tokenizer,
        "chat_template": LFM3_VL_CHAT_TEMPLATE,
    }
    _save_twin(out, "Lfm3Vl", config, processor)
