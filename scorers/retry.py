"""The checks and readings every request to an OpenAI-compatible server shares, none of which
needs ``openai`` (the client itself, its retries with backoff and its reply reading:
:mod:`foilkit.scorers.openai_client`):

* :func:`redact`: the configured key, and anything key-shaped, out of every message and record;
* :func:`check_key_variable`: ``--api-key-env`` names a variable, never holds a key;
* :func:`check_price` and :func:`reply_usage`: prices are finite and >= 0, and so is the usage a
  server reports;
* :func:`retry_after`, :func:`error_body`, :func:`content_filtered`: what an HTTP error says.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

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
