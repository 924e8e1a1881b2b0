"""HyperCLOVA X SEED Vision V2 (NAVER, ``hyperclovax_vision_v2``): a Qwen2.5-VL vision tower, a
linear projector and the HyperCLOVA X text model.

Video goes through ``Qwen2VLVideoProcessor`` (2 frames a temporal patch, 2x2 patches merged into
one ``<|VIDEO_PAD|>``, no per-frame times); the processor writes the video's duration where the
chat template puts ``<|video_duration|>``, from ``video_metadata`` (its ``duration``, else frames
over fps, 24 fps when unknown). The twin's chat template is ChatML (HyperCLOVA X SEED's turns)
with a video part written as its JSON metadata line and the placeholder: the checkpoint's own
template is not in the sources available here.
"""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import (
    _CONTENT,
    VIDEO_LLM_TEXT,
    _register,
    _save_twin,
    _text_config,
)
from foilkit.synthetic.models._qwen_vision import QWEN2_5_VL_VISION, qwen_vl_processors

HCX_TOKENS = {"image_token": "<|IMAGE_PAD|>", "video_token": "<|VIDEO_PAD|>"}
HCX_VIDEO_PART = '{"resource_type": "video", "video_duration": <|video_duration|>}\n<|VIDEO_PAD|>'
HCX_CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    + _CONTENT.replace("VIDEO", HCX_VIDEO_PART).replace("IMAGE", "<|IMAGE_PAD|>")
    + "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@_register(
    "hyperclovax-vision-v2",
    "HyperCLOVAXVisionV2ForConditionalGeneration + HyperCLOVAXVisionV2Processor (the video's "
    "duration written into the prompt), video input",
)
def _build_hyperclovax_vision_v2(out: Path) -> None:
    """HyperCLOVA X SEED Vision V2: a 2-layer HyperCLOVA X text model, a 1-layer windowed
    Qwen2.5-VL vision tower (8x8 patches, 2 frames a temporal patch, 2x2 merge); 8 frames of
    48x64 resized to 16x32 are 8 ``<|VIDEO_PAD|>``."""
    from transformers import GPT2Tokenizer

    tokenizer = tiny_tokenizers.byte_level_bpe(
        GPT2Tokenizer,  # the class transformers maps the family's tokenizer to
        ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|video_duration|>", *HCX_TOKENS.values()],
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        extra_special_tokens=HCX_TOKENS,
        add_prefix_space=False,
    )
    image, video = tokenizer.convert_tokens_to_ids(list(HCX_TOKENS.values()))
    text = _text_config(tokenizer, **VIDEO_LLM_TEXT, model_type="hyperclovax")
    config = {
        "text_config": text,
        "vision_config": QWEN2_5_VL_VISION,
        "image_token_id": image,
        "video_token_id": video,
    }
    processor = {
        **qwen_vl_processors("Qwen2VL"),
        "tokenizer": tokenizer,
        "chat_template": HCX_CHAT_TEMPLATE,
    }
    _save_twin(out, "HyperCLOVAXVisionV2", config, processor)
