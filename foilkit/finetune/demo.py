"""The fine-tuning part of ``foilkit demo``: RTime's hard negatives on the synthetic benchmark.

A tiny random CLIP (:func:`foilkit.finetune.synthetic.write_base_model`) gets CLIP4Clip's
sequence transformer and is fine-tuned on the synthetic benchmark's train split
(:func:`foilkit.finetune.synthetic.write_train_split`: new videos, none in the test split)
twice, with the same settings and seed: with each video's reversed view and caption in its
batch (``reversed``) and without (``none``, the ablation). Both are then evaluated on the
held-out test split like any model; the ``reversed`` model also under the reversed-frames
control, where a model that reads the frame order must fall well below chance on direction,
and the shuffled one, where it must fall to chance; a paired test compares the two models.

Batches keep look-alikes apart (``distinct_by="static_content"``, :mod:`foilkit.finetune.data`):
without hard negatives static cues then solve every batch; with them, only the frame order tells
each video from its reversal, RTime's point.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The demo's fine-tuning settings (CPU, about 40 s a run on 2 cores). The paper's values
#: are the defaults of ``foilkit finetune``; a tiny random model needs larger learning rates and
#: more epochs, and frame-position embeddings at the scale of its frame embeddings. The towers'
#: embeddings stay frozen (``freeze_layers`` 0, CLIP4Clip's default): the tiny CLIP's token
#: embedding is 98% of its parameters, and training it cost two thirds of the demo's time.
DEMO_FINETUNE = {
    "num_frames": 8,
    "batch_size": 16,
    "epochs": 40,
    "learning_rate": 3e-3,
    "base_learning_rate": 1e-3,
    "warmup": 0.0,
    "temporal_layers": 2,
    "position_init_std": 1.0,
    "cache_frames": True,
    "seed": 0,
    "workers": 2,
    "checkpoint_every": 10,
    "distinct_by": "static_content",
}
#: (run name, hard-negative policy, temporal controls it is evaluated under)
DEMO_FINETUNE_RUNS = (
    ("clip-finetuned", "reversed", (None, "reversed", "shuffled")),
    ("clip-finetuned-no-hn", "none", (None,)),
)
#: The runs the paired test compares: A (with hard negatives) and B (without).
COMPARED = ("clip-finetuned", "clip-finetuned-no-hn")
LABELS = {
    "reversed": "clip + temporal, reversed negatives",
    "none": "clip + temporal, no hard negatives",
}


def finetune_demo_runs(
    out_dir: str | os.PathLike,
    evaluate_model: Callable[..., Any],
    *,
    say: Callable[[str], None] = lambda text: None,
    progress: bool = False,
    seed: int = DEMO_FINETUNE["seed"],
) -> list[Path]:
    """Write the train split and the base model under ``out_dir`` (``train/``, ``base-clip/``),
    fine-tune (``models/<name>/``), evaluate.

    ``evaluate_model(model, *, run_name, label, control)`` evaluates a model folder on the
    demo's test split and returns the run folder. ``seed``: the fine-tuning seed (both runs get
    the same one). Returns the run folders in :data:`DEMO_FINETUNE_RUNS` order.
    """
    from foilkit.finetune.synthetic import write_base_model, write_train_split
    from foilkit.finetune.train import finetune

    out = Path(out_dir)
    say("rendering the synthetic train split")
    train = write_train_split(out / "train")
    base = write_base_model(out / "base-clip")
    runs = []
    for name, hard_negatives, controls in DEMO_FINETUNE_RUNS:
        say(f"fine-tuning {name} (hard negatives: {hard_negatives})")
        result = finetune(
            str(base),
            str(train),
            out_dir=out / "models" / name,
            video_root=train / "videos",
            overwrite=True,
            progress=progress,
            hard_negatives=hard_negatives,
            **{**DEMO_FINETUNE, "seed": seed},
        )
        for control in controls:
            label = LABELS[hard_negatives] + ("" if control is None else f" ({control})")
            run_name = name if control is None else f"{name}-{control}"
            runs.append(
                evaluate_model(
                    str(result.model_dir), run_name=run_name, label=label, control=control
                )
            )
    return runs


def paired_test_lines(runs_dir: Path, out_dir: Path, *, n_resamples: int) -> list[str]:
    """The paired tests of :data:`COMPARED` (``foilkit compare``'s: exact McNemar test and
    paired bootstrap, overall and per aspect) as report lines; also ``out_dir/comparison.json``."""
    import json

    from foilkit.compare import _test_lines, compare_runs

    run_a, run_b = (runs_dir / name for name in COMPARED)
    tests = compare_runs(run_a, run_b, n_resamples=n_resamples, seed=0)
    comparison = {"run_a": str(run_a), "run_b": str(run_b), "tests": tests}
    text = json.dumps(comparison, indent=2, default=str) + "\n"
    (out_dir / "comparison.json").write_text(text, encoding="utf-8")
    heading, *table = _test_lines(tests)
    return [
        heading,
        "",
        (
            f"A: {LABELS['reversed']} (`{run_a.name}`); B: {LABELS['none']} (`{run_b.name}`), "
            "both fine-tuned with the same settings and seed, scored on the same items."
        ),
        *table,
    ]
