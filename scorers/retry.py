"""Retries with backoff for requests to OpenAI-compatible servers: one place for the policy.

Both sides of foilkit talk to such servers: the foil pipelines' chat client
(``foilkit.generation.llm``) and the served video LLM backend (:mod:`foilkit.scorers.served`).
Both retry the same failures the same way: rate limits (429), server errors (5xx), timeouts,
dropped connections, and replies that cannot be parsed (a truncated body from a proxy, a
completion without choices), each wait doubling from ``backoff_s`` with jitter up to
``max_backoff_s``, or what the server's ``retry-after`` asks. ``openai`` is imported only when
a request is made.

What both also share, so that neither can forget it:

* :func:`read_reply_body`: one request's reply, read as a stream under a **total** deadline
  (the HTTP timeout is per read: a server that trickles a byte a second never trips it) and a
  size bound (:class:`ReplyTooLarge`: no 100 MB body held in memory, times the concurrency);
* :func:`redact`: the configured key, and anything key-shaped, out of every message and record;
* :func:`check_key_variable`: ``--api-key-env`` names a variable, never holds a key;
* :func:`check_price` and :func:`reply_usage`: prices are finite and >= 0, and so is the usage a
  server reports.
"""

from __future__ import annotations

import logging
import math
import random
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")
logger = logging.getLogger(__name__)

#: A reply's default size bound (bytes, after decompression): a chat completion is kilobytes;
#: vLLM's prompt log-probabilities of a 100k-token prompt are about 10 MB.
MAX_REPLY_BYTES = 16 * 2**20
#: The default total time one request may take, from sending it to its reply's last byte.
REQUEST_TIMEOUT_S = 600.0
#: Key-shaped strings: OpenAI (``sk-``), Groq (``gsk_``), Hugging Face (``hf_``), Google
#: (``AIza``) keys, and a bearer token, as they may come back in a server's error or reply.
KEY_SHAPED = re.compile(
    r"\b(?:sk-[A-Za-z0-9_\-]{12,}|gsk_[A-Za-z0-9]{12,}|hf_[A-Za-z0-9]{12,}|AIza[A-Za-z0-9_\-]{20,})"
    r"|(?<=Bearer )\S{8,}"
)
REDACTED = "[redacted]"
#: A configured key shorter than this is a placeholder (vLLM's ``EMPTY``), not a secret.
MIN_SECRET = 8


class ReplyTooLarge(Exception):
    """A reply past the size bound (``--max-reply-mb``): its request fails (a row error), and
    is not retried (it would come back as large)."""


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` without the ``secrets`` (the configured keys) or anything key-shaped
    (:data:`KEY_SHAPED`): each replaced by ``[redacted]``."""
    for secret in secrets:
        if secret and len(secret) >= MIN_SECRET:
            text = text.replace(secret, REDACTED)
    return KEY_SHAPED.sub(REDACTED, text)


def check_key_variable(name: str, flag: str) -> None:
    """Refuse a key given where the NAME of the variable holding it belongs (``flag``:
    ``--api-key-env``), with the fix; the message never repeats what was given."""
    if name.startswith("Bearer ") or KEY_SHAPED.fullmatch(name) or not name.isidentifier():
        raise ValueError(
            f"{flag} takes the NAME of the environment variable holding the key, not the key "
            "(what was given looks like one; it is not repeated here): export MY_KEY=<the key> "
            f"and pass {flag} MY_KEY"
        )


def content_filtered(error: BaseException) -> bool:
    """Whether an HTTP error is a content filter refusing the request (Azure OpenAI's 400 with
    the code ``content_filter``): an answer (a refusal), not a failure of the server."""
    return getattr(error, "code", None) == "content_filter"


def reply_bytes(megabytes: float) -> int:
    """``--max-reply-mb`` in bytes (a megabyte: 2**20 bytes)."""
    return max(1, int(megabytes * 2**20))


def check_price(price: float | None, flag: str) -> None:
    """Refuse a price per 1000 tokens that is not a finite number >= 0 (NaN, negative)."""
    if price is not None and not (math.isfinite(price) and price >= 0):
        raise ValueError(f"{flag} must be a finite number >= 0, got {price}")


def reply_usage(data: Any) -> tuple[int, int]:
    """The ``(prompt_tokens, completion_tokens)`` a chat completion's JSON reports (0 where it
    reports none); ``ValueError`` for counts that are not whole numbers >= 0."""
    usage = data.get("usage") if isinstance(data, Mapping) else None
    counts = []
    for name in ("prompt_tokens", "completion_tokens"):
        value = (usage or {}).get(name) if isinstance(usage, Mapping) else None
        if value is None:
            counts.append(0)
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            raise ValueError(f"usage {name} is {value!r}, not a token count")
        if value < 0:
            raise ValueError(f"usage {name} is {value}: a token count cannot be negative")
        counts.append(int(value))
    return counts[0], counts[1]


def read_reply_body(
    create: Any,
    *,
    timeout_s: float,
    max_bytes: int,
    bound_flag: str = "--max-reply-mb",
    **request: Any,
) -> str:
    """The body of one chat-completions request (``create``: the client's
    ``chat.completions.with_streaming_response.create``), read as it arrives: past ``timeout_s``
    seconds from sending (in total, however slowly the body trickles; checked as each piece
    arrives, and no read waits longer than ``timeout_s``) it is a timeout
    (``openai.APITimeoutError``, retried), past ``max_bytes`` bytes (announced or received) a
    :class:`ReplyTooLarge` (naming ``bound_flag``, which raises the bound); a body that is not
    UTF-8 a ``ValueError``. HTTP errors raise as the ``openai`` client raises them."""
    import httpx
    import openai

    start = time.monotonic()
    with create(**request, timeout=timeout_s) as response:
        announced = response.headers.get("content-length")
        if announced is not None and announced.isdigit() and int(announced) > max_bytes:
            raise ReplyTooLarge(_too_large(int(announced), max_bytes, bound_flag))
        chunks, size = [], 0
        try:
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > max_bytes:
                    raise ReplyTooLarge(_too_large(size, max_bytes, bound_flag, partial=True))
                if time.monotonic() - start > timeout_s:
                    raise openai.APITimeoutError(request=response.http_request)
                chunks.append(chunk)
        except httpx.TimeoutException as error:
            raise openai.APITimeoutError(request=response.http_request) from error
        except httpx.TransportError as error:  # the connection dropped mid-body
            raise openai.APIConnectionError(request=response.http_request) from error
    return b"".join(chunks).decode("utf-8")


def _too_large(size: int, max_bytes: int, flag: str, partial: bool = False) -> str:
    got = f"over {max_bytes} bytes arrived" if partial else f"{size} bytes announced"
    return (
        f"the reply is larger than {max_bytes / 2**20:g} MB ({got}): not read further "
        f"(raise {flag} if such replies are expected)"
    )


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
