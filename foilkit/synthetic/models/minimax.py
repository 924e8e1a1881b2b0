"""MiniMax M3 VL (MiniMax, ``minimax_m3_vl``): a Qwen-style vision tower on a mixture-of-experts
text model whose sparse layers attend through a lightning indexer (top-k key blocks; its cache
layer cannot be cut back).

Its processor writes a video as, per temporal patch (2 frames), the patch's time
(``]<]1.9 seconds[>[``, from ``video_metadata``, which it reads when the video processor hands it
back) and ``]<]start of image[>[`` + ``]<]video[>[`` tokens + ``]<]end of image[>[``; frames keep
their size (``do_resize`` off by default). The twin's chat template is in MiniMax's turn format
(``]~!b[`` BOS, ``]~b]role`` turns closed by ``[e~[``, the assistant as ``ai``), the video part
the processor's ``]<]video[>[``: the checkpoint's own template is not in the sources available
here.
"""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import (
    _CONTENT,
    PATCH_SIZE,
    VIDEO_LLM_TEXT,
    VIDEO_LLM_VISION,
    _media,
    _register,
    _save_twin,
    _text_config,
)

MINIMAX_TOKENS = ["]<]image[>[", "]<]video[>[", "]<]start of image[>[", "]<]end of image[>["]
MINIMAX_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "]~b]{{ 'ai' if message['role'] == 'assistant' else message['role'] }}\n"
    + _CONTENT.replace("VIDEO", "]<]video[>[").replace("IMAGE", "]<]image[>[")
    + "[e~[\n{% endfor %}{% if add_generation_prompt %}]~b]ai\n{% endif %}"
)


@_register(
    "minimax-m3-vl",
    "MiniMaxM3SparseForConditionalGeneration (an indexed sparse-attention layer and a full one, "
    "a dense and a mixture-of-experts MLP) + MiniMaxM3VLProcessor, video input",
)
def _build_minimax_m3_vl(out: Path) -> None:
    """MiniMax M3 VL: a 2-layer text model (lightning-indexed sparse attention over 4-token key
    blocks, then full attention; 4 experts, 2 a token, in the second), a 1-layer vision tower
    (8x8 patches, 2 frames a temporal patch, 2x2 merge); 8 frames of 48x64 are 4 timestamped
    groups of 12 ``]<]video[>[``."""
    from transformers import Qwen2Tokenizer

    tokenizer = tiny_tokenizers.byte_level_bpe(
        Qwen2Tokenizer,
        ["]~!b[", "[e~[", "]~b]", *MINIMAX_TOKENS],
        bos_token="]~!b[",
        eos_token="[e~[",
        pad_token="[e~[",
    )
    image, video = tokenizer.convert_tokens_to_ids(MINIMAX_TOKENS[:2])
    text = _text_config(
        tokenizer,
        **{**VIDEO_LLM_TEXT, "intermediate_size": 32},  # grouped expert matmuls want 16-byte rows
        head_dim=8,
        rotary_dim=4,
        layer_types=["minimax_m3_sparse", "full_attention"],
        mlp_layer_types=["dense", "sparse"],
        num_local_experts=4,
        num_experts_per_tok=2,
        dense_intermediate_size=32,
        shared_intermediate_size=16,
        index_n_heads=2,
        index_head_dim=8,
        index_block_size=4,
        index_topk_blocks=2,
        index_local_blocks=1,
    )
    vision = {
        **VIDEO_LLM_VISION,
        "image_size": 32,
        "temporal_patch_size": 2,
        "spatial_merge_size": 2,
    }
    config = {
        "text_config": text,
        "vision_config": vision,
        "image_token_index": image,
        "video_token_index": video,
        "projector_hidden_size": VIDEO_LLM_TEXT["hidden_size"],
    }
    pixels = {"patch_size": PATCH_SIZE, "merge_size": 2, "temporal_patch_size": 2}
    processor = {
        **_media("MiniMaxM3VL", pixels, pixels),
        "tokenizer": tokenizer,
        "chat_template": MINIMAX_CHAT_TEMPLATE,
    }
    _save_twin(out, "MiniMaxM3Sparse", config, processor, "MiniMaxM3VL", "MiniMaxM3VL")
