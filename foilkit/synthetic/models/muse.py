"""Muse Glimmer (Meta, ``muse_glimmer``): a windowed-attention vision tower whose patches are
pixel-shuffled 2x2 into a projector, on a text model of sliding-window and global layers.

Its processor writes a video as ``<|vid_start|>``, then per temporal patch (2 frames) its time
(``Time: 1.9s``, from ``video_metadata``) and its ``<|video|>`` tokens, separated by
``<|vid_frame_separator|>``, then ``<|vid_end|>``. The twin's chat template is in Llama 4's turn
format (``<|header_start|>role<|header_end|>``, ``<|eot|>``; the family's 202,048-id vocabulary
with BOS 200000 and EOS 200001 is Llama 4's), the video part the processor's ``<|video|>``: the
checkpoint's own template is not in the sources available here.
"""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import (
    _CONTENT,
    PATCH_SIZE,
    VIDEO_LLM_TEXT,
    _register,
    _save,
    _text_config,
)

#: The processor's multimodal tokens (its own names for them).
MUSE_TOKENS = [
    "<|patch|>",
    "<|image_start|>",
    "<|image_end|>",
    "<|video|>",
    "<|vid_frame_separator|>",
    "<|vid_start|>",
    "<|vid_end|>",
]
MUSE_SLIDING_WINDOW = 8  # tokens: far shorter than a video prompt, so the window is full
MUSE_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "<|header_start|>{{ message['role'] }}<|header_end|>\n\n"
    + _CONTENT.replace("VIDEO", "<|video|>").replace("IMAGE", "<|patch|>")
    + "<|eot|>{% endfor %}"
    "{% if add_generation_prompt %}<|header_start|>assistant<|header_end|>\n\n{% endif %}"
)


@_register(
    "muse-glimmer",
    f"MuseGlimmerForConditionalGeneration (a {MUSE_SLIDING_WINDOW}-token sliding-window layer "
    "and a global layer) + MuseGlimmerProcessor (a timestamp per 2 frames), video input",
)
def _build_muse_glimmer(out: Path) -> None:
    """Muse Glimmer: a 2-layer text model, a 1-layer vision tower (8x8 patches, 2 frames a
    temporal patch, 2x2 pixel shuffle into a 2-layer projector); 8 frames are 4 timestamped
    groups of ``<|video|>`` tokens."""
    from transformers import (
        MuseGlimmerConfig,
        MuseGlimmerForConditionalGeneration,
        MuseGlimmerImageProcessor,
        MuseGlimmerProcessor,
        MuseGlimmerVideoProcessor,
        Qwen2Tokenizer,
    )

    tokenizer = tiny_tokenizers.byte_level_bpe(
        Qwen2Tokenizer,
        ["<|begin_of_text|>", "<|eot|>", "<|header_start|>", "<|header_end|>", *MUSE_TOKENS],
        bos_token="<|begin_of_text|>",
        eos_token="<|eot|>",
        pad_token="<|eot|>",
    )
    image, video = tokenizer.convert_tokens_to_ids(["<|patch|>", "<|video|>"])
    text = _text_config(
        tokenizer,
        **VIDEO_LLM_TEXT,
        head_dim=8,
        sliding_window=MUSE_SLIDING_WINDOW,
        layer_types=["sliding_attention", "full_attention"],
    )
    vision = {
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "patch_size": PATCH_SIZE,
        "pos_emb_height": 4,
        "pos_emb_width": 4,
        "max_position_embeddings": 16,
        "layer_types": ["full_attention"],
    }
    config = MuseGlimmerConfig(
        text_config=text,
        vision_config=vision,
        image_token_id=image,
        video_token_id=video,
        out_hidden_size=32 * 4,  # the vision width, 2x2 patches shuffled into channels
        projector_hidden_size=VIDEO_LLM_TEXT["hidden_size"],
    )
    processor = MuseGlimmerProcessor(
        image_processor=MuseGlimmerImageProcessor(patch_size=PATCH_SIZE),
        video_processor=MuseGlimmerVideoProcessor(patch_size=PATCH_SIZE, max_video_frame_tokens=8),
        tokenizer=tokenizer,
        chat_template=MUSE_CHAT_TEMPLATE,
    )
    _save(out, MuseGlimmerForConditionalGeneration(config), processor)
