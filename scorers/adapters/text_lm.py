"""Text-only causal language models (GPT-2, OPT, ...): a benchmark's unimodal baselines.

A text's score is a perplexity under the LM, lower is better. The video is never looked at,
which is the point: a foil that an LM already finds implausible is solvable without the video.
``reduction`` says how token log-probabilities become that perplexity:

``mean`` (default)
    ``exp`` of the mean negative log-likelihood of every token of the text, the first one
    conditioned on BOS (EOS when the tokenizer has no BOS), whatever the tokenizer adds itself.
a benchmark's (its spec's ``reductions``, found by name through the registry: ViLMA's ``vilma``)
    its reference code's: the text as the tokenizer encodes it, padded on the right with the
    pad token (EOS where none), which is never scored (nor in the likelihood details); the
    benchmark's function turns the logits, ids, attention mask and pad id into perplexities.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from foilkit.scorers.adapters import register_adapter
from foilkit.scorers.adapters._features import likelihood_details, token_logprobs
from foilkit.scorers.adapters.base import RequestAdapter
from foilkit.scorers.parsers import declared, declared_tables
from foilkit.scorers.requests import TextScores, TextsRequest

#: foilkit's own reduction, the default; a benchmark's are on its spec.
MEAN = "mean"


def reference_reduction(name: str) -> Callable[..., Any] | None:
    """The perplexity function of a benchmark's reduction ``name`` (``None``: :data:`MEAN`)."""
    reduction = None if name == MEAN else declared("reductions", name)
    if reduction is None and name != MEAN:
        names = [MEAN, *(known for table in declared_tables("reductions") for known in table)]
        raise ValueError(f"unknown reduction {name!r}; choose from {names}")
    return reduction


@register_adapter("text-lm")
class TextLMAdapter(RequestAdapter):
    """Perplexity of each text under a causal LM; ``reduction`` is ``mean`` or a benchmark's."""

    score_kind = "perplexity"
    needs_video = False
    options = ("reduction",)
    spreads = True

    def __init__(self, model_id: str, *, reduction: str | None = None, **kwargs: Any):
        super().__init__(model_id, **kwargs)
        reduction = reduction or MEAN
        self._reference = reference_reduction(reduction)
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.reduction = reduction
        self.model = self._load(AutoModelForCausalLM)
        self.tokenizer = self._pretrained(AutoTokenizer)
        bos, eos, pad = (
            self.tokenizer.bos_token_id,
            self.tokenizer.eos_token_id,
            self.tokenizer.pad_token_id,
        )
        self._start = eos if bos is None else bos
        if self._start is None:
            raise ValueError(
                f"{model_id}: the tokenizer has neither a BOS nor an EOS token to condition the "
                "first token on"
            )
        # a reference reduction's ignored id: the tokenizer's pad, or EOS where it has none
        self._ignored = eos if pad is None else pad
        if self._reference is not None and self._ignored is None:
            raise ValueError(
                f"{model_id}: reduction {reduction!r} needs a pad or EOS token to ignore"
            )

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
            if self._reference is not None:
                details["num_input_tokens"] = tuple(float(count) for _, count, _ in per_text)
                perplexity = tuple(float(reference) for _, _, reference in per_text)
            else:
                perplexity = tuple(math.exp(-mean) for mean in details["logprob_mean"])
            out.append(TextScores(perplexity, details))
        return out

    def _encode(self, text: str) -> list[int]:
        if self._reference is not None:  # as the tokenizer encodes it: its own special tokens
            ids = self.tokenizer(text)["input_ids"]
            if not ids:
                raise ValueError(
                    f"text {text!r} has no tokens: its {self.reduction} perplexity is 0/0"
                )
            return ids
        return [self._start, *self.tokenizer(text, add_special_tokens=False)["input_ids"]]

    def _scored_tokens(self, texts: list[str]) -> list[tuple[torch.Tensor, int, float | None]]:
        """Per text: the log-probabilities of its scored tokens, its number of input tokens and
        (a benchmark's reduction) its perplexity."""
        encoded = [self._encode(text) for text in texts]
        width = max(len(ids) for ids in encoded)
        input_ids = torch.zeros(len(encoded), width, dtype=torch.long)
        mask = torch.zeros_like(input_ids)
        for row, ids in enumerate(encoded):  # padded on the right, as the references pad
            input_ids[row, : len(ids)], mask[row, : len(ids)] = torch.tensor(ids), 1
        logits = self.model(
            input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device)
        ).logits.cpu()
        scores = token_logprobs(logits[:, :-1], input_ids[:, 1:])
        reference = None
        if self._reference is not None:
            reference = self._reference(logits, input_ids, mask, self._ignored)
        out = []
        for row, ids in enumerate(encoded):
            logprobs = scores[row, : len(ids) - 1]
            if reference is not None:  # the reference's ignore_index=pad
                logprobs = logprobs[torch.tensor(ids[1:], dtype=torch.long) != self._ignored]
            out.append((logprobs, len(ids), None if reference is None else float(reference[row])))
        return out
