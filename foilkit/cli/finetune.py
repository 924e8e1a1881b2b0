"""``foilkit finetune``: contrastive fine-tuning, reversed videos as hard negatives (RTime UMT-Neg).

Wraps :func:`foilkit.finetune.finetune`, whose defaults are the paper's values. Run it under
``accelerate launch -m foilkit finetune ...`` for several GPUs. The saved ``<out>/model``
folder is evaluated like any model::

    foilkit finetune --model openai/clip-vit-base-patch32 --dataset runs/rtime-export \\
        --video-root ~/videos/rtime --out runs/clip-rtime-neg
    foilkit evaluate --benchmark rtime --model runs/clip-rtime-neg/model --video-root
    ~/videos/rtime ...
"""

from __future__ import annotations

import argparse
import json
from dataclasses import fields

from foilkit.cli.options import (
    Adder,
    add_fields,
    add_logging,
    add_num_workers,
    add_tracking,
    add_video_root,
)


def configure(parser: argparse.ArgumentParser) -> None:
    from foilkit.finetune.train import FinetuneOptions

    add = parser.add_argument
    add(
        "--model",
        required=True,
        help="base CLIP / SigLIP Hub id or folder (or a model this command saved)",
    )
    add("--dataset", required=True, help="foilkit dataset folder or Hub id with a train split")
    add_video_root(parser)
    add("--out", required=True, help="run folder: model/, checkpoints/, training.json, loss.png")
    add_fields(
        parser, FinetuneOptions, {"reversal_aspects": _reversal_aspects, "workers": _workers}
    )
    add("--resume", action="store_true", help="continue from the last checkpoint in --out")
    add("--overwrite", action="store_true", help="replace an existing --out")
    add("--push-to-hub", metavar="REPO_ID", default=None, help="upload the final model folder")
    add("--public", action="store_true", help="with --push-to-hub: a public repository")
    add("--no-progress", action="store_true", help="no progress bars")
    add_logging(parser)
    add_tracking(parser, "the options and each step's loss and learning rate")


def _reversal_aspects(parser: Adder) -> None:
    from foilkit.finetune.negatives import REVERSAL_ASPECTS

    parser.add_argument(
        "--reversal-aspects",
        nargs="+",
        default=list(REVERSAL_ASPECTS),
        help="aspects whose first foil is the reversed video's caption (default: %(default)s)",
    )


def _workers(parser: Adder) -> None:
    add_num_workers(parser, default=4)
    # the flag's name before the commands shared --num-workers
    parser.add_argument("--workers", dest="num_workers", type=int, help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    from foilkit.cli.options import print_json, same_named, shows_progress
    from foilkit.finetune import finetune
    from foilkit.finetune.train import FinetuneOptions

    options = {f.name: getattr(args, f.name) for f in fields(FinetuneOptions) if f.name in args}
    result = finetune(
        args.model,
        args.dataset,
        out_dir=args.out,
        progress=None if shows_progress(args) else False,
        private=not args.public,
        **{**options, "reversal_aspects": tuple(args.reversal_aspects)},
        workers=args.num_workers,
        **same_named(
            args, "video_root resume overwrite log_interval log_with tracking_dir push_to_hub"
        ),
    )
    losses = result.losses
    if args.json:
        print_json(
            {
                "command": "finetune",
                "status": 0,
                "out": str(result.out_dir),
                "model_dir": str(result.model_dir),
                "record": str(result.out_dir / "training.json"),
                "steps": len(losses),
                "first_loss": losses[0] if losses else None,
                "last_loss": losses[-1] if losses else None,
                "train_seconds": result.record.get("train_seconds"),
                "pushed": result.record.get("pushed"),
            }
        )
        return 0
    print(f"model: {result.model_dir}")
    print(f"record: {result.out_dir / 'training.json'}  loss curve: {result.out_dir / 'loss.png'}")
    if losses:
        print(
            f"loss: {losses[0]:.4f} (first step) -> {losses[-1]:.4f} (last step), {len(losses)} "
            "steps"
        )
    if "pushed" in result.record:
        print(f"pushed: {json.dumps(result.record['pushed'])}")
    return 0
