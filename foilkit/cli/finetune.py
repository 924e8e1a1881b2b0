"""``foilkit finetune``: contrastive fine-tuning, reversed videos as hard negatives (RTime UMT-Neg).

Wraps :func:`foilkit.finetune.finetune`; the defaults are the paper's values (5 epochs, batch
128, 12 frames, learning rate 1e-4 for the temporal module and 1e-7 for the CLIP towers). Run
it under ``accelerate launch -m foilkit finetune ...`` for several GPUs. The saved
``<out>/model`` folder is evaluated like any model::

    foilkit finetune --model openai/clip-vit-base-patch32 --dataset runs/rtime-export \\
        --video-root ~/videos/rtime --out runs/clip-rtime-neg
    foilkit evaluate --benchmark rtime --model runs/clip-rtime-neg/model --video-root
    ~/videos/rtime ...
"""

from __future__ import annotations

import argparse
import json

from foilkit.cli.options import add_logging, add_num_workers, add_tracking, add_video_root


def configure(parser: argparse.ArgumentParser) -> None:
    from foilkit.finetune.negatives import HARD_NEGATIVES, IRREVERSIBLE, REVERSAL_ASPECTS
    from foilkit.finetune.train import PAPER_DEFAULTS

    add = parser.add_argument
    add(
        "--model",
        required=True,
        help="base CLIP / SigLIP Hub id or folder (or a model this command saved)",
    )
    add("--dataset", required=True, help="foilkit dataset folder or Hub id with a train split")
    add("--config", default=None, help="dataset config (default: the dataset's default)")
    add("--split", default="train", help="split to train on (default: %(default)s)")
    add_video_root(parser)
    add("--out", required=True, help="run folder: model/, checkpoints/, training.json, loss.png")
    add(
        "--hard-negatives",
        choices=HARD_NEGATIVES,
        default="reversed",
        help="'reversed': each item's reversed view and caption in its batch (RTime's UMT-Neg); "
        "'none': the ablation, rows in random batches (default: %(default)s)",
    )
    add(
        "--reversal-aspects",
        nargs="+",
        default=list(REVERSAL_ASPECTS),
        help="aspects whose first foil is the reversed video's caption (default: %(default)s)",
    )
    add(
        "--irreversible",
        choices=IRREVERSIBLE,
        default="error",
        help="with reversed hard negatives, items without a reversed caption: 'error' before "
        "training, or 'keep' them, each without a reversal in its batch (RTime's train split "
        "has such videos) (default: %(default)s)",
    )
    add(
        "--distinct-by",
        metavar="COLUMN",
        default=None,
        help="rows whose COLUMN values are equal never share a batch (an item and its reversal "
        "count as one): keeps look-alikes, which static cues cannot tell apart, out of a batch",
    )
    add(
        "--num-frames",
        "--frames",
        dest="num_frames",
        type=int,
        default=PAPER_DEFAULTS["num_frames"],
        help="frames per clip (default: %(default)s)",
    )
    add("--sampling", default="uniform", help="frame sampling policy (default: %(default)s)")
    add(
        "--batch-size",
        type=int,
        default=PAPER_DEFAULTS["batch_size"],
        help="clips per batch, reversals included; with several processes the global batch, "
        "split between them, negatives gathered from all (default: %(default)s)",
    )
    add(
        "--learning-rate",
        type=float,
        default=PAPER_DEFAULTS["learning_rate"],
        help="temporal module's learning rate (default: %(default)s)",
    )
    add(
        "--base-learning-rate",
        type=float,
        default=PAPER_DEFAULTS["base_learning_rate"],
        help="the CLIP towers' learning rate (default: %(default)s)",
    )
    add("--weight-decay", type=float, default=0.2, help="AdamW weight decay (default: %(default)s)")
    add(
        "--warmup",
        type=float,
        default=PAPER_DEFAULTS["warmup"],
        help="warm-up fraction (default: %(default)s)",
    )
    add(
        "--epochs", type=int, default=PAPER_DEFAULTS["epochs"], help="epochs (default: %(default)s)"
    )
    add(
        "--training-seed",
        type=int,
        default=0,
        help="seed of initialisation and batch order (default: %(default)s)",
    )
    add(
        "--temporal-layers",
        type=int,
        default=PAPER_DEFAULTS["temporal_layers"],
        help="sequence transformer layers (default: %(default)s)",
    )
    add(
        "--position-init-std",
        type=float,
        default=0.02,
        help="std of the frame-position embeddings at init (default: %(default)s)",
    )
    add(
        "--freeze-layers",
        type=int,
        default=0,
        help="CLIP4Clip's freeze_layer_num: keep the embeddings and the layers below N of both "
        "towers as they are; -1 trains everything (default: %(default)s, CLIP4Clip's)",
    )
    add("--freeze-image-tower", action="store_true", help="keep the image tower as it is")
    add(
        "--mixed-precision",
        choices=("no", "fp16", "bf16"),
        default="no",
        help="accelerate's mixed precision (default: %(default)s)",
    )
    add(
        "--gradient-accumulation-steps",
        type=int,
        default=1,
        help="batches whose gradients add up before an optimizer step; an epoch's last step "
        "takes what is left (default: %(default)s)",
    )
    add_num_workers(parser, default=4)
    # the flag's name before the commands shared --num-workers
    add("--workers", dest="num_workers", type=int, help=argparse.SUPPRESS)
    add(
        "--cache-frames",
        action="store_true",
        help="keep preprocessed frames in memory across epochs (small datasets)",
    )
    add(
        "--checkpoint-every",
        type=int,
        default=1,
        help="epochs between checkpoints (default: %(default)s)",
    )
    add("--resume", action="store_true", help="continue from the last checkpoint in --out")
    add("--overwrite", action="store_true", help="replace an existing --out")
    add("--push-to-hub", metavar="REPO_ID", default=None, help="upload the final model folder")
    add("--public", action="store_true", help="with --push-to-hub: a public repository")
    add("--no-progress", action="store_true", help="no progress bars")
    add_logging(parser)
    add_tracking(parser, "the options and each step's loss and learning rate")


def run(args: argparse.Namespace) -> int:
    from foilkit.cli.options import print_json, same_named, shows_progress
    from foilkit.finetune import finetune

    result = finetune(
        args.model,
        args.dataset,
        out_dir=args.out,
        progress=None if shows_progress(args) else False,
        private=not args.public,
        reversal_aspects=tuple(args.reversal_aspects),
        seed=args.training_seed,
        workers=args.num_workers,
        **same_named(
            args,
            "video_root resume overwrite config split hard_negatives log_interval log_with "
            "tracking_dir push_to_hub irreversible distinct_by num_frames sampling batch_size "
            "learning_rate base_learning_rate weight_decay warmup epochs temporal_layers "
            "position_init_std freeze_layers freeze_image_tower mixed_precision "
            "gradient_accumulation_steps cache_frames checkpoint_every",
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
