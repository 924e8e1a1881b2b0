"""NVIDIA Cosmos3 video LLMs: Cosmos3 Edge and Cosmos3 Omni's Reasoner.

Cosmos3 Edge (``cosmos3_edge``): a SigLIP-style vision tower and a Nemotron-style dense text model
with multimodal RoPE.

Its processor expands the chat template's ``<|vision_start|><|video_pad|><|vision_end|>`` as one
unit into a ``<t seconds><|vision_start|>`` + tokens + ``<|vision_end|>`` segment per frame, the
time from ``video_metadata``, which it reads only when the video processor hands it back
(``return_metadata``). The twin's chat template is ChatML with that video part (the one the
processor documents); the checkpoint's own turn format is not in the sources available here.

Cosmos3 Omni (``cosmos3_omni``, ``nvidia/Cosmos3-Nano``): transformers loads only the Reasoner
tower of the unified checkpoint (the Generator, sound and action towers are dropped on load), and
the Reasoner is Qwen3-VL: ``Cosmos3OmniForConditionalGeneration`` subclasses
``Qwen3VLForConditionalGeneration`` and its config is Qwen3-VL's (transformers 5.23
``modular_cosmos3_omni.py``). It is not an omni model in foilkit's sense: no thinker, no audio
input, so the video-llm adapter scores it directly. Where the twin's parts come from:

* processor: ``Qwen3VLProcessor``. transformers 5.23 maps ``cosmos3_omni`` to no processor of its
  own, but to Qwen3-VL's parts (``Qwen2VLImageProcessor``, ``Qwen3VLVideoProcessor``,
  ``Qwen2Tokenizer``: ``image_processing_auto``, ``video_processing_auto``,
  ``tokenization_auto``), which only ``Qwen3VLProcessor`` combines; so each temporal patch becomes
  its own ``<t seconds><|vision_start|>...<|vision_end|>`` segment
  (``PER_FRAME_VIDEO_SEGMENTS["Qwen3VLProcessor"]``).
* special tokens: Qwen3-VL's; the config's defaults are Qwen's ids (``<|vision_start|>`` 151652,
  ``<|vision_end|>`` 151653, ``<|image_pad|>`` 151655, ``<|video_pad|>`` 151656).
* chat template: Qwen3-VL-Instruct's (no default system turn, no reasoning block): transformers'
  integration test of ``nvidia/Cosmos3-Nano`` decodes the rendered prompt as
  ``user\nWhat kind of dog is this?\nassistant\n`` followed directly by the answer.
"""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic.models._base import (
    PATCH_SIZE,
    QWEN2_VL_CHAT_TEMPLATE,
    VIDEO_LLM_TEXT,
    VIDEO_LLM_VISION,
    _media,
    _qwen2_tokenizer,
    _register,
    _save_twin,
    _text_config,
)
from foilkit.synthetic.models._qwen_vision import (
    QWEN2_VL_MROPE,
    QWEN3_VL_DEEPSTACK_VISION,
    QWEN_VISION_TOKENS,
    qwen_vision_token_ids,
)
from foilkit.synthetic.models.qwen import QWEN3_VL_TEXT, _save_qwen_vl

#: 8x8 patches merged 2x2, one frame a temporal step, a frame at most 32x32 pixels.
COSMOS_PIXELS = {
    "size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32},
    "patch_size": PATCH_SIZE,
    "merge_size": 2,
}


@_register(
    "cosmos3-edge",
    "Cosmos3EdgeForConditionalGeneration + Cosmos3EdgeProcessor (a timestamped segment per "
    "frame), video input",
)
def _build_cosmos3_edge(out: Path) -> None:
    """Cosmos3 Edge: a 2-layer text model (multimodal RoPE over a head of 8), a 1-layer vision
    tower (8x8 patches, 2x2 merge, one frame a step); each of 8 frames becomes one segment."""
    # return_mm_token_type_ids: as the checkpoint's tokenizer config asks
    tokenizer = _qwen2_tokenizer(QWEN_VISION_TOKENS, return_mm_token_type_ids=True)
    text = _text_config(tokenizer, **VIDEO_LLM_TEXT, head_dim=8, rope_parameters=QWEN2_VL_MROPE)
    vision = {**VIDEO_LLM_VISION, "num_patches": 16, "spatial_merge_size": 2}
    config = {
        "text_config": text,
        "vision_config": vision,
        "projector_hidden_size": 32,
        **qwen_vision_token_ids(tokenizer),
    }
    processor = {
        **_media("Cosmos3Edge", COSMOS_PIXELS, COSMOS_PIXELS),
        "tokenizer": tokenizer,
        "chat_template": QWEN2_VL_CHAT_TEMPLATE,
    }
    _save_twin(out, "Cosmos3Edge", config, processor)


@_register(
    "cosmos3-omni",
    "Cosmos3OmniForConditionalGeneration (the Reasoner: Qwen3-VL) + Qwen3VLProcessor, video input",
)
def _build_cosmos3_omni(out: Path) -> None:
    """Cosmos3 Omni's Reasoner: ``qwen3-vl``'s sizes (a 2-layer Qwen3 text model with interleaved
    multimodal RoPE, a 1-block vision tower feeding the first text layer through DeepStack) in
    Cosmos3 Omni's config and model classes, saved as transformers saves the checkpoint."""
    _save_qwen_vl(out, "Cosmos3Omni", QWEN3_VL_TEXT, QWEN3_VL_DEEPSTACK_VISION)
