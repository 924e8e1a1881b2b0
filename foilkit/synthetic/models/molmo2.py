"""Molmo2 (allenai/Molmo2-*): a video LLM that writes each frame's time before it, whose chat
template takes no system turn."""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic.models._base import (
    IMAGE_SIZE,
    PATCH_SIZE,
    VIDEO_LLM_TEXT,
    VIDEO_LLM_VISION,
    _media,
    _qwen2_tokenizer,
    _register,
    _save_twin,
    _text_config,
)

#: Molmo2's image tokens (the order its processor names them in) and its media placeholders.
MOLMO2_TOKENS = (
    "<im_patch> <im_col> <im_start> <low_res_im_start> <frame_start> <im_end> <frame_end> <im_low> "
    "<|image|> <|video|>"
).split()
#: The checkpoints' chat template (transformers' Molmo2 conversion script), without its list of
#: demo styles (a text part with a ``style`` is prefixed by it; foilkit sends none): media
#: first, then alternating user/assistant turns; any other role raises.
MOLMO2_CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}"
    "{% set video_count = namespace(value=0) %}"
    "{% set has_subtitle = messages and messages[0]['role'].lower() == 'subtitle' %}"
    "{% for message in messages %}{% if message['content'] is not string %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "{% elif content['type'] == 'video' or 'video' in content or 'video_url' in content %}"
    "{% set video_count.value = video_count.value + 1 %}"
    "{% endif %}{% endfor %}{% endif %}{% endfor %}"
    "{% if image_count.value == 1 %}{{ '<|image|>' }}{% elif image_count.value > 1 %}"
    "{% for i in range(image_count.value) %}{{ 'Image ' ~ (i + 1) ~ '<|image|>' }}{% endfor %}"
    "{% endif %}"
    "{% for _ in range(video_count.value) %}{{ '<|video|>' }}{% endfor %}"
    "{% if has_subtitle %}{{ messages[0]['content'] }}{% endif %}"
    "{% for message in messages %}{% set role = message['role'].lower() %}"
    "{% if role == 'subtitle' %}{% continue %}{% endif %}"
    "{% set conv_index = loop.index - (1 if has_subtitle else 0) %}"
    "{%- if (conv_index % 2 == 1 and role != 'user') "
    "or (conv_index % 2 == 0 and role != 'assistant') -%}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}"
    "{%- endif -%}"
    "{% if message['content'] is string %}{% set text_content = message['content'] %}"
    "{% else %}{% set m = namespace(text='') %}{% for content in message['content'] %}"
    "{% if content['type'] == 'text' %}{% set seg = content['text'] %}"
    "{% set m.text = m.text ~ ('' if not m.text else ' ') ~ seg %}{% endif %}{% endfor %}"
    "{% set text_content = m.text %}{% endif %}"
    "{% if role == 'user' %}"
    "{% if not (has_subtitle and loop.index == 2) and not (not has_subtitle and loop.first) %}"
    "{{ '<|im_end|>\\n' }}{% endif %}"
    "{{ '<|im_start|>user\\n' }}{{ text_content }}{{ '<|im_end|>\\n' }}"
    "{% else %}{{ '<|im_start|>assistant\\n' }}{{ text_content }}{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


@_register(
    "molmo2",
    "Molmo2ForConditionalGeneration + Molmo2Processor (Molmo2VideoProcessor), video input with "
    "frame times in the prompt",
)
def _build_molmo2(out: Path) -> None:
    """Molmo2: a 1-layer SigLIP-style ViT (32x32 frames, 8x8 patches), an attention-pooling
    adapter (2x2 patches a token), a 2-layer Molmo2 text model (Qwen3-style norms) and a
    byte-level BPE with Molmo2's image tokens.

    The processor puts BOS (``<|endoftext|>``) before the prompt and replaces ``<|video|>``
    with, per frame, its time (``"0.4 "``, from the ``video_metadata``) and
    ``<frame_start>`` + 4 ``<im_patch>`` + ``<frame_end>``.
    """
    tokenizer = _qwen2_tokenizer(MOLMO2_TOKENS, bos_token="<|endoftext|>")
    ids = dict(zip(MOLMO2_TOKENS, tokenizer.convert_tokens_to_ids(MOLMO2_TOKENS)))
    grid = IMAGE_SIZE // PATCH_SIZE
    heads = {"num_attention_heads": 4, "num_key_value_heads": 4, "head_dim": 8}
    vision = {
        **VIDEO_LLM_VISION,
        **heads,
        "image_size": [IMAGE_SIZE, IMAGE_SIZE],
        "num_position_embeddings": grid * grid,
    }
    adapter = {
        "vision_feature_layer": [-1],
        "hidden_size": 32,
        **heads,
        "intermediate_size": 37,
        "text_hidden_size": VIDEO_LLM_TEXT["hidden_size"],
    }
    text = _text_config(tokenizer, **VIDEO_LLM_TEXT, head_dim=8, additional_vocab_size=0)
    config = {
        "vision_config": vision,
        "adapter_config": adapter,
        "text_config": text,
        "image_start_token_id": ids["<im_start>"],
        "low_res_image_start_token_id": ids["<low_res_im_start>"],
        "image_end_token_id": ids["<im_end>"],
        "image_patch_id": ids["<im_patch>"],
        "frame_start_token_id": ids["<frame_start>"],
        "frame_end_token_id": ids["<frame_end>"],
    }
    pixels = {
        "size": {"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        "patch_size": PATCH_SIZE,
        "pooling_size": [2, 2],
    }
    processor = {
        **_media("Molmo2", {**pixels, "max_crops": 1}, pixels),
        "tokenizer": tokenizer,
        "chat_template": MOLMO2_CHAT_TEMPLATE,
    }
    _save_twin(out, "Molmo2", config, processor)
