"""Training speed: an item and its reversal from one decode, against decoding them separately.

``foilkit finetune --hard-negatives reversed`` puts every item's time-reversed view in the
item's batch. foilkit's loader (``foilkit.finetune.data.FramePipeline``) decodes the item's
window once and serves the reversed view as the same preprocessed frames flipped in time; a
loader without foilkit's views decodes (and preprocesses) the reversed clip as a clip of its
own, as if the reversed copy were another file. One run trains the same model on the same
batches of the synthetic corpus's RTime shape (``corpus.py``: a forward and a reversed row per
video) both ways and prints:

- clips/s of a training epoch (decoding in ``--workers`` threads with one batch prefetched,
  preprocessing, forward, symmetric InfoNCE, backward, optimizer step) per loader, and the
  ratio shared / separate;
- the decodes each made (shared: one per item; separate: one per clip) and peak memory;
- that both loaders fed identical pixels (the first batch compared), so the ratio compares
  the same work.

Usage::

    python benchmarks/training_speed.py --quick       # 24 videos of 4 s, tiny CLIP, CPU
    python benchmarks/training_speed.py               # 96 videos of 8 s
    python benchmarks/training_speed.py --device cuda --workers 8 --batch-size 64

Exit status 1 when a check fails; the speed ratio is reported, not enforced.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import torch
from corpus import CorpusSize, corpus, rtime_rows
from measure import describe_hardware, environment, measure, phase_record, render_table, write_json

from foilkit.finetune.data import FramePipeline, epoch_batches, training_items
from foilkit.finetune.train import contrastive_loss
from foilkit.scorers.adapters.temporal_clip import TemporalClip, tokenize
from foilkit.scorers.video import SamplingPolicy

SIZES = {
    "smoke": CorpusSize(videos=4, seconds=1.5),
    "quick": CorpusSize(videos=24, seconds=4.0),
    "full": CorpusSize(videos=96, seconds=8.0),
}
#: The printed table's columns after the loader's name: column -> key of its record.
COLUMNS = {"clips": "clips", "decodes": "decodes", "seconds": "seconds", "clips/s": "clips_per_s"}
COLUMNS |= {"cores busy": "cores_busy", "peak RSS MiB": "peak_rss_mib"}


def train_epoch(
    model: TemporalClip, processor: Any, pipeline: FramePipeline, batches, device
) -> int:
    """One epoch over ``batches``; returns the clips trained on."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    clips = 0
    for batch, (pixels, rows, flips) in pipeline.iterate(batches):
        captions = [clip.caption for clip in batch]
        texts = tokenize(processor.tokenizer, list(dict.fromkeys(captions)), 77, False).to(device)
        views, text_embeddings = model(pixels.to(device), rows, flips, **texts)
        loss = contrastive_loss(views, text_embeddings, captions, model.base.logit_scale.exp())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        clips += len(batch)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return clips


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="24 videos of 4 s")
    size.add_argument(
        "--smoke", action="store_true", help="4 videos of 1.5 s (a check, not a measurement)"
    )
    parser.add_argument(
        "--model", default=None, help="CLIP / SigLIP id or folder (default: the tiny CLIP)"
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--num-frames", "--frames", dest="num_frames", type=int, default=8)
    parser.add_argument(
        "--batch-size", type=int, default=16, help="clips per batch, reversals included"
    )
    parser.add_argument("--workers", type=int, default=4, help="decoding threads")
    parser.add_argument("--json", default=None, help="write the full record here")
    args = parser.parse_args(argv)

    from transformers import AutoModel, AutoProcessor

    from foilkit.synthetic.models import tiny_model_path

    name = "smoke" if args.smoke else "quick" if args.quick else "full"
    videos = corpus(SIZES[name])
    items = training_items(rtime_rows(videos))
    batches = epoch_batches(items, "reversed", args.batch_size, seed=0, epoch=0)
    model_id = args.model or str(tiny_model_path("clip"))
    processor = AutoProcessor.from_pretrained(model_id)
    device = torch.device(args.device)
    policy = SamplingPolicy("uniform", num_frames=args.num_frames)
    env = environment()
    results: dict[str, dict[str, Any]] = {}
    first_batches = {}
    for loader, share in (("shared decode", True), ("separate decodes", False)):
        torch.manual_seed(0)
        model = (
            TemporalClip.from_base(AutoModel.from_pretrained(model_id), layers=2).to(device).train()
        )
        pipeline = FramePipeline(
            items, policy, processor.image_processor, workers=args.workers, share_decode=share
        )
        pixels, rows, flips = pipeline.pixels(batches[0])
        first_batches[loader] = torch.stack(
            [p.flip(0) if f else p for p, f in zip(pixels[rows], flips)]
        )
        pipeline.decodes = 0
        with measure(loader) as phase:
            clips = train_epoch(model, processor, pipeline, batches, device)
        pipeline.close()
        results[loader] = {
            "clips": clips,
            "clips_per_s": phase.rate(clips),
            "decodes": pipeline.decodes,
            **phase_record(phase),
        }
    shared, separate = results["shared decode"], results["separate decodes"]
    ratio = shared["clips_per_s"] / separate["clips_per_s"]
    checks = {
        "shared: one decode per item": shared["decodes"] == len(items),
        "separate: one decode per clip": separate["decodes"] == shared["clips"],
        "same pixels either way": torch.equal(*first_batches.values()),
    }
    print(
        f"training speed, {len(videos)} videos of {SIZES[name].seconds:g} s "
        f"({len(items)} items + reversals), {args.num_frames} frames, batch {args.batch_size}, "
        f"{args.workers} decoding threads; {describe_hardware(env)}\n"
    )
    table = [
        {"loader": loader, **{column: r[key] for column, key in COLUMNS.items()}}
        for loader, r in results.items()
    ]
    print(render_table("clips per second of a training epoch", table))
    print(f"shared / separate: {ratio:.2f}x clips/s\n")
    for check, passed in checks.items():
        print(f"{'ok  ' if passed else 'FAIL'} {check}")
    if args.json:
        write_json(
            args.json,
            {
                "size": name,
                "environment": env,
                "results": results,
                "ratio": ratio,
                "checks": checks,
                "args": vars(args),
            },
        )
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
