"""Fine-tuning dual encoders to see time: ``foilkit finetune`` and its Python API.

RTime's recipe (UMT-Neg): contrastive video-text training in which each video's time-reversed
view and that view's caption sit in the video's batch as hard negatives. The model is a CLIP /
SigLIP checkpoint with CLIP4Clip's sequence transformer over its frames; the saved folder loads
in ``foilkit evaluate`` like any model (adapter ``temporal-clip``)::

    from foilkit.finetune import finetune
    result = finetune("openai/clip-vit-base-patch32", "runs/rtime-export", out_dir="runs/ft",
                      video_root="~/videos/rtime", hard_negatives="reversed")
    result.model_dir  # -> evaluate("rtime", str(result.model_dir), ...)
"""

from foilkit.finetune.negatives import HARD_NEGATIVES, REVERSAL_ASPECTS
from foilkit.finetune.train import (
    PAPER_DEFAULTS,
    FinetuneOptions,
    FinetuneResult,
    contrastive_loss,
    finetune,
    gathered_loss,
    last_checkpoint,
    push_model,
)


def __getattr__(name: str):
    # the data layer imports torch: loaded on first use, so the command line stays light
    if name in ("TrainingItem", "training_items"):
        from foilkit.finetune import data

        return getattr(data, name)
    raise AttributeError(f"module 'foilkit.finetune' has no attribute {name!r}")


__all__ = [
    "HARD_NEGATIVES",
    "PAPER_DEFAULTS",
    "REVERSAL_ASPECTS",
    "FinetuneOptions",
    "FinetuneResult",
    "TrainingItem",
    "contrastive_loss",
    "finetune",
    "gathered_loss",
    "last_checkpoint",
    "push_model",
    "training_items",
]
