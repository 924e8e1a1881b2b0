"""Text-only causal language models (GPT-2, OPT, ...): ViLMA's unimodal baselines.

A text's score is a perplexity under the LM, lower is better. The video is never looked at,
which is the point: a foil that an LM already finds implausible is solvable without the video.
``reduction`` says how token log-probabilities become that perplexity:

``mean`` (default)
    ``exp`` of the mean negative log-likelihood of every token of the text, the first one
    conditioned on BOS (EOS when the tokenizer has no BOS), whatever the tokenizer adds itself.
``vilma``
    ViLMA's ``models/text/run.py`` (its protocols' commit, lines 73-102), quirks included:
    the text as the tokenizer encodes it (GPT-2: no BOS, so its first token is never scored;
    OPT: its BOS ``</s>``); ``CrossEntropyLoss(ignore_index=pad)`` over the tokens after the
    first, with pad = the tokenizer's pad token, else EOS (run.py sets GPT-2's pad to EOS);
    the summed NLL divided by ALL the text's tokens (``attention_mask.sum()``, the unscored first
    token or BOS included), then ``exp``. A real token equal to pad (GPT-2: a literal
    ``<|endoftext|>`` in the text) is left out of the sum but still counted in the divisor.
    run.py pads on the right, so a text's score does not depend on its batch. The reduction
    runs in the model's dtype, as run.py's does (cross-entropy, sum, division and ``exp`` of
    float16 logits in float16 under ViLMA's paper protocol): float16 perplexities tie where
    run.py's tie, and the metrics count those ties as ties.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from foilkit.scorers.adapters import register_adapter
from foilkit.scorers.adapters._features import likelihood_details, token_logprobs
from foilkit.scorers.adapters.base import RequestAdapter
from foilkit.scorers.requests import TextScores, TextsRequest

REDUCTIONS = ("mean", "vilma")


@register_adapter("text-lm")
class TextLMAdapter(RequestAdapter):
    """Perplexity of each text under a causal LM; ``reduction`` is ``mean`` or ``vilma``."""

    score_kind = "perplexity"
    needs_video = False
    options = ("reduction",)
    spreads = True

    def __init__(self, model_id: str, *, reduction: str | None = None, **kwargs: Any):
        super().__init__(model_id, **kwargs)
        reduction = reduction or REDUCTIONS[0]
        if reduction not in REDUCTIONS:
            raise ValueError(f"unknown reduction {reduction!r}; choose from {list(REDUCTIONS)}")
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.reduction = reduction
        self.model = self._load(AutoModelForCausalLM)
        self.tokenizer = self._pretrained(AutoTokenizer)
        tokenizer = self.tokenizer
        first = tokenizer.bos_token_id
        if first is None:
            first = tokenizer.eos_token_id
        if first is None:
            raise ValueError(
                f"{model_id}: the tokenizer has neither a BOS nor an EOS token to condition the "
                "first token on"
            )
        self._start = first
        # ViLMA's ignore_index: the tokenizer's pad, or EOS where it has none (run.py, GPT-2)
        pad = tokenizer.pad_token_id
        if pad is None:
            pad = tokenizer.eos_token_id
        if reduction == "vilma" and pad is None:
            raise ValueError(f"{model_id}: reduction 'vilma' needs a pad or EOS token to ignore")
        self._ignored = pad

    @classmethod
    def matches(cls, config: Any) -> bool:
        from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

        return getattr(config, "model_type", None) in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "reduction": self.reduction}

    @torch.inference_mode()
    def score(self, requests: Sequence[TextsRequest]) -> list[TextScores]:
        texts = list(dict.fromkeys(text for request in requests for text in request.texts))
        scored = dict(zip(texts, self._scored_tokens(texts)))
        out = []
        for request in requests:
            per_text = [scored[text] for text in request.texts]
            details = likelihood_details([logprobs for logprobs, _, _ in per_text])
            if self.reduction == "vilma":
                details["num_input_tokens"] = tuple(float(count) for _, count, _ in per_text)
                perplexity = tuple(float(vilma) for _, _, vilma in per_text)
            else:
                perplexity = tuple(math.exp(-mean) for mean in details["logprob_mean"])
            out.append(TextScores(perplexity, details))
        return out

    def _encode(self, text: str) -> list[int]:
        if self.reduction == "vilma":  # as the tokenizer encodes it: its own special tokens
            ids = self.tokenizer(text)["input_ids"]
            if not ids:
                raise ValueError(f"text {text!r} has no tokens: its ViLMA perplexity is 0/0")
            return ids
        return [self._start, *self.tokenizer(text, add_special_tokens=False)["input_ids"]]

    def _scored_tokens(self, texts: list[str]) -> list[tuple[torch.Tensor, int, float | None]]:
        """Per text: the log-probabilities of its scored tokens, its number of input tokens and
        (reduction ``vilma``) run.py's perplexity."""
        encoded = [self._encode(text) for text in texts]
        width = max(len(ids) for ids in encoded)
        input_ids = torch.zeros(len(encoded), width, dtype=torch.long)
        mask = torch.zeros_like(input_ids)
        for row, ids in enumerate(encoded):  # padded on the right, as run.py's tokenizers pad
            input_ids[row, : len(ids)], mask[row, : len(ids)] = torch.tensor(ids), 1
        logits = self.model(
            input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device)
        ).logits.cpu()
        scores = token_logprobs(logits[:, :-1], input_ids[:, 1:])
        vilma = (
            self._vilma_perplexities(logits, input_ids, mask) if self.reduction == "vilma" else None
        )
        out = []
        for row, ids in enumerate(encoded):
            logprobs = scores[row, : len(ids) - 1]
            if self.reduction == "vilma":  # run.py's ignore_index=pad
                logprobs = logprobs[torch.tensor(ids[1:], dtype=torch.long) != self._ignored]
            out.append((logprobs, len(ids), None if vilma is None else float(vilma[row])))
        return out

    def _vilma_perplexities(
        self, logits: torch.Tensor, input_ids: torch.Tensor, mask: torch.Tensor
    ) -> torch.Tensor:
        """run.py's arithmetic, in the logits' dtype: ``CrossEntropyLoss(ignore_index=pad)`` over
        the tokens after the first (padding is pad there too), summed, divided by the attention
        mask's sum, ``exp``."""
        labels = input_ids[:, 1:].masked_fill(mask[:, 1:] == 0, self._ignored)
        nll = torch.nn.functional.cross_entropy(
            logits[:, :-1].reshape(-1, logits.size(-1)),
            labels.reshape(-1),
            reduction="none",
            ignore_index=self._ignored,
        ).reshape_as(labels)
        return (nll.sum(dim=1) / mask.sum(dim=-1)).exp()
