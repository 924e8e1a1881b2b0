"""The Qwen-VL vision parts many twins share, at one tiny size.

Qwen2-VL, Qwen2.5-VL and Qwen3-VL set the pattern that several families' transformers classes
reuse (Qwen3.5, Qwen4-Exp, the omni thinkers, Cosmos3, LFM3-VL, EXAONE 4.5, HyperCLOVA X,
Cohere Compass, Dots 3, GLM-V): the four vision tokens and the config fields naming their ids, 32x32
pixels in 8x8 patches merged 2x2 with 2 frames a temporal patch, Qwen2-VL's image processor beside
a Qwen2-VL video processor (no frame times) or a Qwen3-VL one (frame times from
``video_metadata``), multimodal RoPE over a head of 8, and the Qwen2.5-VL (windowed) and Qwen3-VL
(learned positions) vision towers. Each is written here once, so every twin built on them has
the same tiny sizes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from foilkit.synthetic.models._base import IMAGE_SIZE, PATCH_SIZE, VIDEO_LLM_TEXT

#: The vision tokens in the order the configs' ids are read: start, end, image, video.
QWEN_VISION_TOKENS = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
#: Qwen2-VL / Qwen2.5-VL processors' pixel settings: one 32x32 image, 8x8 patches merged 2x2,
#: two frames a temporal patch.
QWEN_VL_PIXELS = {
    "size": {"shortest_edge": IMAGE_SIZE * IMAGE_SIZE, "longest_edge": IMAGE_SIZE * IMAGE_SIZE},
    "patch_size": PATCH_SIZE,
    "merge_size": 2,
    "temporal_patch_size": 2,
}

_HEAD_DIM = VIDEO_LLM_TEXT["hidden_size"] // VIDEO_LLM_TEXT["num_attention_heads"]
#: Multimodal RoPE over a head of 8: (t, h, w) sections of 2, 1, 1 frequencies.
QWEN2_VL_MROPE = {
    "rope_type": "default",
    "rope_theta": 10000.0,
    "mrope_section": [_HEAD_DIM // 4, _HEAD_DIM // 8, _HEAD_DIM // 8],
}

#: A Qwen-VL vision tower in the field names of Qwen2-VL's successors' vision configs (GLM-V's
#: too): one block 32 wide with 4 heads, 8x8 patches, 2 frames a temporal patch, 2x2 merge.
QWEN_VL_VISION = {
    "depth": 1,
    "hidden_size": 32,
    "intermediate_size": 37,
    "num_heads": 4,
    "out_hidden_size": VIDEO_LLM_TEXT["hidden_size"],
    "patch_size": PATCH_SIZE,
    "spatial_merge_size": 2,
    "temporal_patch_size": 2,
}
#: A Qwen2.5-VL vision tower: windowed attention (the window two merged patches wide), its one
#: block also the full-attention one.
QWEN2_5_VL_VISION = {
    **QWEN_VL_VISION,
    "window_size": 2 * PATCH_SIZE * 2,
    "fullatt_block_indexes": [0],
}
#: The Qwen3-VL vision tower: a 4x4 grid of learned positions (interpolated).
QWEN3_VL_VISION = {**QWEN_VL_VISION, "num_position_embeddings": 16}
#: :data:`QWEN3_VL_VISION` whose block's output is also added to the first text layer (DeepStack).
QWEN3_VL_DEEPSTACK_VISION = {**QWEN3_VL_VISION, "deepstack_visual_indexes": [0]}


def qwen_vision_token_ids(tokenizer: Any, tokens: Sequence[str] = QWEN_VISION_TOKENS) -> dict:
    """The config fields of the vision tokens' ids in ``tokenizer``: ``tokens`` are the start,
    end, image and video tokens (a family's own names for Qwen's four)."""
    start, end, image, video = tokenizer.convert_tokens_to_ids(list(tokens))
    return {
        "image_token_id": image,
        "video_token_id": video,
        "vision_start_token_id": start,
        "vision_end_token_id": end,
    }


def qwen_vl_processors(
    video_prefix: str = "Qwen3VL", pixels: Mapping[str, Any] = QWEN_VL_PIXELS
) -> dict[str, Any]:
    """A processor's ``image_processor`` (Qwen2-VL's) and ``video_processor``
    (``<video_prefix>VideoProcessor``: ``"Qwen2VL"``'s writes no frame times, ``"Qwen3VL"``'s
    reads them from ``video_metadata``), both of ``pixels``, as the processor's keyword
    arguments."""
    import transformers

    return {
        "image_processor": transformers.Qwen2VLImageProcessor(**pixels),
        "video_processor": getattr(transformers, f"{video_prefix}VideoProcessor")(**pixels),
    }
