"""InstructBLIP-Video (prompted without a chat template) and image-only InstructBLIP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from foilkit.synthetic.models._base import (
    IMAGE_SIZE,
    VIDEO_LLM_TEXT,
    VISION,
    _bert_tokenizer,
    _media,
    _qwen2_tokenizer,
    _register,
    _save,
    _save_twin,
    _text_config,
)

INSTRUCTBLIP_QUERY_TOKENS = 4
INSTRUCTBLIP_FRAMES = 4  # its processor writes num_query_tokens x 4 video placeholders


def _instructblip_parts(tokenizer: Any, qformer_tokenizer: Any) -> dict[str, Any]:
    """Config fields of a tiny InstructBLIP(-Video): 1-layer vision tower, 1-layer Q-Former with
    :data:`INSTRUCTBLIP_QUERY_TOKENS` queries reading ``qformer_tokenizer``'s ids, 2-layer Llama
    around ``tokenizer``."""
    qformer = {
        "vocab_size": len(qformer_tokenizer),
        "hidden_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "intermediate_size": 37,
        "cross_attention_frequency": 1,
        "encoder_hidden_size": VISION["hidden_size"],
        "pad_token_id": qformer_tokenizer.pad_token_id,
    }
    return {
        "vision_config": dict(VISION, num_hidden_layers=1),
        "qformer_config": qformer,
        "text_config": _text_config(tokenizer, model_type="llama", **VIDEO_LLM_TEXT),
        "num_query_tokens": INSTRUCTBLIP_QUERY_TOKENS,
    }


@_register(
    "instructblip-video",
    "InstructBlipVideoForConditionalGeneration (Q-Former, 2-layer Llama) + "
    "InstructBlipVideoProcessor, no chat template, 4-frame video input",
)
def _build_instructblip_video(out: Path) -> None:
    """InstructBLIP-Video with its own classes, and no chat template (as its checkpoints).

    Feed a 4-frame video as ``processor(text=[question], images=[frames], return_tensors="pt")``
    (``images=``, not ``videos=``): each frame goes through a 1-layer vision tower (32x32, 8x8
    patches) and a 1-layer Q-Former with 4 query tokens that also reads the question
    (``qformer_input_ids``, from a WordPiece BERT tokenizer); the processor puts
    ``4 x 4`` ``<video>`` placeholders (``config.video_token_index``) before the question.
    """
    tokenizer, qformer_tokenizer = _qwen2_tokenizer(["<video>"]), _bert_tokenizer()
    processor = {
        **_media("InstructBlipVideo", video={"size": {"height": IMAGE_SIZE, "width": IMAGE_SIZE}}),
        "tokenizer": tokenizer,
        "qformer_tokenizer": qformer_tokenizer,
        "num_query_tokens": INSTRUCTBLIP_QUERY_TOKENS,
    }
    config = {
        **_instructblip_parts(tokenizer, qformer_tokenizer),
        "video_token_index": tokenizer.convert_tokens_to_ids("<video>"),
    }
    _save_twin(out, "InstructBlipVideo", config, processor)


@_register(
    "instructblip",
    "InstructBlipForConditionalGeneration + InstructBlipProcessor laid out as the "
    "Salesforce/instructblip-* checkpoints, which transformers also reads as InstructBLIP-Video",
)
def _build_instructblip(out: Path) -> None:
    """InstructBLIP (``model_type`` ``instructblip``), the image classes, with what lets
    transformers read the same checkpoint as InstructBLIP-Video (its
    ``VIDEO_PROCESSOR_MAPPING_NAMES`` pairs ``instructblip`` with InstructBLIP-Video's video
    processor): ``<image>`` and ``<video>`` tokens with both ids in the config, and the image
    processor's settings also in the pre-v5 ``preprocessor_config.json``, where the Hub
    checkpoints keep them and a video processor falls back to. Same parts as
    ``instructblip-video``; ``processor(text=[question], images=[image])`` runs it on an image.
    """
    from transformers import (
        BlipImageProcessor,
        InstructBlipConfig,
        InstructBlipForConditionalGeneration,
        InstructBlipProcessor,
    )

    tokenizer, qformer_tokenizer = _qwen2_tokenizer(["<image>", "<video>"]), _bert_tokenizer()
    image_processor = BlipImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    processor = InstructBlipProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        qformer_tokenizer=qformer_tokenizer,
        num_query_tokens=INSTRUCTBLIP_QUERY_TOKENS,
    )
    image, video = tokenizer.convert_tokens_to_ids(["<image>", "<video>"])
    config = InstructBlipConfig(
        **_instructblip_parts(tokenizer, qformer_tokenizer),
        image_token_index=image,
        video_token_index=video,
    )
    _save(out, InstructBlipForConditionalGeneration(config), processor)
    image_processor.to_json_file(out / "preprocessor_config.json")
