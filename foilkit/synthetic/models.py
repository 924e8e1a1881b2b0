"""Tiny randomly initialised models of every family foilkit uses, saved as Hub-style folders.

Each family's builder makes a model from a small config (hidden size 32, one or two layers,
32x32 images in 8x8 patches) with fixed seeds, and a tokenizer/processor built offline
(:mod:`foilkit.synthetic.tokenizers`), and writes both with ``save_pretrained``. Tests then load
the folder only through the normal ``from_pretrained(path)`` code path, so the code under test
is the code that runs on real checkpoints. Nothing touches the network.

Public API::

    TINY_MODELS                  # name -> TinyModel (builder + one-line summary), registry order
    tiny_model_path("clip")      # build once, cache, return the folder
    build_tiny_model("clip", d)  # build into folder d, uncached

``tiny_model_path`` caches under ``$FOILKIT_TINY_MODELS`` (default
``~/.cache/foilkit/tiny-models``) in ``<name>-<fingerprint>`` folders; the fingerprint hashes
this module, the tokenizer module and the torch and transformers versions, so any config change
rebuilds. Builds are byte-for-byte reproducible.
A build goes to a temporary sibling folder that is renamed into place, so parallel test
processes never see a half-written model.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foilkit.synthetic import clip_vocab, real_tokenizers
from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.build_once import build_once

SEED = 0
IMAGE_SIZE = 32
PATCH_SIZE = 8
SIGLIP_TEXT_LENGTH = 64
CLIP_TEXT_LENGTH = 77  # CLIP's and X-CLIP's text positions, as in the real checkpoints
NUM_FRAMES = 8  # X-CLIP's frame count; also the frames tests feed the video LLMs

TEXT = {
    "hidden_size": 32,
    "intermediate_size": 37,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "max_position_embeddings": 128,
}
VISION = {
    "hidden_size": 32,
    "intermediate_size": 37,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "image_size": IMAGE_SIZE,
    "patch_size": PATCH_SIZE,
}
SQUARE = {
    "size": {"shortest_edge": IMAGE_SIZE},
    "crop_size": {"height": IMAGE_SIZE, "width": IMAGE_SIZE},
}

NLI_LABELS = (
    "contradiction",
    "entailment",
    "neutral",
)  # the order of cross-encoder/nli-* checkpoints
COLA_LABELS = ("unacceptable", "acceptable")  # textattack/roberta-base-CoLA style: 1 = acceptable


@dataclass(frozen=True)
class TinyModel:
    """A registered family: ``build(out_dir)`` writes the model and its tokenizer/processor."""

    name: str
    build: Callable[[Path], None]
    summary: str
    #: import names of packages the build and the model need beyond foilkit's own (``timm``)
    requires: tuple[str, ...] = ()

    def missing(self) -> list[str]:
        """The packages of ``requires`` that are not installed."""
        import importlib.util

        return [name for name in self.requires if importlib.util.find_spec(name) is None]


TINY_MODELS: dict[str, TinyModel] = {}


def _registrar(
    families: dict[str, TinyModel],
) -> Callable[..., Callable[[Callable[[Path], None]], Callable[[Path], None]]]:
    """A decorator factory that registers a build function in ``families`` as ``name``."""

    def register_as(
        name: str, summary: str, requires: tuple[str, ...] = ()
    ) -> Callable[[Callable[[Path], None]], Callable[[Path], None]]:
        def register(build: Callable[[Path], None]) -> Callable[[Path], None]:
            families[name] = TinyModel(name, build, summary, requires)
            return build

        return register

    return register_as


_register = _registrar(TINY_MODELS)


def _lookup(families: dict[str, TinyModel], name: str, kind: str) -> TinyModel:
    try:
        return families[name]
    except KeyError:
        raise KeyError(f"unknown {kind} {name!r}; known: {', '.join(families)}") from None


def _seeded_build(out_dir: str | os.PathLike, build: Callable[[Path], None]) -> Path:
    """Run ``build`` into ``out_dir`` (created if needed) under :data:`SEED`; return the folder.

    The global torch RNG is left as it was.
    """
    import torch

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        build(out)
    return out


def build_tiny_model(name: str, out_dir: str | os.PathLike) -> Path:
    """Build family ``name`` into ``out_dir`` (created if needed) with fixed seeds; return it."""
    return _seeded_build(out_dir, _lookup(TINY_MODELS, name, "tiny model").build)


@functools.cache
def fingerprint() -> str:
    """Short hash of what determines the saved folders: these modules, torch and transformers."""
    import torch
    import transformers

    digest = hashlib.sha256(f"{torch.__version__} {transformers.__version__}".encode())
    for module in (
        __file__,
        tiny_tokenizers.__file__,
        clip_vocab.__file__,
        real_tokenizers.__file__,
    ):
        digest.update(Path(module).read_bytes())
    return digest.hexdigest()[:12]


def default_root() -> Path:
    """``$FOILKIT_TINY_MODELS``, else ``~/.cache/foilkit/tiny-models``."""
    return Path(
        os.environ.get("FOILKIT_TINY_MODELS") or Path.home() / ".cache" / "foilkit" / "tiny-models"
    )


def tiny_model_path(name: str, root: str | os.PathLike | None = None) -> Path:
    """Folder of tiny model ``name`` under ``root``, built on first use and reused afterwards.

    The build happens in a temporary folder next to the final one and is renamed into place;
    when another process wins the race, its folder is kept and ours is discarded.
    """
    root = Path(root) if root is not None else default_root()
    final = root / f"{name}-{fingerprint()}"
    if not final.is_dir():
        _lookup(TINY_MODELS, name, "tiny model")
    return build_once(final, lambda staging: build_tiny_model(name, staging))


# --- tokenizers in each family's own class -------------------------------------------------------


def _gpt2_tokenizer():
    from transformers import GPT2Tokenizer

    return tiny_tokenizers.byte_level_bpe(GPT2Tokenizer, ["<|endoftext|>"])


def _roberta_tokenizer():
    from transformers import RobertaTokenizer

    return tiny_tokenizers.byte_level_bpe(
        RobertaTokenizer, ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    )


def _clip_tokenizer():
    """CLIP's real tokenizer (49,408 ids, EOS 49407 the highest): the text towers pool at the
    end-of-text token, X-CLIP finds it by ``argmax`` over the ids, which only works with CLIP's
    own vocabulary (:mod:`foilkit.synthetic.clip_vocab`)."""
    from foilkit.synthetic.clip_vocab import clip_tokenizer

    return clip_tokenizer()


def _bert_tokenizer():
    from transformers import BertTokenizer

    return tiny_tokenizers.wordpiece(BertTokenizer, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])


def _t5_tokenizer(sentinels: int = 100, **kwargs):
    from transformers import T5Tokenizer

    return tiny_tokenizers.unigram(
        T5Tokenizer, ["<pad>", "</s>", "<unk>"], sentinels=sentinels, **kwargs
    )


def _qwen2_tokenizer(extra_special_tokens: list[str]):
    from transformers import Qwen2Tokenizer

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *extra_special_tokens]
    return tiny_tokenizers.byte_level_bpe(
        Qwen2Tokenizer, specials, eos_token="<|im_end|>", pad_token="<|endoftext|>"
    )


def _token_ids(tokenizer, *kinds: str) -> dict[str, int]:
    """``<kind>_token_id`` of ``tokenizer`` for each of ``kinds``, as model configs name them."""
    return {f"{kind}_token_id": getattr(tokenizer, f"{kind}_token_id") for kind in kinds}


def _text_config(tokenizer, **overrides) -> dict:
    """:data:`TEXT` sized to ``tokenizer`` with its special-token ids."""
    ids = _token_ids(tokenizer, "pad", "bos", "eos")
    return {**TEXT, "vocab_size": len(tokenizer), **ids, **overrides}


def _save(out: Path, *parts: Any) -> None:
    """``save_pretrained`` of each part (a model, its tokenizer or processor) into ``out``."""
    for part in parts:
        part.save_pretrained(out)


# --- families ------------------------------------------------------------------------------------


@_register("clip", "CLIPModel + CLIPProcessor (CLIPImageProcessor, byte-level BPE CLIPTokenizer)")
def _build_clip(out: Path) -> None:
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    tokenizer = _clip_tokenizer()
    text = _text_config(tokenizer, max_position_embeddings=CLIP_TEXT_LENGTH)
    config = CLIPConfig(text_config=text, vision_config=VISION, projection_dim=16)
    processor = CLIPProcessor(image_processor=CLIPImageProcessor(**SQUARE), tokenizer=tokenizer)
    _save(out, CLIPModel(config), processor)


@_register(
    "align", "AlignModel + AlignProcessor (EfficientNetImageProcessor, WordPiece BertTokenizer)"
)
def _build_align(out: Path) -> None:
    """The EfficientNet sizes of transformers' ``AlignVisionModelTester``; the text projection
    maps to the vision tower's ``hidden_dim``, as in ``kakaobrain/align-base``."""
    from transformers import AlignConfig, AlignModel, AlignProcessor, EfficientNetImageProcessor

    tokenizer = _bert_tokenizer()
    vision = {
        "image_size": IMAGE_SIZE,
        "kernel_sizes": [3, 3, 5],
        "in_channels": [32, 16, 24],
        "out_channels": [16, 24, 30],
        "hidden_dim": 64,
        "strides": [1, 1, 2],
        "num_block_repeats": [1, 1, 2],
        "expand_ratios": [1, 6, 6],
    }
    text = _text_config(tokenizer, bos_token_id=tokenizer.cls_token_id)
    config = AlignConfig(text_config=text, vision_config=vision, projection_dim=64)
    image_processor = EfficientNetImageProcessor(
        size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}, do_center_crop=False
    )
    _save(out, AlignModel(config), AlignProcessor(image_processor, tokenizer))


@_register("tipsv2", "Tipsv2Model + Tipsv2Processor (Tipsv2ImageProcessor, BPE Tipsv2Tokenizer)")
def _build_tipsv2(out: Path) -> None:
    """A one-layer ViT (one register token) and text tower, both 32 wide (TIPSv2 compares them
    without projections); texts padded to 64 tokens, as the real processor does."""
    from transformers import (
        Tipsv2Config,
        Tipsv2ImageProcessor,
        Tipsv2Model,
        Tipsv2Processor,
        Tipsv2Tokenizer,
    )

    tokenizer = tiny_tokenizers.metaspace_bpe(Tipsv2Tokenizer, ["<pad>", "<unk>"])
    vision = {
        "hidden_size": 32,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "image_size": IMAGE_SIZE,
        "patch_size": PATCH_SIZE,
    }
    text = {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "max_position_embeddings": SIGLIP_TEXT_LENGTH,
    }
    config = Tipsv2Config(text_config=text, vision_config=vision)
    image_processor = Tipsv2ImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    _save(out, Tipsv2Model(config), Tipsv2Processor(image_processor, tokenizer))


@_register(
    "siglip", "SiglipModel + SiglipProcessor (SiglipImageProcessor, Unigram T5-style tokenizer)"
)
def _build_siglip(out: Path) -> None:
    """SigLIP's text tower pools the last position: call the processor with ``padding="max_length"``
    (as for real SigLIP); the tokenizer's ``model_max_length`` is the text length, 64."""
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel, SiglipProcessor

    tokenizer = _t5_tokenizer(sentinels=0, model_max_length=SIGLIP_TEXT_LENGTH)
    text = _text_config(tokenizer, max_position_embeddings=SIGLIP_TEXT_LENGTH)
    config = SiglipConfig(text_config=text, vision_config=VISION)
    image_processor = SiglipImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    processor = SiglipProcessor(image_processor=image_processor, tokenizer=tokenizer)
    _save(out, SiglipModel(config), processor)


@_register(
    "xclip", f"XCLIPModel + XCLIPProcessor (VideoMAEImageProcessor), {NUM_FRAMES}-frame video input"
)
def _build_xclip(out: Path) -> None:
    """X-CLIP takes ``pixel_values`` (batch, NUM_FRAMES, 3, 32, 32): the processor's ``videos=``."""
    from transformers import VideoMAEImageProcessor, XCLIPConfig, XCLIPModel, XCLIPProcessor

    tokenizer = _clip_tokenizer()
    vision = dict(
        VISION,
        num_frames=NUM_FRAMES,
        mit_hidden_size=16,
        mit_intermediate_size=37,
        mit_num_hidden_layers=1,
        mit_num_attention_heads=4,
    )
    text = _text_config(tokenizer, max_position_embeddings=CLIP_TEXT_LENGTH)
    config = XCLIPConfig(
        text_config=text,
        vision_config=vision,
        projection_dim=16,
        prompt_layers=1,
        prompt_attention_heads=4,
    )
    processor = XCLIPProcessor(
        image_processor=VideoMAEImageProcessor(**SQUARE), tokenizer=tokenizer
    )
    _save(out, XCLIPModel(config), processor)


VIDEOPRISM_FRAMES = 4  # the tiny VideoPrism's vision_config.num_frames (the real ones: 16)
PE_VIDEO_FRAMES = 6  # the tiny PE-Video's video processor num_frames (pe-av-*-16-frame: 16)


@_register(
    "videoprism",
    f"VideoPrismClipModel + VideoPrismProcessor (LlavaOnevisionVideoProcessor, Unigram "
    f"VideoPrismTokenizer), {VIDEOPRISM_FRAMES}-frame video input",
)
def _build_videoprism(out: Path) -> None:
    """Sizes of transformers' ``VideoPrismClipModelTester`` at 32x32 frames in 8x8 tubelets;
    pixels in [0, 1] and texts padded to 64 tokens, as the real processor does."""
    from transformers import (
        LlavaOnevisionVideoProcessor,
        VideoPrismClipModel,
        VideoPrismConfig,
        VideoPrismProcessor,
        VideoPrismTokenizer,
    )

    tokenizer = tiny_tokenizers.unigram(VideoPrismTokenizer, ["<pad>", "</s>", "<unk>"])
    vision = {
        "image_size": IMAGE_SIZE,
        "num_frames": VIDEOPRISM_FRAMES,
        "tubelet_size": [1, PATCH_SIZE, PATCH_SIZE],
        "hidden_size": 32,
        "num_spatial_layers": 1,
        "num_temporal_layers": 1,
        "num_auxiliary_layers": 1,
        "num_attention_heads": 4,
        "intermediate_size": 64,
    }
    text = {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "max_position_embeddings": SIGLIP_TEXT_LENGTH,
    }
    config = VideoPrismConfig(text_config=text, vision_config=vision)
    video_processor = LlavaOnevisionVideoProcessor(
        size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}, do_normalize=False
    )
    processor = VideoPrismProcessor(video_processor=video_processor, tokenizer=tokenizer)
    _save(out, VideoPrismClipModel(config), processor)


# PE-Video's sizes: transformers' PeVideoModelTester at 32x32 frames in 8x8 patches
PE_ENCODER = {
    "hidden_size": 32,
    "intermediate_size": 37,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "num_key_value_heads": 2,
    "head_dim": 16,
    "max_position_embeddings": 64,
}
PE_VISION = {
    "architecture": "vit_pe_core_large_patch14_336",
    "model_args": {
        "embed_dim": 32,
        "img_size": (IMAGE_SIZE, IMAGE_SIZE),
        "patch_size": PATCH_SIZE,
        "depth": 1,
        "num_heads": 4,
    },
    "num_classes": 16,
}


def _pe_text_config(tokenizer) -> dict:
    """A one-layer ModernBERT around ``tokenizer`` (PE's text tower)."""
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    return {
        "vocab_size": len(tokenizer),
        "pad_token_id": tokenizer.pad_token_id,
        "bos_token_id": cls_id,
        "cls_token_id": cls_id,
        "eos_token_id": sep_id,
        "sep_token_id": sep_id,
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "max_position_embeddings": 128,
    }


def _pe_video_processor():
    """``PeVideoVideoProcessor`` as ``facebook/pe-av-*-16-frame`` configure it, at 32x32 and
    :data:`PE_VIDEO_FRAMES` frames."""
    from transformers import PeVideoVideoProcessor

    return PeVideoVideoProcessor(
        do_resize=True,
        do_rescale=True,
        do_normalize=True,
        do_convert_rgb=True,
        do_sample_frames=True,
        num_frames=PE_VIDEO_FRAMES,
        size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
        image_mean=[0.5, 0.5, 0.5],
        image_std=[0.5, 0.5, 0.5],
    )


def _set_pe_logits(*heads: Any) -> None:
    """Logit scale 10 and bias -10 on each ``(scale, bias)`` pair (zero at init, which would
    make every logit equal)."""
    import torch

    with torch.no_grad():
        for scale, bias in heads:
            scale.fill_(10.0)
            bias.fill_(-10.0)


@_register(
    "pe-video",
    f"PeVideoModel (timm PE vision tower, ModernBERT text) + PeVideoProcessor "
    f"(PeVideoVideoProcessor, WordPiece BertTokenizer), {PE_VIDEO_FRAMES}-frame video input; "
    "needs timm",
    requires=("timm",),
)
def _build_pe_video(out: Path) -> None:
    from transformers import PeVideoConfig, PeVideoModel, PeVideoProcessor

    tokenizer = _bert_tokenizer()
    video = {"vision_config": PE_VISION, **PE_ENCODER}
    model = PeVideoModel(PeVideoConfig(text_config=_pe_text_config(tokenizer), video_config=video))
    _set_pe_logits((model.text_video_logit_scale, model.text_video_logit_bias))
    processor = PeVideoProcessor(video_processor=_pe_video_processor(), tokenizer=tokenizer)
    _save(out, model, processor)


@_register(
    "pe-audio-video",
    "PeAudioVideoModel (the layout of facebook/pe-av-*: PE-Video inside, a tiny DAC audio "
    f"tower) + PeAudioVideoProcessor, {PE_VIDEO_FRAMES}-frame video input; needs timm. In "
    "transformers 5.23 it does not load back through from_pretrained (tied audio weights)",
    requires=("timm",),
)
def _build_pe_audio_video(out: Path) -> None:
    _save(out, *tiny_pe_audio_video())


def tiny_pe_audio_video() -> tuple[Any, Any]:
    """The ``pe-audio-video`` model and processor in memory (the model drawn from the global
    torch RNG: seed it with :data:`SEED` for the saved weights), for tests that need the model
    ``from_pretrained`` cannot load back."""
    from transformers import (
        PeAudioFeatureExtractor,
        PeAudioVideoConfig,
        PeAudioVideoModel,
        PeAudioVideoProcessor,
    )

    tokenizer = _bert_tokenizer()
    dac = {
        "encoder_hidden_size": 16,
        "downsampling_ratios": [2, 4, 4],
        "decoder_hidden_size": 16,
        "n_codebooks": 6,
        "codebook_size": 512,
        "codebook_dim": 32,
    }
    encoders = {
        "audio_config": {"dac_config": dac, **PE_ENCODER},
        "video_config": {"vision_config": PE_VISION, **PE_ENCODER},
        **PE_ENCODER,
    }
    config = PeAudioVideoConfig(text_config=_pe_text_config(tokenizer), audio_video_config=encoders)
    model = PeAudioVideoModel(config)
    _set_pe_logits(
        (model.video_model.text_video_logit_scale, model.video_model.text_video_logit_bias)
    )
    processor = PeAudioVideoProcessor(
        feature_extractor=PeAudioFeatureExtractor(),
        video_processor=_pe_video_processor(),
        tokenizer=tokenizer,
    )
    return model, processor


@_register(
    "blip-itm",
    "BlipForImageTextRetrieval + BlipProcessor (BlipImageProcessor, WordPiece BertTokenizer)",
)
def _build_blip_itm(out: Path) -> None:
    """``model(**inputs).itm_score``: ITM logits (batch, 2), index 1 = match.

    With ``use_itm_head=False`` it is the image-text cosine similarity instead.
    """
    tokenizer = _bert_tokenizer()
    text = _text_config(
        tokenizer,
        encoder_hidden_size=VISION["hidden_size"],
        bos_token_id=tokenizer.cls_token_id,
        sep_token_id=tokenizer.sep_token_id,
    )
    _save_blip_itm(out, tokenizer, text, VISION)


def _save_blip_itm(out: Path, tokenizer: Any, text: dict, vision: dict, **config: Any) -> None:
    """A ``BlipForImageTextRetrieval`` of ``text`` and ``vision`` configs (16-wide projections)
    with its processor around ``tokenizer``; ``config``: further ``BlipConfig`` fields."""
    from transformers import (
        BlipConfig,
        BlipForImageTextRetrieval,
        BlipImageProcessor,
        BlipProcessor,
    )

    blip = BlipConfig(
        text_config=text,
        vision_config=vision,
        projection_dim=16,
        image_text_hidden_size=16,
        **config,
    )
    image_processor = BlipImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    processor = BlipProcessor(image_processor=image_processor, tokenizer=tokenizer)
    _save(out, BlipForImageTextRetrieval(blip), processor)


@_register("gpt2", "GPT2LMHeadModel + byte-level BPE GPT2Tokenizer (for perplexity)")
def _build_gpt2(out: Path) -> None:
    """BOS = EOS = ``<|endoftext|>`` (id 0), no pad token, as the real GPT-2."""
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = _gpt2_tokenizer()
    sizes = {"n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 128}
    config = GPT2Config(vocab_size=len(tokenizer), **sizes, **_token_ids(tokenizer, "bos", "eos"))
    _save(out, GPT2LMHeadModel(config), tokenizer)


def _build_bert_classifier(out: Path, labels: tuple[str, ...]) -> None:
    from transformers import BertConfig, BertForSequenceClassification

    tokenizer = _bert_tokenizer()
    config = BertConfig(
        **_text_config(tokenizer),
        num_labels=len(labels),
        id2label=dict(enumerate(labels)),
        label2id={label: i for i, label in enumerate(labels)},
    )
    _save(out, BertForSequenceClassification(config), tokenizer)


@_register(
    "nli",
    f"BertForSequenceClassification, labels {NLI_LABELS}; a sentence-transformers CrossEncoder",
)
def _build_nli(out: Path) -> None:
    """Sentence pairs (premise, hypothesis) -> 3 logits in the order of ``config.id2label``."""
    _build_bert_classifier(out, NLI_LABELS)


@_register(
    "cola", f"BertForSequenceClassification, labels {COLA_LABELS} (linguistic acceptability)"
)
def _build_cola(out: Path) -> None:
    """Single sentences -> 2 logits; ``config.label2id["acceptable"]`` is the grammatical class."""
    _build_bert_classifier(out, COLA_LABELS)


@_register("t5", "T5ForConditionalGeneration + Unigram T5Tokenizer with <extra_id_0..99> sentinels")
def _build_t5(out: Path) -> None:
    """Span infilling: ``"a man <extra_id_0> the door"`` -> ``generate`` -> ``<extra_id_0> ...``.

    As in real T5, the sentinels are the last 100 ids (``<extra_id_0>`` is the highest) and
    generation starts from the pad token.
    """
    from transformers import T5Config, T5ForConditionalGeneration

    tokenizer = _t5_tokenizer()
    sizes = {"d_model": 32, "d_kv": 8, "d_ff": 37, "num_layers": 2, "num_decoder_layers": 2}
    config = T5Config(
        vocab_size=len(tokenizer),
        **sizes,
        num_heads=4,
        relative_attention_num_buckets=8,
        **_token_ids(tokenizer, "pad", "eos"),
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    _save(out, T5ForConditionalGeneration(config), tokenizer)


@_register("roberta-mlm", "RobertaForMaskedLM + byte-level BPE RobertaTokenizer with <mask>")
def _build_roberta_mlm(out: Path) -> None:
    """Works with ``pipeline("fill-mask", model=path)``; positions start after ``pad_token_id``."""
    from transformers import RobertaConfig, RobertaForMaskedLM

    tokenizer = _roberta_tokenizer()
    config = RobertaConfig(
        **_text_config(tokenizer, max_position_embeddings=TEXT["max_position_embeddings"] + 2)
    )
    _save(out, RobertaForMaskedLM(config), tokenizer)


# --- video LLMs ----------------------------------------------------------------------------------

VIDEO_LLM_TEXT = {
    "hidden_size": 32,
    "intermediate_size": 37,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 512,
}

# Chat templates in the shape of the Hub checkpoints': a message's ``content`` is a string or a list
# of ``{"type": "video"}`` / ``{"type": "image"}`` / ``{"type": "text", "text": ...}`` parts.
_CONTENT = (
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for part in message['content'] %}{% if part['type'] == 'video' %}VIDEO"
    "{% elif part['type'] == 'image' %}IMAGE"
    "{% elif part['type'] == 'text' %}{{ part['text'] }}{% endif %}"
    "{% endfor %}{% endif %}"
)
LLAVA_CHAT_TEMPLATE = (
    "{% for message in messages %}{{ message['role'] | upper }}: "
    + _CONTENT.replace("VIDEO", "<video>\n").replace("IMAGE", "<image>\n")
    + "\n{% endfor %}{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)
QWEN2_VL_CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    + _CONTENT.replace("VIDEO", "<|vision_start|><|video_pad|><|vision_end|>").replace(
        "IMAGE", "<|vision_start|><|image_pad|><|vision_end|>"
    )
    + "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _save_llava_next_video(out: Path, tokenizer: Any, chat_template: str) -> None:
    """A tiny LLaVA-NeXT-Video (CLIP vision tower, 2-layer Llama) around ``tokenizer``, which
    holds the ``<video>`` and ``<image>`` tokens, with its processor and ``chat_template``."""
    from transformers import (
        LlavaNextImageProcessor,
        LlavaNextVideoConfig,
        LlavaNextVideoForConditionalGeneration,
        LlavaNextVideoProcessor,
        LlavaNextVideoVideoProcessor,
    )

    video_token_id, image_token_id = tokenizer.convert_tokens_to_ids(["<video>", "<image>"])
    config = LlavaNextVideoConfig(
        text_config=_text_config(tokenizer, model_type="llama", **VIDEO_LLM_TEXT),
        vision_config=dict(VISION, model_type="clip_vision_model"),
        video_token_id=video_token_id,
        image_token_id=image_token_id,
        spatial_pool_stride=2,
        image_grid_pinpoints=[[IMAGE_SIZE, IMAGE_SIZE]],
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )
    LlavaNextVideoForConditionalGeneration(config).save_pretrained(out)
    LlavaNextVideoProcessor(
        video_processor=LlavaNextVideoVideoProcessor(**SQUARE),
        image_processor=LlavaNextImageProcessor(
            **SQUARE, image_grid_pinpoints=[[IMAGE_SIZE, IMAGE_SIZE]]
        ),
        tokenizer=tokenizer,
        chat_template=chat_template,
        patch_size=PATCH_SIZE,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
    ).save_pretrained(out)


@_register(
    "llava-next-video",
    "LlavaNextVideoForConditionalGeneration + LlavaNextVideoProcessor, video input",
)
def _build_llava_next_video(out: Path) -> None:
    """LLaVA-NeXT-Video with a CLIP vision tower (32x32 frames, 8x8 patches) and a 2-layer Llama.

    Feed video as ``processor(text=[prompt], videos=[frames], return_tensors="pt")``, ``frames``
    a T x H x W x 3 uint8 array (or list of frames), ``prompt`` from
    ``processor.apply_chat_template([{"role": "user", "content": [{"type": "video"},
    {"type": "text", "text": ...}]}], add_generation_prompt=True)``, which renders
    ``"USER: <video>\\n...\\nASSISTANT:"``. Frames are resized and centre-cropped to 32x32; the
    processor expands the single ``<video>`` (``config.video_token_id``) into one token per
    pooled patch per frame: 4x4 patches pooled with stride 2 = 4 tokens a frame, 32 for 8 frames.
    ``<image>`` (``config.image_token_id``) is the image placeholder. Tokenizer: byte-level BPE
    (Qwen2Tokenizer class, as in LLaVA-Video-Qwen2 checkpoints), EOS ``<|im_end|>``.
    """

    _save_llava_next_video(out, _qwen2_tokenizer(["<video>", "<image>"]), LLAVA_CHAT_TEMPLATE)


#: Qwen2-VL's and Qwen2.5-VL's vision tokens (in this order: the ids the config names).
QWEN_VISION_TOKENS = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
#: Qwen2-VL / Qwen2.5-VL processors' pixel settings: one 32x32 image, 8x8 patches merged 2x2,
#: two frames a temporal patch.
QWEN_VL_PIXELS = {
    "size": {"shortest_edge": IMAGE_SIZE * IMAGE_SIZE, "longest_edge": IMAGE_SIZE * IMAGE_SIZE},
    "patch_size": PATCH_SIZE,
    "merge_size": 2,
    "temporal_patch_size": 2,
}


@_register("qwen2-vl", "Qwen2VLForConditionalGeneration + Qwen2VLProcessor, video input")
def _build_qwen2_vl(out: Path) -> None:
    """Qwen2-VL: 1-layer vision tower (8x8 patches, 2 frames a temporal patch), 2-layer Qwen2.

    Feed video as ``processor(text=[prompt], videos=[frames], return_tensors="pt")``: frames are
    resized to at most 32*32 pixels keeping their aspect ratio, in multiples of 16 (a 48x64 frame
    becomes 16x32); every 2 frames form one temporal patch and 2x2 patches merge into one token,
    so 8 such frames give ``video_grid_thw == [[4, 2, 4]]`` and 8 ``<|video_pad|>`` tokens
    (``config.video_token_id``) between ``<|vision_start|>`` and ``<|vision_end|>``. The prompt
    comes from ``processor.apply_chat_template`` with a ``{"type": "video"}`` part, which writes
    one ``<|video_pad|>`` for the processor to expand; EOS is ``<|im_end|>``.
    ``<|image_pad|>`` (``config.image_token_id``) is the image placeholder.
    """
    from transformers import Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLProcessor

    vision = {
        "depth": 1,
        "embed_dim": 32,
        "hidden_size": VIDEO_LLM_TEXT["hidden_size"],
        "num_heads": 4,
        "mlp_ratio": 2,
        "patch_size": PATCH_SIZE,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
    }
    _save_qwen_vl(
        out,
        _qwen2_tokenizer(QWEN_VISION_TOKENS),
        vision,
        (Qwen2VLConfig, Qwen2VLForConditionalGeneration, Qwen2VLProcessor),
        QWEN2_VL_CHAT_TEMPLATE,
    )


def _save_qwen_vl(
    out: Path,
    tokenizer: Any,
    vision: dict,
    classes: tuple[type, type, type],
    chat_template: str,
    **config: Any,
) -> None:
    """A Qwen2-VL-style model (``classes``: its config, model and processor classes) of a
    2-layer text model around ``tokenizer``, which holds :data:`QWEN_VISION_TOKENS`, and the
    ``vision`` tower; ``config``: further config fields."""
    from transformers import Qwen2VLImageProcessor, Qwen2VLVideoProcessor

    config_class, model_class, processor_class = classes
    start, end, image, video = tokenizer.convert_tokens_to_ids(QWEN_VISION_TOKENS)
    head_dim = VIDEO_LLM_TEXT["hidden_size"] // VIDEO_LLM_TEXT["num_attention_heads"]
    text = _text_config(
        tokenizer,
        **VIDEO_LLM_TEXT,
        rope_parameters={
            "rope_type": "default",
            "rope_theta": 10000.0,
            "mrope_section": [head_dim // 4, head_dim // 8, head_dim // 8],
        },
    )
    model_config = config_class(
        text_config=text,
        vision_config=vision,
        image_token_id=image,
        video_token_id=video,
        vision_start_token_id=start,
        vision_end_token_id=end,
        **config,
    )
    processor = processor_class(
        image_processor=Qwen2VLImageProcessor(**QWEN_VL_PIXELS),
        video_processor=Qwen2VLVideoProcessor(**QWEN_VL_PIXELS),
        tokenizer=tokenizer,
        chat_template=chat_template,
    )
    _save(out, model_class(model_config), processor)


# --- video LLMs whose caches cannot be cut back, one without a chat template, an image-only one --


@_register(
    "qwen3.5",
    "Qwen3_5ForConditionalGeneration (a linear-attention and a full-attention layer) + "
    "Qwen3VLProcessor, video input",
)
def _build_qwen3_5(out: Path) -> None:
    """Qwen3.5: a hybrid text model whose first layer is linear attention (a causal convolution
    and a recurrent state in its cache, which cannot be cut back) and whose second is full
    attention, with a 1-layer vision tower (8x8 patches, 2 frames a temporal patch, 2x2 merge).

    Video goes through ``Qwen3VLVideoProcessor`` (frame timestamps come from ``video_metadata``);
    the chat template writes ``<|vision_start|><|video_pad|><|vision_end|>`` for a video part.
    """
    from transformers import (
        Qwen2VLImageProcessor,
        Qwen3_5Config,
        Qwen3_5ForConditionalGeneration,
        Qwen3VLProcessor,
        Qwen3VLVideoProcessor,
    )

    tokenizer = _qwen2_tokenizer(QWEN_VISION_TOKENS)
    start, end, image, video = tokenizer.convert_tokens_to_ids(QWEN_VISION_TOKENS)
    text = _text_config(
        tokenizer,
        **VIDEO_LLM_TEXT,
        head_dim=8,
        layer_types=["linear_attention", "full_attention"],
        linear_conv_kernel_dim=4,
        linear_key_head_dim=8,
        linear_value_head_dim=8,
        linear_num_key_heads=2,
        linear_num_value_heads=4,
        rope_parameters={
            "rope_type": "default",
            "rope_theta": 10000.0,
            "partial_rotary_factor": 0.5,
            "mrope_section": [1, 1, 0],
            "mrope_interleaved": True,
        },
    )
    vision = {
        "depth": 1,
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_heads": 4,
        "out_hidden_size": VIDEO_LLM_TEXT["hidden_size"],
        "patch_size": PATCH_SIZE,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "num_position_embeddings": 16,  # a 4x4 grid of learned positions, interpolated
    }
    config = Qwen3_5Config(
        text_config=text,
        vision_config=vision,
        image_token_id=image,
        video_token_id=video,
        vision_start_token_id=start,
        vision_end_token_id=end,
    )
    processor = Qwen3VLProcessor(
        image_processor=Qwen2VLImageProcessor(**QWEN_VL_PIXELS),
        video_processor=Qwen3VLVideoProcessor(**QWEN_VL_PIXELS),
        tokenizer=tokenizer,
        chat_template=QWEN2_VL_CHAT_TEMPLATE,
    )
    _save(out, Qwen3_5ForConditionalGeneration(config), processor)


#: Gemma 4's multimodal tokens, as its tokenizer names them (``extra_special_tokens``).
GEMMA4_TOKENS = {
    "image_token": "<|image|>",
    "video_token": "<|video|>",
    "boi_token": "<start_of_image>",
    "eoi_token": "<end_of_image>",
    "audio_token": "<audio_soft_token>",
    "boa_token": "<start_of_audio>",
    "eoa_token": "<end_of_audio>",
}
GEMMA4_SLIDING_WINDOW = 8  # tokens: far shorter than any video prompt, so the window is full
GEMMA_CHAT_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<start_of_turn>"
    "{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    + _CONTENT.replace("VIDEO", "<|video|>").replace("IMAGE", "<|image|>")
    + "<end_of_turn>\n{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


@_register(
    "gemma4",
    f"Gemma4ForConditionalGeneration (a {GEMMA4_SLIDING_WINDOW}-token sliding-window layer and "
    "a full-attention layer) + Gemma4Processor, video input",
)
def _build_gemma4(out: Path) -> None:
    """Gemma 4 with a sliding window of 8 tokens in its first layer (a video prompt is hundreds
    of tokens, so that layer's cache keeps only the last 7 and cannot be cut back), a 1-layer
    vision tower (8x8 patches pooled 2x2, 70 soft tokens a frame, each frame preceded by its
    ``mm:ss`` timestamp) and no audio tower. Tokenizer: byte-level BPE with Gemma 4's
    multimodal tokens; chat template in Gemma's turn format, ``<|video|>`` for a video part.
    """
    from transformers import (
        Gemma4AudioFeatureExtractor,
        Gemma4Config,
        Gemma4ForConditionalGeneration,
        Gemma4ImageProcessor,
        Gemma4Processor,
        Gemma4VideoProcessor,
        Qwen2Tokenizer,
    )

    tokenizer = tiny_tokenizers.byte_level_bpe(
        Qwen2Tokenizer,
        ["<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>", *GEMMA4_TOKENS.values()],
        pad_token="<pad>",
        eos_token="<eos>",
        bos_token="<bos>",
        extra_special_tokens=GEMMA4_TOKENS,
    )
    ids = {name: tokenizer.convert_tokens_to_ids(token) for name, token in GEMMA4_TOKENS.items()}
    text = _text_config(
        tokenizer,
        **VIDEO_LLM_TEXT,
        head_dim=8,
        global_head_dim=8,
        sliding_window=GEMMA4_SLIDING_WINDOW,
        layer_types=["sliding_attention", "full_attention"],
        vocab_size_per_layer_input=len(tokenizer),
        hidden_size_per_layer_input=8,
    )
    vision = {
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "head_dim": 8,
        "patch_size": PATCH_SIZE,
        "pooling_kernel_size": 2,
        "position_embedding_size": 64,
    }
    config = Gemma4Config(
        text_config=text,
        vision_config=vision,
        audio_config=None,
        image_token_id=ids["image_token"],
        video_token_id=ids["video_token"],
        boi_token_id=ids["boi_token"],
        eoi_token_id=ids["eoi_token"],
        audio_token_id=ids["audio_token"],
        boa_token_id=ids["boa_token"],
        eoa_token_index=ids["eoa_token"],
    )
    pixels = {"patch_size": PATCH_SIZE, "max_soft_tokens": 70, "pooling_kernel_size": 2}
    processor = Gemma4Processor(
        feature_extractor=Gemma4AudioFeatureExtractor(),
        image_processor=Gemma4ImageProcessor(**pixels),
        video_processor=Gemma4VideoProcessor(**pixels, num_frames=NUM_FRAMES),
        tokenizer=tokenizer,
        chat_template=GEMMA_CHAT_TEMPLATE,
        image_seq_length=70,
    )
    _save(out, Gemma4ForConditionalGeneration(config), processor)


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
    from transformers import (
        InstructBlipVideoConfig,
        InstructBlipVideoForConditionalGeneration,
        InstructBlipVideoProcessor,
        InstructBlipVideoVideoProcessor,
    )

    tokenizer, qformer_tokenizer = _qwen2_tokenizer(["<video>"]), _bert_tokenizer()
    processor = InstructBlipVideoProcessor(
        video_processor=InstructBlipVideoVideoProcessor(
            size={"height": IMAGE_SIZE, "width": IMAGE_SIZE}
        ),
        tokenizer=tokenizer,
        qformer_tokenizer=qformer_tokenizer,
        num_query_tokens=INSTRUCTBLIP_QUERY_TOKENS,
    )
    config = InstructBlipVideoConfig(
        **_instructblip_parts(tokenizer, qformer_tokenizer),
        video_token_index=tokenizer.convert_tokens_to_ids("<video>"),
    )
    _save(out, InstructBlipVideoForConditionalGeneration(config), processor)


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


@_register("llava", "LlavaForConditionalGeneration + LlavaProcessor: image input only, no video")
def _build_llava(out: Path) -> None:
    """LLaVA 1.5's shape: a CLIP vision tower (32x32 images, 8x8 patches: 16 ``<image>`` tokens
    an image) and a 2-layer Llama. Its processor has no video processor: the video-llm adapter
    refuses it (it would score the texts without the video)."""
    from transformers import (
        CLIPImageProcessor,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaProcessor,
    )

    tokenizer = _qwen2_tokenizer(["<image>"])
    config = LlavaConfig(
        text_config=_text_config(tokenizer, model_type="llama", **VIDEO_LLM_TEXT),
        vision_config=dict(VISION, model_type="clip_vision_model"),
        image_token_id=tokenizer.convert_tokens_to_ids("<image>"),
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )
    processor = LlavaProcessor(
        image_processor=CLIPImageProcessor(**SQUARE),
        tokenizer=tokenizer,
        patch_size=PATCH_SIZE,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=LLAVA_CHAT_TEMPLATE,
    )
    _save(out, LlavaForConditionalGeneration(config), processor)


# --- OPT (ViLMA's text-only baseline) ------------------------------------------------------------


def _opt_tokenizer():
    """OPT's tokenizer shape: byte-level BPE (``GPT2Tokenizer``), ``<s>`` 0, ``<pad>`` 1,
    ``</s>`` 2, ``<unk>`` 3; BOS = EOS = ``</s>``, and it adds BOS to every text
    (``add_bos_token``), as the ``facebook/opt-*`` tokenizers do."""
    from transformers import GPT2Tokenizer

    return tiny_tokenizers.byte_level_bpe(
        GPT2Tokenizer,
        ["<s>", "<pad>", "</s>", "<unk>"],
        bos_token="</s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="</s>",
        add_bos_token=True,
    )


def build_tiny_opt(out_dir: str | os.PathLike) -> Path:
    """A tiny ``OPTForCausalLM`` + OPT-style tokenizer in ``out_dir``, with fixed seeds.

    Not in :data:`TINY_MODELS` (each registered family also needs a forward runner in
    ``tests/test_tiny_models.py``); used by the text-LM fidelity tests of ViLMA's OPT baseline.
    """
    from transformers import OPTConfig, OPTForCausalLM

    def build(out: Path) -> None:
        tokenizer = _opt_tokenizer()
        config = OPTConfig(
            vocab_size=len(tokenizer),
            hidden_size=32,
            ffn_dim=37,
            num_hidden_layers=2,
            num_attention_heads=4,
            max_position_embeddings=128,
            word_embed_proj_dim=32,
            **_token_ids(tokenizer, "pad", "bos", "eos"),
        )
        _save(out, OPTForCausalLM(config), tokenizer)

    return _seeded_build(out_dir, build)


# --- video LLMs for the video-LLM adapter's fidelity tests ---------------------------------------
# Kept out of TINY_MODELS (whose every entry has a forward test in tests/test_tiny_models.py):
# Qwen2.5-VL, whose temporal position ids follow the frames' real time, and two families
# around the REAL tokenizers of their checkpoints (foilkit.synthetic.real_tokenizers), so prompt
# token ids are tested on the real segmentation. Same folder scheme and fingerprint as above.

# The chat templates of the Hub checkpoints (their chat_template.json), verbatim in effect.
LLAVA_NEXT_VIDEO_VICUNA_CHAT_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] != 'system' %}{{ message['role'].upper() "
    "+ ': '}}{% endif %}{# Render all images first #}{% for content in message['content'] | "
    "selectattr('type', 'equalto', 'image') %}{{ '<image>\\n' }}{% endfor %}{# Render all video "
    "then #}{% for content in message['content'] | selectattr('type', 'equalto', 'video') %}{{ "
    "'<video>\\n' }}{% endfor %}{# Render all text next #}{% if message['role'] != 'assistant' "
    "%}{% for content in message['content'] | selectattr('type', 'equalto', 'text') %}{{ "
    "content['text'] + ' '}}{% endfor %}{% else %}{% for content in message['content'] | "
    "selectattr('type', 'equalto', 'text') %}{% generation %}{{ content['text'] + ' '}}{% "
    "endgeneration %}{% endfor %}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ "
    "'ASSISTANT:' }}{% endif %}"
)
QWEN2_5_VL_REAL_CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% set video_count = namespace(value=0) %}"
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n{% if message['content'] is string %}"
    "{{ message['content'] }}<|im_end|>\n{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}{% if add_vision_id %}"
    "Picture {{ image_count.value }}: {% endif %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "{% set video_count.value = video_count.value + 1 %}{% if add_vision_id %}"
    "Video {{ video_count.value }}: {% endif %}<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TOKENS_PER_SECOND = 2  # Qwen2.5-VL-7B-Instruct's vision_config.tokens_per_second

FIDELITY_MODELS: dict[str, TinyModel] = {}


_register_fidelity = _registrar(FIDELITY_MODELS)


def fidelity_model_path(name: str, root: str | os.PathLike | None = None) -> Path:
    """Folder of fidelity model ``name`` (:data:`FIDELITY_MODELS`), built once like
    ``tiny_model_path``.

    The real-tokenizer families raise ``RealTokenizerMissing`` when ``./dev.sh`` has not fetched
    their tokenizer.
    """
    family = _lookup(FIDELITY_MODELS, name, "fidelity model")
    root = Path(root) if root is not None else default_root()
    return build_once(
        root / f"{name}-{fingerprint()}", lambda out: _seeded_build(out, family.build)
    )


def _save_qwen2_5_vl(out: Path, tokenizer, *, tie: bool = False) -> None:
    """A Qwen2.5-VL (1-layer windowed vision tower, 2-layer text model) around ``tokenizer``."""
    from transformers import (
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
    )

    vision = {
        "depth": 1,
        "hidden_size": 32,
        "intermediate_size": 37,
        "num_heads": 4,
        "out_hidden_size": VIDEO_LLM_TEXT["hidden_size"],
        "patch_size": PATCH_SIZE,
        "spatial_merge_size": 2,
        "temporal_patch_size": 2,
        "tokens_per_second": TOKENS_PER_SECOND,
        "window_size": 2 * PATCH_SIZE * 2,
        "fullatt_block_indexes": [0],
    }
    _save_qwen_vl(
        out,
        tokenizer,
        vision,
        (Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration, Qwen2_5_VLProcessor),
        QWEN2_5_VL_REAL_CHAT_TEMPLATE,
        tie_word_embeddings=tie,
    )


@_register_fidelity(
    "qwen2.5-vl",
    "Qwen2_5_VLForConditionalGeneration + Qwen2_5_VLProcessor (tiny byte-level BPE), video input",
)
def _build_qwen2_5_vl(out: Path) -> None:
    """Qwen2.5-VL as ``qwen2-vl`` (8 frames -> ``video_grid_thw == [[4, 2, 4]]``), whose temporal
    position ids step by ``tokens_per_second * second_per_grid_ts`` (2 x 2 frames / sampled fps)."""
    _save_qwen2_5_vl(out, _qwen2_tokenizer(QWEN_VISION_TOKENS))


@_register_fidelity(
    "qwen2.5-vl-qwen3",
    "Qwen2.5-VL around the real Qwen3 tokenizer (151669 ids) and Qwen2.5-VL's chat template",
)
def _build_qwen2_5_vl_qwen3(out: Path) -> None:
    from foilkit.synthetic.real_tokenizers import load_real_tokenizer

    _save_qwen2_5_vl(out, load_real_tokenizer("qwen3"), tie=True)


@_register_fidelity(
    "llava-next-video-llama2",
    "LLaVA-NeXT-Video around the real Llama-2 tokenizer (+ <image>, <video>) and its Vicuna "
    "template",
)
def _build_llava_next_video_llama2(out: Path) -> None:
    """As ``llava-next-video``, with LLaVA-NeXT-Video-7B's tokenizer: Llama-2's SentencePiece
    BPE plus ``<image>`` (32000) and ``<video>`` (32001), BOS ``<s>`` added to every prompt."""
    from foilkit.synthetic.real_tokenizers import load_real_tokenizer

    tokenizer = load_real_tokenizer("llama2")
    tokenizer.add_special_tokens({"additional_special_tokens": ["<image>", "<video>"]})
    _save_llava_next_video(out, tokenizer, LLAVA_NEXT_VIDEO_VICUNA_CHAT_TEMPLATE)


# --- BLIP ITM as the Hub's converted checkpoints lay it out ---------------------------------------


BLIP_HUB_LAYOUT_INIT = 0.5  # weight standard deviation of build_tiny_blip_itm_hub_layout


def build_tiny_blip_itm_hub_layout(out_dir: str | os.PathLike) -> Path:
    """A tiny ``BlipForImageTextRetrieval`` with the vocabulary layout of ``Salesforce/blip-itm-*``.

    BLIP's own tokenizer is bert-base-uncased plus ``[DEC]`` then ``[ENC]`` (salesforce/BLIP
    ``models/blip.py``, ``init_tokenizer``); the Hub conversions keep both embedding rows
    (``vocab_size`` 30524, ``bos_token_id`` = ``[DEC]`` = 30522) but save the plain BERT
    tokenizer. Here too: the tokenizer has ``n`` tokens, ``[DEC]`` is row ``n`` (the text
    config's ``bos_token_id``), ``[ENC]`` row ``n + 1``, and neither is in the tokenizer.
    Weights are drawn with standard deviation 0.5 instead of 0.02: at 0.02 the ITM logits
    hardly move with the image, so no way of pooling frames could change a decision.

    Not in :data:`TINY_MODELS` (each registered family also needs a forward runner in
    ``tests/test_tiny_models.py``); used by the BLIP fidelity tests of ``first_token="enc"``.
    """

    def build(out: Path) -> None:
        tokenizer = _bert_tokenizer()
        text = _text_config(
            tokenizer,
            vocab_size=len(tokenizer) + 2,
            encoder_hidden_size=VISION["hidden_size"],
            bos_token_id=len(tokenizer),
            sep_token_id=tokenizer.sep_token_id,
            initializer_range=BLIP_HUB_LAYOUT_INIT,
        )
        vision = dict(VISION, initializer_range=BLIP_HUB_LAYOUT_INIT)
        _save_blip_itm(out, tokenizer, text, vision, initializer_range=BLIP_HUB_LAYOUT_INIT)

    return _seeded_build(out_dir, build)
