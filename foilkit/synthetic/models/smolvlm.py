"""SmolVLM2 (HuggingFaceTB/SmolVLM2-*-Video-Instruct): a video LLM whose processor writes each
frame's timestamp into the prompt."""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import (
    IMAGE_SIZE,
    PATCH_SIZE,
    VIDEO_LLM_TEXT,
    VIDEO_LLM_VISION,
    _media,
    _register,
    _save_twin,
    _text_config,
)

#: SmolVLM2's special tokens: SmolLM2's, then the image tokens its processor writes.
SMOLVLM_TOKENS = (
    "<|endoftext|> <|im_start|> <|im_end|> <fake_token_around_image> <image> <end_of_utterance> "
    "<global-img>"
).split()
#: The SmolVLM2 Instruct checkpoints' chat template (with a video part the processor renders
#: its own default, which writes ``<video>``: the same text but for that placeholder).
SMOLVLM_CHAT_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{message['role'] | capitalize}}"
    "{% if message['content'][0]['type'] == 'image' %}{{':'}}{% else %}{{': '}}{% endif %}"
    "{% for line in message['content'] %}{% if line['type'] == 'text' %}{{line['text']}}"
    "{% elif line['type'] == 'image' %}{{ '<image>' }}{% endif %}{% endfor %}"
    "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}"
)
#: Image tokens a frame: 4x4 patches, pixel-shuffled by 2 to 2x2.
SMOLVLM_FRAME_TOKENS = (IMAGE_SIZE // PATCH_SIZE // 2) ** 2


@_register(
    "smolvlm",
    "SmolVLMForConditionalGeneration + SmolVLMProcessor (SmolVLMVideoProcessor), video input "
    "with frame timestamps in the prompt",
    requires=("num2words",),
)
def _build_smolvlm(out: Path) -> None:
    """SmolVLM2: a 1-layer SigLIP-style vision tower (32x32 frames, 8x8 patches), pixel shuffle
    by 2, a 2-layer Llama (SmolLM2) and SmolLM2's byte-level BPE with SmolVLM's image tokens.

    The processor replaces ``<video>`` with "You are provided the following series of eight
    frames from a 0:00:06 [H:MM:SS] video." and, per frame, ``Frame from mm:ss:`` (from the
    ``video_metadata`` times) and ``<fake_token_around_image><global-img>`` + 4 ``<image>``
    tokens + ``<fake_token_around_image>``; frames go to the model as ``pixel_values``.
    Needs ``num2words`` (the processor spells the frame count).
    """
    from transformers import GPT2Tokenizer

    tokenizer = tiny_tokenizers.byte_level_bpe(
        GPT2Tokenizer,
        SMOLVLM_TOKENS,
        bos_token="<|im_start|>",
        eos_token="<end_of_utterance>",
        pad_token="<|im_end|>",
        unk_token="<|endoftext|>",
    )
    vision = {**VIDEO_LLM_VISION, "image_size": IMAGE_SIZE}
    config = {
        "text_config": _text_config(tokenizer, model_type="llama", **VIDEO_LLM_TEXT),
        "vision_config": vision,
        "image_token_id": tokenizer.convert_tokens_to_ids("<image>"),
        "scale_factor": 2,
    }
    pixels = {
        "size": {"longest_edge": IMAGE_SIZE},
        "max_image_size": {"longest_edge": IMAGE_SIZE},
    }
    processor = {
        **_media("SmolVLM", {**pixels, "do_image_splitting": False}, pixels),
        "tokenizer": tokenizer,
        "chat_template": SMOLVLM_CHAT_TEMPLATE,
        "image_seq_len": SMOLVLM_FRAME_TOKENS,
    }
    _save_twin(out, "SmolVLM", config, processor)
