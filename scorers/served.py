"""Video LLMs served behind an OpenAI-compatible API (vLLM, SGLang, hosted models) as scorers.

Where a model runs is a backend, separate from what is asked of it: a served video LLM is asked
the same chat messages (:mod:`foilkit.scorers.prompts`), in the same modes, and its answers are
read by the same code (:mod:`foilkit.scorers.generate`) as the in-process one
(:class:`foilkit.scorers.adapters.video_llm.VideoLLMAdapter`); only how a request reaches the
model differs (how frames are sent: :mod:`foilkit.scorers.openai_client`):

* ``generate``: chat completions with ``n`` = the samples, ``seed`` =
  :meth:`~foilkit.scorers.requests.GenerateRequest.sample_seed`, ``temperature``, ``top_p``,
  ``max_tokens``, and (``sampler_params``, default on) ``top_k=-1`` and
  ``repetition_penalty=1`` as extra body, since vLLM otherwise applies a checkpoint's
  ``generation_config.json`` and :class:`~foilkit.scorers.requests.Decoding` runs no other
  sampler.
* ``choice``: one greedy token with ``logprobs`` / ``top_logprobs``; each option letter's
  probability is the sum over the first token's top log-probabilities spelling it (``A``,
  `` A``), renormalised among the letters, as the in-process choice mode does over its letter
  tokens. A letter outside the server's top ``top_logprobs`` tokens counts 0.
* ``likelihood`` (and ``choice`` on a row's own question): the answer is written as the
  assistant turn and scored from the prompt's log-probabilities (vLLM's extra body
  ``prompt_logprobs``, with ``continue_final_message`` for ``continuation="answer"``): the
  answer's tokens are those past the tokens of the same prompt with an empty answer. A server
  that returns none is refused with one line.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

import torch

from foilkit.scorers.modes import LIKELIHOOD_QUESTION, Ask, Fault, FirstTokens, VideoLLM
from foilkit.scorers.openai_client import (
    REFUSED,
    Call,
    Reply,
    ServedClient,
    ServerBackend,
    served_sizing,
)
from foilkit.scorers.options import ScoreOptions, server_backend
from foilkit.scorers.prompts import DEFAULT_PROMPT, choice_messages, fit_system_turn
from foilkit.scorers.requests import GenerateRequest, Generations, TextsRequest

logger = logging.getLogger(__name__)

#: The system turn is sent as one string: every chat-completions server takes that form.
SYSTEM_FORM = "string"
#: What ``run.json`` records as a served model's dtype: the server's business, not foilkit's.
SERVED_DTYPE = "not applicable (served)"


class ServerCapabilityError(ValueError):
    """The server does not return what the mode needs (log-probabilities): a user error."""


class ServedVideoLLM(VideoLLM):
    """The ``video-llm`` adapter's ``openai`` backend (:class:`~foilkit.scorers.modes.VideoLLM`
    holds its modes and settings): a model behind an OpenAI-compatible server (``model_id``: the
    served model's name).

    Args:
        server: the server and how to talk to it.
        preprocess: ``reference`` sizes the frames by qwen-vl-utils before sending only for a
            served Qwen-VL checkpoint (:func:`served_sizing`); otherwise the server's processor
            sizes them, recorded with why.
        the rest: :class:`~foilkit.scorers.modes.VideoLLM`'s.
    """

    @classmethod
    def serving(cls, options: ScoreOptions) -> ServerBackend:
        """The server of a run's ``options`` (``--base-url``, ``--api-key-env``, ...), its key
        checked before any work; the run passes it to each process's instance as ``server``."""
        server = server_backend(options)
        server.check_key()
        return server

    def __init__(
        self, model_id: str, *, server: ServerBackend, preprocess: str | None = None, **kwargs: Any
    ):
        kwargs.pop("placement", None)
        super().__init__(model_id, **kwargs)
        #: the protocol's frame sizing: qwen-vl-utils' (``preprocess="reference"``) applied
        #: before sending where the served name names a Qwen-VL checkpoint, else the server's
        #: own processor's, recorded with why (never silently dropped)
        self.preprocess = preprocess
        self.sizing = served_sizing(model_id, preprocess)
        if "why" in self.sizing:
            logger.warning("%s", self.sizing["why"])
        self.server = server
        self.client = ServedClient(model_id, server, self.sizing)

    def system_form(self) -> str:
        return SYSTEM_FORM

    def _describe(self) -> dict[str, Any]:
        """With the server and how it is sent to."""
        common = {
            **super()._describe(),
            "backend": {
                "name": "openai",
                "served_model": self.model_id,
                "frames_as": self.server.frames_as,
                "image_format": self.server.image_format,
                "frame_times": self.server.frame_times,
                "sizing": self.sizing,
                "sampler_params": self.server.sampler_params,
            },
        }
        if self.preprocess not in (None, "default"):
            common["preprocess"] = self.preprocess
        return common

    def backend_record(self) -> dict[str, Any]:
        """The server, its settings, what was sent (the frames of each request sent: their count
        and size as sent, whether their times were, counted by requests; how they were sized
        and timed) and spent."""
        return {
            **self.server.to_record(),
            "served_model": self.model_id,
            "sizing": self.sizing,
            "frames_sent": [
                {"frames": count, "height": height, "width": width, "timed": timed}
                | {"requests": requests}
                for (count, height, width, timed), requests in sorted(
                    self.client.frames_sent.items()
                )
            ],
            **self.client.usage_record(),
        }

    def dtype_record(self) -> str:
        """What ``run.json`` says of the dtype: not applicable, the server runs the model."""
        return SERVED_DTYPE

    # --- the modes ---------------------------------------------------------------------------

    def _sampler(self) -> dict[str, Any]:
        return {"top_k": -1, "repetition_penalty": 1.0} if self.server.sampler_params else {}

    def generate(self, requests: Sequence[GenerateRequest]) -> list[Generations]:
        """Answers to each request through chat completions: ``n`` samples drawn from the
        request's own seed, surrounding spaces stripped."""
        calls = []
        for request in requests:
            decoding = request.decoding
            params = {
                "max_tokens": decoding.max_new_tokens,
                "n": decoding.num_samples,
                "temperature": decoding.temperature,
                "top_p": decoding.top_p,
                "seed": request.sample_seed(),
            }
            messages = tuple(fit_system_turn(list(request.messages), SYSTEM_FORM))
            extra, frames, times = self._sampler(), request.frames, request.timestamps
            calls.append(Call(messages, frames, params, extra, decoding.num_samples, times))
        return [
            Generations(tuple(text.strip() for text in reply.texts), fault=reply.fault)
            for reply in self.client.send_all(calls)
        ]

    def _first_token_call(self, messages: Sequence[dict[str, Any]], request: TextsRequest) -> Call:
        """A one-token greedy answer about ``request``'s view with its ``top_logprobs`` (choice
        and entail modes)."""
        params = {
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": True,
            "top_logprobs": self.server.top_logprobs,
        }
        return Call(
            tuple(messages), request.frames, params, self._sampler(), timestamps=request.timestamps
        )

    def first_tokens(self, asks: Sequence[Ask]) -> list[FirstTokens | Fault]:
        """Per ask, a one-token greedy answer's top log-probabilities: each answer's spellings
        (with and without a leading space) pooled, as the in-process model pools its letter
        tokens; an answer outside the server's top ``top_logprobs`` tokens counts 0."""
        calls = [
            self._first_token_call(
                choice_messages(
                    self.prompt or DEFAULT_PROMPT, ask.question, ask.count, SYSTEM_FORM
                ),
                ask.request,
            )
            for ask in asks
        ]
        return [
            fault if (fault := self._fault([reply], "top_logprobs")) else self._first(reply, ask)
            for ask, reply in zip(asks, self.client.send_all(calls))
        ]

    def _fault(self, replies: Sequence[Reply], needs: str) -> tuple[str, str] | None:
        """Why ``replies`` score nothing: a request that failed alone, or an answer without
        text and without what the mode reads (``needs``: ``top_logprobs``,
        ``prompt_logprobs``): a refusal; ``None``: they can be read."""
        for reply in replies:
            if reply.fault is not None:
                return reply.fault
            if reply.refusals and getattr(reply, needs) is None:
                return (
                    f"{self.model_id!r} at {self.server.base_url or 'OpenAI'} answered without "
                    "text or log-probabilities (a refusal, a content filter or a tool call)",
                    REFUSED,
                )
        return None

    def _first(self, reply: Reply, ask: Ask) -> FirstTokens:
        """The log-probabilities of ``ask``'s one-token answers (option letters; ``Yes``/``No``)
        from the first answer token's top log-probabilities (each answer's tokens with and
        without a leading space pooled)."""
        if reply.top_logprobs is None:
            raise ServerCapabilityError(
                f"{self.server.base_url or 'OpenAI'} returned no logprobs for {self.model_id!r}'s "
                f"first answer token: {self.mode} mode reads the answers' probabilities from "
                "them (vLLM and OpenAI's chat completions return them); use --mode generate"
            )
        letters = list(ask.answers)
        logits = []
        for letter in letters:
            found = [lp for token, lp in reply.top_logprobs.items() if token.strip() == letter]
            logits.append(_logsumexp(found))
        if all(value == -math.inf for value in logits):
            raise ServerCapabilityError(
                f"none of the answers {', '.join(letters)} is among the "
                f"{len(reply.top_logprobs)} most likely first tokens the server returned "
                f"({sorted(reply.top_logprobs)[:5]}...): raise --top-logprobs, or use "
                "--mode generate"
            )
        return FirstTokens(torch.tensor(logits, dtype=torch.float64))

    def answer_logprobs(self, requests: Sequence[TextsRequest]) -> list[list[torch.Tensor] | Fault]:
        """Per request, per text: the log-probabilities of its answer's tokens, read from the
        prompt log-probabilities of the prompt with the answer written as the assistant turn,
        past the tokens of the same prompt with an empty answer (a request whose replies score
        nothing: its :data:`~foilkit.scorers.modes.Fault`)."""
        whole = self.continuation == "turn" and self.mode == "likelihood"
        extra = {
            **self._sampler(),
            "prompt_logprobs": 0,
            "add_generation_prompt": False,
            "continue_final_message": not whole,
        }
        params = {"max_tokens": 1, "temperature": 0.0}
        calls, shapes = [], []
        for request in requests:
            asked = request.question or LIKELIHOOD_QUESTION
            answers = request.answers if request.question is not None else request.texts
            base = choice_messages(self.prompt or DEFAULT_PROMPT, asked, None, SYSTEM_FORM)
            prefix = [*base, {"role": "assistant", "content": ""}]
            prefix_extra = {**extra, "continue_final_message": True}
            calls.append(
                Call(tuple(prefix), request.frames, params, prefix_extra, 1, request.timestamps)
            )
            for answer in answers:
                messages = [*base, {"role": "assistant", "content": answer}]
                calls.append(
                    Call(tuple(messages), request.frames, params, extra, 1, request.timestamps)
                )
            shapes.append(len(answers))
        replies = iter(self.client.send_all(calls))
        results: list[list[torch.Tensor] | Fault] = []
        for count in shapes:
            mine = [next(replies) for _ in range(count + 1)]
            fault = self._fault(mine, "prompt_logprobs")
            if fault is not None:
                results.append(fault)
                continue
            prefix = self._prompt_tokens(mine[0])
            scored = []
            for reply in mine[1:]:
                tokens = self._prompt_tokens(reply)
                common = 0
                while (
                    common < min(len(prefix), len(tokens))
                    and prefix[common][0] == tokens[common][0]
                ):
                    common += 1
                if common == len(tokens):
                    raise ServerCapabilityError(
                        f"{self.model_id}: the server's chat template wrote no answer tokens"
                    )
                scored.append(torch.tensor([lp for _, lp in tokens[common:]], dtype=torch.float64))
            results.append(scored)
        return results

    def _prompt_tokens(self, reply: Reply) -> list[tuple[int, float]]:
        if reply.prompt_logprobs is None:
            raise ServerCapabilityError(
                f"{self.server.base_url or 'OpenAI'} returned no prompt log-probabilities for "
                f"{self.model_id!r}: likelihood scoring (and choice on a row's own question) "
                "needs them, which vLLM returns (extra body prompt_logprobs); use --mode "
                "generate or choice"
            )
        return [
            (int(entry[0]), float(entry[1])) if entry else (-1, 0.0)
            for entry in reply.prompt_logprobs
        ]


def _logsumexp(values: list[float]) -> float:
    if not values:
        return -math.inf
    top = max(values)
    return top + math.log(sum(math.exp(value - top) for value in values))
