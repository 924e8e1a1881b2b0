"""Retries with backoff for requests to OpenAI-compatible servers: one place for the policy.

Both sides of foilkit talk to such servers: the foil pipelines' chat client
(``foilkit.generation.llm``) and the served video LLM backend (:mod:`foilkit.scorers.served`).
Both retry the same failures the same way: rate limits (429), server errors (5xx), timeouts,
dropped connections, and replies that cannot be parsed (a truncated body from a proxy, a
completion without choices), each wait doubling from ``backoff_s`` with jitter up to
``max_backoff_s``, or what the server's ``retry-after`` asks. ``openai`` is imported only when
a request is made.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
logger = logging.getLogger(__name__)


def retryable_errors() -> tuple[type[BaseException], ...]:
    """The ``openai`` errors worth another try: 429, 5xx, timeouts, dropped connections."""
    import openai

    return (
        openai.RateLimitError,
        openai.InternalServerError,
        openai.APITimeoutError,
        openai.APIConnectionError,
    )


def retry_after(error: BaseException) -> float | None:
    """The server's ``retry-after`` (seconds) on an HTTP error, if it sent one."""
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def error_body(error: BaseException) -> str | None:
    """The body of the HTTP response an ``openai`` error came with, if any."""
    response = getattr(error, "response", None)
    try:
        return response.text if response is not None else None
    except Exception:  # noqa: BLE001 (a streamed or closed body: nothing to keep)
        return None


def with_retries(
    attempt: Callable[[], T],
    *,
    max_retries: int,
    backoff_s: float,
    max_backoff_s: float,
    also: tuple[type[BaseException], ...] = (),
    name: str = "request",
    on_retry: Callable[[], None] | None = None,
) -> T:
    """``attempt()``'s result, calling it again after a wait when it raises a retryable
    ``openai`` error or one of ``also`` (the caller's malformed-reply error), at most
    ``max_retries`` times more; the last such error is raised as it is (after
    ``max_retries + 1`` attempts), any other at once. ``on_retry`` counts each retry."""
    retryable = (*retryable_errors(), *also)
    for tries in range(max_retries + 1):
        try:
            return attempt()
        except retryable as error:
            if tries == max_retries:
                raise
            if on_retry is not None:
                on_retry()
            wait = retry_after(error)
            if wait is None:
                wait = backoff_s * 2**tries * random.uniform(0.5, 1.0)
            wait = min(wait, max_backoff_s)
            logger.info("%s: %s; retrying in %.2fs", name, type(error).__name__, wait)
            time.sleep(wait)
    raise AssertionError("unreachable")  # the loop returns or raises
