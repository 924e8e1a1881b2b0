"""Image-text cross-encoders: BLIP's image-text matching head (and its Hub layout)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from foilkit.synthetic.models._base import (
    IMAGE_SIZE,
    VISION,
    _bert_tokenizer,
    _media,
    _register,
    _save_twin,
    _seeded_build,
    _text_config,
)


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
    blip = {
        "text_config": text,
        "vision_config": vision,
        "projection_dim": 16,
        "image_text_hidden_size": 16,
        **config,
    }
    image = {"size": {"height": IMAGE_SIZE, "width": IMAGE_SIZE}}
    processor = {**_media("Blip", image), "tokenizer": tokenizer}
    _save_twin(out, "Blip", blip, processor, head="ForImageTextRetrieval")


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
