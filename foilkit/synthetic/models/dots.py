"""Dots 3 Note Preview (``dots3_note``, ``dots-studio/dots3-note-prev``): a mixture-of-experts
text model (multi-head latent attention, sliding-window layers) with a vision tower for images and
video frames and a Whisper-style audio tower.

foilkit refuses it on video with transformers 5.23 (``_video_llm_support.BROKEN_VIDEO``): the
5.23 ``Dots3NoteProcessor`` writes a video as one untimed run of ``<|video_pad|>`` tokens, and
the video processor transformers pairs with it (``Qwen3VLVideoProcessor``) packs 2 frames a
patch, which the vision tower (1-frame patches) cannot take; the checkpoint reads a video as
timestamped ``<|img|>...<|endofimg|>`` image blocks of its frames, the layout later transformers
releases write (``Dots3NoteVideoProcessor.preprocess_native``: "the ``<|video_pad|>`` marker ...
is never passed to the model"). The twin exists so that refusal, and the transformers behaviour
behind it, are checked on the real classes.

Where the twin's parts come from (transformers 5.23 ``modular_dots3_note.py`` and the auto
mappings): ``Qwen2Tokenizer``, ``Qwen2VLImageProcessor``, ``Qwen3VLVideoProcessor`` and
``Dots3NoteFeatureExtractor`` in a ``Dots3NoteProcessor``; the multimodal tokens are the ones
the processor names (:data:`DOTS3_NOTE_TOKENS`). The sizes follow transformers' own
``get_tiny_config`` (``tests/models/dots3_note/test_modeling_dots3_note.py``). The checkpoint's
chat template is on the Hub only; the twin has none, since the refusal comes before any template
is read.
"""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic.models._base import PATCH_SIZE, _qwen2_tokenizer, _register, _save_twin
from foilkit.synthetic.models._qwen_vision import qwen_vl_processors

#: The multimodal tokens ``Dots3NoteProcessor`` writes (image, video and audio placeholders, and
#: the image block's markers of the checkpoint's own video layout).
DOTS3_NOTE_TOKENS = (
    "<|imgpad|> <|img|> <|endofimg|> <|video_pad|> <|audio_comp_pad|> <|audio_comp_start|> "
    "<|audio_comp_end|>"
).split()
#: The vision tower's patches are one frame, so the twin's video processor packs 1 frame a patch
#: (the published checkpoint's legacy preprocessor config leaves 5.23 at Qwen3-VL's 2, which
#: fails): its forward then runs on a video, in the layout 5.23 writes.
DOTS3_NOTE_PIXELS = {
    "size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32},
    "patch_size": PATCH_SIZE,
    "merge_size": 2,
    "temporal_patch_size": 1,
}
#: Multi-head latent attention of 4 heads, in full and sliding-window layers alike.
_LATENT_ATTENTION = {
    "num_attention_heads": 4,
    "num_key_value_heads": 4,
    "q_lora_rank": 16,
    "kv_lora_rank": 16,
    "head_dim": 16,
    "qk_nope_head_dim": 8,
    "qk_rope_head_dim": 8,
    "v_head_dim": 8,
}


@_register(
    "dots3-note",
    "Dots3NoteForConditionalGeneration (MoE, latent attention, vision and audio towers) + "
    "Dots3NoteProcessor; refused on video (transformers 5.23 writes a layout the model never saw)",
)
def _build_dots3_note(out: Path) -> None:
    """A 2-layer text model (a dense full-attention layer, then a sliding-window mixture of 4
    experts with a shared one), a 1-layer vision tower (8x8 one-frame patches, 2x2 merge), a
    1-layer audio tower."""
    from transformers import Dots3NoteFeatureExtractor

    tokenizer = _qwen2_tokenizer(DOTS3_NOTE_TOKENS)
    image, video, audio = tokenizer.convert_tokens_to_ids(
        ["<|imgpad|>", "<|video_pad|>", "<|audio_comp_pad|>"]
    )
    vision = {
        "embed_dim": 32,
        "intermediate_size": 37,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "patch_size": PATCH_SIZE,
        "spatial_merge_size": 2,
        "pyramid_num_routed": [-1],  # one dense layer
        "adapter_in_dim": 32,
        "adapter_out_dim": 32,
        "adapter_merge_size": 2,
    }
    audio_tower = {
        "whisper_config": {
            "d_model": 32,
            "encoder_attention_heads": 4,
            "encoder_ffn_dim": 37,
            "encoder_layers": 1,
            "num_mel_bins": 8,
            "max_source_positions": 32,
        },
        "downsample_hidden_size": 4,
        "adapter_input_size": 32,
        "adapter_output_size": 32,
    }
    # published checkpoints store the text model's settings at the top level of the config
    config = {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_hidden_layers": 2,
        "max_position_embeddings": 512,
        **_LATENT_ATTENTION,
        **{f"swa_{name}": value for name, value in _LATENT_ATTENTION.items()},
        "layer_types": ["full_attention", "sliding_attention"],
        "use_dsa": False,
        "sliding_window_size": 64,
        "n_routed_experts": 4,
        "n_shared_experts": 1,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 16,
        "moe_shared_expert_intermediate_size": 16,
        "first_k_dense_replace": 1,
        "image_token_id": image,
        "video_token_id": video,
        "audio_token_id": audio,
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": None,
        "eos_token_id": tokenizer.eos_token_id,
        "vision_config": vision,
        "audio_config": audio_tower,
    }
    processor = {
        **qwen_vl_processors("Qwen3VL", DOTS3_NOTE_PIXELS),
        "tokenizer": tokenizer,
        "feature_extractor": Dots3NoteFeatureExtractor(feature_size=8),
    }
    _save_twin(out, "Dots3Note", config, processor)
