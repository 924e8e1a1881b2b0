"""Cohere Compass (``cohere_compass``, Cohere's North Micro Vision): a Qwen3-VL vision tower
(DeepStack taps) before a Cohere2 / Command-A-style text model (parallel attention and MLP,
multimodal RoPE).

foilkit refuses it on video (``_video_llm_support.IMAGE_ONLY``): its checkpoints read images
only. transformers' ``CohereCompassProcessor`` is Qwen3-VL's with Cohere's token names, so it
inherits a video processor and a ``<t seconds><|VISION_START|>...<|VISION_END|>`` segment per
temporal patch, but transformers declares the vision tower image-only
(``CohereCompassVisionModel.input_modalities``) and skips the video tests ("CohereCompass does
not support video modeling"), and Cohere's vLLM implementation takes images only. The twin
exists so the refusal is checked on the real classes, before any weight loads, and so that its
image path, the one the checkpoints serve, runs.

Where each piece comes from:

* config sizes: transformers' ``tests/models/cohere_compass/test_modeling_cohere_compass.py``
  (``CohereCompassModelTester``: hidden 32, 2 layers, 4 heads over 2 key-value heads, head 8,
  per-layer-type ``rope_parameters`` with ``mrope_section`` [1, 1, 2], DeepStack tap [0]), the
  vision patches at this package's 8x8;
* tokenizer: ``CohereTokenizer`` (what ``AutoTokenizer`` gives the North Micro Vision
  checkpoints, as mlx-vlm runs record), its default special tokens (``<PAD>`` ... ``<BOS_TOKEN>``,
  eos ``<|END_OF_TURN_TOKEN|>``), and the vision tokens the processor names
  (``<|VISION_START|>``, ``<|VISION_END|>``, ``<|IMAGE_PAD|>``, ``<|VIDEO_PAD|>``);
* chat template: the checkpoint's own lives only on the Hub. This one writes Command A's turns
  (``<|START_OF_TURN_TOKEN|><|USER_TOKEN|>`` ... ``<|END_OF_TURN_TOKEN|>``, the answer after
  ``<|CHATBOT_TOKEN|><|START_RESPONSE|>``) and an image part as vLLM's placeholder for the family,
  ``<|VISION_START|><|IMAGE_PAD|><|VISION_END|>``; it writes nothing for a video part. The
  refusal does not depend on it: it is the family's, and comes before any template check.
"""

from __future__ import annotations

from pathlib import Path

from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.models._base import (
    PATCH_SIZE,
    VIDEO_LLM_TEXT,
    _media,
    _register,
    _save_twin,
    _text_config,
)
from foilkit.synthetic.models._qwen_vision import QWEN3_VL_DEEPSTACK_VISION, qwen_vision_token_ids

#: ``CohereTokenizer``'s own special tokens, in its default vocabulary's order, then Command A's
#: turn tokens.
COHERE_TOKENS = (
    "<PAD> <UNK> <CLS> <SEP> <MASK_TOKEN> <BOS_TOKEN> <|START_OF_TURN_TOKEN|> "
    "<|END_OF_TURN_TOKEN|> <|USER_TOKEN|> <|CHATBOT_TOKEN|> <|SYSTEM_TOKEN|> <|START_RESPONSE|> "
    "<|END_RESPONSE|>"
).split()
#: The vision tokens ``CohereCompassProcessor`` names.
COMPASS_VISION_TOKENS = ["<|VISION_START|>", "<|VISION_END|>", "<|IMAGE_PAD|>", "<|VIDEO_PAD|>"]
_ROLES = (
    "{% set role = {'system': '<|SYSTEM_TOKEN|>', 'user': '<|USER_TOKEN|>', "
    "'assistant': '<|CHATBOT_TOKEN|><|START_RESPONSE|>'}[message['role']] %}"
)
#: Command A's turns; an image part as ``<|VISION_START|><|IMAGE_PAD|><|VISION_END|>``, no video.
COMPASS_CHAT_TEMPLATE = (
    "<BOS_TOKEN>{% for message in messages %}" + _ROLES + "<|START_OF_TURN_TOKEN|>{{ role }}"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<|VISION_START|><|IMAGE_PAD|><|VISION_END|>"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}{% endfor %}{% endif %}"
    "{% if message['role'] == 'assistant' %}<|END_RESPONSE|>{% endif %}<|END_OF_TURN_TOKEN|>"
    "{% endfor %}{% if add_generation_prompt %}"
    "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_RESPONSE|>{% endif %}"
)
#: 8x8 patches merged 2x2, 2 frames a temporal step, at most 32x32 pixels an image.
COMPASS_PIXELS = {
    "size": {"shortest_edge": 16 * 16, "longest_edge": 32 * 32},
    "patch_size": PATCH_SIZE,
    "merge_size": 2,
    "temporal_patch_size": 2,
}


@_register(
    "cohere-compass",
    "CohereCompassForConditionalGeneration + CohereCompassProcessor (CohereTokenizer); refused "
    "on video (its checkpoints read images only)",
)
def _build_cohere_compass(out: Path) -> None:
    """A 2-layer Cohere2-style text model (multimodal RoPE over a head of 8), a 1-layer Qwen3-VL
    vision tower (8x8 patches, 2x2 merge, a DeepStack tap after its layer 0)."""
    from transformers import CohereTokenizer

    tokenizer = tiny_tokenizers.byte_level_bpe(
        CohereTokenizer, [*COHERE_TOKENS, *COMPASS_VISION_TOKENS]
    )
    text = _text_config(
        tokenizer,
        **VIDEO_LLM_TEXT,
        head_dim=8,
        layer_types=["full_attention", "full_attention"],
        rope_parameters={
            "full_attention": {
                "rope_type": "default",
                "rope_theta": 10000.0,
                "mrope_section": [1, 1, 2],
            }
        },
    )
    config = {
        "text_config": text,
        "vision_config": QWEN3_VL_DEEPSTACK_VISION,
        **qwen_vision_token_ids(tokenizer, COMPASS_VISION_TOKENS),
    }
    video = {**COMPASS_PIXELS, "cap_pixels_per_frame": True}
    processor = {
        **_media("CohereCompass", COMPASS_PIXELS, video),
        "tokenizer": tokenizer,
        "chat_template": COMPASS_CHAT_TEMPLATE,
    }
    _save_twin(out, "CohereCompass", config, processor)
