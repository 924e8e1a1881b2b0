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

One module per family group registers its builders (``dual_encoders``, ``video_text``,
``cross_encoders``, ``text_lms``, and the video LLMs ``llava``, ``qwen``, ``gemma``,
``instructblip``, ``internvl``, ``smolvlm``, ``video_llama``, ``perception_lm``, ``molmo2``,
``glm``, ``ernie``, ``exaone``, ``hyperclovax``, ``cosmos``, ``muse``, ``minimax``, ``nemotron``,
``cohere``, ``omni``, ``dots``, ``minicpm``);
:mod:`.families` is the table of model families foilkit claims.

``tiny_model_path`` caches under ``$FOILKIT_TINY_MODELS`` (default
``~/.cache/foilkit/tiny-models``) in ``<name>-<fingerprint>`` folders; the fingerprint hashes
this package's modules, the tokenizer modules and the torch and transformers versions, so
any config change rebuilds. Builds are byte-for-byte reproducible.
A build goes to a temporary sibling folder that is renamed into place, so parallel test
processes never see a half-written model.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

from foilkit.synthetic import clip_vocab, real_tokenizers
from foilkit.synthetic import tokenizers as tiny_tokenizers
from foilkit.synthetic.build_once import build_once

# The family modules register their builders on import (TINY_MODELS follows module order).
from foilkit.synthetic.models import (  # noqa: F401  (imported to register)
    cohere,
    cosmos,
    cross_encoders,
    dots,
    dual_encoders,
    ernie,
    exaone,
    gemma,
    glm,
    hyperclovax,
    instructblip,
    internvl,
    kimi,
    lfm,
    llava,
    minicpm,
    minimax,
    molmo2,
    muse,
    nemotron,
    omni,
    perception_lm,
    qwen,
    smolvlm,
    text_lms,
    video_llama,
    video_text,
)
from foilkit.synthetic.models._base import (
    CLIP_TEXT_LENGTH,
    COLA_LABELS,
    FIDELITY_MODELS,
    IMAGE_SIZE,
    NLI_LABELS,
    NUM_FRAMES,
    PATCH_SIZE,
    SEED,
    SIGLIP_TEXT_LENGTH,
    TINY_MODELS,
    TinyModel,
    _lookup,
    _seeded_build,
)
from foilkit.synthetic.models.cross_encoders import (
    BLIP_HUB_LAYOUT_INIT,
    build_tiny_blip_itm_hub_layout,
)
from foilkit.synthetic.models.instructblip import INSTRUCTBLIP_FRAMES, INSTRUCTBLIP_QUERY_TOKENS
from foilkit.synthetic.models.qwen import TOKENS_PER_SECOND
from foilkit.synthetic.models.text_lms import build_tiny_opt
from foilkit.synthetic.models.video_text import (
    PE_VIDEO_FRAMES,
    VIDEOPRISM_FRAMES,
    tiny_pe_audio_video,
)

__all__ = [
    "BLIP_HUB_LAYOUT_INIT",
    "CLIP_TEXT_LENGTH",
    "COLA_LABELS",
    "FIDELITY_MODELS",
    "IMAGE_SIZE",
    "INSTRUCTBLIP_FRAMES",
    "INSTRUCTBLIP_QUERY_TOKENS",
    "NLI_LABELS",
    "NUM_FRAMES",
    "PATCH_SIZE",
    "PE_VIDEO_FRAMES",
    "SEED",
    "SIGLIP_TEXT_LENGTH",
    "TINY_MODELS",
    "TOKENS_PER_SECOND",
    "VIDEOPRISM_FRAMES",
    "TinyModel",
    "build_tiny_blip_itm_hub_layout",
    "build_tiny_model",
    "build_tiny_opt",
    "default_root",
    "fidelity_model_path",
    "fingerprint",
    "tiny_model_path",
    "tiny_pe_audio_video",
]


def build_tiny_model(name: str, out_dir: str | os.PathLike) -> Path:
    """Build family ``name`` into ``out_dir`` (created if needed) with fixed seeds; return it."""
    return _seeded_build(out_dir, _lookup(TINY_MODELS, name, "tiny model").build)


@functools.cache
def fingerprint() -> str:
    """Short hash of what determines the saved folders: this package's modules, the
    tokenizers, torch and transformers."""
    import torch
    import transformers

    digest = hashlib.sha256(f"{torch.__version__} {transformers.__version__}".encode())
    package = sorted(Path(__file__).parent.glob("*.py"))
    for module in (
        *package,
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
