"""Fine-tuning across processes, in mixed precision and with gradient accumulation, on CPU.

Negatives are gathered from every process (CLIP4Clip's AllGather, its gradient summed back):
2 processes with half the batch each compute the loss, and after accelerate's averaging the
gradients, of 1 process with the whole batch.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
import torch
from launch import accelerate_launch, run_to_success

from foilkit.finetune import contrastive_loss, finetune
from foilkit.finetune.data import epoch_batches, process_share, training_items

HERE = Path(__file__).resolve().parent


def test_a_batch_is_shared_between_processes_with_each_item_beside_its_reversal(reversal_rows):
    (batch,) = epoch_batches(training_items(reversal_rows(5)), "reversed", 10, seed=0, epoch=0)
    shares = [process_share(batch, rank, 2) for rank in range(2)]
    assert [len(share) for share in shares] == [6, 4]  # 3 items and 2, each with its reversal
    assert shares[0] + shares[1] == batch  # contiguous, in order
    for share in shares:
        assert {(c.item, c.reversed) for c in share} == {(c.item, not c.reversed) for c in share}


@pytest.mark.slow
def test_two_processes_with_half_the_batch_each_compute_the_loss_and_gradients_of_one(tmp_path):
    import two_process_loss as case  # beside this file: pytest puts its folder on sys.path

    model, clips = case.problem()
    views, texts = model(clips, case.text_ids(case.CAPTIONS))
    loss = contrastive_loss(views, texts, case.CAPTIONS, torch.tensor(10.0))
    loss.backward()
    out = tmp_path / "two.json"
    run_to_success(
        [*accelerate_launch(2), str(HERE / "two_process_loss.py"), str(out)], timeout=600
    )
    two = json.loads(out.read_text())
    assert two["processes"] == 2
    assert two["losses"] == pytest.approx([float(loss.detach())] * 2, abs=1e-6)
    for name, parameter in model.named_parameters():
        assert torch.allclose(torch.tensor(two["grads"][name]), parameter.grad, atol=1e-6), name


@pytest.mark.slow
def test_finetune_on_two_processes_follows_one_process(finetune_argv, tmp_path):
    """The same global batches, split between 2 processes: the same losses step by step."""
    args = ["-m", "foilkit", *finetune_argv("direction", "--num-workers", "1", "--epochs", "2")]
    for command, out in ([sys.executable], "one"), (accelerate_launch(2), "two"):
        run_to_success([*command, *args, "--out", str(tmp_path / out)], timeout=600)
    one, two = (
        json.loads((tmp_path / run / "training.json").read_text()) for run in ("one", "two")
    )
    assert two["distributed"]["processes"] == 2 and one["distributed"]["processes"] == 1
    assert "gathered" in two["distributed"]["negatives"]
    assert two["distributed"]["global_batch_size"] == 8
    assert len(one["losses"]) == len(two["losses"]) == 2 * 4  # 16 items, 4 per batch, 2 epochs
    assert [e["loss"] for e in two["losses"]] == pytest.approx(
        [e["loss"] for e in one["losses"]], rel=1e-3
    )


def test_mixed_precision_and_gradient_accumulation_are_used_and_recorded(
    train_dir: Path, clip_model: str, tmp_path
):
    settings = {
        "config": "direction",
        "num_frames": 4,
        "batch_size": 6,
        "learning_rate": 1e-3,
        "temporal_layers": 1,
        "cache_frames": True,
        "workers": 1,
        "epochs": 2,
    }
    # 16 items, 3 a batch: 6 batches a step's worth of 4 and 2: 2 optimizer steps an epoch
    result = finetune(
        clip_model,
        str(train_dir),
        out_dir=tmp_path / "bf16",
        video_root=train_dir / "videos",
        mixed_precision="bf16",
        gradient_accumulation_steps=4,
        **settings,
    )
    record = result.record
    assert record["mixed_precision"] == "bf16" and record["gradient_accumulation_steps"] == 4
    assert len(record["losses"]) == 2 * 6
    assert record["optimizer_steps"] == 2 * math.ceil(6 / 4)
    assert all(math.isfinite(entry["loss"]) for entry in record["losses"])
    # a plain run after it in the same process chooses its own precision
    plain = finetune(
        clip_model,
        str(train_dir),
        out_dir=tmp_path / "fp32",
        video_root=train_dir / "videos",
        **settings,
    )
    assert plain.record["mixed_precision"] == "no" and plain.record["optimizer_steps"] == 2 * 6
    # bf16 autocast changes the numbers, accumulation the updates: the two runs differ
    assert record["losses"][-1]["loss"] != plain.record["losses"][-1]["loss"]
