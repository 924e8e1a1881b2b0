"""The LLM foil pipelines' view of foilkit's one OpenAI-compatible client.

VITATECS generates counterfactuals and RTime activity lists and caption rewrites with an LLM
(GPT-3.5 in the papers). :class:`ChatClient` sends chat requests to OpenAI or to any compatible
endpoint (a local vLLM or Ollama server: set ``base_url`` and the model name) through
:class:`foilkit.scorers.openai_client.ServedClient`, which runs them ``max_concurrency`` at a time
with retries, bounds each request's time and reply, caches every reply on disk, redacts the key
and counts tokens and cost (see its module). This module adds the pipelines' settings
(:class:`LLMSettings`); the cache key of a request, the SHA-256 of its messages, the model and the
sampling parameters (:func:`request_key`; the records written before the shared client are read
as they are); a sampling seed per request, derived from the configured seed and the request
(:func:`request_seed`), recorded with the reply; and what the stages account
(:attr:`ChatClient.usage`; a reply without text is an answer, an empty text counted in
:attr:`Usage.refusals`).

A request that fails for good raises :class:`LLMResponseError` or :class:`LLMRequestError`
naming its key; the answered ones stay cached. A stage that must finish with the rest asks
:meth:`ChatClient.complete_many` to *park* such failures: each is recorded
(:attr:`ChatClient.failures`: key, error, reply), counted in :attr:`ChatClient.usage`, and
answered with an empty :class:`Completion` (``failed``), not cached, so a rerun asks again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, fields
from typing import Any

from foilkit.scorers.openai_client import (
    USAGE_COUNTS,
    Call,
    Flags,
    RequestError,
    RequestFailed,
    ResponseError,
    ServedClient,
    ServerBackend,
)
from foilkit.scorers.retry import MAX_REPLY_BYTES, check_key_variable, check_price

logger = logging.getLogger(__name__)

BASE_URL_ENV = "OPENAI_BASE_URL"
#: The options the client's messages name, as the pipelines' command lines spell them.
FLAGS = Flags(
    timeout="--timeout-s",
    reply_bound="--max-reply-bytes",
    base_url="base_url",
    rerun="rerun: answered requests are cached",
)


@dataclass(frozen=True)
class LLMSettings:
    """Which model to ask, how to sample, and how to behave towards the server.

    Attributes:
        model: model name, e.g. ``"gpt-3.5-turbo"`` or a local vLLM/Ollama model name.
        base_url: the endpoint (``".../v1"``); ``None`` reads ``$OPENAI_BASE_URL``, then falls
            back to OpenAI's.
        api_key_env: the environment variable holding the API key. Where it is unset and the
            endpoint is not OpenAI's, ``"EMPTY"`` is sent (what local servers accept).
        temperature, top_p, max_tokens, n: sampling, sent with every request and part of
            the cache key.
        seed: the base sampling seed (part of the cache key). Each request is sent its own
            seed derived from it and the request (:func:`request_seed`), recorded with the
            reply; ``None`` sends none.
        send_seed: whether the API takes a ``seed`` (OpenAI, vLLM, SGLang and Ollama do);
            ``False`` for one that rejects the parameter.
        max_concurrency: requests in flight at once in :meth:`ChatClient.complete_many`.
        max_retries: retries of one request on 429/5xx/timeouts/connection errors/malformed
            replies.
        retry_backoff_s: the first retry's wait; it doubles per retry (with jitter) up to
            ``max_backoff_s``.
        timeout_s: the most seconds one request may take in all, from sending it to its
            reply's last byte (past it, retried as a timeout).
        max_reply_bytes: the largest reply read; past it the request fails (not retried).
        cache_dir: folder of the on-disk cache; ``None`` disables caching.
        price_per_1k_prompt_tokens, price_per_1k_completion_tokens: prices for the cost
            estimate (in whatever currency they are given); ``None`` leaves the cost unknown.
    """

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 256
    n: int = 1
    seed: int | None = None
    send_seed: bool = True
    max_concurrency: int = 4
    max_retries: int = 5
    cache_dir: str | None = None
    price_per_1k_prompt_tokens: float | None = None
    price_per_1k_completion_tokens: float | None = None
    retry_backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    timeout_s: float = 120.0
    max_reply_bytes: int = MAX_REPLY_BYTES

    def __post_init__(self) -> None:
        if not self.model:
            raise ValueError("LLMSettings.model must be set")
        check_key_variable(self.api_key_env, "--api-key-env")
        for kind in ("prompt", "completion"):
            price = getattr(self, f"price_per_1k_{kind}_tokens")
            check_price(price, f"--price-per-1k-{kind}-tokens")
        if not self.timeout_s > 0 or self.max_reply_bytes < 1:
            raise ValueError(
                f"--timeout-s must be > 0 and --max-reply-bytes >= 1, got {self.timeout_s} and "
                f"{self.max_reply_bytes}"
            )
        for name in ("n", "max_tokens", "max_concurrency"):
            if getattr(self, name) < 1:
                raise ValueError(f"LLMSettings.{name} must be >= 1, got {getattr(self, name)}")
        if self.max_retries < 0:
            raise ValueError(f"LLMSettings.max_retries must be >= 0, got {self.max_retries}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"LLMSettings.top_p must be in (0, 1], got {self.top_p}")

    def sampling(self) -> dict[str, Any]:
        """The sampling parameters sent with each request (and hashed into the cache key)."""
        return {
            key: getattr(self, key) for key in ("temperature", "top_p", "max_tokens", "n", "seed")
        }

    def request_seed(self, key: str) -> int | None:
        """The seed sent with the request of cache key ``key`` (``None``: no seed is sent)."""
        return request_seed(key) if self.seed is not None and self.send_seed else None

    def resolved_base_url(self) -> str | None:
        return self.base_url or os.environ.get(BASE_URL_ENV) or None

    def server(self) -> ServerBackend:
        """The endpoint and how the client treats it (:class:`ServerBackend`)."""
        return ServerBackend.for_chat(self, base_url=self.resolved_base_url())


#: The name :class:`LLMSettings` had before settings took one suffix (kept: documented).
LLMConfig = LLMSettings


@dataclass(frozen=True)
class RequestFailure:
    """A request parked as failed: its cache key, why, and the server's reply (truncated to
    :data:`REPLY_EXCERPT` characters; ``None`` where no reply arrived)."""

    key: str
    error: str
    reply: str | None = None

    def to_record(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Completion:
    """The reply to one request: one text per choice, its token counts, and where it came from.

    ``cached`` is true when the reply was read from the cache (no request was sent); ``key`` is
    the request's cache key, which names it in errors and in provenance; ``seed`` the sampling
    seed sent with it (``None``: none); ``failure`` says why a request parked by
    :meth:`ChatClient.complete_many` has no texts; ``refusals``: choices without text
    (``content: null``), each an empty text.
    """

    texts: tuple[str, ...]
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    key: str
    seed: int | None = None
    failure: RequestFailure | None = None
    refusals: int = 0

    @property
    def failed(self) -> bool:
        """Whether the request was parked as failed (then ``texts`` is empty)."""
        return self.failure is not None


@dataclass(frozen=True)
class Usage:
    """What a client has spent: requests sent, cache hits, tokens and the estimated cost.

    Tokens and cost count only requests actually sent (cache hits cost nothing), and every
    reply billed: those retried as malformed too (``malformed_replies``, their tokens where they
    say them); ``refusals``: answers without text. ``cost`` is ``None`` when no prices were
    configured.
    """

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    failures: int = 0
    malformed_replies: int = 0
    refusals: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None

    def to_record(self) -> dict[str, Any]:
        return asdict(self)


REPLY_EXCERPT = 2000  # characters of a failed request's reply kept in its record


#: A request that failed for good (``key``, ``reply``), as the shared client raises it: the
#: server's reply never usable (:class:`LLMResponseError`), or an HTTP error, retries exhausted,
#: no key (:class:`LLMRequestError`).
LLMResponseError, LLMRequestError = ResponseError, RequestError


def request_key(messages: Sequence[Mapping[str, str]], config: LLMSettings) -> str:
    """SHA-256 of the messages, the model and the sampling parameters: the cache key."""
    payload = {"messages": list(messages), "model": config.model, **config.sampling()}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request_seed(key: str) -> int:
    """The sampling seed of the request whose cache key is ``key``: derived from the base seed
    and the request (the key hashes both), so each prompt samples with its own seed, the same
    on every rerun; below 2**31, which every API takes."""
    return int(key[:8], 16) % 2**31


def _check_messages(messages: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    if not messages:
        raise ValueError("a chat request needs at least one message")
    checked = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or not {"role", "content"} <= message.keys():
            raise ValueError(f"message {index} must have 'role' and 'content', got {message!r}")
        if not isinstance(message["role"], str) or not isinstance(message["content"], str):
            raise ValueError(f"message {index}: 'role' and 'content' must be strings")
        checked.append({"role": message["role"], "content": message["content"]})
    return checked


class ChatClient:
    """Sends chat requests to an OpenAI-compatible server through the shared client
    (:attr:`client`: retries, cache, claims, key handling, usage), parking failures on request.

    The ``openai`` client is created on the first request that is not cached, so a fully
    cached rerun needs neither a server nor a key. Safe to use from several threads.
    """

    def __init__(self, config: LLMSettings) -> None:
        self.config = config
        self.client = ServedClient(config.model, config.server(), ledger="llm", flags=FLAGS)
        self._lock = threading.Lock()
        self._failures: list[RequestFailure] = []

    # -- accounting ----------------------------------------------------------------------------

    @property
    def usage(self) -> Usage:
        spent = self.client.usage()
        counts = {f.name: spent[f.name] for f in fields(Usage) if f.name in USAGE_COUNTS}
        return Usage(**counts, failures=len(self.failures), cost=spent["cost"])

    @property
    def failures(self) -> list[RequestFailure]:
        """The requests parked as failed by :meth:`complete_many`, in the order they failed."""
        with self._lock:
            return list(self._failures)

    def _park(self, error: RequestFailed) -> Completion:
        reply = None if error.reply is None else error.reply[:REPLY_EXCERPT]
        failure = RequestFailure(key=str(error.key), error=str(error), reply=reply)
        with self._lock:
            self._failures.append(failure)
        logger.error("request %s parked as failed: %s", failure.key[:12], error)
        return Completion(
            texts=(),
            prompt_tokens=0,
            completion_tokens=0,
            cached=False,
            key=failure.key,
            seed=self.config.request_seed(failure.key),
            failure=failure,
        )

    # -- requests ------------------------------------------------------------------------------

    def complete(self, messages: list[dict[str, str]]) -> Completion:
        """The completion of one chat request: from the cache, else from the server."""
        checked = _check_messages(messages)
        key = request_key(checked, self.config)
        seed = self.config.request_seed(key)
        params = {k: v for k, v in self.config.sampling().items() if v is not None}
        params.pop("seed", None)
        if seed is not None:
            params["seed"] = seed
        reply = self.client.ask(Call(tuple(checked), None, params, {}, self.config.n, key=key))
        if reply.failure is not None:  # past the size bound: failed, not retried
            raise LLMRequestError(reply.failure, key=key)
        return Completion(
            texts=reply.texts,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            cached=reply.cached,
            key=key,
            seed=seed,
            refusals=reply.refusals,
        )

    def complete_many(
        self,
        requests: Sequence[list[dict[str, str]]],
        *,
        progress: bool = True,
        park: bool = False,
    ) -> list[Completion]:
        """The completions of many requests, in request order, ``max_concurrency`` at a time.

        Identical requests are sent once. When a request fails for good (after its retries),
        the others still run to the end (and are cached); then the first failure, in request
        order, is raised, unless ``park``: each failed request is then recorded in
        :attr:`failures` and answered with an empty, ``failed`` :class:`Completion`.
        """
        from tqdm.auto import tqdm

        keys = [request_key(_check_messages(messages), self.config) for messages in requests]
        first_of_key: dict[str, int] = {}
        for index, key in enumerate(keys):
            first_of_key.setdefault(key, index)
        unique = sorted(first_of_key.values())
        results: dict[int, Completion | BaseException] = {}
        bar = tqdm(
            total=len(unique),
            desc=f"LLM {self.config.model}",
            unit="request",
            disable=not progress or not unique,
        )
        with ThreadPoolExecutor(max_workers=self.config.max_concurrency) as pool:
            futures = {pool.submit(self.complete, requests[index]): index for index in unique}
            for future in as_completed(futures):
                try:
                    results[futures[future]] = future.result()
                except RequestFailed as error:
                    parkable = park and error.key is not None
                    results[futures[future]] = self._park(error) if parkable else error
                except Exception as error:  # noqa: BLE001 (gathered, raised once all are done)
                    results[futures[future]] = error
                bar.update(1)
        bar.close()
        failures = [results[index] for index in unique if isinstance(results[index], BaseException)]
        if failures:
            for later in failures[1:]:
                logger.error("another failed request: %s", later)
            logger.error("%d of %d requests failed; raising the first", len(failures), len(unique))
            raise failures[0]
        return [results[first_of_key[key]] for key in keys]  # type: ignore[misc]
