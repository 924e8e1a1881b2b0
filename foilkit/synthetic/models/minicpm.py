"""MiniCPM-V 4.6, MiniCPM-V 4.7 and MiniCPM OCR (OpenBMB): one processor design, three twins.

The three share ``MiniCPMV4_6Processor``'s layout (transformers 5.23: ``MiniCPMV4_7Processor`` and
``MiniCPMOcrProcessor`` are generated from it): a SigLIP-style vision tower with a window-attention
merger on a Qwen3.5 text model. A video is a sequence of images: each frame becomes
``<image>`` + ``<|video_pad|>`` tokens + ``</image>``, then, in slice mode, rows of
``<slice>`` + ``<|video_pad|>`` tokens + ``</slice>`` joined by newlines; with ``use_image_id``
(the processors' default) the video is preceded by ``<image_id>0</image_id>`` (not in 4.7, which
ignores image ids for video). The processor finds these tokens by name on the tokenizer.

Reconstructed here, since the checkpoints' tokenizer files and chat templates live only on the
Hub (``openbmb/MiniCPM-V-4.6`` etc.):

* the tokenizer's named special tokens (``image_token`` ``<|image_pad|>``, ``video_token``
  ``<|video_pad|>``, ``image_start_token`` ``<image>`` ... ``image_id_end_token``
  ``</image_id>``): the attribute names are those the processor reads; their strings are those
  vLLM's and SGLang's MiniCPM-V 4.6 processors and third-party clients
  (``MINICPM_EXTRA_SPECIAL_TOKENS``) use; ``<image>`` ... ``</image_id>`` are single tokens, as
  MiniCPM-V 4.7's config reads their ids from the tokenizer;
* the tokenizer: Qwen's byte-level BPE with its ChatML tokens (tiny in the registered twins;
  the real Qwen3 one in ``minicpmv4.6-qwen3``, :mod:`foilkit.synthetic.real_tokenizers`) plus
  those six tokens. The checkpoints use Qwen3.5's 248k vocabulary (``<|im_end|>`` 248046), which
  is not available here: the ids differ, the ChatML turns and the placeholder tokens do not;
* the chat template (:data:`MINICPM_V_CHAT_TEMPLATE`): llama-cpp-python's
  ``MiniCPMV46ChatHandler`` ("aligned with official tokenizer_config.json"): Qwen3.5's ChatML
  turns whose parts are joined by newlines, an image as a bare ``<|image_pad|>`` and a video as a
  bare ``<|video_pad|>`` (no ``<|vision_start|>`` pair, as vLLM's MiniCPM-V 4.6 processor also
  expects), thinking off unless ``enable_thinking`` is passed (the generation prompt then writes
  the empty ``<think>\\n\\n</think>\\n\\n``, which transformers' docs call the default for
  evaluation). The handler's video branch (commented out there: llama.cpp takes no video)
  writes a bare ``<|video_pad|>``; tool branches are left out here. MiniCPM-V 4.7 and MiniCPM
  OCR are given the same template (same processor, same Qwen3.5 backbone): no source shows
  theirs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foilkit.synthetic.models._base import (
    VIDEO_LLM_VISION,
    _media,
    _qwen2_tokenizer,
    _register,
    _register_fidelity,
    _save_twin,
)

#: The MiniCPM-V tokenizer's named special tokens (``extra_special_tokens``), as the processor
#: reads them.
MINICPM_TOKENS = {
    "image_token": "<|image_pad|>",
    "video_token": "<|video_pad|>",
    "image_start_token": "<image>",
    "image_end_token": "</image>",
    "slice_start_token": "<slice>",
    "slice_end_token": "</slice>",
    "image_id_start_token": "<image_id>",
    "image_id_end_token": "</image_id>",
}

#: MiniCPM-V 4.6's chat template as reconstructed (see the module docstring), tools left out.
MINICPM_V_CHAT_TEMPLATE = (
    "{%- if enable_thinking is not defined %}{%- set enable_thinking = false %}{%- endif %}"
    "{%- macro render_content(content, is_system_content=false) %}"
    "{%- if content is string %}{{- content }}"
    "{%- elif content is iterable and content is not mapping %}"
    "{%- set ns = namespace(parts=[]) %}{%- for item in content %}"
    "{%- if 'image' in item or 'image_url' in item or item.type == 'image' %}"
    "{%- if is_system_content %}{{- raise_exception('System message cannot contain images.') }}"
    "{%- endif %}{%- set ns.parts = ns.parts + ['<|image_pad|>'] %}"
    "{%- elif 'video' in item or 'video_url' in item or item.type == 'video' %}"
    "{%- if is_system_content %}{{- raise_exception('System message cannot contain videos.') }}"
    "{%- endif %}{%- set ns.parts = ns.parts + ['<|video_pad|>'] %}"
    "{%- elif 'text' in item %}{%- set ns.parts = ns.parts + [item.text] %}"
    "{%- else %}{{- raise_exception('Unexpected item type in content.') }}{%- endif %}"
    "{%- endfor %}{{- ns.parts | join('\\n') }}"
    "{%- elif content is none or content is undefined %}{{- '' }}"
    "{%- else %}{{- raise_exception('Unexpected content type.') }}{%- endif %}"
    "{%- endmacro %}"
    "{%- if not messages %}{{- raise_exception('No messages provided.') }}{%- endif %}"
    "{%- if messages[0].role == 'system' %}"
    "{{- '<|im_start|>system\\n' + render_content(messages[0].content, true)|trim"
    " + '<|im_end|>\\n' }}{%- endif %}"
    "{%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}"
    "{%- for message in messages[::-1] %}"
    "{%- set index = (messages|length - 1) - loop.index0 %}"
    "{%- if ns.multi_step_tool and message.role == 'user' %}"
    "{%- set content = render_content(message.content)|trim %}"
    "{%- if not(content.startswith('<tool_response>') and content.endswith('</tool_response>')) %}"
    "{%- set ns.multi_step_tool = false %}{%- set ns.last_query_index = index %}"
    "{%- endif %}{%- endif %}{%- endfor %}"
    "{%- if ns.multi_step_tool %}{{- raise_exception('No user query found in messages.') }}"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- set content = render_content(message.content)|trim %}"
    "{%- if message.role == 'system' %}"
    "{%- if not loop.first %}{{- raise_exception('System message must be at the beginning.') }}"
    "{%- endif %}"
    "{%- elif message.role == 'user' %}"
    "{{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' }}"
    "{%- elif message.role == 'assistant' %}"
    "{%- set reasoning_content = '' %}"
    "{%- if message.reasoning_content is string %}"
    "{%- set reasoning_content = message.reasoning_content %}"
    "{%- elif '</think>' in content %}"
    "{%- set reasoning_content = content.split('</think>')[0].rstrip('\\n')"
    ".split('<think>')[-1].lstrip('\\n') %}"
    "{%- set content = content.split('</think>')[-1].lstrip('\\n') %}{%- endif %}"
    "{%- set reasoning_content = reasoning_content|trim %}"
    "{%- if loop.index0 > ns.last_query_index %}"
    "{{- '<|im_start|>' + message.role + '\\n<think>\\n' + reasoning_content"
    " + '\\n</think>\\n\\n' + content }}"
    "{%- else %}{{- '<|im_start|>' + message.role + '\\n' + content }}{%- endif %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- else %}{{- raise_exception('Unexpected message role.') }}{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}"
    "{%- else %}{{- '<think>\\n' }}{%- endif %}{%- endif %}"
)

#: Vision patches of 8 pixels; 32-pixel crops (a 4x4 patch grid): a 48x64 frame is a 32x32
#: source image and a 2x2 grid of 32x32 slices (rows joined by a newline), one token each after
#: the 16x merge (4x: four).
MINICPM_PIXELS = {"patch_size": VIDEO_LLM_VISION["patch_size"], "scale_resolution": 32}
#: Qwen3.5's hybrid text layers (a linear-attention layer, then full attention), 1-D RoPE.
MINICPM_TEXT = {
    "model_type": "qwen3_5_text",
    "hidden_size": 32,
    "intermediate_size": 37,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 8,
    "max_position_embeddings": 1024,
    "layer_types": ["linear_attention", "full_attention"],
    "linear_conv_kernel_dim": 2,
    "linear_key_head_dim": 8,
    "linear_value_head_dim": 8,
    "linear_num_key_heads": 2,
    "linear_num_value_heads": 4,
    "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0},
}
#: One vision layer, the window-attention merger after it (``insert_layer_id=0``).
MINICPM_VISION = {**VIDEO_LLM_VISION, "image_size": 32}


@dataclass(frozen=True)
class MiniCPMFamily:
    """A MiniCPM twin's transformers classes (``<prefix>Config``, ``<prefix>Processor``, ...),
    its image and video processor prefix, its downsampling default and further config fields
    (``marker_ids``: MiniCPM-V 4.7's canvas M-RoPE reads the structural tokens' ids)."""

    prefix: str
    processors: str
    downsample_mode: str = "16x"
    marker_ids: bool = False
    config: dict[str, Any] = field(default_factory=dict)


MINICPM_FAMILIES = {
    "minicpmv4.6": MiniCPMFamily("MiniCPMV4_6", "MiniCPMV4_6"),
    "minicpmv4.7": MiniCPMFamily("MiniCPMV4_7", "MiniCPMV4_6", marker_ids=True),
    "minicpm-ocr": MiniCPMFamily("MiniCPMOcr", "MiniCPMOcr", downsample_mode="4x"),
}


def minicpm_tokenizer(real: bool = False):
    """A tiny byte-level BPE in Qwen2's class with Qwen's ChatML tokens, or (``real``) the real
    Qwen3 tokenizer, with MiniCPM-V's named special tokens (and ``<think>``, ``</think>``, single
    tokens of the real vocabularies) added."""
    if real:
        from foilkit.synthetic.real_tokenizers import load_real_tokenizer

        return load_real_tokenizer("qwen3", extra_special_tokens=MINICPM_TOKENS)
    added = [*MINICPM_TOKENS.values(), "<think>", "</think>"]
    return _qwen2_tokenizer(added, extra_special_tokens=MINICPM_TOKENS)


def _build_minicpm(out: Path, family: MiniCPMFamily, real_tokenizer: bool = False) -> None:
    """``family``'s tiny twin around :func:`minicpm_tokenizer` and the reconstructed template."""
    tokenizer = minicpm_tokenizer(real_tokenizer)
    ids = {
        "pad_token_id": tokenizer.pad_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "bos_token_id": None,
    }
    config: dict[str, Any] = {
        "image_token_id": tokenizer.image_token_id,
        "video_token_id": tokenizer.video_token_id,
        "downsample_mode": family.downsample_mode,
        "image_size": MINICPM_VISION["image_size"],
        "insert_layer_id": 0,
        "tie_word_embeddings": True,
        **family.config,
    }
    if family.marker_ids:
        names = ("image_start", "image_end", "slice_start", "slice_end")
        for name in names:
            config[f"{name}_id"] = tokenizer.convert_tokens_to_ids(MINICPM_TOKENS[f"{name}_token"])
        config["newline_id"] = tokenizer.convert_tokens_to_ids(tokenizer.tokenize("\n"))[0]
    config["text_config"] = {**MINICPM_TEXT, "vocab_size": len(tokenizer), **ids}
    config["vision_config"] = MINICPM_VISION
    pixels = {**MINICPM_PIXELS, "downsample_mode": family.downsample_mode}
    processor = {
        **_media(family.processors, pixels, pixels),
        "tokenizer": tokenizer,
        "chat_template": MINICPM_V_CHAT_TEMPLATE,
    }
    _save_twin(out, family.prefix, config, processor)


@_register(
    "minicpmv4.6",
    "MiniCPMV4_6ForConditionalGeneration (Qwen3.5 hybrid text layers) + MiniCPMV4_6Processor, "
    "video input",
)
def _build_minicpmv4_6(out: Path) -> None:
    """MiniCPM-V 4.6: 8 frames of 48x64, each a 32x32 source image and a 2x2 grid of 32x32
    slices, one token each."""
    _build_minicpm(out, MINICPM_FAMILIES["minicpmv4.6"])


@_register(
    "minicpmv4.7",
    "MiniCPMV4_7ForConditionalGeneration (canvas M-RoPE) + MiniCPMV4_7Processor, video input",
)
def _build_minicpmv4_7(out: Path) -> None:
    """MiniCPM-V 4.7: MiniCPM-V 4.6's twin whose config carries the ids of ``<image>``,
    ``</image>``, ``<slice>``, ``</slice>`` and the newline, which canvas M-RoPE reads."""
    _build_minicpm(out, MINICPM_FAMILIES["minicpmv4.7"])


@_register(
    "minicpm-ocr",
    "MiniCPMOcrForConditionalGeneration (4x downsampling) + MiniCPMOcrProcessor, video input",
)
def _build_minicpm_ocr(out: Path) -> None:
    """MiniCPM OCR: MiniCPM-V 4.6's twin downsampling 4x (its default): 4 tokens a crop."""
    _build_minicpm(out, MINICPM_FAMILIES["minicpm-ocr"])


@_register_fidelity(
    "minicpmv4.6-qwen3",
    "MiniCPM-V 4.6 around the real Qwen3 tokenizer plus MiniCPM-V's named tokens",
)
def _build_minicpmv4_6_qwen3(out: Path) -> None:
    """``minicpmv4.6`` around the real Qwen3 byte-level BPE (151,675 ids with the added tokens):
    the rendered template is segmented as a Qwen-vocabulary checkpoint's."""
    _build_minicpm(out, MINICPM_FAMILIES["minicpmv4.6"], real_tokenizer=True)
