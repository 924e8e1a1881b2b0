"""ViLMA's text-only perplexity: the ``vilma`` reduction of ``text-lm``, its unimodal baselines."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def run_py_perplexities(logits: Any, input_ids: Any, mask: Any, ignored: int) -> Any:
    """ViLMA's ``models/text/run.py`` (its protocols' commit, lines 73-102), quirks included: the
    text as the tokenizer encodes it (GPT-2: no BOS, so its first token is never scored; OPT: its
    BOS ``</s>``); ``CrossEntropyLoss(ignore_index=pad)`` over the tokens after the first, with
    ``ignored`` = pad: the tokenizer's pad token, else EOS (run.py sets GPT-2's pad to EOS); the
    summed NLL divided by ALL the text's tokens (``attention_mask.sum()``, the unscored first
    token or BOS included), then ``exp``. A real token equal to pad (GPT-2: a literal
    ``<|endoftext|>``) is left out of the sum but still counted in the divisor. run.py pads on
    the right, so a text's score does not depend on its batch. It runs in the logits' dtype, as
    run.py's does (float16 under ViLMA's paper protocol): float16 perplexities tie where run.py's
    tie, and the metrics count those ties as ties."""
    import torch  # a text LM's scoring needs it; building ViLMA does not

    labels = input_ids[:, 1:].masked_fill(mask[:, 1:] == 0, ignored)
    nll = torch.nn.functional.cross_entropy(
        logits[:, :-1].reshape(-1, logits.size(-1)),
        labels.reshape(-1),
        reduction="none",
        ignore_index=ignored,
    ).reshape_as(labels)
    return (nll.sum(dim=1) / mask.sum(dim=-1)).exp()


#: The perplexity reductions, by name (``text-lm``'s ``reduction`` protocol setting).
REDUCTIONS: dict[str, Callable[..., Any]] = {"vilma": run_py_perplexities}
