"""The LLM judge of generate mode: off by default, and only where the official protocol has one.

Some benchmarks' own scoring asks an LLM about a video LLM's answer: about the answers their
rules cannot match ("Correct" or "Incorrect", given the question and its ground-truth answer;
or the option letter), or about every answer (a caption, from which the judge answers the
video's multi-choice question). Each such judge is a :class:`~foilkit.answers.JudgeProtocol`
declared in its benchmark's folder (``builders/<name>/answers.py``: the official model, prompt,
decoding, how many asks and how the reply is read), keyed by the answer parser whose answers
it reads, and found through the registry (:func:`judge_protocol`). With a judge configured
(``--judge-model``, at ``--judge-base-url`` with the key in ``--judge-api-key-env``), foilkit
asks it exactly where the official code does, with the official prompt and decoding, and reads
its reply as the official code does; every other answer stays with the rules
(:mod:`foilkit.scorers.parsers`). The README lists them.

(``yes_no`` is foilkit's own parser: no official judge.) A judged answer is recorded with the
judge's last reply and its verdict (``correct``/``incorrect``, or the letter): one it rated
correct chose the true text, one it rated incorrect chose none (outcome ``judged``, counted
wrong as the official rating 0), one it named a letter for chose that option. An answer the
judge could not settle either stays ``unparseable`` (counted wrong): where an official script
then picks a random letter, foilkit does not guess.

Departures, recorded with every run: re-asks carry ``seed`` = the attempt (1, 2, ...), so that
each is its own cached request and a rerun replays the same replies (the first ask's body is
the official one); replies are cached, so a repeated run asks nothing; answers whose judge
prompt is identical (the same caption of the same question, in several rows) share one reply,
asked once, where the official scripts ask each row (at temperature 1 they may differ): the
usage counts them (``shared``), so that every ask is a request, a cache hit or a shared reply.

A reply without text (``content: null``: the judge refused, or a content filter stopped it) is
read as an empty reply: asked again while the protocol asks again, then unsettled
(``unparseable``); it is cached like any reply, so a resumed run does not ask it again. A reply
past ``--max-reply-mb`` fails its rows (cause ``reply too large``); the run goes on.

Requests go through :class:`foilkit.scorers.openai_client.ServedClient` (the one client:
``max_concurrency`` at a time, retried with backoff, cached on disk under the key of (judge
model, messages, parameters); its usage and, at ``--judge-price-per-1k-prompt-tokens`` /
``--judge-price-per-1k-completion-tokens``, its cost are recorded). The key is read from the
environment variable the settings name when the first request is sent, and never stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from foilkit.answers import JudgeCase, JudgeProtocol
from foilkit.scorers.openai_client import Call, Flags, ServedClient, ServerBackend
from foilkit.scorers.parsers import UNPARSEABLE, declared, parser_names
from foilkit.scorers.retry import (
    MAX_REPLY_BYTES,
    REQUEST_TIMEOUT_S,
    check_key_variable,
    check_price,
)


@dataclass(frozen=True)
class Verdict:
    """What the judge made of one case: ``outcome`` (``judged`` or still ``unparseable``), the
    option chosen (its position as shown; ``None``: none), the verdict as the official code
    reads the reply (``correct``, ``incorrect``, a letter; ``None``: unsettled), the last
    reply, and how many times it was asked; ``fault``: ``(message, cause)`` when the request
    failed alone (its rows fail with it)."""

    outcome: str
    choice: int | None
    verdict: str | None
    reply: str
    asks: int
    fault: tuple[str, str] | None = None


def judge_protocol(parser: str) -> JudgeProtocol | None:
    """The official judge of the answers ``parser`` reads (declared beside the parser in its
    benchmark's folder); ``None``: its protocol has none."""
    return declared("judges", parser)


def judge_names() -> list[str]:
    """The answer parsers that have an official judge, sorted."""
    return [name for name in parser_names() if judge_protocol(name) is not None]


@dataclass(frozen=True)
class JudgeSettings:
    """A configured judge: the served model's name, the endpoint (``None``: OpenAI's), the NAME
    of the environment variable holding its key, the client's concurrency and retries, and the
    prices of 1000 prompt and completion tokens its cost is estimated at (``None``: unpriced),
    and, as the served model's, each request's deadline (seconds, in all) and reply bound."""

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    max_concurrency: int = 8
    max_retries: int = 5
    price_per_1k_prompt_tokens: float | None = None
    price_per_1k_completion_tokens: float | None = None
    timeout_s: float = REQUEST_TIMEOUT_S
    max_reply_bytes: int = MAX_REPLY_BYTES

    def __post_init__(self) -> None:
        if not self.model or not self.model.strip():
            raise ValueError("the judge needs a model name (--judge-model gpt-3.5-turbo-1106)")
        check_key_variable(self.api_key_env, "--judge-api-key-env")
        for kind in ("prompt", "completion"):
            price = getattr(self, f"price_per_1k_{kind}_tokens")
            check_price(price, f"--judge-price-per-1k-{kind}-tokens")


class Judge:
    """Asks a configured judge about answers, as the official protocol of ``parser`` does.

    Args:
        settings: the judge and how to reach it.
        parser: the answer parser whose protocol's judge this is (:func:`judge_protocol`).
        cache_dir: the reply cache's folder (``None``: no cache).
    """

    def __init__(self, settings: JudgeSettings, parser: str, cache_dir: str | None) -> None:
        protocol = judge_protocol(parser)
        if protocol is None:
            raise ValueError(
                f"the {parser!r} answers have no official LLM judge (judges: "
                f"{', '.join(judge_names())}): leave out --judge-model"
            )
        self.settings, self.protocol = settings, protocol
        self.server = ServerBackend.for_chat(settings, cache_dir=cache_dir)
        self.client = ServedClient(settings.model, self.server, ledger="judge")
        self.asked = self.asks = 0

    def check_key(self) -> None:
        """Refuse OpenAI's endpoint without the judge's key, before any work (a local server
        takes none)."""
        flags = Flags(key_variable="--judge-api-key-env", base_url="--judge-base-url")
        self.server.check_key(flags, " for the judge")

    def judge(self, cases: Sequence[JudgeCase]) -> list[Verdict]:
        """A verdict per case, in order: each asked (all at once, concurrently) until its reply
        reads, or ``max_asks`` times."""
        protocol = self.protocol
        settled: dict[int, Verdict] = {}
        replies: dict[int, str] = {}
        pending = list(range(len(cases)))
        for attempt in range(protocol.max_asks):
            if not pending:
                break
            params = dict(protocol.decoding) | ({"seed": attempt} if attempt else {})
            calls = [Call(protocol.messages(cases[i]), None, params, {}) for i in pending]
            answered = self.client.send_all(calls)
            self.asks += len(calls)
            still = []
            for index, reply in zip(pending, answered):
                if reply.fault is not None:  # failed alone: its rows fail with it
                    settled[index] = Verdict(UNPARSEABLE, None, None, "", attempt + 1, reply.fault)
                    continue
                replies[index] = reply.texts[0]
                read = protocol.read(reply.texts[0], cases[index])
                if read is None:
                    still.append(index)
                    continue
                outcome, choice, verdict = read
                settled[index] = Verdict(
                    outcome, choice, verdict or None, reply.texts[0], attempt + 1
                )
            pending = still
        for index in pending:
            settled[index] = Verdict(UNPARSEABLE, None, None, replies[index], protocol.max_asks)
        self.asked += len(cases)
        return [settled[index] for index in range(len(cases))]

    def to_record(self) -> dict[str, Any]:
        """The judge as ``run.json`` holds it: the model, endpoint, the key's variable name
        (never the key), the official protocol it reproduces, what it was asked, and what that
        spent (this process's usage; its cost at the prices recorded beside it)."""
        return {
            "model": self.settings.model,
            "base_url": self.settings.base_url,
            "api_key_env": self.settings.api_key_env,
            **self.protocol.to_record(),
            "prompt_version": self.protocol.reference,
            "departures": "re-asks carry seed=<attempt> (each its own cached request); "
            "answers whose judge prompt is identical share one reply, asked once (the official "
            "scripts ask each row; usage counts them as shared); "
            + (
                self.protocol.unsettled
                if self.protocol.unsettled is not None
                else "an empty reply is unparseable (the reference's rating -1)"
                if self.protocol.every_answer
                else "an answer still unsettled after the last ask is unparseable (rated 0 "
                "there too)"
            ),
            "answers_judged": self.asked,
            "asks": self.asks,
            "price_per_1k_prompt_tokens": self.settings.price_per_1k_prompt_tokens,
            "price_per_1k_completion_tokens": self.settings.price_per_1k_completion_tokens,
            "timeout_s": self.settings.timeout_s,
            "max_reply_bytes": self.settings.max_reply_bytes,
            **self.client.usage_record(),
        }


__all__ = [
    "Judge",
    "JudgeCase",
    "JudgeProtocol",
    "JudgeSettings",
    "Verdict",
    "judge_names",
    "judge_protocol",
]
