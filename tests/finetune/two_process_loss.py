"""Run by ``test_distributed_training.py`` under ``accelerate launch --num_processes 2``: each
process embeds its contiguous share of one global batch with a tiny DDP-wrapped model, computes
:func:`foilkit.finetune.gathered_loss` and back-propagates; rank 0 writes the loss and the
(averaged) gradients as JSON to ``argv[1]``. The batch and the model come from
:func:`problem`, which the test also runs in one process."""

from __future__ import annotations

import json
import sys

import torch

#: Clips of the global batch and their captions: repeated captions, one of them held by both
#: processes, and shares of unequal length (4 and 3 clips).
CAPTIONS = ["a", "b", "a", "c", "b", "d", "e"]
SHARES = ((0, 4), (4, 7))


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.video = torch.nn.Linear(6, 4)
        self.text = torch.nn.Embedding(8, 4)

    def forward(self, clips: torch.Tensor, text_ids: torch.Tensor):
        views = torch.nn.functional.normalize(self.video(clips), dim=-1)
        return views, torch.nn.functional.normalize(self.text(text_ids), dim=-1)


def problem() -> tuple[Tiny, torch.Tensor]:
    """The model (fixed weights) and the global batch's clip features."""
    torch.manual_seed(0)
    return Tiny(), torch.randn(len(CAPTIONS), 6)


def text_ids(captions: list[str]) -> torch.Tensor:
    return torch.tensor([ord(c) - ord("a") for c in dict.fromkeys(captions)])


def main(out: str) -> None:
    from accelerate import Accelerator

    from foilkit.finetune import gathered_loss

    accelerator = Accelerator(cpu=True)
    model, clips = problem()
    net = accelerator.prepare(model)
    start, end = SHARES[accelerator.process_index]
    captions = CAPTIONS[start:end]
    views, texts = net(clips[start:end], text_ids(captions))
    loss = gathered_loss(
        views, texts, captions, torch.tensor(10.0), num_processes=accelerator.num_processes
    )
    accelerator.backward(loss)
    grads = {name: p.grad.tolist() for name, p in accelerator.unwrap_model(net).named_parameters()}
    losses = accelerator.gather(loss.detach()[None]).tolist()
    if accelerator.is_main_process:
        with open(out, "w", encoding="utf-8") as file:
            json.dump(
                {"losses": losses, "grads": grads, "processes": accelerator.num_processes}, file
            )
    # The DDP model released, then the process group destroyed, before the interpreter exits:
    # a DDP model still alive at exit aborted a rank about one run in four ("terminate called
    # without an active exception", SIGABRT after the JSON was written).
    del net
    accelerator.free_memory()
    accelerator.end_training()


if __name__ == "__main__":
    main(sys.argv[1])
