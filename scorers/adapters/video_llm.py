"""Video LLMs (LLaVA-NeXT-Video, LLaVA-OneVision, Qwen2-VL, Video-LLaVA, ...) as scorers, without generation.

Two modes, both deterministic:

``likelihood``
    The log-probability of each text as the answer to "describe the video", given the video:
    ``logprob_sum`` and ``logprob_mean`` over its tokens; the score is the mean (higher is better).
``choice``
    VITATECS' prompt for video LLMs: "Which of the following best describes the content of the
    video: (A) ... (B) ... Respond with a single letter (A or B)." scored from the next-token
    logits of the option letters, no generation. Every cyclic order of the options is asked
    (both orders for a caption and one foil), and a text's score is its letter's probability
    (softmax over the option letters) averaged over orders, so position bias cancels.

The video prefix (everything up to and including the video tokens) is encoded once per view;
each continuation runs on top of its KV cache, which is cropped back after use.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from foilkit.scorers.adapters import register_adapter
from foilkit.scorers.adapters._features import likelihood_details, token_logprobs
from foilkit.scorers.adapters.base import RequestAdapter
from foilkit.scorers.requests import TextScores, TextsRequest

LETTERS = "ABCDEFGHIJ"
CHOICE_SYSTEM = (
    "You are given a short video clip and {count} sentences. "
    "Select the sentence that best describes the content of the video."
)
CHOICE_QUESTION = (
    "Which of the following best describes the content of the video: {options} "
    "Respond with a single letter ({letters})."
)
LIKELIHOOD_QUESTION = "Describe the video in one sentence."
_COUNTS = {2: "two", 3: "three", 4: "four", 5: "five"}
_MARKER = "<<foilkit-question>>"


def choice_question(options: Sequence[str]) -> str:
    """VITATECS' multiple-choice question for ``options`` in the order given."""
    letters = LETTERS[: len(options)]
    listed = " ".join(f"({letter}) {option}" for letter, option in zip(letters, options))
    spoken = letters[0] if len(letters) == 1 else ", ".join(letters[:-1]) + f" or {letters[-1]}"
    return CHOICE_QUESTION.format(options=listed, letters=spoken)


@register_adapter("video-llm")
class VideoLLMAdapter(RequestAdapter):
    """``AutoModelForImageTextToText`` + ``AutoProcessor`` with video input; modes ``likelihood`` and ``choice``."""

    modes = ("likelihood", "choice")
    score_kind = "probability"  # choice: option probabilities; likelihood: log-probabilities (higher is better)

    def __init__(self, model_id: str, **kwargs: Any):
        super().__init__(model_id, **kwargs)
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self.model = self._load(AutoModelForImageTextToText)
        self.processor = AutoProcessor.from_pretrained(model_id, **self._pretrained_kwargs())
        self.tokenizer = self.processor.tokenizer
        self._letter_ids = [self._token_ids(letter) for letter in LETTERS]

    @classmethod
    def matches(cls, config: Any) -> bool:
        from transformers.models.auto.modeling_auto import (
            MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
        )

        return getattr(config, "model_type", None) in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES

    def describe(self) -> dict[str, Any]:
        prompt = LIKELIHOOD_QUESTION if self.mode == "likelihood" else CHOICE_QUESTION
        return {**super().describe(), "prompt": prompt}

    def _token_ids(self, letter: str) -> list[int]:
        """Single-token spellings of an option letter as an answer's first token ("A", " A")."""
        ids = {
            tuple(self.tokenizer(variant, add_special_tokens=False)["input_ids"])
            for variant in (letter, " " + letter)
        }
        return sorted({pieces[0] for pieces in ids if len(pieces) == 1})

    def _prompt(self, count: int | None) -> tuple[str, str]:
        """The chat prompt split around the question: (head with the video, tail to the answer)."""
        messages = []
        if count is not None:
            system = CHOICE_SYSTEM.format(count=_COUNTS.get(count, str(count)))
            messages.append({"role": "system", "content": [{"type": "text", "text": system}]})
        messages.append(
            {"role": "user", "content": [{"type": "video"}, {"type": "text", "text": _MARKER}]}
        )
        rendered = self.processor.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False
        )
        head, marker, tail = rendered.partition(_MARKER)
        if not marker:
            raise ValueError(f"{self.model_id}: the chat template dropped the question text")
        return head, tail

    def _ids(self, text: str) -> torch.Tensor:
        return torch.tensor(
            [self.tokenizer(text, add_special_tokens=False)["input_ids"]], device=self.device
        )

    def _encode_prefix(self, frames: torch.Tensor, prefix: str) -> tuple[Any, torch.Tensor]:
        """Run the video prefix once: its KV cache and its last position's logits."""
        inputs = self.processor(text=[prefix], videos=[frames], return_tensors="pt").to(self.device)
        for key, value in inputs.items():
            if torch.is_floating_point(value):
                inputs[key] = value.to(self.dtype)
        output = self.model(**inputs, use_cache=True)
        return output.past_key_values, output.logits[0, -1]

    def _continue(self, cache: Any, ids: torch.Tensor) -> torch.Tensor:
        """Logits of a continuation on top of the prefix cache, then crop the cache back."""
        logits = self.model(input_ids=ids, past_key_values=cache, use_cache=True).logits[0]
        cache.crop(-ids.shape[1])
        return logits

    @torch.inference_mode()
    def score(self, requests: Sequence[TextsRequest]) -> list[TextScores]:
        results: list[TextScores] = []
        key, cache, last_logits = None, None, None
        for request in requests:
            if self.mode == "likelihood":
                head, tail = self._prompt(None)
                prefix = head + LIKELIHOOD_QUESTION + tail
            else:
                head, tail = self._prompt(len(request.texts))
                prefix = head
            # consecutive requests on the same view (caption group, proficiency group) share a prefix
            if key != (id(request.frames), prefix):
                key, (cache, last_logits) = (
                    (id(request.frames), prefix),
                    self._encode_prefix(request.frames, prefix),
                )
            if self.mode == "likelihood":
                results.append(self._likelihood(cache, last_logits, request.texts))
            else:
                results.append(self._choice(cache, request.texts, tail))
        return results

    def _likelihood(
        self, cache: Any, last_logits: torch.Tensor, texts: Sequence[str]
    ) -> TextScores:
        logprobs = []
        for text in texts:
            ids = self._ids(text)
            logits = torch.cat([last_logits[None], self._continue(cache, ids)[:-1]])
            logprobs.append(token_logprobs(logits, ids[0]).cpu())
        details = likelihood_details(logprobs)
        return TextScores(details["logprob_mean"], details)

    def _choice(self, cache: Any, texts: Sequence[str], tail: str) -> TextScores:
        count = len(texts)
        if count > len(LETTERS):
            raise ValueError(f"choice mode takes at most {len(LETTERS)} options, got {count}")
        letter_ids = self._letter_ids[:count]
        if any(not ids for ids in letter_ids):
            raise ValueError(
                f"{self.model_id}: option letters {LETTERS[:count]} are not single tokens"
            )
        totals = torch.zeros(count)
        for shift in range(count):
            order = [(shift + k) % count for k in range(count)]  # position k shows text order[k]
            question = choice_question([texts[i] for i in order])
            logits = self._continue(cache, self._ids(question + tail))[-1].float()
            letter_logits = torch.stack([torch.logsumexp(logits[ids], 0) for ids in letter_ids])
            probabilities = letter_logits.softmax(0).cpu()
            for position, text_index in enumerate(order):
                totals[text_index] += probabilities[position]
        return TextScores(tuple((totals / count).tolist()))
