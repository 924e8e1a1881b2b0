"""What every tiny-model family module shares: sizes, the registries, tokenizers, saving.

The family modules of :mod:`foilkit.synthetic.models` register their builders here with
``_register``; the package re-exports the public names.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foilkit.synthetic import tokenizers as tiny_tokenizers

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


def _qwen2_tokenizer(added: list[str], **kwargs: Any):
    """A tiny byte-level BPE in Qwen2's class and special tokens, plus the special ``added``;
    ``kwargs`` go to the tokenizer (a family's named tokens: ``extra_special_tokens={...}``)."""
    from transformers import Qwen2Tokenizer

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *added]
    return tiny_tokenizers.byte_level_bpe(
        Qwen2Tokenizer, specials, eos_token="<|im_end|>", pad_token="<|endoftext|>", **kwargs
    )


def _tokenizers_backend(specials: list[str], **named: str):
    """A tiny byte-level BPE with ``specials`` in ``TokenizersBackend``, transformers' generic fast
    tokenizer (the class some checkpoints name, or that transformers maps a family to), with the
    ``named`` special tokens (``bos_token=...``)."""
    from transformers import Qwen2Tokenizer
    from transformers.tokenization_utils_tokenizers import TokenizersBackend

    bpe = tiny_tokenizers.byte_level_bpe(Qwen2Tokenizer, specials, **named)
    return TokenizersBackend(tokenizer_object=bpe.backend_tokenizer, **named)


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


def _save_twin(
    out: Path,
    prefix: str,
    config: dict[str, Any],
    processor: dict[str, Any],
    processor_prefix: str | None = None,
    config_prefix: str | None = None,
    head: str = "ForConditionalGeneration",
) -> None:
    """Save into ``out`` the model ``<prefix><head>`` of ``<config_prefix>Config(**config)``
    with ``<processor_prefix>Processor(**processor)`` (both prefixes default to ``prefix``),
    transformers' classes found by name: the last step of most builders, whose families'
    classes differ only by that prefix."""
    import transformers

    model_config = getattr(transformers, f"{config_prefix or prefix}Config")(**config)
    made = getattr(transformers, f"{processor_prefix or prefix}Processor")(**processor)
    model = getattr(transformers, f"{prefix}{head}")(model_config)
    _save(out, model, made)


def _media(
    prefix: str, image: dict[str, Any] | None = None, video: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A processor's ``image_processor`` and ``video_processor`` (each where its settings are
    given): transformers' ``<prefix>ImageProcessor(**image)`` and
    ``<prefix>VideoProcessor(**video)``, found by name, for :func:`_save_twin`."""
    import transformers

    parts = {"image": image, "video": video}
    return {
        f"{kind}_processor": getattr(transformers, f"{prefix}{kind.title()}Processor")(**settings)
        for kind, settings in parts.items()
        if settings is not None
    }


# --- video LLMs ----------------------------------------------------------------------------------

VIDEO_LLM_TEXT = {
    "hidden_size": 32,
    "intermediate_size": 37,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 512,
}
#: The video LLMs' vision towers: :data:`VISION`'s width and heads, one layer, 8x8 patches (the
#: image size, merging and positions are each family's).
VIDEO_LLM_VISION = {
    "hidden_size": 32,
    "intermediate_size": 37,
    "num_hidden_layers": 1,
    "num_attention_heads": 4,
    "patch_size": PATCH_SIZE,
}
#: timm's Perception Encoder cut to one narrow layer: PE-Video's vision tower and PerceptionLM's.
PE_CORE = {
    "architecture": "vit_pe_core_large_patch14_336",
    "model_args": {
        "embed_dim": 32,
        "img_size": (IMAGE_SIZE, IMAGE_SIZE),
        "patch_size": PATCH_SIZE,
        "depth": 1,
        "num_heads": 4,
    },
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


# --- video LLMs for the video-LLM adapter's fidelity tests ---------------------------------------
# Kept out of TINY_MODELS (whose every entry has a forward test in tests/test_tiny_models.py):
# Qwen2.5-VL, whose temporal position ids follow the frames' real time, and two families
# around the REAL tokenizers of their checkpoints (foilkit.synthetic.real_tokenizers), so prompt
# token ids are tested on the real segmentation. Same folder scheme and fingerprint as above.
FIDELITY_MODELS: dict[str, TinyModel] = {}

_register_fidelity = _registrar(FIDELITY_MODELS)
