"""Omni models (Qwen2.5-Omni, Qwen3-Omni): a thinker that reads text, images, video and audio and
writes text, saved as the whole omni checkpoint (the talker that speaks left out,
``enable_audio_output=False``), which foilkit scores through its thinker without audio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foilkit.synthetic.models._base import (
    VIDEO_LLM_TEXT,
    _qwen2_tokenizer,
    _register,
    _save_twin,
    _text_config,
)
from foilkit.synthetic.models._qwen_vision import (
    QWEN2_5_VL_VISION,
    QWEN2_VL_MROPE,
    QWEN3_VL_DEEPSTACK_VISION,
    qwen_vl_processors,
)
from foilkit.synthetic.models.qwen import QWEN3_VL_CHAT_TEMPLATE, TINY_MOE

#: Qwen2.5-Omni's multimodal tokens (its ``added_tokens.json``) and the names its processor reads
#: them by (the tokenizer's named special tokens).
QWEN2_5_OMNI_TOKENS = {
    "audio_token": "<|AUDIO|>",
    "audio_bos_token": "<|audio_bos|>",
    "audio_eos_token": "<|audio_eos|>",
    "vision_bos_token": "<|vision_bos|>",
    "vision_eos_token": "<|vision_eos|>",
    "image_token": "<|IMAGE|>",
    "video_token": "<|VIDEO|>",
}
#: Qwen/Qwen2.5-Omni-7B's chat template (as transformers' Qwen2.5-Omni processor tests carry
#: it): a default system turn where the conversation has none, a video part written
#: ``<|vision_bos|><|VIDEO|><|vision_eos|>``.
QWEN2_5_OMNI_CHAT_TEMPLATE = (
    "{% set audio_count = namespace(value=0) %}{% set image_count = namespace(value=0) %}"
    "{% set video_count = namespace(value=0) %}{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\n"
    "You are a helpful assistant.<|im_end|>\n{% endif %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n{% else %}"
    "{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}{% if add_vision_id %}"
    "Picture {{ image_count.value }}: {% endif %}<|vision_bos|><|IMAGE|><|vision_eos|>"
    "{% elif content['type'] == 'audio' or 'audio' in content or 'audio_url' in content %}"
    "{% set audio_count.value = audio_count.value + 1 %}{% if add_audio_id %}"
    "Audio {{ audio_count.value }}: {% endif %}<|audio_bos|><|AUDIO|><|audio_eos|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}{% if add_vision_id %}"
    "Video {{ video_count.value }}: {% endif %}<|vision_bos|><|VIDEO|><|vision_eos|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
#: The thinker's weight scale: 5x transformers' default 0.02, so that the random model's option
#: letters depend on the question enough to part a caption from its foil in float32 (at 0.02 its
#: letter probabilities differ by less than float32 resolves once averaged over option orders).
INIT = 0.1
#: A 1-layer audio encoder (the thinker's audio tower, never fed: foilkit gives no audio).
OMNI_AUDIO = {
    "d_model": 32,
    "encoder_attention_heads": 4,
    "encoder_ffn_dim": 32,
    "encoder_layers": 1,
    "num_mel_bins": 20,
    "max_source_positions": 1500,
    "n_window": 100,
    "output_dim": VIDEO_LLM_TEXT["hidden_size"],
}


def _thinker_token_ids(tokenizer: Any, tokens: dict[str, str], suffix: str) -> dict[str, int]:
    """A thinker config's token ids, from ``tokens`` named as :data:`QWEN2_5_OMNI_TOKENS`: the
    audio, image and video placeholders' as ``<kind>_token<suffix>`` (Qwen2.5-Omni's field names
    end ``_index``, Qwen3-Omni's ``_id``), the audio and vision start and end tokens'."""
    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in tokens.items()}
    return {
        **{f"{kind}_token{suffix}": ids[f"{kind}_token"] for kind in ("audio", "image", "video")},
        "audio_start_token_id": ids["audio_bos_token"],
        "audio_end_token_id": ids["audio_eos_token"],
        "vision_start_token_id": ids["vision_bos_token"],
        "vision_end_token_id": ids["vision_eos_token"],
    }


def _save_omni(
    out: Path, model: str, thinker: dict[str, Any], tokenizer: Any, chat_template: str
) -> None:
    """An omni twin in transformers' classes of prefix ``model``: the ``thinker``, no talker,
    and a processor of Qwen2-VL's image and video processors and a Whisper feature extractor for
    the thinker's audio tower."""
    from transformers import WhisperFeatureExtractor

    processor = {
        **qwen_vl_processors("Qwen2VL"),
        "feature_extractor": WhisperFeatureExtractor(feature_size=OMNI_AUDIO["num_mel_bins"]),
        "tokenizer": tokenizer,
        "chat_template": chat_template,
    }
    config = {"thinker_config": thinker, "enable_audio_output": False}
    _save_twin(out, model, config, processor)


@_register(
    "qwen2.5-omni",
    "Qwen2_5OmniForConditionalGeneration (thinker only) + Qwen2_5OmniProcessor, video input "
    "through the thinker",
)
def _build_qwen2_5_omni(out: Path) -> None:
    """Qwen2.5-Omni without its talker: a thinker of a 1-layer windowed vision tower (8x8
    patches, 2 frames a temporal patch, 2x2 merge: 8 frames of 48x64 give ``video_grid_thw ==
    [[4, 2, 4]]`` and 8 ``<|VIDEO|>`` tokens), a 1-layer audio tower and a 2-layer Qwen2.5 text
    model with multimodal RoPE, whose temporal position ids step by ``position_id_per_seconds *
    video_second_per_grid`` (25 x 2 frames / the ``fps`` the processor is given)."""
    tokens = QWEN2_5_OMNI_TOKENS
    tokenizer = _qwen2_tokenizer(
        [*tokens.values(), "<|vision_pad|>"], extra_special_tokens=dict(tokens)
    )
    text = _text_config(
        tokenizer, **VIDEO_LLM_TEXT, initializer_range=INIT, rope_parameters=QWEN2_VL_MROPE
    )
    thinker = {
        "text_config": text,
        "vision_config": QWEN2_5_VL_VISION,
        "audio_config": OMNI_AUDIO,
        **_thinker_token_ids(tokenizer, tokens, "_index"),
        "initializer_range": INIT,
    }
    _save_omni(out, "Qwen2_5Omni", thinker, tokenizer, QWEN2_5_OMNI_CHAT_TEMPLATE)


#: Qwen3-Omni's multimodal tokens (Qwen3-VL's vision tokens and its own audio tokens) and the
#: names its processor reads them by (the tokenizer's named special tokens).
QWEN3_OMNI_TOKENS = {
    "audio_token": "<|audio_pad|>",
    "audio_bos_token": "<|audio_start|>",
    "audio_eos_token": "<|audio_end|>",
    "vision_bos_token": "<|vision_start|>",
    "vision_eos_token": "<|vision_end|>",
    "image_token": "<|image_pad|>",
    "video_token": "<|video_pad|>",
}
#: Qwen3-Omni-Instruct's chat template for what foilkit renders (tools and reasoning history left
#: out), reconstructed: the checkpoints' ``chat_template.json`` is Qwen3-VL-Instruct's
#: (:data:`~foilkit.synthetic.models.qwen.QWEN3_VL_CHAT_TEMPLATE`: no default system turn, the
#: video part ``<|vision_start|><|video_pad|><|vision_end|>``) with an audio part
#: ``<|audio_start|><|audio_pad|><|audio_end|>``; an answer to a user turn of parts is written
#: without a reasoning block, as the renderings quoted in the Qwen3-Omni template's bug reports
#: show (``<|im_start|>assistant\nANSWER: Bird<|im_end|>``).
QWEN3_OMNI_CHAT_TEMPLATE = QWEN3_VL_CHAT_TEMPLATE.replace(
    "{%- elif 'text' in content %}{{- content['text'] }}{%- endif %}{%- endfor %}{%- endif %}"
    "{{- '<|im_end|>\\n' }}",
    "{%- elif content['type'] == 'audio' or 'audio' in content or 'audio_url' in content %}"
    "<|audio_start|><|audio_pad|><|audio_end|>"
    "{%- elif 'text' in content %}{{- content['text'] }}{%- endif %}{%- endfor %}{%- endif %}"
    "{{- '<|im_end|>\\n' }}",
    1,
)


@_register(
    "qwen3-omni-moe",
    "Qwen3OmniMoeForConditionalGeneration (thinker only) + Qwen3OmniMoeProcessor, video input "
    "through the thinker",
)
def _build_qwen3_omni_moe(out: Path) -> None:
    """Qwen3-Omni without its talker: a thinker of a 1-block vision tower (8x8 patches, 2 frames
    a temporal patch, 2x2 merge, DeepStack into the first text layer), a 1-layer audio tower and
    a 2-layer Qwen3-MoE text model (4 experts, 2 a token) with interleaved multimodal RoPE, whose
    temporal position ids step by ``position_id_per_seconds * video_second_per_grid`` (13 x 2
    frames / the ``fps`` the processor is given)."""
    tokens = QWEN3_OMNI_TOKENS
    tokenizer = _qwen2_tokenizer(list(tokens.values()), extra_special_tokens=dict(tokens))
    text = _text_config(
        tokenizer,
        **VIDEO_LLM_TEXT,
        **TINY_MOE,
        head_dim=8,
        initializer_range=INIT,
        rope_parameters={**QWEN2_VL_MROPE, "interleaved": True},  # Qwen3-Omni's key
    )
    audio = {**OMNI_AUDIO, "downsample_hidden_size": 32, "n_window": 50, "n_window_infer": 100}
    thinker = {
        "text_config": text,
        "vision_config": QWEN3_VL_DEEPSTACK_VISION,
        "audio_config": audio,
        **_thinker_token_ids(tokenizer, tokens, "_id"),
        "initializer_range": INIT,
    }
    _save_omni(out, "Qwen3OmniMoe", thinker, tokenizer, QWEN3_OMNI_CHAT_TEMPLATE)
