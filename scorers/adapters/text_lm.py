"""Text-only causal language models (GPT-2, OPT, ...): ViLMA's unimodal baselines.

A text's score is its perplexity under the LM, ``exp`` of the mean negative log-likelihood of
its tokens, lower is better. The video is never looked at, which is the point: a foil that an
LM already finds implausible is solvable without the video.
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


@register_adapter("text-lm")
class TextLMAdapter(RequestAdapter):
    """Perplexity of each text under a causal LM (the first token conditioned on BOS)."""

    score_kind = "perplexity"
    needs_video = False

    def __init__(self, model_id: str, **kwargs: Any):
        super().__init__(model_id, **kwargs)
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.model = self._load(AutoModelForCausalLM)
        self.tokenizer = AutoTokenizer.from_pretrained(model_id, **self._pretrained_kwargs())
        start = (
            self.tokenizer.bos_token_id
            if self.tokenizer.bos_token_id is not None
            else self.tokenizer.eos_token_id
        )
        if start is None:
            raise ValueError(
                f"{model_id}: the tokenizer has neither a BOS nor an EOS token to condition the first token on"
            )
        self._start = start

    @classmethod
    def matches(cls, config: Any) -> bool:
        from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

        return getattr(config, "model_type", None) in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    @torch.inference_mode()
    def score(self, requests: Sequence[TextsRequest]) -> list[TextScores]:
        texts = list(dict.fromkeys(text for request in requests for text in request.texts))
        logprobs = dict(zip(texts, self._logprobs(texts)))
        out = []
        for request in requests:
            per_text = [logprobs[text] for text in request.texts]
            details = likelihood_details(per_text)
            perplexity = tuple(math.exp(-mean) for mean in details["logprob_mean"])
            out.append(TextScores(perplexity, details))
        return out

    def _logprobs(self, texts: list[str]) -> list[torch.Tensor]:
        encoded = [
            [self._start, *self.tokenizer(text, add_special_tokens=False)["input_ids"]]
            for text in texts
        ]
        width = max(len(ids) for ids in encoded)
        input_ids = torch.zeros(len(encoded), width, dtype=torch.long)
        mask = torch.zeros_like(input_ids)
        for row, ids in enumerate(encoded):
            input_ids[row, : len(ids)], mask[row, : len(ids)] = torch.tensor(ids), 1
        logits = self.model(
            input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device)
        ).logits.cpu()
        scores = token_logprobs(logits[:, :-1], input_ids[:, 1:])
        return [scores[row, : len(ids) - 1] for row, ids in enumerate(encoded)]
