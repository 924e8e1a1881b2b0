"""Video LLMs (LLaVA-NeXT-Video, LLaVA-OneVision, Qwen2-VL/2.5-VL, ...) as scorers, no generation.

Two modes, both deterministic:

``likelihood`` (score kind ``log_probability``)
    The log-probability of each text as the answer to "describe the video", given the video.
    The answer is written as the chat template writes an assistant turn (so a template that
    puts a space after ``ASSISTANT:`` gets one before the text), and the text's tokens are
    scored (``continuation="answer"``), or the whole turn with its closing tokens
    (``continuation="turn"``, as lmms-eval). ``reduction`` turns the token log-probabilities
    into the score: ``mean`` (default; lmms-eval's ``loglikelihood`` for LLaVA models returns
    the model's loss, i.e. minus this) or ``sum`` (the sequence log-probability). Both are kept
    in the details (``logprob_mean``, ``logprob_sum``, ``num_tokens``).
``choice`` (score kind ``probability``)
    VITATECS' prompt for video LLMs (the paper's Table 11): "Which of the following best
    describes the content of the video: (A) ... (B) ... Respond with a single letter (A or B).",
    scored from the next-token logits of the option letters, no generation. Every cyclic order
    of the options is asked (both orders for a caption and one foil), and a text's score is its
    letter's probability (softmax over the option letters) averaged over orders, so position
    bias cancels. ``prompt="lmms-eval"`` asks lmms-eval's ``vitatecs`` task question instead
    (no system prompt; options on their own lines; "Please response with a single letter").

Token ids: the model sees exactly the ids of the whole rendered prompt (chat template, video
placeholder, question, answer) tokenized at once. The video prefix (everything up to the
question in ``choice`` mode, up to the answer in ``likelihood`` mode) is encoded once per view
and each continuation runs on top of its KV cache, which is cropped back after use; the
continuation's ids are the whole prompt's ids past the prefix's, so a SentencePiece tokenizer
(LLaVA-NeXT-Video's Llama/Vicuna one) does not gain a ``▁`` at the split. Where a tokenizer merges
across the split, that text runs in one forward over the whole prompt instead.

Time axis: models that place frames in time (Qwen2.5-VL's temporal position ids, Qwen3-VL's
frame timestamps) get the view's real sampling interval through ``video_metadata`` instead
of the processor's 24 fps default. The frames are presented in the order shown, starting at
the earliest sampled time and one sampling interval apart, so a ``reversed`` or ``shuffled``
view looks like a video playing that order at the real rate (temporal ids increase).
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
LMMS_EVAL_QUESTION = (
    "Which of the following best describes the content of the video:{options}\n"
    "Please response with a single letter ({letters}):"
)
LIKELIHOOD_QUESTION = "Describe the video in one sentence."
#: How likelihood mode turns token log-probabilities into one score.
REDUCTIONS = ("mean", "sum")
#: Choice-mode prompts by name: VITATECS' paper (Table 11: system prompt, options inline) and
#: lmms-eval's ``vitatecs`` task (``lmms_eval/tasks/vitatecs/utils.py``: no system prompt,
#: options on their own lines, capitalised with a full stop).
CHOICE_PROMPTS = ("vitatecs", "lmms-eval")
#: What likelihood mode scores of the answer: the text's own tokens (``answer``), or the whole
#: assistant turn as the template renders it, closing tokens included (``turn``: what
#: lmms-eval's ``loglikelihood`` scores for LLaVA models).
CONTINUATIONS = ("answer", "turn")
_COUNTS = {2: "two", 3: "three", 4: "four", 5: "five"}
_MARKER = "<<foilkit-question>>"


def _spoken(letters: str) -> str:
    return letters[0] if len(letters) == 1 else ", ".join(letters[:-1]) + f" or {letters[-1]}"


def choice_question(options: Sequence[str]) -> str:
    """VITATECS' multiple-choice question for ``options`` in the order given."""
    letters = LETTERS[: len(options)]
    listed = " ".join(f"({letter}) {option}" for letter, option in zip(letters, options))
    return CHOICE_QUESTION.format(options=listed, letters=_spoken(letters))


def lmms_eval_question(options: Sequence[str]) -> str:
    """lmms-eval's VITATECS question (``format_question_and_answer`` + its ``post_prompt``) for
    ``options`` in the order given; each option ends with a full stop and is ``capitalize``d."""
    letters = LETTERS[: len(options)]
    written = [
        (option if option.endswith(".") else option + ".").capitalize() for option in options
    ]
    listed = "".join(f" \n({letter}) {option}" for letter, option in zip(letters, written))
    return LMMS_EVAL_QUESTION.format(options=listed, letters=_spoken(letters))


def presented_metadata(timestamps: Sequence[float]) -> dict[str, Any]:
    """The ``video_metadata`` of frames shown in order at their real sampling interval.

    The interval is the sampled span over the gaps between frames (``(last - first) / (T - 1)``
    of the sorted timestamps), whatever order the frames are shown in; frame ``k`` of the shown
    order is placed at ``first + k * interval``. transformers reads the rate as
    ``VideoMetadata.sampled_fps`` (Qwen2.5-VL's ``second_per_grid_ts``) and the times as
    ``frames_indices / fps`` (Qwen3-VL's timestamps). A single frame has no interval: 1 fps.
    """
    count = len(timestamps)
    first, last = min(timestamps), max(timestamps)
    fps = (count - 1) / (last - first) if count > 1 and last > first else 1.0
    return {
        "total_num_frames": count,
        "fps": fps,
        "frames_indices": [first * fps + k for k in range(count)],
        "duration": count / fps,
    }


def _choose(name: str, value: str | None, choices: tuple[str, ...]) -> str:
    """``value`` checked against ``choices``; the first when ``None``."""
    if value is None:
        return choices[0]
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose from {list(choices)}")
    return value


def _common_length(a: Sequence[int], b: Sequence[int]) -> int:
    length = 0
    for x, y in zip(a, b):
        if x != y:
            break
        length += 1
    return length


@register_adapter("video-llm")
class VideoLLMAdapter(RequestAdapter):
    """``AutoModelForImageTextToText`` + ``AutoProcessor`` with video input; modes ``likelihood``
    and ``choice``.

    Args:
        reduction: likelihood mode only: ``mean`` (default) or ``sum`` of the token
            log-probabilities. Choice mode scores option probabilities and takes none.
        continuation: likelihood mode only: ``answer`` (default; the text's tokens) or
            ``turn`` (the whole assistant turn, closing tokens included, as lmms-eval).
        prompt: choice mode only: ``vitatecs`` (default; the paper's prompt) or ``lmms-eval``.
    """

    modes = ("likelihood", "choice")
    options = ("reduction",)
    spreads = True
    score_kind = "log_probability"  # the first mode's; each instance sets its own mode's

    def __init__(
        self,
        model_id: str,
        *,
        reduction: str | None = None,
        continuation: str | None = None,
        prompt: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(model_id, **kwargs)
        if self.mode == "choice":
            for name, value in (("reduction", reduction), ("continuation", continuation)):
                if value is not None:
                    raise ValueError(
                        f"{name}={value!r} applies to likelihood mode only; choice mode scores "
                        "the option letters' probabilities"
                    )
            self.score_kind = "probability"
            prompt = _choose("prompt", prompt, CHOICE_PROMPTS)
        else:
            if prompt is not None:
                raise ValueError(
                    f"prompt={prompt!r} applies to choice mode only; likelihood mode asks "
                    f"{LIKELIHOOD_QUESTION!r}"
                )
            reduction = _choose("reduction", reduction, REDUCTIONS)
            continuation = _choose("continuation", continuation, CONTINUATIONS)
            self.score_kind = "log_probability"
        self.reduction, self.continuation, self.prompt = reduction, continuation, prompt
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
        if self.mode == "likelihood":
            return {
                **super().describe(),
                "prompt": LIKELIHOOD_QUESTION,
                "reduction": self.reduction,
                "continuation": self.continuation,
            }
        question = CHOICE_QUESTION if self.prompt == "vitatecs" else LMMS_EVAL_QUESTION
        return {**super().describe(), "prompt": question, "prompt_name": self.prompt}

    # --- token ids ---------------------------------------------------------------------------

    def encode(self, text: str) -> list[int]:
        """Ids of ``text`` tokenized whole, as the processor tokenizes a prompt (special tokens
        on)."""
        return list(self.tokenizer(text)["input_ids"])

    def _token_ids(self, letter: str) -> list[int]:
        """Single-token spellings of an option letter as an answer's first token: "A", " A", and
        the token the chat template's assistant turn starts with."""
        ids = {
            tuple(self.tokenizer(variant, add_special_tokens=False)["input_ids"])
            for variant in (letter, " " + letter)
        }
        found = {pieces[0] for pieces in ids if len(pieces) == 1}
        answer = self.answer_token(letter)
        if answer is not None:
            found.add(answer)
        return sorted(found)

    def answer_token(self, letter: str) -> int | None:
        """The first token of ``letter`` written as the chat template writes an answer, if that
        token spells the letter alone; ``None`` when the template renders no answer."""
        messages = self._messages(LIKELIHOOD_QUESTION, None)
        prompt = self._render(messages)
        answer = self._answer_text(messages, prompt, letter)
        if answer is None:
            return None
        prompt_ids, ids = self.encode(prompt), self.encode(prompt + answer)
        if ids[: len(prompt_ids)] != prompt_ids or len(ids) == len(prompt_ids):
            return None
        first = ids[len(prompt_ids)]
        return first if self.tokenizer.decode([first]).strip() == letter else None

    # --- prompts -----------------------------------------------------------------------------

    def _messages(self, question: str, count: int | None) -> list[dict[str, Any]]:
        messages = []
        if count is not None and self.prompt == "vitatecs":
            system = CHOICE_SYSTEM.format(count=_COUNTS.get(count, str(count)))
            messages.append({"role": "system", "content": [{"type": "text", "text": system}]})
        messages.append(
            {"role": "user", "content": [{"type": "video"}, {"type": "text", "text": question}]}
        )
        return messages

    def _render(self, messages: list[dict[str, Any]]) -> str:
        return self.processor.apply_chat_template(
            messages, add_generation_prompt=True, tokenize=False
        )

    def _answer_text(
        self, messages: list[dict[str, Any]], prompt: str, text: str, turn: bool = False
    ) -> str | None:
        """What follows ``prompt`` when the template writes ``text`` as the assistant's answer,
        up to the end of ``text`` (or of the whole turn, closing tokens included, with ``turn``)."""
        from jinja2 import TemplateError

        answered = messages + [{"role": "assistant", "content": [{"type": "text", "text": text}]}]
        try:
            rendered = self.processor.apply_chat_template(
                answered, add_generation_prompt=False, tokenize=False
            )
        except (ValueError, TemplateError):  # no assistant turns: the text follows the prompt
            return None
        if not rendered.startswith(prompt) or text not in rendered[len(prompt) :]:
            return None
        rest = rendered[len(prompt) :]
        return rest if turn else rest[: rest.index(text) + len(text)]

    def _prompt(self, count: int | None) -> tuple[str, str]:
        """The chat prompt split around the question: (head with the video, tail to the answer)."""
        rendered = self._render(self._messages(_MARKER, count))
        head, marker, tail = rendered.partition(_MARKER)
        if not marker:
            raise ValueError(f"{self.model_id}: the chat template dropped the question text")
        return head, tail

    def prompt_texts(self, texts: Sequence[str]) -> tuple[str, list[str]]:
        """The video prefix and, for each model input built from ``texts``, what follows it.

        Likelihood: one continuation per text (the answer). Choice: one per cyclic order of the
        options (the question and the template up to the answer); the first shows ``texts``
        in the order given. The model sees ``prefix + continuation`` tokenized whole.
        """
        if self.mode == "likelihood":
            messages = self._messages(LIKELIHOOD_QUESTION, None)
            prefix = self._render(messages)
            turn = self.continuation == "turn"
            answers = [self._answer_text(messages, prefix, text, turn) for text in texts]
            return prefix, [
                text if answer is None else answer for text, answer in zip(texts, answers)
            ]
        head, tail = self._prompt(len(texts))
        question = choice_question if self.prompt == "vitatecs" else lmms_eval_question
        return head, [
            question([texts[i] for i in order]) + tail for order in self._orders(len(texts))
        ]

    @staticmethod
    def _orders(count: int) -> list[list[int]]:
        """Every cyclic order of ``count`` options: position k of order ``shift`` shows text
        order[k]."""
        return [[(shift + k) % count for k in range(count)] for shift in range(count)]

    # --- the model ---------------------------------------------------------------------------

    def video_kwargs(self, request: TextsRequest) -> dict[str, Any]:
        """Processor keywords for the request's frames: their time axis when it is known."""
        if request.timestamps is None:
            return {}
        return {
            "video_metadata": [presented_metadata(request.timestamps)],
            "do_sample_frames": False,
        }

    def model_inputs(self, request: TextsRequest, text: str) -> Any:
        """The processor's inputs for ``text`` (with the video placeholder) and the request's
        frames."""
        inputs = self.processor(
            text=[text], videos=[request.frames], return_tensors="pt", **self.video_kwargs(request)
        ).to(self.device)
        for key, value in inputs.items():
            if torch.is_floating_point(value):
                inputs[key] = value.to(self.dtype)
        return inputs

    def _encode_prefix(self, request: TextsRequest, prefix: str) -> tuple[Any, torch.Tensor]:
        """Run the video prefix once: its KV cache and its last position's logits."""
        output = self.model(**self.model_inputs(request, prefix), use_cache=True)
        return output.past_key_values, output.logits[0, -1]

    def _continue(self, cache: Any, ids: list[int]) -> torch.Tensor:
        """Logits of a continuation on top of the prefix cache, then crop the cache back."""
        tensor = torch.tensor([ids], device=self.device)
        logits = self.model(input_ids=tensor, past_key_values=cache, use_cache=True).logits[0]
        cache.crop(-len(ids))
        return logits

    def _whole(self, request: TextsRequest, text: str, count: int) -> torch.Tensor:
        """Logits from one forward over ``text``, no cache: those predicting its last ``count``
        tokens, then the last position's."""
        return self.model(**self.model_inputs(request, text)).logits[0, -count - 1 :]

    @torch.inference_mode()
    def score(self, requests: Sequence[TextsRequest]) -> list[TextScores]:
        results: list[TextScores] = []
        key, cache, last_logits = None, None, None
        for request in requests:
            if self.mode == "choice" and len(request.texts) > len(LETTERS):
                raise ValueError(
                    f"choice mode takes at most {len(LETTERS)} options, got {len(request.texts)}"
                )
            prefix, continuations = self.prompt_texts(request.texts)
            prefix_ids = self.encode(prefix)
            # per continuation: its tokens, and the logits predicting each of them then the next
            scored: list[tuple[torch.Tensor, list[int]]] = []
            for continuation in continuations:
                ids = self.encode(prefix + continuation)
                if ids[: len(prefix_ids)] == prefix_ids and len(ids) > len(prefix_ids):
                    # consecutive requests on the same view (caption group, proficiency group)
                    # share a prefix: encode it once
                    view_key = (id(request.frames), request.timestamps, prefix)
                    if key != view_key:
                        cache, last_logits = self._encode_prefix(request, prefix)
                        key = view_key
                    targets = ids[len(prefix_ids) :]
                    logits = torch.cat([last_logits[None], self._continue(cache, targets)])
                else:  # the tokenizer merges across the split: the whole prompt at once
                    targets = ids[_common_length(prefix_ids, ids) :]
                    logits = self._whole(request, prefix + continuation, len(targets))
                scored.append((logits, targets))
            if self.mode == "likelihood":
                results.append(self._likelihood(scored))
            else:
                results.append(self._choice(scored, len(request.texts)))
        return results

    def _likelihood(self, scored: list[tuple[torch.Tensor, list[int]]]) -> TextScores:
        logprobs = [
            token_logprobs(logits[:-1], torch.tensor(targets, device=logits.device)).cpu()
            for logits, targets in scored
        ]
        details = likelihood_details(logprobs)
        return TextScores(details[f"logprob_{self.reduction}"], details)

    def _choice(self, scored: list[tuple[torch.Tensor, list[int]]], count: int) -> TextScores:
        letter_ids = self._letter_ids[:count]
        if any(not ids for ids in letter_ids):
            raise ValueError(
                f"{self.model_id}: option letters {LETTERS[:count]} are not single tokens"
            )
        totals = torch.zeros(count)
        for order, (logits, _) in zip(self._orders(count), scored):
            answer_logits = logits[-1].float()
            letter_logits = torch.stack(
                [torch.logsumexp(answer_logits[ids], 0) for ids in letter_ids]
            )
            probabilities = letter_logits.softmax(0).cpu()
            for position, text_index in enumerate(order):
                totals[text_index] += probabilities[position]
        return TextScores(tuple((totals / count).tolist()))
