"""The one OpenAI-compatible chat-completions client of foilkit: served scoring, the LLM judge and
the foil pipelines' LLM stages send their requests through :class:`ServedClient`.

A request (:class:`Call`) is chat messages, with a view's frames where a video LLM is asked:

* the view's frames, in the order shown, replace the ``{"type": "video"}`` part as base64 data
  URLs: one ``image_url`` part per frame (PNG, lossless, by default; or JPEG), or one vLLM
  ``video_url`` part (``data:video/jpeg;base64,<frame>,<frame>,...``, ``frames_as="video"``);
  their count and size are recorded. Their times (``frame_times``): with a ``video_url`` part,
  vLLM's video metadata (:func:`video_metadata`); with images, a ``<t seconds>`` text part
  before each (``text``, lmms-eval's Qwen3-VL API messages) or none (the default: an image part
  has no time field). Where the protocol asks for qwen-vl-utils' frame sizing
  (``preprocess="reference"``) and the served name is a Qwen-VL checkpoint's, the frames are
  resized by that rule first (:func:`served_sizing`); else the server's processor sizes them.

Requests run ``max_concurrency`` at a time, each retried with backoff on 429/5xx, timeouts,
dropped connections and malformed replies (:func:`with_retries`), bounded in time and size
(:func:`read_reply_body`; past ``max_reply_bytes`` the request's rows fail with the cause ``reply
too large``). A reply without text (``content: null``: a refusal, a content filter, a tool call)
is an answer, cached and never retried (:class:`Reply`). Each reply is cached on disk under its
request's key (:meth:`ServedClient.key`, or the caller's own :attr:`Call.key`), so a resumed or
repeated run sends nothing it already sent; processes sharing the cache claim a request before
sending it (:meth:`ServedClient._get`). Token usage and its cost are recorded over the run's whole
life (:meth:`ServedClient.bill_to`). The API key is read from the variable ``api_key_env`` names
when the first request is sent, never stored, and redacted from every message and record
(:func:`~foilkit.scorers.retry.redact`). A request that fails for good raises
:class:`RequestError` or :class:`ResponseError`, naming it by its key and the options to change
(:class:`Flags`: scoring's, or the pipelines').
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import io
import json
import logging
import math
import os
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import torch

from foilkit.files import atomic_write
from foilkit.scorers.adapters._qwen_vl_utils import REFERENCE, resize_frames
from foilkit.scorers.lock import claim_holder_alive, release_claim, take_claim
from foilkit.scorers.requests import presented_metadata
from foilkit.scorers.retry import (
    MAX_REPLY_BYTES,
    REQUEST_TIMEOUT_S,
    ReplyTooLarge,
    check_key_variable,
    check_price,
    content_filtered,
    error_body,
    redact,
    reply_usage,
    retry_after,
)

T = TypeVar("T")
logger = logging.getLogger(__name__)

#: How frames are sent: one image part per frame, or one vLLM ``video_url`` part.
FRAME_INPUTS = ("images", "video")
#: How the frames' times are sent: as the video part's metadata (vLLM's ``media_io_kwargs`` and
#: ``mm_processor_kwargs``; ``frames_as="video"`` only), as a ``<t seconds>`` text part before
#: each image (lmms-eval's Qwen3-VL API messages), or not at all.
FRAME_TIMES = ("metadata", "text", "none")
#: Served model names whose checkpoints' model cards size frames with qwen-vl-utils, and that
#: rule's factor (pixels a merged token side): vLLM serves a checkpoint under its Hub id unless
#: told another name (``--served-model-name``).
QWEN_VL_NAMES = (
    (re.compile(r"qwen2(\.5)?-vl", re.IGNORECASE), 28),
    (re.compile(r"qwen3(\.5)?-vl|qwen3\.5|qwen4", re.IGNORECASE), 32),
)
IMAGE_FORMATS = ("png", "jpeg")
LOCAL_API_KEY = "EMPTY"  # what vLLM and SGLang accept when no key is configured
CACHE_FORMAT = 1
#: What a cache record of the foil pipelines' own client (before it was this one) held of the
#: reply, at its top level: read as a reply, so their caches on disk are still answers.
LEGACY_REPLY = ("texts", "prompt_tokens", "completion_tokens")
#: How often a process waiting for another's reply to the same request looks for it (seconds).
CLAIM_POLL_S = 0.05
#: The causes of rows whose request failed alone (the run goes on): a reply past
#: ``max_reply_bytes``, and a refusal where the mode needs log-probabilities.
REPLY_TOO_LARGE, REFUSED = "reply too large", "refused"


class MalformedReply(ValueError):
    """The server answered with something that is not a usable chat completion (retried);
    ``reply``: what it sent."""

    def __init__(self, message: str, reply: str | None = None) -> None:
        super().__init__(message)
        self.reply = reply


class RequestFailed(RuntimeError):
    """A request that failed for good; ``key`` names it (``None``: none could be made, e.g. no
    API key) and ``reply`` is what the server sent, if anything (redacted)."""

    def __init__(self, message: str, *, key: str | None = None, reply: str | None = None) -> None:
        super().__init__(message)
        self.key, self.reply = key, reply


class ResponseError(RequestFailed):
    """The server answered, but never with a usable chat completion (after the retries)."""


class RequestError(RequestFailed):
    """A non-retryable HTTP error, retries exhausted, or no request could be made."""


@dataclass(frozen=True)
class Flags:
    """The options a client's messages name, as its command line spells them (scoring's by
    default; the foil pipelines' :data:`foilkit.generation.llm.FLAGS`)."""

    retries: str = "--max-retries"
    timeout: str = "--request-timeout"
    reply_bound: str = "--max-reply-mb"
    key_variable: str = "--api-key-env"
    base_url: str = "--base-url"
    rerun: str = "rerun with --resume: answered requests are cached"


def _check_choice(what: str, value: Any, choices: tuple[str, ...], flag: str) -> None:
    if value not in choices:
        raise ValueError(f"unknown {what} {value!r} ({flag}); choose from {list(choices)}")


@dataclass(frozen=True)
class ServerBackend:
    """An OpenAI-compatible server and how to talk to it.

    Attributes:
        base_url: the endpoint (``http://host:8000/v1``); ``None``: OpenAI's.
        api_key_env: the NAME of the environment variable holding the key (never the key).
            Unset, a local server is sent ``EMPTY``; OpenAI's endpoint needs it set.
        frames_as: ``images`` (one ``image_url`` part per frame) or ``video`` (one vLLM
            ``video_url`` part of JPEG frames).
        image_format: ``png`` (lossless) or ``jpeg`` (quality 95) for ``images``.
        frame_times: how each frame's time is sent (:data:`FRAME_TIMES`); ``None``:
            ``metadata`` for ``video``, ``none`` for ``images`` (as lmms-eval's API models send
            them: the protocol's question unchanged).
        sampler_params: send ``top_k=-1`` and ``repetition_penalty=1`` (vLLM, SGLang); off for
            a hosted API that rejects unknown parameters.
        max_concurrency: requests in flight at once.
        max_retries, retry_backoff_s, max_backoff_s: see :mod:`foilkit.scorers.retry`.
        timeout_s: the most seconds one request may take in all, from sending it to its reply's
            last byte (``--request-timeout``); past it, it is retried as a timeout.
        max_reply_bytes: the largest reply read (``--max-reply-mb``); past it the request's
            rows fail (cause ``reply too large``).
        top_logprobs: first-token alternatives asked for in choice mode (OpenAI's limit: 20).
        price_per_1k_prompt_tokens, price_per_1k_completion_tokens: the cost estimate's prices.
        cache_dir: the reply cache's folder; ``None``: no cache.
    """

    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    frames_as: str = "images"
    image_format: str = "png"
    frame_times: str | None = None
    sampler_params: bool = True
    max_concurrency: int = 8
    max_retries: int = 5
    retry_backoff_s: float = 1.0
    max_backoff_s: float = 60.0
    timeout_s: float = REQUEST_TIMEOUT_S
    max_reply_bytes: int = MAX_REPLY_BYTES
    top_logprobs: int = 20
    price_per_1k_prompt_tokens: float | None = None
    price_per_1k_completion_tokens: float | None = None
    cache_dir: str | None = None

    def __post_init__(self) -> None:
        _check_choice("frame input", self.frames_as, FRAME_INPUTS, "--frames-as")
        _check_choice("image format", self.image_format, IMAGE_FORMATS, "--image-format")
        if self.frames_as == "video" and self.image_format != "jpeg":
            object.__setattr__(self, "image_format", "jpeg")  # vLLM's video/jpeg data URL
        if self.frame_times is None:
            times = "metadata" if self.frames_as == "video" else "none"
            object.__setattr__(self, "frame_times", times)
        _check_choice("frame times", self.frame_times, FRAME_TIMES, "--frame-times")
        if self.frame_times == "metadata" and self.frames_as != "video":
            raise ValueError(
                "--frame-times metadata needs --frames-as video (an image part carries no time): "
                "use --frame-times text to state each image's time, or none"
            )
        if self.frame_times == "text" and self.frames_as == "video":
            raise ValueError(
                "--frame-times text writes each image's time before it: with --frames-as video "
                "the times go as the video's metadata (--frame-times metadata), or none"
            )
        if self.max_concurrency < 1:
            raise ValueError(
                f"max_concurrency must be >= 1 (--max-concurrency), got {self.max_concurrency}"
            )
        if self.max_retries < 0:
            raise ValueError(f"max_retries must be >= 0 (--max-retries), got {self.max_retries}")
        check_key_variable(self.api_key_env, "--api-key-env")
        for kind in ("prompt", "completion"):
            price = getattr(self, f"price_per_1k_{kind}_tokens")
            check_price(price, f"--price-per-1k-{kind}-tokens")
        if not (math.isfinite(self.timeout_s) and self.timeout_s > 0):
            raise ValueError(
                f"the request timeout must be a number of seconds > 0 (--request-timeout), got "
                f"{self.timeout_s}"
            )
        if self.max_reply_bytes < 1:
            raise ValueError(
                f"the reply size bound must be > 0 (--max-reply-mb), got {self.max_reply_bytes} "
                "bytes"
            )

    @classmethod
    def for_chat(cls, settings: Any, **fields: Any) -> ServerBackend:
        """The endpoint of a chat client (the judge's, generation's) from its typed settings
        (a dataclass): each of their fields this class has too, then ``fields``; no sampler
        parameters (a hosted API rejects unknown ones)."""
        own = {field.name for field in dataclasses.fields(cls)}
        shared = {
            field.name: getattr(settings, field.name)
            for field in dataclasses.fields(settings)
            if field.name in own
        }
        return cls(**{**shared, "sampler_params": False, **fields})

    def check_key(self, flags: Flags = Flags(), whose: str = "") -> None:
        """Refuse OpenAI's endpoint without its key before any work (a local server takes
        none); ``flags`` and ``whose`` (`` for the judge``) name the client in the message."""
        if self.base_url is None and not os.environ.get(self.api_key_env):
            raise ValueError(
                f"no API key{whose}: ${self.api_key_env} is unset; export it (or name another "
                f"variable with {flags.key_variable} VAR), or point {flags.base_url} at a local "
                "server"
            )

    def to_record(self) -> dict[str, Any]:
        """The settings as ``run.json`` holds them (the key's variable name, never the key)."""
        record = asdict(self)
        record.pop("cache_dir")
        return {"name": "openai", **record}

    def costed(self, counts: Mapping[str, Any]) -> dict[str, Any]:
        """``counts`` with their cost at the configured prices (``None``: no prices)."""
        prices = (self.price_per_1k_prompt_tokens, self.price_per_1k_completion_tokens)
        return {**counts, "cost": token_cost(counts, *prices)}


@dataclass(frozen=True)
class Reply:
    """What is kept of one chat completion: each choice's text (``""`` for a choice without
    any: ``content: null``, counted in ``refusals``), the first token's top log-probabilities
    (``{token: logprob}``, choice mode), the prompt's tokens with their log-probabilities
    (``[[token_id, logprob], ...]``, first ``None``; likelihood), usage.

    ``failure`` (never cached): why the request failed alone (its rows fail with
    ``failure_cause``; the run goes on)."""

    texts: tuple[str, ...]
    top_logprobs: dict[str, float] | None = None
    prompt_logprobs: list[list[Any] | None] | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    refusals: int = 0
    failure: str | None = None
    failure_cause: str | None = None
    cached: bool = False

    def to_record(self) -> dict[str, Any]:
        record = {**asdict(self), "texts": list(self.texts)}
        del record["failure"], record["failure_cause"], record["cached"]
        return record

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> Reply:
        texts = data["texts"]
        if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
            raise ValueError(f"'texts' is {texts!r}")
        return cls(**{**data, "texts": tuple(texts)})

    @property
    def fault(self) -> tuple[str, str] | None:
        """``(message, cause)`` of a request that failed alone; ``None``: it was answered."""
        return None if self.failure is None else (self.failure, self.failure_cause or "")


def read_reply(data: Any, n: int) -> Reply:
    """A :class:`Reply` from a chat completion's JSON, or :class:`MalformedReply`."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices:
        raise MalformedReply(f"no choices in the reply: {str(data)[:200]!r}")
    if len(choices) != n:
        raise MalformedReply(f"{len(choices)} choices where n={n} were asked for")
    texts, refusals = [], 0
    for index, choice in enumerate(choices):
        message = choice.get("message") if isinstance(choice, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(message, dict) and content is None:
            # OpenAI's refusal form, a content filter's stop, a tool call: an answer, no text
            texts.append("")
            refusals += 1
            continue
        if not isinstance(content, str):
            raise MalformedReply(f"choice {index} has no text content (got {content!r})")
        texts.append(content)
    top = None
    first = ((choices[0].get("logprobs") or {}).get("content") or [None])[0]
    if isinstance(first, dict) and isinstance(first.get("top_logprobs"), list):
        top = {entry["token"]: float(entry["logprob"]) for entry in first["top_logprobs"]}
    prompt = None
    if isinstance(data.get("prompt_logprobs"), list):
        # the prompt's own token comes first (vLLM; with prompt_logprobs=0 it is alone)
        own = [next(iter(at.items())) if at else None for at in data["prompt_logprobs"]]
        prompt = [
            None if pair is None else [int(pair[0]), float(pair[1]["logprob"])] for pair in own
        ]
    prompt_tokens, completion_tokens = reply_usage(data)
    return Reply(tuple(texts), top, prompt, prompt_tokens, completion_tokens, refusals)


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


def encode_frame(frame: torch.Tensor, image_format: str) -> str:
    """One ``C x H x W`` uint8 frame as base64 PNG or JPEG (quality 95)."""
    from PIL import Image

    image = Image.fromarray(frame.permute(1, 2, 0).contiguous().cpu().numpy())
    buffer = io.BytesIO()
    if image_format == "png":
        image.save(buffer, format="PNG")
    else:
        image.save(buffer, format="JPEG", quality=95)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def frames_sha256(frames: torch.Tensor | None) -> str | None:
    """The content hash of a view's frames (shape and pixels, in order)."""
    if frames is None:
        return None
    digest = hashlib.sha256(str(tuple(frames.shape)).encode())
    digest.update(frames.contiguous().cpu().numpy().tobytes())
    return digest.hexdigest()


def presented_times(timestamps: Sequence[float]) -> list[float]:
    """Each frame's time as the frames are presented: in the order shown, from the earliest
    sampled time, one sampling interval apart (as the in-process adapter gives them,
    :func:`~foilkit.scorers.requests.presented_metadata`)."""
    metadata = presented_metadata(timestamps)
    return [index / metadata["fps"] for index in metadata["frames_indices"]]


def video_metadata(timestamps: Sequence[float]) -> dict[str, Any]:
    """The extra body that gives vLLM a ``video/jpeg`` part's time axis: ``media_io_kwargs``
    (every frame kept, ``num_frames=-1``; their rate and integer ``frames_indices``, from
    which Qwen3-VL's processor writes its timestamps; vLLM releases that read it per request)
    and ``mm_processor_kwargs``' ``fps`` (Qwen2.5-VL's ``second_per_grid_ts``). The indices
    count sampling intervals, so the first frame's time is rounded to a whole interval."""
    metadata = presented_metadata(timestamps)
    fps, count = metadata["fps"], metadata["total_num_frames"]
    start = round(metadata["frames_indices"][0])
    video = {
        "num_frames": -1,
        "fps": fps,
        "frames_indices": [start + index for index in range(count)],
        "total_num_frames": start + count,
        "duration": (start + count) / fps,
    }
    return {"media_io_kwargs": {"video": video}, "mm_processor_kwargs": {"fps": fps}}


def served_sizing(model: str, preprocess: str | None) -> dict[str, Any]:
    """How the frames are sized before they are sent: ``{"rule": "qwen-vl-utils", "factor"}``
    where the protocol asks for the reference sizing (``preprocess="reference"``) and the
    served name names a Qwen-VL checkpoint (:data:`QWEN_VL_NAMES`); else ``{"rule":
    "server"}`` (sent at their decoded size, sized by the server's processor), with ``why``
    where a reference sizing was asked for and cannot be applied."""
    if preprocess in (None, "default"):
        return {"rule": "server"}
    for pattern, factor in QWEN_VL_NAMES:
        if pattern.search(model):
            return {"rule": "qwen-vl-utils", "factor": factor, "reference": REFERENCE}
    return {
        "rule": "server",
        "why": f"preprocess={preprocess!r} not applied: the served name {model!r} names no "
        "Qwen2/2.5/3-VL checkpoint (whose qwen-vl-utils sizing foilkit applies before sending); "
        "frames are sent at their decoded size and sized by the server's own processor",
    }


@dataclass(frozen=True)
class Call:
    """One chat-completions request: the messages (frames still the ``video`` part), the
    frames and their ``timestamps`` (seconds, in the order shown; ``None``: unknown), the
    parameters (``extra``: sent as extra body), ``n`` choices expected, and ``key``: the cache
    key where its caller keys requests its own way (``None``: :meth:`ServedClient.key`)."""

    messages: tuple[dict[str, Any], ...]
    frames: torch.Tensor | None
    params: dict[str, Any]
    extra: dict[str, Any]
    n: int = 1
    timestamps: tuple[float, ...] | None = None
    key: str | None = None


def token_cost(
    usage: Mapping[str, Any], prompt_price: float | None, completion_price: float | None
) -> float | None:
    """The cost of ``usage``'s ``prompt_tokens`` and ``completion_tokens`` at the prices of 1000
    of each (``--price-per-1k-prompt-tokens``, ``--judge-price-per-1k-prompt-tokens``, ...; an
    unpriced kind counts as free); ``None`` when neither is priced: no cost is known."""
    if prompt_price is None and completion_price is None:
        return None
    spent = usage["prompt_tokens"] * (prompt_price or 0.0)
    return (spent + usage["completion_tokens"] * (completion_price or 0.0)) / 1000


#: What a client counts: the calls made (``asks``), each answered by a request sent
#: (``requests``), from the cache (``cache_hits``), by the reply to an identical call of the same
#: batch (``shared``) or failed alone (``failed``), so asks = requests + cache_hits + shared +
#: failed once a run ends; ``retries``, replies retried as malformed (``malformed_replies``,
#: billed: their tokens are counted where they say), answers without text (``refusals``), tokens.
USAGE_COUNTS = (
    "asks",
    "requests",
    "cache_hits",
    "shared",
    "retries",
    "malformed_replies",
    "failed",
    "refusals",
    "prompt_tokens",
    "completion_tokens",
)


class ServedClient:
    """Sends :class:`Call` s to one served model: cached, ``max_concurrency`` at a time,
    retried; counts usage (``ledger``: the name its spending is written under in a run's
    folder, :meth:`bill_to`). The ``openai`` client is made at the first uncached request (a
    cached rerun needs no server and no key)."""

    def __init__(
        self,
        model: str,
        server: ServerBackend,
        sizing: dict[str, Any] | None = None,
        ledger: str = "served",
        flags: Flags = Flags(),
    ) -> None:
        self.model, self.server, self.flags = model, server, flags
        #: how frames are sized before they are sent (:func:`served_sizing`)
        self.sizing = sizing or {"rule": "server"}
        self.cache = Path(server.cache_dir) if server.cache_dir else None
        self._client: Any = None
        self._secrets: tuple[str, ...] = ()
        self._lock = threading.Lock()
        self.counts = dict.fromkeys(USAGE_COUNTS, 0)
        self.ledger_name = ledger
        self._ledger: Path | None = None
        #: what the run's earlier sessions spent (:meth:`bill_to`), summed over their processes
        self.earlier: dict[str, int] = {}
        #: requests sent with frames, by the frames' (count, height, width) as sent and whether
        #: their times were sent
        self.frames_sent: dict[tuple[int, int, int, bool], int] = {}

    def key(self, call: Call) -> str:
        """The cache key: served model, messages, frames' content, how they are sent, and the
        parameters (decoding settings, seed, log-probabilities asked for); or the call's own."""
        if call.key is not None:
            return call.key
        payload = {
            "model": self.model,
            "messages": list(call.messages),
            "frames": frames_sha256(call.frames),
            "frames_as": self.server.frames_as,
            "image_format": self.server.image_format,
            "sizing": self.sizing,
            "times": [self.server.frame_times, call.timestamps] if self._timed(call) else None,
            "params": call.params,
            "extra": call.extra,
        }
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def bill_to(self, folder: str | os.PathLike | None, rank: int = 0) -> None:
        """Account this client's spending to the run whose folder is ``folder`` (``None``: no
        folder, nothing kept) from now on: every count is appended, as it happens, to
        ``<folder>/usage-<ledger>-rank-<rank>.jsonl`` (so a stopped run keeps what it spent),
        and what the files there already hold (the run's earlier sessions, every process) is
        :attr:`earlier`. Counting starts again at zero. Call it on every process before any
        of them sends."""
        with self._lock:
            self.counts = dict.fromkeys(USAGE_COUNTS, 0)
            self.earlier, self._ledger = {}, None
            if folder is None:
                return
            folder = Path(folder)
            self.earlier = ledger_totals(folder, self.ledger_name)
            folder.mkdir(parents=True, exist_ok=True)
            self._ledger = folder / f"usage-{self.ledger_name}-rank-{rank:05d}.jsonl"

    def spent(self, folder: Path) -> dict[str, Any]:
        """What the run whose folder is ``folder`` spent so far (every session, every process:
        the ledger), with its cost at the configured prices."""
        totals = dict.fromkeys(USAGE_COUNTS, 0) | ledger_totals(folder, self.ledger_name)
        return self.server.costed(totals)

    def _clean(self, text: str) -> str:
        """``text`` without the key (or anything key-shaped): for messages and records."""
        return redact(text, self._secrets)

    def _failed(
        self, kind: type[RequestFailed], message: str, key: str, reply: str | None
    ) -> RequestFailed:
        """The ``kind`` error of request ``key``: ``message`` and the server's ``reply``, both
        without the key."""
        return kind(self._clean(message), key=key, reply=self._clean(reply) if reply else None)

    def send_all(self, calls: Sequence[Call]) -> list[Reply]:
        """The replies to ``calls``, in order; identical calls are sent once (counted as
        ``shared``). A request that failed alone comes back with its ``failure``."""
        keys = [self.key(call) for call in calls]
        first = {key: call for key, call in zip(keys, calls)}
        self._count(asks=len(calls), shared=len(calls) - len(first))
        with ThreadPoolExecutor(max_workers=self.server.max_concurrency) as pool:
            futures = {key: pool.submit(self._get, key, call) for key, call in first.items()}
            errors = [f.exception() for f in futures.values() if f.exception() is not None]
            if errors:
                raise errors[0]
            replies = {key: future.result() for key, future in futures.items()}
        return [replies[key] for key in keys]

    def ask(self, call: Call) -> Reply:
        """The reply to one call (:meth:`send_all` of one, its errors raised as they come)."""
        self._count(asks=1)
        return self._get(self.key(call), call)

    def cache_path(self, key: str) -> Path:
        """Where the reply to the request of cache key ``key`` is kept."""
        assert self.cache is not None
        return self.cache / key[:2] / f"{key}.json"

    def _get(self, key: str, call: Call) -> Reply:
        """The reply to ``call``: from the cache, else sent once. Processes sharing the cache
        (the ranks of ``accelerate launch``) claim a request before sending it
        (:func:`foilkit.scorers.lock.take_claim`); another process that needs the same reply
        waits for the claimant's instead of asking again, so every process reads the same
        answer (a hosted model's, even sampled, may differ between two asks) and each request
        is paid for once. A claimant that dies or fails leaves the request to the next."""
        if self.cache is None:
            return self._send(key, call)
        claim = self.cache_path(key).with_suffix(".claim")
        while True:
            reply = self._cached(key)
            if reply is not None:
                return reply
            claim.parent.mkdir(parents=True, exist_ok=True)
            if take_claim(claim, max_age_s=self._claim_age_s()):
                try:
                    reply = self._cached(key)  # answered between the look and the claim
                    if reply is None:
                        reply = self._send(key, call)
                        if reply.failure is None:  # a failed request is asked again next run
                            self._store(key, call, reply)
                    return reply
                finally:
                    release_claim(claim)
            while claim_holder_alive(claim, max_age_s=self._claim_age_s()):
                time.sleep(CLAIM_POLL_S)

    def _claim_age_s(self) -> float:
        """How long a claim held from another host stands: the longest a request can take with
        its retries and their waits."""
        server = self.server
        return (server.max_retries + 1) * server.timeout_s + server.max_retries * (
            server.max_backoff_s
        )

    def _cached(self, key: str) -> Reply | None:
        """The cached reply to ``key`` (counted as a hit), ``None`` when there is none or it is
        unreadable (logged: it is asked again and replaced)."""
        assert self.cache is not None
        path = self.cache_path(key)
        if not path.is_file():
            return None
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
            if "reply" not in record:  # the foil pipelines' records before their client was this
                record = {"reply": {k: record[k] for k in LEGACY_REPLY if k in record}}
            reply = Reply.from_record(record["reply"])
        except (OSError, ValueError, KeyError, TypeError) as error:
            logger.warning("ignoring unreadable reply cache entry %s (%s)", key, error)
            return None
        self._count(cache_hits=1)
        return dataclasses.replace(reply, cached=True)

    def _store(self, key: str, call: Call, reply: Reply) -> None:
        """Write ``reply`` to the cache atomically (a reader sees all of it or none)."""
        record = {
            "format": CACHE_FORMAT,
            "model": self.model,
            "messages": list(call.messages),
            "frames_sha256": frames_sha256(call.frames),
            "params": call.params,
            "extra": call.extra,
            "reply": reply.to_record(),
            "created": time.time(),
        }
        atomic_write(self.cache_path(key), json.dumps(record, ensure_ascii=False))

    def _count(self, **increments: int) -> None:
        """Add to the counts, and to the run's ledger (:meth:`bill_to`) as it happens."""
        with self._lock:
            for name, value in increments.items():
                self.counts[name] += value
            if self._ledger is not None:
                with self._ledger.open("a", encoding="utf-8") as ledger:
                    ledger.write(json.dumps(increments) + "\n")

    def _openai(self) -> Any:
        with self._lock:
            if self._client is None:
                import openai

                key = os.environ.get(self.server.api_key_env)
                if not key:
                    if self.server.base_url is None:
                        raise RequestError(
                            f"no API key: set ${self.server.api_key_env} "
                            f"({self.flags.key_variable} names the variable), or point "
                            f"{self.flags.base_url} at a local server"
                        )
                    key = LOCAL_API_KEY
                self._secrets = (key,)
                self._client = openai.OpenAI(
                    api_key=key,
                    base_url=self.server.base_url,
                    max_retries=0,  # retries are ours: counted, with our backoff
                    timeout=self.server.timeout_s,
                )
            return self._client

    def _timed(self, call: Call) -> bool:
        """Whether ``call``'s frames are sent with their times (known, and a policy that sends
        them)."""
        return (
            call.frames is not None
            and call.timestamps is not None
            and self.server.frame_times != "none"
        )

    def _sized(self, frames: torch.Tensor) -> torch.Tensor:
        """The frames as sent: resized by :attr:`sizing`'s rule (rounded back to uint8), or as
        decoded."""
        if self.sizing["rule"] != "qwen-vl-utils":
            return frames
        resized = resize_frames(frames, self.sizing["factor"])
        return resized.round().clamp(0, 255).to(torch.uint8)

    def _messages(self, call: Call, frames: torch.Tensor | None) -> list[dict[str, Any]]:
        """The messages as sent: the video part replaced by ``frames`` (and, with
        ``frame_times="text"``, a ``<t seconds>`` text part before each image)."""
        if frames is None:
            return list(call.messages)
        encoded = [encode_frame(frame, self.server.image_format) for frame in frames]
        if self.server.frames_as == "video":
            url = "data:video/jpeg;base64," + ",".join(encoded)
            parts = [{"type": "video_url", "video_url": {"url": url}}]
        else:
            mime = f"image/{self.server.image_format}"
            parts = []
            times = presented_times(call.timestamps) if self._timed(call) else None
            for index, data in enumerate(encoded):
                if times is not None:  # frame_times="text"
                    parts.append({"type": "text", "text": f"<{times[index]:.1f} seconds>"})
                parts.append(
                    {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}
                )
        sent = []
        for message in call.messages:
            content = message["content"]
            if isinstance(content, list):
                content = [
                    piece
                    for part in content
                    for piece in (parts if part.get("type") == "video" else [part])
                ]
            sent.append({**message, "content": content})
        return sent

    def _send(self, key: str, call: Call) -> Reply:
        import openai

        client = self._openai()
        frames = self._sized(call.frames) if call.frames is not None else None
        messages = self._messages(call, frames)
        extra = dict(call.extra)
        if self._timed(call) and self.server.frame_times == "metadata":
            extra |= video_metadata(call.timestamps)
        if frames is not None:
            shape = (len(frames), *frames.shape[2:], self._timed(call))
            with self._lock:
                self.frames_sent[shape] = self.frames_sent.get(shape, 0) + 1
        where = f"{self.model!r} at {self.server.base_url or 'OpenAI'}"
        server, flags = self.server, self.flags

        def malformed(problem: Any, text: str | None = None, **billed: int) -> MalformedReply:
            self._count(malformed_replies=1, **billed)
            return MalformedReply(f"malformed reply from {where}: {problem}", text)

        def attempt() -> Reply:
            try:
                text = read_reply_body(
                    client.chat.completions.with_streaming_response.create,
                    timeout_s=server.timeout_s,
                    max_bytes=server.max_reply_bytes,
                    bound_flag=flags.reply_bound,
                    model=self.model,
                    messages=messages,
                    extra_body=extra or None,
                    **call.params,
                )
            except ValueError as error:  # not UTF-8
                raise malformed(error) from error
            try:
                data = json.loads(text)
            except ValueError as error:  # not JSON (truncated)
                problem = f"the reply could not be parsed ({type(error).__name__}: {error})"
                raise malformed(problem, text) from error
            try:
                return read_reply(data, call.n)
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                # billed all the same: its tokens count where it says them
                raise malformed(error, text, **_billed(data)) from error

        try:
            reply = with_retries(
                attempt,
                max_retries=server.max_retries,
                backoff_s=server.retry_backoff_s,
                max_backoff_s=server.max_backoff_s,
                also=(MalformedReply,),
                name=f"request {key[:12]}",
                on_retry=lambda: self._count(retries=1),
            )
        except ReplyTooLarge as error:
            self._count(failed=1)
            message = f"request {key} to {where}: {error}"
            logger.warning("%s", message)
            return Reply((), failure=message, failure_cause=REPLY_TOO_LARGE)
        except (MalformedReply, *retryable_errors()) as error:
            timeout = (
                f"; {flags.timeout} {server.timeout_s:g}s each"
                if isinstance(error, openai.APITimeoutError)
                else ""
            )
            failed = ResponseError if isinstance(error, MalformedReply) else RequestError
            reply = error.reply if isinstance(error, MalformedReply) else error_body(error)
            message = (
                f"request {key} to {where} failed after {server.max_retries + 1} attempts: "
                f"{error} ({flags.retries}{timeout}; {flags.rerun})"
            )
            raise self._failed(failed, message, key, reply) from None
        except openai.APIStatusError as error:
            if content_filtered(error):  # a refusal: an answer without text, as content null
                reply = Reply(("",) * call.n, refusals=call.n)
                self._count(requests=1, refusals=call.n)
                return reply
            body = error_body(error)
            shown = (body or str(error))[:500]
            message = f"{where} refused request {key} (HTTP {error.status_code}): {shown}"
            raise self._failed(RequestError, message, key, body) from None
        reply = dataclasses.replace(reply, texts=tuple(self._clean(t) for t in reply.texts))
        self._count(
            requests=1,
            refusals=reply.refusals,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
        )
        return reply

    def usage(self) -> dict[str, Any]:
        """This session's counts (:data:`USAGE_COUNTS`), and their cost at the configured
        prices (``None``: no prices)."""
        with self._lock:
            return self.server.costed(dict(self.counts))

    def usage_record(self) -> dict[str, Any]:
        """``usage`` (this session's, summed over processes by the caller) and, for a resumed
        run, ``usage_earlier_sessions`` (what the ledger held when it started, every process's:
        added once to the summed usage, :func:`foilkit.scorers.runner.summed_usage`)."""
        return {"usage": self.usage(), "usage_earlier_sessions": dict(self.earlier) or None}


def _billed(data: Any) -> dict[str, int]:
    """The tokens a reply that could not be used says it took (none where it says nothing
    readable)."""
    try:
        prompt_tokens, completion_tokens = reply_usage(data)
    except ValueError:
        return {}
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}


def ledger_totals(folder: Path, ledger: str) -> dict[str, int]:
    """The counts the ledger files ``<folder>/usage-<ledger>-rank-*.jsonl`` hold, summed (a
    line cut short by a kill is skipped)."""
    totals: dict[str, int] = {}
    for path in sorted(Path(folder).glob(f"usage-{ledger}-rank-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:  # the last line of a killed process
                continue
            for name, value in entry.items():
                if name in USAGE_COUNTS and isinstance(value, int):
                    totals[name] = totals.get(name, 0) + value
    return totals


def record_stop(adapter: Any, run_path: Path, folder: Path) -> None:
    """Write into a stopped run's ``run.json`` (its start record, before any end record) what
    it spent (``spent``: the served model's and the judge's ledgers, every session's, with
    their cost), so that the record of a run that stopped says what it cost. Never raises: the
    error that stopped the run goes on."""
    try:
        record = json.loads(run_path.read_text(encoding="utf-8"))
        if "finished_at" in record:  # a finished run's record: its usage is there already
            return
        spent = {name: client.spent(folder) for name, client in _served_clients(adapter)}
        atomic_write(run_path, json.dumps({**record, "spent": spent}, indent=2))
    except (OSError, ValueError) as error:
        logger.warning("could not record the stopped run's spend in %s: %s", run_path, error)


def bill_run(adapter: Any, folder: Path | None, rank: int) -> None:
    """Account the spending of ``adapter``'s served model and of its judge, where it has them,
    to the run whose folder (its shards) is ``folder`` (:meth:`ServedClient.bill_to`)."""
    for _, client in _served_clients(adapter):
        client.bill_to(folder, rank)


def _served_clients(adapter: Any) -> list[tuple[str, ServedClient]]:
    """The clients of ``adapter``'s served model (``backend``) and of its judge, where it has
    them."""
    owners = (("backend", adapter), ("judge", getattr(adapter, "judge", None)))
    clients = ((name, getattr(owner, "client", None)) for name, owner in owners)
    return [(name, client) for name, client in clients if isinstance(client, ServedClient)]
