"""Tiny randomly initialised models of every family foilkit uses, saved as Hub-style folders.

Each family's builder makes a model from a small config (hidden size 32, one or two layers,
32x32 images in 8x8 patches) with fixed seeds, and a tokenizer/processor trained offline
(:mod:`foilkit.testing.tokenizers`), and writes both with ``save_pretrained``. Tests then load
the folder only through the normal ``from_pretrained(path)`` code path, so the code under test
is the code that runs on real checkpoints. Nothing touches the network.

Public API::

    TINY_MODELS                  # name -> TinyModel (builder + one-line summary), registry order
    tiny_model_path("clip")      # build once, cache, return the folder
    build_tiny_model("clip", d)  # build into folder d, uncached

``tiny_model_path`` caches under ``$FOILKIT_TINY_MODELS`` (default
``~/.cache/foilkit/tiny-models``) in ``<name>-<fingerprint>`` folders; the fingerprint hashes
this module, the tokenizer module and the transformers version, so any config change rebuilds.
A build goes to a temporary sibling folder that is renamed into place, so parallel test
processes never see a half-written model.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from foilkit.testing import tokenizers as tiny_tokenizers

SEED = 0
IMAGE_SIZE = 32
PATCH_SIZE = 8
SIGLIP_TEXT_LENGTH = 64
NUM_FRAMES = 8  # X-CLIP's frame count; also the frames tests feed the video LLMs

TEXT = dict(vocab_size=None, hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
            max_position_embeddings=128)
VISION = dict(hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
              image_size=IMAGE_SIZE, patch_size=PATCH_SIZE)
SQUARE = dict(size={"shortest_edge": IMAGE_SIZE}, crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})

NLI_LABELS = ("contradiction", "entailment", "neutral")  # the order of cross-encoder/nli-* checkpoints
COLA_LABELS = ("unacceptable", "acceptable")  # textattack/roberta-base-CoLA style: 1 = acceptable


@dataclass(frozen=True)
class TinyModel:
    """A registered family: ``build(out_dir)`` writes the model and its tokenizer/processor."""

    name: str
    build: Callable[[Path], None]
    summary: str


TINY_MODELS: dict[str, TinyModel] = {}


def _register(name: str, summary: str) -> Callable[[Callable[[Path], None]], Callable[[Path], None]]:
    def register(build: Callable[[Path], None]) -> Callable[[Path], None]:
        TINY_MODELS[name] = TinyModel(name, build, summary)
        return build
    return register


def build_tiny_model(name: str, out_dir: str | os.PathLike) -> Path:
    """Build family ``name`` into ``out_dir`` (created if needed) with fixed seeds; return the folder."""
    import torch

    if name not in TINY_MODELS:
        raise KeyError(f"unknown tiny model {name!r}; known: {', '.join(TINY_MODELS)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        TINY_MODELS[name].build(out)
    return out


def fingerprint() -> str:
    """Short hash of what determines the saved folders: these modules and the transformers version."""
    import transformers

    digest = hashlib.sha256(transformers.__version__.encode())
    for module in (__file__, tiny_tokenizers.__file__):
        digest.update(Path(module).read_bytes())
    return digest.hexdigest()[:12]


def default_root() -> Path:
    """``$FOILKIT_TINY_MODELS``, else ``~/.cache/foilkit/tiny-models``."""
    return Path(os.environ.get("FOILKIT_TINY_MODELS") or Path.home() / ".cache" / "foilkit" / "tiny-models")


def tiny_model_path(name: str, root: str | os.PathLike | None = None) -> Path:
    """Folder of tiny model ``name`` under ``root``, built on first use and reused afterwards.

    The build happens in a temporary folder next to the final one and is renamed into place;
    when another process wins the race, its folder is kept and ours is discarded.
    """
    root = Path(root) if root is not None else default_root()
    final = root / f"{name}-{fingerprint()}"
    if final.is_dir():
        return final
    if name not in TINY_MODELS:
        raise KeyError(f"unknown tiny model {name!r}; known: {', '.join(TINY_MODELS)}")
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=root))
    try:
        build_tiny_model(name, staging)
        os.rename(staging, final)
    except OSError:
        if not final.is_dir():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


# --- tokenizers in each family's own class -------------------------------------------------------

def _gpt2_tokenizer():
    from transformers import GPT2Tokenizer

    return tiny_tokenizers.byte_level_bpe(GPT2Tokenizer, ["<|endoftext|>"])


def _roberta_tokenizer():
    from transformers import RobertaTokenizer

    return tiny_tokenizers.byte_level_bpe(RobertaTokenizer, ["<s>", "<pad>", "</s>", "<unk>", "<mask>"])


def _clip_tokenizer():
    from transformers import CLIPTokenizer

    return tiny_tokenizers.byte_level_bpe(CLIPTokenizer, ["<|startoftext|>", "<|endoftext|>"], end_of_word_suffix="</w>")


def _bert_tokenizer():
    from transformers import BertTokenizer

    return tiny_tokenizers.wordpiece(BertTokenizer, ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])


def _t5_tokenizer(sentinels: int = 100, **kwargs):
    from transformers import T5Tokenizer

    return tiny_tokenizers.unigram(T5Tokenizer, ["<pad>", "</s>", "<unk>"], sentinels=sentinels, **kwargs)


def _qwen2_tokenizer(extra_special_tokens: list[str]):
    from transformers import Qwen2Tokenizer

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", *extra_special_tokens]
    return tiny_tokenizers.byte_level_bpe(Qwen2Tokenizer, specials, eos_token="<|im_end|>", pad_token="<|endoftext|>")


def _text_config(tokenizer, **overrides) -> dict:
    """:data:`TEXT` sized to ``tokenizer`` with its special-token ids."""
    ids = {f"{kind}_token_id": getattr(tokenizer, f"{kind}_token_id") for kind in ("pad", "bos", "eos")}
    return {**TEXT, "vocab_size": len(tokenizer), **ids, **overrides}


# --- families ------------------------------------------------------------------------------------

@_register("clip", "CLIPModel + CLIPProcessor (CLIPImageProcessor, byte-level BPE CLIPTokenizer)")
def _build_clip(out: Path) -> None:
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

    tokenizer = _clip_tokenizer()
    config = CLIPConfig(text_config=_text_config(tokenizer), vision_config=VISION, projection_dim=16)
    CLIPModel(config).save_pretrained(out)
    CLIPProcessor(image_processor=CLIPImageProcessor(**SQUARE), tokenizer=tokenizer).save_pretrained(out)


@_register("siglip", "SiglipModel + SiglipProcessor (SiglipImageProcessor, Unigram T5-style tokenizer)")
def _build_siglip(out: Path) -> None:
    """SigLIP's text tower pools the last position: call the processor with ``padding="max_length"``
    (as for real SigLIP); the tokenizer's ``model_max_length`` is the text length, 64."""
    from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel, SiglipProcessor

    tokenizer = _t5_tokenizer(sentinels=0, model_max_length=SIGLIP_TEXT_LENGTH)
    text = _text_config(tokenizer, max_position_embeddings=SIGLIP_TEXT_LENGTH)
    config = SiglipConfig(text_config=text, vision_config=VISION)
    SiglipModel(config).save_pretrained(out)
    image_processor = SiglipImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    SiglipProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(out)


@_register("xclip", f"XCLIPModel + XCLIPProcessor (VideoMAEImageProcessor), {NUM_FRAMES}-frame video input")
def _build_xclip(out: Path) -> None:
    """X-CLIP takes ``pixel_values`` of shape (batch, NUM_FRAMES, 3, 32, 32): the processor's ``videos=``."""
    from transformers import VideoMAEImageProcessor, XCLIPConfig, XCLIPModel, XCLIPProcessor

    tokenizer = _clip_tokenizer()
    vision = dict(VISION, num_frames=NUM_FRAMES, mit_hidden_size=16, mit_intermediate_size=37,
                  mit_num_hidden_layers=1, mit_num_attention_heads=4)
    config = XCLIPConfig(text_config=_text_config(tokenizer), vision_config=vision, projection_dim=16,
                         prompt_layers=1, prompt_attention_heads=4)
    XCLIPModel(config).save_pretrained(out)
    XCLIPProcessor(image_processor=VideoMAEImageProcessor(**SQUARE), tokenizer=tokenizer).save_pretrained(out)


@_register("blip-itm", "BlipForImageTextRetrieval + BlipProcessor (BlipImageProcessor, WordPiece BertTokenizer)")
def _build_blip_itm(out: Path) -> None:
    """``model(**inputs)`` gives ITM logits (batch, 2), index 1 = match; ``use_itm_head=False`` the cosine."""
    from transformers import BlipConfig, BlipForImageTextRetrieval, BlipImageProcessor, BlipProcessor

    tokenizer = _bert_tokenizer()
    text = _text_config(tokenizer, encoder_hidden_size=VISION["hidden_size"], bos_token_id=tokenizer.cls_token_id,
                        sep_token_id=tokenizer.sep_token_id)
    config = BlipConfig(text_config=text, vision_config=VISION, projection_dim=16, image_text_hidden_size=16)
    BlipForImageTextRetrieval(config).save_pretrained(out)
    image_processor = BlipImageProcessor(size={"height": IMAGE_SIZE, "width": IMAGE_SIZE})
    BlipProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(out)


@_register("gpt2", "GPT2LMHeadModel + byte-level BPE GPT2Tokenizer (for perplexity)")
def _build_gpt2(out: Path) -> None:
    """BOS = EOS = ``<|endoftext|>`` (id 0), no pad token, as the real GPT-2."""
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = _gpt2_tokenizer()
    config = GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2, n_head=4, n_positions=128,
                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    GPT2LMHeadModel(config).save_pretrained(out)
    tokenizer.save_pretrained(out)


def _build_bert_classifier(out: Path, labels: tuple[str, ...]) -> None:
    from transformers import BertConfig, BertForSequenceClassification

    tokenizer = _bert_tokenizer()
    config = BertConfig(**_text_config(tokenizer), num_labels=len(labels),
                        id2label=dict(enumerate(labels)), label2id={label: i for i, label in enumerate(labels)})
    BertForSequenceClassification(config).save_pretrained(out)
    tokenizer.save_pretrained(out)


@_register("nli", f"BertForSequenceClassification, labels {NLI_LABELS}; loads as sentence_transformers.CrossEncoder")
def _build_nli(out: Path) -> None:
    """Sentence pairs (premise, hypothesis) -> 3 logits in the order of ``config.id2label``."""
    _build_bert_classifier(out, NLI_LABELS)


@_register("cola", f"BertForSequenceClassification, labels {COLA_LABELS} (linguistic acceptability)")
def _build_cola(out: Path) -> None:
    """Single sentences -> 2 logits; ``config.label2id["acceptable"]`` is the grammatical class."""
    _build_bert_classifier(out, COLA_LABELS)


@_register("t5", "T5ForConditionalGeneration + Unigram T5Tokenizer with <extra_id_0..99> sentinels")
def _build_t5(out: Path) -> None:
    """Span infilling: ``"a man <extra_id_0> the door"`` -> ``generate`` -> ``<extra_id_0> ... <extra_id_1>``.

    As in real T5, the sentinels are the last 100 ids (``<extra_id_0>`` is the highest) and
    generation starts from the pad token.
    """
    from transformers import T5Config, T5ForConditionalGeneration

    tokenizer = _t5_tokenizer()
    config = T5Config(vocab_size=len(tokenizer), d_model=32, d_kv=8, d_ff=37, num_layers=2, num_decoder_layers=2,
                      num_heads=4, relative_attention_num_buckets=8, pad_token_id=tokenizer.pad_token_id,
                      eos_token_id=tokenizer.eos_token_id, decoder_start_token_id=tokenizer.pad_token_id)
    T5ForConditionalGeneration(config).save_pretrained(out)
    tokenizer.save_pretrained(out)


@_register("roberta-mlm", "RobertaForMaskedLM + byte-level BPE RobertaTokenizer with <mask>")
def _build_roberta_mlm(out: Path) -> None:
    """Works with ``pipeline("fill-mask", model=path)``; positions start after ``pad_token_id`` as in RoBERTa."""
    from transformers import RobertaConfig, RobertaForMaskedLM

    tokenizer = _roberta_tokenizer()
    config = RobertaConfig(**_text_config(tokenizer, max_position_embeddings=TEXT["max_position_embeddings"] + 2))
    RobertaForMaskedLM(config).save_pretrained(out)
    tokenizer.save_pretrained(out)
