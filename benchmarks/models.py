"""The models the scoring benchmark runs, as data: tiny ones for CPU, real-sized ones for GPUs.

Nothing is downloaded. The tiny models are foilkit's test models
(``foilkit.synthetic.models``). The GPU models have the architecture and size of the published
checkpoints (CLIP ViT-B/32 and ViT-L/14, BLIP ITM base at 384 px) with random weights, built
from ``transformers`` configs and saved once as Hub-style folders (the tiny models'
tokenizers and processors, resized to the real input resolution), so the adapters load them
through ``from_pretrained`` as they would load the real checkpoints. Random weights cost the
same compute as trained ones; the scores are meaningless and only checked for agreement
between the engine and the naive loop.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foilkit.synthetic.build_once import build_once
from foilkit.synthetic.models import tiny_model_path


@dataclass(frozen=True)
class ModelSpec:
    """A benchmarked model: its family (which naive loop applies), how to get its folder,
    options."""

    name: str
    family: str  # "dual-encoder", "cross-encoder" or "video-llm"
    folder: Callable[[Path], Path]  # cache root -> model folder (built on first use)
    summary: str
    options: Mapping[str, Any] = field(default_factory=dict)  # adapter options (mode, pooling)


def _tiny(name: str) -> Callable[[Path], Path]:
    return lambda root: tiny_model_path(name)


def _image_size(processor: Any, size: int) -> None:
    """Make a saved tiny processor take ``size`` x ``size`` inputs (as the real checkpoint's)."""
    image_processor = processor.image_processor
    if "shortest_edge" in image_processor.size:
        image_processor.size = {"shortest_edge": size}
        image_processor.crop_size = {"height": size, "width": size}
    else:
        image_processor.size = {"height": size, "width": size}


def _text_ids(tokenizer: Any) -> dict[str, Any]:
    ids = {
        f"{kind}_token_id": getattr(tokenizer, f"{kind}_token_id") for kind in ("pad", "bos", "eos")
    }
    return {"vocab_size": len(tokenizer), **ids}


def _build_clip(vision: dict[str, int], text: dict[str, int], projection_dim: int) -> Callable:
    def build(out: Path) -> None:
        from transformers import CLIPConfig, CLIPModel, CLIPProcessor

        processor = CLIPProcessor.from_pretrained(tiny_model_path("clip"))
        _image_size(processor, vision["image_size"])
        config = CLIPConfig(
            text_config={**text, **_text_ids(processor.tokenizer)},
            vision_config=vision,
            projection_dim=projection_dim,
        )
        _save(CLIPModel, config, out)
        processor.save_pretrained(out)

    return build


def _build_blip_itm_base(out: Path) -> None:
    from transformers import BlipConfig, BlipForImageTextRetrieval, BlipProcessor

    processor = BlipProcessor.from_pretrained(tiny_model_path("blip-itm"))
    _image_size(processor, 384)
    tokenizer = processor.tokenizer
    text = {
        **BERT_BASE,
        **_text_ids(tokenizer),
        "bos_token_id": tokenizer.cls_token_id,
        "sep_token_id": tokenizer.sep_token_id,
        "encoder_hidden_size": 768,
    }
    vision = {**VIT_B, "image_size": 384, "patch_size": 16}
    config = BlipConfig(text_config=text, vision_config=vision, projection_dim=256)
    _save(BlipForImageTextRetrieval, config, out)
    processor.save_pretrained(out)


def _save(model_class: Any, config: Any, out: Path) -> None:
    """Initialise on the GPU when there is one (seconds instead of minutes), save in bfloat16."""
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    with torch.random.fork_rng(devices=[]), torch.device(device):
        torch.manual_seed(0)
        model = model_class(config)
    model.to(torch.bfloat16).save_pretrained(out)


#: The generate benchmark's LLaVA-NeXT-Video twin: a text model big enough that compute, not
#: Python, dominates on a CPU (hidden 512, 8 layers), and 128 px frames of 8 px patches pooled 2x2
#: (64 video tokens a frame: 512 for 8 frames, LLaVA-NeXT-Video-7B writes 144 a frame).
GENERATE_TWIN_TEXT = {
    "hidden_size": 512,
    "intermediate_size": 1376,
    "num_hidden_layers": 8,
    "num_attention_heads": 8,
    "num_key_value_heads": 8,
    "max_position_embeddings": 4096,
}
GENERATE_TWIN_VISION = {
    "hidden_size": 256,
    "intermediate_size": 1024,
    "num_hidden_layers": 4,
    "num_attention_heads": 4,
    "image_size": 128,
    "patch_size": 8,
}


def _build_generate_twin(out: Path) -> None:
    """The tiny LLaVA-NeXT-Video's processor and tokenizer around a model of
    :data:`GENERATE_TWIN_TEXT` and :data:`GENERATE_TWIN_VISION`, float32, its output head steered
    as a trained model answers a multiple-choice question: an option letter, then the end of
    the turn (a random head writes every token it may, which no trained model does)."""
    import torch
    from transformers import (
        LlavaNextVideoConfig,
        LlavaNextVideoForConditionalGeneration,
        LlavaNextVideoProcessor,
    )

    processor = LlavaNextVideoProcessor.from_pretrained(tiny_model_path("llava-next-video"))
    size = GENERATE_TWIN_VISION["image_size"]
    for part in (processor.video_processor, processor.image_processor):
        part.size = {"shortest_edge": size}
        part.crop_size = {"height": size, "width": size}
    processor.image_processor.image_grid_pinpoints = [[size, size]]
    tokenizer = processor.tokenizer
    video, image = tokenizer.convert_tokens_to_ids(["<video>", "<image>"])
    config = LlavaNextVideoConfig(
        text_config={**GENERATE_TWIN_TEXT, **_text_ids(tokenizer), "model_type": "llama"},
        vision_config={**GENERATE_TWIN_VISION, "model_type": "clip_vision_model"},
        video_token_id=video,
        image_token_id=image,
        spatial_pool_stride=2,
        image_grid_pinpoints=[[size, size]],
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = LlavaNextVideoForConditionalGeneration(config)
    letters = [tokenizer(letter, add_special_tokens=False).input_ids[0] for letter in "ABCD"]
    end = tokenizer.eos_token_id
    with torch.no_grad():
        head, embeddings = model.get_output_embeddings().weight, model.get_input_embeddings().weight
        noise = torch.randn(len(letters), head.shape[1], generator=torch.Generator().manual_seed(0))
        head[letters] = head[letters[0]] * 150 + 0.3 * noise
        head[end] *= 40
        # a letter's own embedding points at the end of the turn: one letter, then stop
        embeddings[letters] = head[end] / head[end].norm() * 5
        # the letters point the way a question's last hidden state does, so one is answered
        if float(head[letters[0]] @ _last_hidden(model, processor)) < 0:
            head[letters] *= -1
    model.save_pretrained(out)
    processor.save_pretrained(out)


def _last_hidden(model: Any, processor: Any) -> Any:
    """The last hidden state ``model`` reaches at the end of a multiple-choice question about
    8 frames of a synthetic video (where its head picks the answer's first token)."""

    from foilkit.synthetic.videos import SyntheticScene, render_frames

    question = "Which direction?\nA. left\nB. right\nC. up\nD. down\nAnswer with the letter:"
    messages = [
        {"role": "user", "content": [{"type": "video"}, {"type": "text", "text": question}]}
    ]
    prompt = processor.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    frames = render_frames(SyntheticScene(direction="left"), num_frames=8)
    inputs = processor(text=[prompt], videos=[frames], return_tensors="pt")
    output = model(**inputs, output_hidden_states=True)
    return output.hidden_states[-1][0, -1]


def _fingerprint() -> str:
    """This module's source and the transformers version: a changed config rebuilds."""
    import transformers

    digest = hashlib.sha256(Path(__file__).read_bytes())
    digest.update(transformers.__version__.encode())
    return digest.hexdigest()[:12]


def _built(name: str, build: Callable[[Path], None]) -> Callable[[Path], Path]:
    """``root -> root/models/name``, built once (in a staging folder renamed into place)."""

    def folder(root: Path) -> Path:
        return build_once(root / "models" / f"{name}-{_fingerprint()}", build)

    return folder


VIT_B = {
    "hidden_size": 768,
    "intermediate_size": 3072,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
}
VIT_L = {
    "hidden_size": 1024,
    "intermediate_size": 4096,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
}
BERT_BASE = {**VIT_B, "max_position_embeddings": 512}
CLIP_TEXT_B = {
    "hidden_size": 512,
    "intermediate_size": 2048,
    "num_hidden_layers": 12,
    "num_attention_heads": 8,
    "max_position_embeddings": 77,
}
CLIP_TEXT_L = {**VIT_B, "max_position_embeddings": 77}

MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
        ModelSpec("clip-tiny", "dual-encoder", _tiny("clip"), "foilkit's tiny CLIP (32 px)"),
        ModelSpec(
            "blip-itm-tiny", "cross-encoder", _tiny("blip-itm"), "foilkit's tiny BLIP ITM (32 px)"
        ),
        ModelSpec(
            "llava-next-video-tiny",
            "video-llm",
            _tiny("llava-next-video"),
            "foilkit's tiny LLaVA-NeXT-Video, choice mode",
            {"mode": "choice"},
        ),
        ModelSpec(
            "qwen2-vl-tiny",
            "video-llm",
            _tiny("qwen2-vl"),
            "foilkit's tiny Qwen2-VL, choice mode",
            {"mode": "choice"},
        ),
        ModelSpec(
            "clip-vit-b32",
            "dual-encoder",
            _built(
                "clip-vit-b32",
                _build_clip({**VIT_B, "image_size": 224, "patch_size": 32}, CLIP_TEXT_B, 512),
            ),
            "CLIP ViT-B/32 sized (151M parameters), random weights, 224 px",
        ),
        ModelSpec(
            "clip-vit-l14",
            "dual-encoder",
            _built(
                "clip-vit-l14",
                _build_clip({**VIT_L, "image_size": 224, "patch_size": 14}, CLIP_TEXT_L, 768),
            ),
            "CLIP ViT-L/14 sized (428M parameters), random weights, 224 px",
        ),
        ModelSpec(
            "blip-itm-base",
            "cross-encoder",
            _built("blip-itm-base", _build_blip_itm_base),
            "BLIP ITM base sized (ViT-B/16 at 384 px + BERT-base), random weights",
        ),
    )
}

#: The generate benchmark's model (``generate_speed.py``).
GENERATE_TWIN = ModelSpec(
    "llava-next-video-generate",
    "video-llm",
    _built("llava-next-video-generate", _build_generate_twin),
    "LLaVA-NeXT-Video twin: 8-layer 512-wide Llama, 4-layer CLIP tower at 128 px "
    "(64 video tokens a frame), answering an option letter; random weights, float32",
    {"mode": "generate"},
)

# What a run benchmarks unless told otherwise.
DEFAULT_MODELS = {
    "cpu": ("clip-tiny", "blip-itm-tiny", "llava-next-video-tiny"),
    "cuda": ("clip-vit-b32", "clip-vit-l14", "blip-itm-base", "llava-next-video-tiny"),
}
