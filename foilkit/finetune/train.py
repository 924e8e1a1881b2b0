"""Contrastive video-text fine-tuning with reversed-video hard negatives (RTime's UMT-Neg recipe).

A CLIP / SigLIP checkpoint gets CLIP4Clip's sequence transformer over its frame embeddings
(:mod:`foilkit.scorers.adapters.temporal_clip`) and is trained with the symmetric InfoNCE
loss on a foilkit dataset's train split; with ``hard_negatives="reversed"`` every item's
time-reversed view and its caption sit in the item's batch (:mod:`foilkit.finetune.data`).
The defaults are the paper's settings (:data:`PAPER_DEFAULTS`).

The towers train as CLIP4Clip trains them (``freeze_layers``, its ``freeze_layer_num``: 0, its
default and the value of every command in its README; :func:`frozen` says what stays as it
is). Texts in a batch are de-duplicated; a text that is the caption of several clips of the
batch counts all of them as positives (a synthetic benchmark repeats captions).

``batch_size`` is the global batch, as in CLIP4Clip and the paper: under ``accelerate launch``
each process embeds its share of every batch and the loss gathers all processes' embeddings,
gradients included (:func:`gathered_loss`), so 2 processes with half a batch each compute the
loss, and after accelerate's averaging the gradient, of 1 process with the whole batch.
Mixed precision is accelerate's autocast (the loss in float32); ``gradient_accumulation_steps``
batches add their gradients (each weighted by one over the batches of its step) before one
optimizer step, the last step of an epoch taking what is left.

Run folder (``out_dir``):

``model/``                 the final model, a Hub folder ``foilkit evaluate`` loads
``checkpoints/epoch-N/``   ``model/``, the ``accelerate`` state and ``done.json`` (the losses,
                           the learning-rate schedule as JSON) after epoch N; ``resume``
                           continues after the newest complete one (an interrupted epoch is
                           trained again from its start: batches are fixed by seed and epoch)
                           and unpickles nothing that could run code
                           (:func:`_refuse_pickled_state`)
``training.json``          the run record: data, frames, seed, hard-negative policy, settings,
                           package versions, losses per step
``loss.png``               the loss curve
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import math
import os
import re
import shutil
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from foilkit.errors import UserError
from foilkit.files import atomic_write
from foilkit.finetune.negatives import HARD_NEGATIVES, IRREVERSIBLE, REVERSAL_ASPECTS, check_batch
from foilkit.folders import FINETUNE, check_folder, claim_folder, holds_files, replace_folder
from foilkit.scorers.options import option
from foilkit.video_paths import RootsGiven, video_roots_for

#: The paper's settings (RTime, Du et al., Tables 2-3; CLIP4Clip's defaults where RTime follows
#: it), the defaults of :class:`FinetuneOptions`.
PAPER_DEFAULTS = {
    "epochs": 5,
    "batch_size": 128,  # clips: 64 items and their reversals
    "num_frames": 12,  # CLIP4Clip's max_frames; RTime Table 3: more frames help
    "learning_rate": 1e-4,  # the temporal module (CLIP4Clip's lr)
    "base_learning_rate": 1e-7,  # the CLIP towers (CLIP4Clip's lr * coef_lr, 1e-4 x 1e-3)
    "warmup": 0.1,  # of the steps, then cosine decay (CLIP4Clip)
    "temporal_layers": 4,  # CLIP4Clip's cross_num_hidden_layers
}
RECORD_FILE = "training.json"
MODEL_DIR = "model"
CHECKPOINTS_DIR = "checkpoints"
DONE_FILE = "done.json"


@dataclass(frozen=True)
class FinetuneOptions:
    """Everything that determines a fine-tuning run (recorded in ``training.json``); the flags
    of ``foilkit finetune`` are made from the fields' metadata (:func:`foilkit.scorers.options.
    option`), as ``foilkit score``'s are."""

    config: str | None = option(None, "dataset config (default: the dataset's default)")
    split: str = option("train", "split to train on (default: %(default)s)")
    hard_negatives: str = option(
        "reversed",
        "'reversed': each item's reversed view and caption in its batch (RTime's UMT-Neg); "
        "'none': the ablation, rows in random batches (default: %(default)s)",
        choices=HARD_NEGATIVES,
    )
    reversal_aspects: tuple[str, ...] = option(REVERSAL_ASPECTS, None)  # the command's own flag
    num_frames: int = option(
        PAPER_DEFAULTS["num_frames"],
        "frames per clip (default: %(default)s)",
        aliases=("--frames",),
    )
    sampling: str = option("uniform", "frame sampling policy (default: %(default)s)")
    batch_size: int = option(
        PAPER_DEFAULTS["batch_size"],
        "clips per batch, reversals included; with several processes the global batch, split "
        "between them, negatives gathered from all (default: %(default)s)",
    )
    learning_rate: float = option(
        PAPER_DEFAULTS["learning_rate"], "temporal module's learning rate (default: %(default)s)"
    )
    base_learning_rate: float = option(
        PAPER_DEFAULTS["base_learning_rate"],
        "the CLIP towers' learning rate (default: %(default)s)",
    )
    weight_decay: float = option(0.2, "AdamW weight decay (default: %(default)s)")
    warmup: float = option(PAPER_DEFAULTS["warmup"], "warm-up fraction (default: %(default)s)")
    epochs: int = option(PAPER_DEFAULTS["epochs"], "epochs (default: %(default)s)")
    seed: int = option(
        0,
        "seed of initialisation and batch order (default: %(default)s)",
        flag="--training-seed",
        metavar="TRAINING_SEED",
    )
    temporal_layers: int = option(
        PAPER_DEFAULTS["temporal_layers"], "sequence transformer layers (default: %(default)s)"
    )
    # CLIP4Clip copies CLIP's text positions, of this scale; tiny random models need ~1: their
    # frame embeddings are large next to 0.02, and order is then lost
    position_init_std: float = option(
        0.02, "std of the frame-position embeddings at init (default: %(default)s)"
    )
    freeze_layers: int = option(
        0,
        "CLIP4Clip's freeze_layer_num: keep the embeddings and the layers below N of both towers "
        "as they are; -1 trains everything (default: %(default)s, CLIP4Clip's)",
    )
    freeze_image_tower: bool = option(False, "keep the image tower as it is")
    mixed_precision: str = option(
        "no", "accelerate's mixed precision (default: %(default)s)", choices=("no", "fp16", "bf16")
    )
    gradient_accumulation_steps: int = option(
        1,
        "batches whose gradients add up before an optimizer step; an epoch's last step takes "
        "what is left (default: %(default)s)",
    )
    distinct_by: str | None = option(
        None,
        "rows whose COLUMN values are equal never share a batch (an item and its reversal count "
        "as one): keeps look-alikes, which static cues cannot tell apart, out of a batch",
        metavar="COLUMN",
    )
    irreversible: str = option(
        "error",
        "with reversed hard negatives, items without a reversed caption: 'error' before "
        "training, or 'keep' them, each without a reversal in its batch (RTime's train split "
        "has such videos) (default: %(default)s)",
        choices=IRREVERSIBLE,
    )
    workers: int = option(4, None)  # the shared --num-workers
    cache_frames: bool = option(
        False, "keep preprocessed frames in memory across epochs (small datasets)"
    )
    keep_checkpoints: int = 2
    checkpoint_every: int = option(1, "epochs between checkpoints (default: %(default)s)")

    def __post_init__(self) -> None:
        positive = "num_frames batch_size epochs gradient_accumulation_steps temporal_layers"
        for name in f"{positive} checkpoint_every".split():
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        if self.freeze_layers < -1:
            raise ValueError(
                f"freeze_layers must be >= -1 (-1 trains every layer), got {self.freeze_layers}"
            )
        check_batch(self.hard_negatives, self.batch_size)
        if self.irreversible not in IRREVERSIBLE:
            raise ValueError(
                f"unknown irreversible {self.irreversible!r}; choose from {list(IRREVERSIBLE)}"
            )
        if not 0 <= self.warmup < 1:
            raise ValueError(f"warmup is a fraction of the steps in [0, 1), got {self.warmup}")


@dataclass
class FinetuneResult:
    """What a run produced."""

    out_dir: Path
    model_dir: Path
    record: dict[str, Any]
    losses: list[float] = field(default_factory=list)


def frozen(name: str, freeze_layers: int, *, image_tower: bool = False) -> bool:
    """Whether the base model's parameter ``name`` (transformers' CLIP / SigLIP names) stays as
    it is: CLIP4Clip's ``freeze_layer_num`` rule. The embeddings (``*.embeddings.*``: token,
    position, patch, class) and CLIP's ``pre_layrnorm`` (``ln_pre``) are below layer 0; a layer
    ``encoder.layers.K`` is frozen when K < ``freeze_layers``; the top (final norms, projections,
    heads, ``logit_scale``) always trains. ``freeze_layers`` -1 freezes nothing;
    ``image_tower`` freezes the whole image tower (``vision_model.*``, ``visual_projection``).

    >>> frozen("text_model.embeddings.token_embedding.weight", 0)
    True
    >>> frozen("text_model.encoder.layers.0.mlp.fc1.weight", 0), frozen("logit_scale", 12)
    (False, False)
    >>> frozen("vision_model.encoder.layers.1.mlp.fc1.weight", 2)
    True
    """
    if image_tower and name.startswith(("vision_model.", "visual_projection.")):
        return True
    if freeze_layers < 0:
        return False
    layer = re.search(r"\.encoder\.layers\.(\d+)\.", name)
    if layer:
        return int(layer.group(1)) < freeze_layers
    return ".embeddings." in name or ".pre_layrnorm." in name


def contrastive_loss(views: Any, texts: Any, captions: Sequence[str], logit_scale: Any) -> Any:
    """Symmetric InfoNCE of ``B`` view embeddings against the batch's distinct captions.

    ``texts`` holds the embeddings of ``unique`` = the distinct entries of ``captions`` in
    first-seen order. Video-to-text: each view's caption is its one positive. Text-to-video:
    every view paired with that text is a positive (``-log`` of their summed softmax mass).
    """
    import torch

    unique = list(dict.fromkeys(captions))
    target = torch.tensor([unique.index(c) for c in captions], device=views.device)
    logits = logit_scale * views @ texts.T  # B x U
    v2t = torch.nn.functional.cross_entropy(logits, target)
    positive = torch.zeros_like(logits, dtype=torch.bool)
    positive[torch.arange(len(captions)), target] = True
    t2v_logits = logits.T  # U x B
    log_all = torch.logsumexp(t2v_logits, dim=1)
    log_pos = torch.logsumexp(t2v_logits.masked_fill(~positive.T, float("-inf")), dim=1)
    return (v2t + (log_all - log_pos).mean()) / 2


@functools.cache
def _all_gather() -> Any:
    """The autograd function behind :func:`gathered_loss` (built on first use: torch loads late)."""
    import torch
    import torch.distributed as dist

    class AllGather(torch.autograd.Function):
        """All processes' rows of a tensor, in process order (shares may differ in length).

        Backward sums every process's gradient of the gathered rows and hands each process the
        part for its own rows: each process computes the same loss over all rows, so once
        accelerate averages the parameters' gradients they equal those of one process with
        every row. (CLIP4Clip's ``AllGather`` returns the process's own slice without the sum,
        which leaves the gradient divided by the number of processes.)
        """

        @staticmethod
        def forward(ctx, tensor, sizes, rank):
            ctx.sizes, ctx.rank = sizes, rank
            padded = tensor.new_zeros((max(sizes), *tensor.shape[1:]))
            padded[: len(tensor)] = tensor
            parts = [torch.empty_like(padded) for _ in sizes]
            dist.all_gather(parts, padded)
            return torch.cat([part[:size] for part, size in zip(parts, sizes, strict=True)])

        @staticmethod
        def backward(ctx, grad):
            grad = grad.contiguous().clone()
            dist.all_reduce(grad)
            start = sum(ctx.sizes[: ctx.rank])
            return grad[start : start + ctx.sizes[ctx.rank]], None, None

    return AllGather


def gathered_loss(
    views: Any, texts: Any, captions: Sequence[str], logit_scale: Any, *, num_processes: int = 1
) -> Any:
    """:func:`contrastive_loss` over the global batch: every process's views and texts.

    Each process passes its share (``views`` of its clips, ``texts`` of its distinct
    ``captions`` in first-seen order); every process gets the same loss, that of one process
    holding all the clips in process order. A text that several processes hold counts once
    (the first process's embedding of it).
    """
    if num_processes == 1:
        return contrastive_loss(views, texts, captions, logit_scale)
    import torch
    import torch.distributed as dist

    shares: list[Any] = [None] * num_processes
    dist.all_gather_object(shares, (list(captions), list(dict.fromkeys(captions))))
    sizes = tuple(len(named) + len(unique) for named, unique in shares)
    rows = _all_gather().apply(torch.cat([views, texts]), sizes, dist.get_rank())
    all_views, all_texts, all_captions, text_names = [], [], [], []
    for (named, unique), begin in zip(shares, itertools.accumulate(sizes, initial=0)):
        all_views.append(rows[begin : begin + len(named)])
        all_texts.append(rows[begin + len(named) : begin + len(named) + len(unique)])
        all_captions += named
        text_names += unique
    first = [text_names.index(name) for name in dict.fromkeys(text_names)]
    distinct = torch.cat(all_texts)[first]
    return contrastive_loss(torch.cat(all_views), distinct, all_captions, logit_scale)


def load_train_split(dataset: Any, config: str | None, split: str) -> Any:
    """The train split of a foilkit dataset (folder, Hub id or ``datasets`` object), videos
    undecoded."""
    import datasets

    from foilkit.scorers.api import load_scoring_dataset

    if isinstance(dataset, (str, os.PathLike)):
        try:
            splits = datasets.get_dataset_split_names(os.fspath(dataset), config)
        except (FileNotFoundError, ValueError):
            splits = None  # a saved dataset folder: load_scoring_dataset names its splits
        if splits is not None and split not in splits:
            raise ValueError(
                f"{os.fspath(dataset)} has no {split!r} split (it has {sorted(splits)}); "
                "fine-tuning needs a train split: foilkit.finetune.synthetic writes one for the "
                "synthetic benchmark, or pass --split"
            )
    try:  # a parquet folder is read from its files now (load_scoring_dataset)
        data = load_scoring_dataset(dataset, config, split)
    except ValueError as error:
        if "split" not in str(error):
            raise
        raise ValueError(
            f"{error}; fine-tuning needs a {split!r} split (or pass --split)"
        ) from None
    if isinstance(data.features.get("video"), datasets.Video):
        data = data.cast_column("video", datasets.Video(decode=False))
    missing = sorted({"id", "video", "caption"} - set(data.column_names))
    if missing:
        raise ValueError(
            f"the {split!r} split lacks the columns {missing} (it has {data.column_names})"
        )
    return data


class TuningForbiddenError(UserError):
    """The dataset is a benchmark whose licence forbids training on it."""


def refuse_test_only(dataset: Any) -> None:
    """Raise :class:`TuningForbiddenError` when ``dataset`` (folder or Hub id) holds a benchmark
    whose licence forbids tuning on it (VELOCITI), quoting the licence."""
    from foilkit.builders import get_benchmark
    from foilkit.builders.hub import benchmark_of_dataset

    name = benchmark_of_dataset(dataset)
    why = get_benchmark(name).tuning_forbidden if name is not None else ""
    if why:
        raise TuningForbiddenError(
            f"foilkit finetune refuses {os.fspath(dataset)}: it holds {name}, and {why}"
        )


def finetune(
    model: str,
    dataset: Any,
    *,
    out_dir: str | os.PathLike,
    video_root: RootsGiven = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool | None = None,
    push_to_hub: str | None = None,
    private: bool = True,
    revision: str | None = None,
    log_with: Sequence[str] | None = None,
    tracking_dir: str | os.PathLike | None = None,
    log_interval: float | None = None,
    **options: Any,
) -> FinetuneResult:
    """Fine-tune ``model`` (a CLIP / SigLIP id or folder) on ``dataset``'s train split.

    Args:
        model: Hub id or local folder of the base dual encoder, or of a model this function
            saved (its temporal module is trained further).
        dataset: exported folder, Hub id, or ``datasets`` object with a train split in the
            canonical columns.
        out_dir: the run folder (see the module docstring).
        video_root: a folder (or several): relative video paths resolve against it, and every
            path must lie inside one (without it: inside ``dataset``'s folder; see
            :func:`foilkit.video_paths.video_roots_for`); recorded as the list of roots.
        resume: continue from the last complete checkpoint in ``out_dir``.
        overwrite: replace an existing run folder.
        progress: tqdm bars (default: when stderr is a terminal); where stderr is no terminal
            and ``progress`` is not ``False``, a line per epoch and a periodic line (batches
            done, rate, ETA) every ``log_interval`` seconds (default 30; 0: every batch).
        push_to_hub: upload the final model folder to this Hub repo.
        log_with: experiment trackers (accelerate's ``log_with``: ``tensorboard``, ``wandb``,
            ``trackio``, ...) that get the options and each step's loss and learning rate;
            ``tracking_dir``: where local ones write (default: ``out_dir/tracking``).
        **options: :class:`FinetuneOptions` fields.

    Every input problem (no train split, a model family the temporal module cannot wrap,
    items without a reversed caption under ``hard_negatives="reversed"``) raises before any
    training step.
    """
    refuse_test_only(dataset)
    import torch
    from accelerate import Accelerator
    from accelerate.state import AcceleratorState
    from accelerate.utils import parse_flag_from_env, set_seed
    from tqdm.auto import tqdm
    from transformers import AutoConfig, AutoModel, AutoProcessor

    from foilkit.finetune.data import (
        FramePipeline,
        check_reversible,
        epoch_batches,
        process_share,
        shareable,
        training_items,
    )
    from foilkit.progress import DEFAULT_LOG_INTERVAL, ProgressLines
    from foilkit.scorers.adapters.temporal_clip import (
        ARCHITECTURE,
        MAX_LENGTH_PADDING,
        TemporalClip,
        check_wrappable,
        text_max_length,
        tokenize,
    )
    from foilkit.scorers.engine import cores_beside_workers
    from foilkit.scorers.video import SamplingPolicy
    from foilkit.tracking import check_trackers, tracker_config
    from foilkit.tracking import tracking_dir as foilkit_tracking_dir

    opts = FinetuneOptions(
        **{k: tuple(v) if k == "reversal_aspects" else v for k, v in options.items()}
    )
    out = Path(out_dir)
    # foilkit's own folder or a new one (foilkit.folders), on every process before any writes
    if check_folder(out, FINETUNE) and holds_files(out) and not (resume or overwrite):
        raise FileExistsError(
            f"{out} holds a fine-tuning run; pass resume=True (--resume), overwrite=True "
            "(--overwrite) or another out_dir"
        )
    # --- every check before any training --------------------------------------------------------
    base_config = AutoConfig.from_pretrained(model, revision=revision)
    check_wrappable(base_config, model)
    data = load_train_split(dataset, opts.config, opts.split)
    roots = video_roots_for(video_root, dataset)
    items = training_items(
        data, video_root=roots, reversal_aspects=opts.reversal_aspects, distinct_by=opts.distinct_by
    )
    if not items:
        raise ValueError(f"the {opts.split!r} split has no rows")
    if opts.hard_negatives == "reversed" and opts.irreversible == "error":
        check_reversible(items, opts.reversal_aspects)
    policy = SamplingPolicy(opts.sampling, num_frames=opts.num_frames)
    if AcceleratorState._shared_state and AcceleratorState().num_processes == 1:
        # a run before this one in the same process fixed mixed precision: let this one choose
        AcceleratorState._reset_state()
    # a CPU group over gloo where there is no accelerator (as foilkit.scorers.distributed);
    # gradient accumulation is done here, so that an epoch's last step takes what is left
    trackers = check_trackers(log_with)
    accelerator = Accelerator(
        mixed_precision=opts.mixed_precision,
        cpu=parse_flag_from_env("ACCELERATE_USE_CPU") or not torch.accelerator.is_available(),
        log_with=trackers or None,
        project_dir=os.fspath(foilkit_tracking_dir(out, tracking_dir)) if trackers else None,
    )
    processes, rank = accelerator.num_processes, accelerator.process_index
    if accelerator.is_main_process:
        (replace_folder if overwrite and not resume else claim_folder)(out, FINETUNE)
    accelerator.wait_for_everyone()
    set_seed(opts.seed)
    if ARCHITECTURE in (getattr(base_config, "architectures", None) or []):  # trained further
        net = TemporalClip.from_pretrained(model, revision=revision)
    else:
        base = AutoModel.from_pretrained(model, revision=revision, dtype=torch.float32)
        net = TemporalClip.from_base(
            base,
            layers=opts.temporal_layers,
            max_frames=max(64, opts.num_frames),
            position_init_std=opts.position_init_std,
        )
    if opts.num_frames > net.temporal.config.max_frames:
        raise ValueError(
            f"num_frames={opts.num_frames} exceeds the temporal module's "
            f"{net.temporal.config.max_frames} positions"
        )
    processor = AutoProcessor.from_pretrained(model, revision=revision)
    pad_to_limit = base_config.model_type in MAX_LENGTH_PADDING
    max_length = text_max_length(base_config)
    for name, parameter in net.base.named_parameters():
        if frozen(name, opts.freeze_layers, image_tower=opts.freeze_image_tower):
            parameter.requires_grad_(False)
    base_params = [p for p in net.base.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(
        [
            {"params": list(net.temporal.parameters()), "lr": opts.learning_rate},
            {"params": base_params, "lr": opts.base_learning_rate},
        ],
        weight_decay=opts.weight_decay,
        foreach=True,
    )

    def global_batches(epoch: int) -> list:
        batches = epoch_batches(items, opts.hard_negatives, opts.batch_size, opts.seed, epoch)
        return [batch for batch in batches if shareable(batch, processes)]

    per_epoch = len(global_batches(0))
    if per_epoch == 0:
        raise ValueError(
            f"no batch of {opts.batch_size} clips holds an item for each of {processes} processes: "
            "use a larger batch_size or fewer processes"
        )
    accumulation = opts.gradient_accumulation_steps
    updates = math.ceil(per_epoch / accumulation) * opts.epochs
    warmup_steps = int(opts.warmup * updates)

    def schedule(step: int) -> float:
        if step < warmup_steps:
            return (step + 1) / (warmup_steps + 1)
        done = (step - warmup_steps) / max(1, updates - warmup_steps)
        return 0.5 * (1 + math.cos(math.pi * min(1.0, done)))

    # stepped once per optimizer step: every process trains on every (global) batch
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    net, optimizer = accelerator.prepare(net, optimizer)
    unwrapped = accelerator.unwrap_model(net)

    record = _record(model, dataset, data, items, opts, accelerator, roots)
    if trackers:
        accelerator.init_trackers("foilkit-finetune", config=tracker_config(record["options"]))
    losses: list[dict[str, float]] = []
    start_epoch, optimizer_steps = 0, 0
    last = last_checkpoint(out) if resume else None
    if last is not None:
        _refuse_pickled_state(last / "state")
        accelerator.load_state(str(last / "state"))
        done = json.loads((last / DONE_FILE).read_text())
        start_epoch, losses = done["epoch"], done["losses"]
        optimizer_steps = done.get("optimizer_steps", 0)
        _restore_schedule(scheduler, done.get("scheduler"), optimizer_steps)
        if done.get("options") and _renamed(done["options"]) != _comparable(opts):
            raise ValueError(
                f"{out} was trained with other options ({done['options']}); resume only the "
                "same run"
            )
    out.mkdir(parents=True, exist_ok=True)
    pipeline = FramePipeline(
        items, policy, processor.image_processor, workers=opts.workers, cache=opts.cache_frames
    )
    shown = accelerator.is_local_main_process  # one process per machine shows progress
    bars = shown and (sys.stderr.isatty() if progress is None else progress)
    # where bars cannot redraw (a log): a line per epoch and periodic progress lines
    logged = shown and progress is not False and not bars
    interval = DEFAULT_LOG_INTERVAL if log_interval is None else log_interval
    device, started, clips_seen = accelerator.device, time.perf_counter(), 0
    # the decoding workers keep cores of their own (as in scoring); on 2 cores a tiny model
    # also trains faster on one thread
    with contextlib.closing(pipeline), cores_beside_workers(opts.workers):
        for epoch in range(start_epoch + 1, opts.epochs + 1):  # counted from 1
            batches = global_batches(epoch - 1)
            shares = [process_share(batch, rank, processes) for batch in batches]
            net.train()
            lines = None
            if logged:
                print(
                    f"finetune: epoch {epoch}/{opts.epochs}: {len(batches)} batches",
                    file=sys.stderr,
                    flush=True,
                )
                lines = ProgressLines(f"epoch {epoch}", len(batches), "batches", interval)
            bar = tqdm(
                total=len(batches),
                desc=f"epoch {epoch}/{opts.epochs}",
                unit="batch",
                disable=not bars,
                leave=False,
            )
            for index, (share, (pixels, rows, flips)) in enumerate(pipeline.iterate(shares)):
                # one optimizer step: ``accumulation`` batches, the last step fewer
                first = index - index % accumulation
                in_step = min(accumulation, len(shares) - first)
                steps_now = index + 1 == first + in_step
                captions = [clip.caption for clip in share]
                unique = list(dict.fromkeys(captions))
                text_inputs = tokenize(processor.tokenizer, unique, max_length, pad_to_limit)
                syncing = contextlib.nullcontext() if steps_now else accelerator.no_sync(net)
                with syncing:
                    with accelerator.autocast():
                        views, texts = net(pixels.to(device), rows, flips, **text_inputs.to(device))
                        scale = unwrapped.base.logit_scale.exp().clamp(max=100)
                        loss = gathered_loss(
                            views.float(), texts.float(), captions, scale, num_processes=processes
                        )
                    accelerator.backward(loss / in_step)
                if steps_now:
                    optimizer.step()
                    scheduler.step()
                    optimizer.zero_grad()
                    optimizer_steps += 1
                value = float(loss.detach())  # the global batch's loss: the same on every process
                losses.append({"epoch": epoch, "step": len(losses) + 1, "loss": value})
                if trackers:
                    rate = scheduler.get_last_lr()[0]
                    accelerator.log({"loss": value, "learning_rate": rate}, step=len(losses))
                clips_seen += len(batches[index])
                bar.set_postfix(loss=f"{value:.3f}")
                bar.update()
                if lines is not None:
                    lines.update(1)
            bar.close()
            if epoch % opts.checkpoint_every == 0 or epoch == opts.epochs:
                state = {"epoch": epoch, "losses": losses, "optimizer_steps": optimizer_steps}
                _save_checkpoint(accelerator, unwrapped, processor, out, opts, scheduler, state)
    seconds = time.perf_counter() - started
    model_dir = out / MODEL_DIR
    if accelerator.is_main_process:
        if model_dir.exists():
            shutil.rmtree(model_dir)
        unwrapped.save_pretrained(model_dir, processor)
        record.update(
            losses=losses,
            optimizer_steps=optimizer_steps,
            train_seconds=round(seconds, 3),
            decodes=pipeline.decodes,
            clips_per_second=round(clips_seen / seconds, 3) if seconds and clips_seen else None,
            model_dir=MODEL_DIR,
        )
        _write_record(out, record)
        _write_record(model_dir, record)
        plot_losses(
            losses, out / "loss.png", title=f"{model} ({opts.hard_negatives} hard negatives)"
        )
        if push_to_hub:  # the folder as it was written (its training.json included)
            record["pushed"] = push_model(model_dir, push_to_hub, private=private)
            _write_record(out, record)
    accelerator.wait_for_everyone()
    accelerator.end_training()
    return FinetuneResult(out, model_dir, record, [entry["loss"] for entry in losses])


def _write_record(folder: Path, record: dict[str, Any]) -> None:
    """``training.json`` in ``folder``, whole or not at all."""
    atomic_write(folder / RECORD_FILE, json.dumps(record, indent=2) + "\n")


def _renamed(options: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint's recorded options under today's names (``frames`` is now ``num_frames``;
    a checkpoint from before ``freeze_layers`` trained every layer: -1)."""
    options = {("num_frames" if k == "frames" else k): v for k, v in options.items()}
    return {"freeze_layers": -1, **options}


def _comparable(opts: FinetuneOptions) -> dict[str, Any]:
    """The options a resumed run must share with the run it continues."""
    values = json.loads(json.dumps(asdict(opts)))
    for name in ("workers", "keep_checkpoints", "checkpoint_every", "epochs"):
        values.pop(name)
    return values


def _record(model, dataset, data, items, opts, accelerator, roots) -> dict[str, Any]:
    from foilkit._version import __version__
    from foilkit.scorers.record import hardware, now, package_versions

    rules = Counter(item.reversed_rule or "none" for item in items)
    return {
        "foilkit": __version__,
        "created": now(),
        "base_model": model,
        "data": {
            "dataset": os.fspath(dataset)
            if isinstance(dataset, (str, os.PathLike))
            else repr(dataset),
            "config": opts.config,
            "split": opts.split,
            "rows": data.num_rows,
            "items": len(items),
            "video_root": None if roots is None else [str(folder) for folder in roots],
            "reversed_caption_rules": dict(rules),
        },
        "hard_negatives": opts.hard_negatives,
        "num_frames": opts.num_frames,
        "sampling": opts.sampling,
        "seed": opts.seed,
        "options": json.loads(json.dumps(asdict(opts))),
        "temporal_module": "CLIP4Clip seqTransf (frame embeddings + position embeddings -> "
        "transformer, residual, mean)",
        "image_tower": "frozen" if opts.freeze_image_tower else "trainable",
        "packages": package_versions(),
        "hardware": hardware(accelerator.num_processes),
        "mixed_precision": accelerator.mixed_precision,
        "gradient_accumulation_steps": opts.gradient_accumulation_steps,
        "distributed": {
            "processes": accelerator.num_processes,
            "backend": str(accelerator.state.backend) if accelerator.num_processes > 1 else None,
            "global_batch_size": opts.batch_size,
            "negatives": "gathered from every process (all-gather with gradients)"
            if accelerator.num_processes > 1
            else "the one process's batch",
        },
        "distinct_by": opts.distinct_by,
    }


def _save_checkpoint(accelerator, model, processor, out: Path, opts, scheduler, state) -> None:
    """``checkpoints/epoch-N/{model,state,done.json}`` (``state``: the epoch N, the losses so
    far and the optimizer steps); ``done.json`` last, so a crash mid-save leaves no checkpoint
    that looks complete. Keeps the newest ``keep_checkpoints``."""
    folder = out / CHECKPOINTS_DIR / f"epoch-{state['epoch']}"
    accelerator.wait_for_everyone()
    accelerator.save_state(str(folder / "state"))
    if accelerator.is_main_process:
        model.save_pretrained(folder / MODEL_DIR, processor)
        done = {
            **state,
            "scheduler": scheduler.state_dict(),  # JSON: base rates, step count, last rates
            "options": _comparable(opts),
        }
        atomic_write(folder / DONE_FILE, json.dumps(done) + "\n")
        for old in _checkpoints(out)[: -max(1, opts.keep_checkpoints)]:
            shutil.rmtree(old, ignore_errors=True)
    accelerator.wait_for_everyone()


def _refuse_pickled_state(state: Path) -> None:
    """A ``ValueError`` when a checkpoint's ``accelerate`` state holds a custom checkpoint: a
    pickle that ``accelerate`` would unpickle in full, running whatever code it names. foilkit
    writes none (older versions pickled the schedule there)."""
    pickled = sorted(state.glob("custom_checkpoint_*.pkl"))
    if pickled:
        raise ValueError(
            f"{pickled[0]} is a pickle, and loading it would run any code it holds; foilkit "
            "keeps the learning-rate schedule in done.json and reads no such file. If this is "
            "your own run from an older foilkit, delete the file and --resume again; never "
            "resume a fine-tuning folder you did not write"
        )


def _restore_schedule(scheduler: Any, state: dict[str, Any] | None, optimizer_steps: int) -> None:
    """The learning-rate schedule where a checkpoint left it: its ``state`` from ``done.json``
    (only the keys the scheduler has, so the file sets numbers, nothing else), or, for a
    checkpoint written before ``done.json`` held it, the schedule ``optimizer_steps`` steps in
    (a ``LambdaLR`` is its step count)."""
    current = scheduler.state_dict()
    if state is None:
        state = {
            "last_epoch": optimizer_steps,
            "_step_count": optimizer_steps + 1,
            "_last_lr": [
                base * factor(optimizer_steps)
                for base, factor in zip(scheduler.base_lrs, scheduler.lr_lambdas, strict=True)
            ],
        }
    kept = {key: state[key] for key in current if key in state and key != "lr_lambdas"}
    scheduler.load_state_dict({**current, **kept})


def _checkpoints(out_dir: str | os.PathLike) -> list[Path]:
    """A run's complete ``checkpoints/epoch-N`` folders, oldest first."""
    folders = (Path(out_dir) / CHECKPOINTS_DIR).glob("epoch-*")
    complete = [p for p in folders if (p / DONE_FILE).is_file()]
    return sorted(complete, key=lambda p: int(p.name.split("-")[1]))


def last_checkpoint(out_dir: str | os.PathLike) -> Path | None:
    """The newest complete ``checkpoints/epoch-N`` folder of a run, or ``None``."""
    complete = _checkpoints(out_dir)
    return complete[-1] if complete else None


def plot_losses(losses: Sequence[dict[str, float]], path: Path, *, title: str) -> Path:
    """The training loss per step, epochs marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(6, 3.5))
    steps = [entry["step"] for entry in losses]
    axis.plot(steps, [entry["loss"] for entry in losses], linewidth=1.2)
    for before, after in itertools.pairwise(losses):
        if after["epoch"] != before["epoch"]:
            axis.axvline(after["step"] - 0.5, color="grey", linewidth=0.5, linestyle=":")
    axis.set_xlabel("step")
    axis.set_ylabel("symmetric InfoNCE loss")
    axis.set_title(title, fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


def push_model(
    model_dir: str | os.PathLike, repo_id: str, *, private: bool = True, dry_run: bool = False
) -> dict[str, Any]:
    """Upload a saved model folder to the Hub as one commit (:class:`foilkit.hub_commit.RepoCommit`,
    as ``foilkit push-results``): every file of the folder at its relative path.

    ``dry_run``: touch nothing remote; return what would be sent (with each file's sha256).
    """
    import hashlib

    from foilkit.hub_commit import RepoCommit

    folder = Path(model_dir)
    files = {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}
    commit = RepoCommit(repo_id, "model", files, "foilkit finetune: temporal CLIP model")
    plan = {"repo_id": repo_id, "repo_type": "model", "private": private, "files": list(files)}
    if dry_run:
        digests = {path: hashlib.sha256(commit.contents(path)).hexdigest() for path in files}
        return {**plan, "sha256": digests, "dry_run": True}
    return {**plan, "url": commit.push(private=private)}
