"""A video LLM's four modes, written once over the backends that run the model.

What a video LLM is asked in each mode, and how its answers become scores, is the same wherever
the model runs; a backend only answers three kinds of question (:class:`VideoLLM`'s abstract
methods):

* :meth:`~VideoLLM.generate`: answers in words to chat messages about a view's frames
  (:class:`~foilkit.scorers.requests.GenerateRequest` -> ``Generations``);
* :meth:`~VideoLLM.answer_logprobs`: the log-probabilities of each answer's tokens, written as
  the assistant's answer to a request's own question, else of each text as the answer to
  :data:`LIKELIHOOD_QUESTION`;
* :meth:`~VideoLLM.first_tokens`: for each :class:`Ask` (a question with one-token answers: the
  option letters, ``Yes``/``No``), the answers' first-token log-scores (pooled over their
  spellings), which the modes renormalise among the answers.

The modes:

``likelihood`` (score kind ``log_probability``)
    each text's answer log-probability, reduced by ``mean`` or ``sum`` (both kept as details);
``choice`` (``probability``)
    the choice question (:func:`~foilkit.scorers.prompts.question_text`) asked in every cyclic
    order of the options; a text's score is its letter's probability averaged over the orders
    (``order_<k>`` details); a request's own question: the softmax of its answers' summed
    log-probabilities;
``entail`` (``probability``)
    per text, the entailment question a benchmark declares (VELOCITI's, found by
    :func:`~foilkit.scorers.prompts.caption_question`), scored P(Yes) / (P(Yes) + P(No));
``generate`` (``probability``)
    the choice question answered in words, read by a parser (:mod:`foilkit.scorers.generate`).

Backends are registered by name in :data:`foilkit.scorers.serving.SERVING_BACKENDS`
(``--backend``): ``local``, the model in this process
(:class:`~foilkit.scorers.adapters.video_llm.VideoLLMAdapter`), and ``openai``, a model behind
an OpenAI-compatible server (:class:`~foilkit.scorers.served.ServedVideoLLM`). Another (an
offline vLLM engine) subclasses :class:`VideoLLM`, implements the three methods, and is added to
``SERVING_BACKENDS``; the modes stay as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from foilkit.answers import ENTAIL
from foilkit.scorers.adapters._features import likelihood_details
from foilkit.scorers.adapters.base import RequestAdapter
from foilkit.scorers.generate import ORDER_DETAIL, cyclic_orders, score_by_generation
from foilkit.scorers.parsers import DEFAULT_PARSER, get_parser
from foilkit.scorers.prompts import (
    LETTERS,
    asked_record,
    caption_question,
    choice_prompt,
    choice_prompt_names,
    question_text,
)
from foilkit.scorers.requests import (
    DECODING_SETTINGS,
    Decoding,
    GenerateRequest,
    Generations,
    TextScores,
    TextsRequest,
)

LIKELIHOOD_QUESTION = "Describe the video in one sentence."
#: The answers whose first tokens entail mode compares (``entail_score``'s ``encode('Yes')[0]``).
ENTAIL_ANSWERS = ("Yes", "No")
#: How likelihood mode turns token log-probabilities into one score.
REDUCTIONS = ("mean", "sum")
#: What likelihood mode scores of the answer: the text's own tokens (``answer``), or the whole
#: assistant turn as the template renders it, closing tokens included (``turn``: what
#: lmms-eval's ``loglikelihood`` scores for LLaVA models).
CONTINUATIONS = ("answer", "turn")
MODES = ("likelihood", "choice", "entail", "generate")

#: ``(message, cause)`` of a request that failed alone: its rows fail, the run goes on.
Fault = tuple[str, str]


def _choose(name: str, value: str | None, choices: tuple[str, ...]) -> str:
    """``value`` checked against ``choices``; the first when ``None``."""
    if value is None:
        return choices[0]
    if value not in choices:
        raise ValueError(f"unknown {name} {value!r}; choose from {list(choices)}")
    return value


@dataclass(frozen=True)
class ModeSettings:
    """A video LLM's settings for its mode, checked: what it scores (``score_kind``), how
    (``reduction``, ``continuation``: likelihood; ``prompt``: choice and generate), how it
    answers (``decoding``, ``parser``: generate). Settings of another mode are ``None``."""

    score_kind: str
    reduction: str | None = None
    continuation: str | None = None
    prompt: str | None = None
    decoding: Decoding | None = None
    parser: str | None = None


def mode_settings(
    mode: str,
    *,
    reduction: str | None = None,
    continuation: str | None = None,
    prompt: str | None = None,
    parser: str | None = None,
    **generating: Any,
) -> ModeSettings:
    """The settings of a video LLM in ``mode``, whatever runs it (in process or served): each
    defaulted, a setting of another mode refused (``ValueError`` naming the mode it belongs
    to); ``generating``: :data:`DECODING_SETTINGS` and ``seed``."""
    if mode in ("choice", "entail", "generate"):
        asks = {
            "choice": "choice mode scores the option letters' probabilities",
            "entail": "entail mode scores answer-token probabilities",
            "generate": "generate mode reads the option the answer names",
        }[mode]
        for name, value in (("reduction", reduction), ("continuation", continuation)):
            if value is not None:
                raise ValueError(f"{name}={value!r} applies to likelihood mode only; {asks}")
        score_kind = "probability"
        if mode != "entail":
            prompt = _choose("prompt", prompt, choice_prompt_names())
        elif prompt is not None:
            raise ValueError(
                f"prompt={prompt!r} applies to choice mode only; entail mode asks its own "
                "entailment question"
            )
    else:
        if prompt is not None:
            raise ValueError(
                f"prompt={prompt!r} applies to choice and generate modes only; likelihood "
                f"mode asks {LIKELIHOOD_QUESTION!r}"
            )
        reduction = _choose("reduction", reduction, REDUCTIONS)
        continuation = _choose("continuation", continuation, CONTINUATIONS)
        score_kind = "log_probability"
    decoding = None
    if mode == "generate":
        decoding = Decoding(**{k: v for k, v in generating.items() if v is not None})
        parser = parser or DEFAULT_PARSER
        get_parser(parser)
    else:
        given = [f"{k}={v!r}" for k, v in {**generating, "parser": parser}.items() if v is not None]
        if given:
            raise ValueError(
                f"{', '.join(given)} applies to generate mode only (--mode generate); "
                f"{mode} mode generates nothing"
            )
    return ModeSettings(score_kind, reduction, continuation, prompt, decoding, parser)


@dataclass(frozen=True)
class Ask:
    """One question about ``request``'s view whose answers are single tokens; ``count``: the
    options it lists (``None``: not a choice, no system prompt)."""

    request: TextsRequest
    question: str
    count: int | None

    @property
    def answers(self) -> tuple[str, ...]:
        """The one-token answers compared: the option letters, or ``Yes``/``No``."""
        return ENTAIL_ANSWERS if self.count is None else tuple(LETTERS[: self.count])


@dataclass(frozen=True)
class FirstTokens:
    """A backend's reading of an :class:`Ask`'s first answer token: each answer's log-score
    (its spellings pooled; renormalised among the answers by the mode: a logit or a
    log-probability), and where known each answer's probability over the whole vocabulary
    (``vocabulary``; recorded by entail mode as ``p_yes``, ``p_no``)."""

    logits: torch.Tensor
    vocabulary: torch.Tensor | None = None


def questions(mode: str, prompt: str | None, texts: Sequence[str]) -> list[tuple[str, int | None]]:
    """What choice mode (every cyclic order of the options) or entail mode (one question per
    text) asks about ``texts``, each with the count of options it lists (``None``: entail)."""
    if mode == "entail":
        return [(caption_question(ENTAIL).ask(text), None) for text in texts]
    count = len(texts)
    if count > len(LETTERS):
        raise ValueError(f"choice mode takes at most {len(LETTERS)} options, got {count}")
    return [
        (question_text(prompt, [texts[i] for i in order]), count) for order in cyclic_orders(count)
    ]


def asks(mode: str, prompt: str | None, request: TextsRequest) -> list[Ask]:
    """:func:`questions` about a request without its own question, as :class:`Ask` s."""
    return [Ask(request, *asked) for asked in questions(mode, prompt, request.texts)]


def failed_scores(request: TextsRequest, fault: Fault) -> TextScores:
    """The scores of a request whose replies score nothing: its rows fail with ``fault``."""
    return TextScores(tuple(0.0 for _ in request.texts), fault=fault)


class VideoLLM(RequestAdapter):
    """The ``video-llm`` adapter: the four modes over a backend's three methods.

    Args:
        reduction: likelihood mode only: ``mean`` (default) or ``sum`` of the token
            log-probabilities.
        continuation: likelihood mode only: ``answer`` (default; the text's tokens) or
            ``turn`` (the whole assistant turn, closing tokens included, as lmms-eval).
        prompt: choice and generate modes: ``vitatecs`` (default; the paper's prompt),
            ``lmms-eval`` or ``temporalbench``.
        temperature, top_p, num_samples, max_new_tokens, seed: generate mode only: the
            :class:`~foilkit.scorers.requests.Decoding` (default: one greedy answer of at most
            32 tokens).
        parser: generate mode only: the answer parser's name (default ``vitatecs``).
    """

    name = "video-llm"
    modes = MODES
    options = ("reduction", "preprocess", "prompt", "parser", *DECODING_SETTINGS)
    asks_questions = True
    score_kind = "log_probability"  # the first mode's; each instance sets its own mode's

    def __init__(
        self,
        model_id: str,
        *,
        reduction: str | None = None,
        continuation: str | None = None,
        prompt: str | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        num_samples: int | None = None,
        max_new_tokens: int | None = None,
        seed: int | None = None,
        parser: str | None = None,
        **kwargs: Any,
    ):
        super().__init__(model_id, **kwargs)
        settings = mode_settings(
            self.mode,
            reduction=reduction,
            continuation=continuation,
            prompt=prompt,
            parser=parser,
            temperature=temperature,
            top_p=top_p,
            num_samples=num_samples,
            max_new_tokens=max_new_tokens,
            seed=seed,
        )
        self.score_kind = settings.score_kind
        #: generate mode's decoding and answer parser (``None`` in the other modes)
        self.decoding, self.parser = settings.decoding, settings.parser
        self.reduction, self.continuation = settings.reduction, settings.continuation
        self.prompt = settings.prompt

    # --- what a backend implements -----------------------------------------------------------

    def generate(self, requests: Sequence[GenerateRequest]) -> list[Generations]:
        """Answers in words to each request, ``decoding.num_samples`` of them, in order."""
        raise NotImplementedError

    def answer_logprobs(self, requests: Sequence[TextsRequest]) -> list[list[torch.Tensor] | Fault]:
        """Per request, per answer (its own question's ``answers``, else its texts as answers to
        :data:`LIKELIHOOD_QUESTION`, as :attr:`continuation` says): the log-probabilities of
        the answer's tokens; a request that failed alone: its :data:`Fault`."""
        raise NotImplementedError

    def first_tokens(self, asks: Sequence[Ask]) -> list[FirstTokens | Fault]:
        """Per ask, its answers' first-token log-scores (:class:`FirstTokens`); an ask that
        failed alone: its :data:`Fault`."""
        raise NotImplementedError

    def system_form(self) -> str:
        """How VITATECS' system prompt reaches the model (recorded with choice prompts)."""
        return "parts"

    # --- the modes ---------------------------------------------------------------------------

    def score(self, requests: Sequence[TextsRequest]) -> list[TextScores]:
        if self.mode == "generate":
            return score_by_generation(
                self,
                requests,
                prompt=self.prompt,
                decoding=self.decoding,
                parser=get_parser(self.parser),
                judge=self.judge,
            )
        if self.mode == "likelihood":
            return [
                self._likelihood(r, lp) for r, lp in zip(requests, self.answer_logprobs(requests))
            ]
        own = [request for request in requests if request.question is not None]
        scored = dict(zip(map(id, own), self.answer_logprobs(own) if own else []))
        asked = {id(r): asks(self.mode, self.prompt, r) for r in requests if r.question is None}
        read = iter(self.first_tokens([ask for mine in asked.values() for ask in mine]))
        results = []
        for request in requests:
            if request.question is not None:
                results.append(self._answer_choice(request, scored[id(request)]))
                continue
            mine = [next(read) for _ in asked[id(request)]]
            fault = next((one for one in mine if isinstance(one, tuple)), None)
            if fault is not None:
                results.append(failed_scores(request, fault))
            elif self.mode == "entail":
                results.append(_entail(mine))
            else:
                results.append(_choice(mine, len(request.texts)))
        return results

    def _likelihood(
        self, request: TextsRequest, logprobs: list[torch.Tensor] | Fault
    ) -> TextScores:
        if isinstance(logprobs, tuple):
            return failed_scores(request, logprobs)
        details = likelihood_details(logprobs)
        return TextScores(details[f"logprob_{self.reduction}"], details)

    @staticmethod
    def _answer_choice(request: TextsRequest, logprobs: list[torch.Tensor] | Fault) -> TextScores:
        """Each answer's probability among the item's answers to its own question: the softmax
        of the answers' summed token log-probabilities."""
        if isinstance(logprobs, tuple):
            return failed_scores(request, logprobs)
        details = likelihood_details(logprobs)
        probabilities = torch.tensor(details["logprob_sum"], dtype=torch.float64).softmax(0)
        return TextScores(tuple(probabilities.tolist()), details)

    # --- what run.json records ---------------------------------------------------------------

    def describe(self, *, own_questions: str = "none") -> dict[str, Any]:
        """The adapter's settings and what it asks; ``own_questions``: how many of the scored
        rows ask their own question (``none``, ``some``, ``all``: :func:`asked_record`), which
        they are asked instead of the adapter's."""
        return asked_record(self.mode_record(self._describe()), own_questions)

    def _describe(self) -> dict[str, Any]:
        """The backend's part of :meth:`describe`."""
        return super().describe()

    def mode_record(self, common: dict[str, Any]) -> dict[str, Any]:
        """``common`` with what the mode asks and how it reads the answers."""
        if self.mode == "likelihood":
            return {
                **common,
                "prompt": LIKELIHOOD_QUESTION,
                "reduction": self.reduction,
                "continuation": self.continuation,
            }
        if self.mode == "entail":
            prompt = caption_question(ENTAIL).template
            return {**common, "prompt": prompt, "answers": list(ENTAIL_ANSWERS)}
        if self.mode == "generate":
            common |= {"decoding": self.decoding.to_record(), "parser": self.parser}
        prompt = choice_prompt(self.prompt)
        if prompt.system is not None:
            common |= {"system_prompt": prompt.system, "system_form": self.system_form()}
        return {**common, "prompt": prompt.template, "prompt_name": self.prompt}


def _entail(read: Sequence[FirstTokens]) -> TextScores:
    """Per text, P(Yes) / (P(Yes) + P(No)) of the answer's first token (VELOCITI's
    ``entail_score``: the two answers renormalised), with their vocabulary probabilities where
    the backend knows them."""
    scores = tuple(float(one.logits.softmax(0)[0]) for one in read)
    if any(one.vocabulary is None for one in read):
        return TextScores(scores)
    details = {
        "p_yes": tuple(float(one.vocabulary[0]) for one in read),
        "p_no": tuple(float(one.vocabulary[1]) for one in read),
    }
    return TextScores(scores, details)


def _choice(read: Sequence[FirstTokens], count: int) -> TextScores:
    """Each text's letter probability (softmax over the option letters) in each cyclic order
    (``order_<k>``), and their mean: position bias cancels."""
    per_order = torch.zeros(count, count, dtype=read[0].logits.dtype)  # [order, text]
    for shift, (order, one) in enumerate(zip(cyclic_orders(count), read)):
        probabilities = one.logits.softmax(0).cpu()
        for position, text_index in enumerate(order):
            per_order[shift, text_index] = probabilities[position]
    details = {f"{ORDER_DETAIL}{shift}": tuple(per_order[shift].tolist()) for shift in range(count)}
    return TextScores(tuple(per_order.mean(0).tolist()), details)
