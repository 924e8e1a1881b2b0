"""Video LLMs served behind an OpenAI-compatible API (vLLM, SGLang, hosted models) as scorers.

Where a model runs is a backend, separate from what is asked of it: a served video LLM is asked
the same chat messages (:mod:`foilkit.scorers.prompts`), in the same modes, and its answers are
read by the same code (:mod:`foilkit.scorers.generate`) as the in-process one
(:class:`foilkit.scorers.adapters.video_llm.VideoLLMAdapter`); only how a request reaches the
model differs:

* the view's frames, in the order shown, replace the ``{"type": "video"}`` part as base64 data
  URLs: one ``image_url`` part per frame (PNG, lossless, by default; or JPEG), or one vLLM
  ``video_url`` part (``data:video/jpeg;base64,<frame>,<frame>,...``, ``frames_as="video"``);
  their count and size are recorded. Their times (``frame_times``): with a ``video_url`` part,
  vLLM's video metadata (:func:`video_metadata`); with images, a ``<t seconds>`` text part
  before each (``text``, lmms-eval's Qwen3-VL API messages) or none (the default: an image part
  has no time field). Where the protocol asks for qwen-vl-utils' frame sizing
  (``preprocess="reference"``) and the served name is a Qwen-VL checkpoint's, the frames are
  resized by that rule first (:func:`served_sizing`); else the server's processor sizes them.
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

Requests run ``max_concurrency`` at a time, each retried with backoff on 429/5xx, timeouts and
malformed replies (:mod:`foilkit.scorers.retry`); ``timeout_s`` bounds a request's whole exchange
(however slowly its reply trickles), ``max_reply_bytes`` its reply (past it, the request's rows
fail with the cause ``reply too large``). A reply without text (``content: null``: a refusal, a
content filter, a tool call) is an answer: it is cached and read as an empty answer (generate mode:
``refused``; a mode that reads log-probabilities and gets none: the row fails with the cause
``refused``), never retried. Each reply is cached on disk (one JSON file, written atomically) under
the key of (served model, messages, frames' content hash, how the frames are sent, sized and timed,
decoding settings), so a resumed or repeated run sends nothing it already sent. Processes sharing
the cache (``accelerate launch``) claim a request before sending it; the others wait for that reply
(:meth:`ServedClient._get`). Token usage and its cost are recorded: what was billed (replies
retried as malformed too), over the run's whole life (:meth:`ServedClient.bill_to`: a resumed run
adds what its earlier sessions spent, a stopped one leaves what it spent in its folder). The API
key is read from the environment variable named by ``api_key_env`` when the first request is sent,
and never stored: records, caches and logs hold the variable's name only, and the key (or anything
key-shaped) a server echoes is redacted from every message and record
(:func:`~foilkit.scorers.retry.redact`).
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
import re
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from foilkit.files import atomic_write
from foilkit.scorers.adapters._features import likelihood_details
from foilkit.scorers.adapters._qwen_vl_utils import REFERENCE, resize_frames
from foilkit.scorers.adapters.base import RequestAdapter
from foilkit.scorers.adapters.video_llm import (
    ENTAIL_ANSWERS,
    ENTAIL_QUESTION,
    LIKELIHOOD_QUESTION,
    VideoLLMAdapter,
    mode_settings,
    presented_metadata,
)
from foilkit.scorers.generate import ORDER_DETAIL, cyclic_orders, score_by_generation
from foilkit.scorers.lock import claim_holder_alive, release_claim, take_claim
from foilkit.scorers.parsers import get_parser
from foilkit.scorers.prompts import (
    DEFAULT_PROMPT,
    LETTERS,
    asked_record,
    choice_messages,
    choice_prompt,
    fit_system_turn,
    question_text,
)
from foilkit.scorers.requests import GenerateRequest, Generations, TextScores, TextsRequest
from foilkit.scorers.retry import (
    MAX_REPLY_BYTES,
    REQUEST_TIMEOUT_S,
    ReplyTooLarge,
    check_key_variable,
    check_price,
    content_filtered,
    error_body,
    read_reply_body,
    redact,
    reply_usage,
    retryable_errors,
    with_retries,
)

logger = logging.getLogger(__name__)

#: Where a model runs: ``local`` (in this process, transformers) or ``openai`` (a server
#: speaking the OpenAI chat-completions API).
SERVING_BACKENDS = ("local", "openai")
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
#: The system turn is sent as one string: every chat-completions server takes that form.
SYSTEM_FORM = "string"
#: How often a process waiting for another's reply to the same request looks for it (seconds).
CLAIM_POLL_S = 0.05
#: The causes of rows whose request failed alone (the run goes on): a reply past
#: ``max_reply_bytes``, and a refusal where the mode needs log-probabilities.
REPLY_TOO_LARGE, REFUSED = "reply too large", "refused"
#: What ``run.json`` records as a served model's dtype: the server's business, not foilkit's.
SERVED_DTYPE = "not applicable (served)"


class MalformedReply(ValueError):
    """The server answered with something that is not a usable chat completion (retried)."""


class ServerCapabilityError(ValueError):
    """The server does not return what the mode needs (log-probabilities): a user error."""


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
        if self.frames_as not in FRAME_INPUTS:
            raise ValueError(
                f"unknown frame input {self.frames_as!r} (--frames-as); choose from "
                f"{list(FRAME_INPUTS)}"
            )
        if self.image_format not in IMAGE_FORMATS:
            raise ValueError(
                f"unknown image format {self.image_format!r} (--image-format); choose from "
                f"{list(IMAGE_FORMATS)}"
            )
        if self.frames_as == "video" and self.image_format != "jpeg":
            object.__setattr__(self, "image_format", "jpeg")  # vLLM's video/jpeg data URL
        if self.frame_times is None:
            times = "metadata" if self.frames_as == "video" else "none"
            object.__setattr__(self, "frame_times", times)
        if self.frame_times not in FRAME_TIMES:
            raise ValueError(
                f"unknown frame times {self.frame_times!r} (--frame-times); choose from "
                f"{list(FRAME_TIMES)}"
            )
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

    def check_key(self) -> None:
        """Refuse OpenAI's endpoint without its key before any work (a local server takes
        none)."""
        if self.base_url is None and not os.environ.get(self.api_key_env):
            raise ValueError(
                f"no API key: ${self.api_key_env} is unset; export it (or name another variable "
                "with --api-key-env VAR), or point --base-url at a local server"
            )

    def to_record(self) -> dict[str, Any]:
        """The settings as ``run.json`` holds them (the key's variable name, never the key)."""
        record = asdict(self)
        record.pop("cache_dir")
        return {"name": "openai", **record}


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

    def to_json(self) -> dict[str, Any]:
        record = {**asdict(self), "texts": list(self.texts)}
        del record["failure"], record["failure_cause"]
        return record

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reply:
        return cls(**{**data, "texts": tuple(data["texts"])})

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
        top = {}
        for entry in first["top_logprobs"]:
            top[entry["token"]] = float(entry["logprob"])
    prompt = None
    if isinstance(data.get("prompt_logprobs"), list):
        prompt = []
        for position in data["prompt_logprobs"]:
            if not position:
                prompt.append(None)
                continue
            # the prompt's own token comes first (vLLM; with prompt_logprobs=0 it is alone)
            token, entry = next(iter(position.items()))
            prompt.append([int(token), float(entry["logprob"])])
    prompt_tokens, completion_tokens = reply_usage(data)
    return Reply(tuple(texts), top, prompt, prompt_tokens, completion_tokens, refusals)


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
    :func:`~foilkit.scorers.adapters.video_llm.presented_metadata`)."""
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
    parameters (``extra``: sent as extra body), and ``n`` choices expected."""

    messages: tuple[dict[str, Any], ...]
    frames: torch.Tensor | None
    params: dict[str, Any]
    extra: dict[str, Any]
    n: int = 1
    timestamps: tuple[float, ...] | None = None


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
    ) -> None:
        self.model, self.server = model, server
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
        parameters (decoding settings, seed, log-probabilities asked for)."""
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
        server = self.server
        prices = (server.price_per_1k_prompt_tokens, server.price_per_1k_completion_tokens)
        return {**totals, "cost": token_cost(totals, *prices)}

    def _clean(self, text: str) -> str:
        """``text`` without the key (or anything key-shaped): for messages and records."""
        return redact(text, self._secrets)

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

    def _path(self, key: str) -> Path:
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
        claim = self._path(key).with_suffix(".claim")
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
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            reply = Reply.from_json(json.loads(path.read_text())["reply"])
        except (OSError, ValueError, KeyError, TypeError) as error:
            logger.warning("ignoring unreadable reply cache entry %s (%s)", key, error)
            return None
        self._count(cache_hits=1)
        return reply

    def _store(self, key: str, call: Call, reply: Reply) -> None:
        """Write ``reply`` to the cache atomically (a reader sees all of it or none)."""
        record = {
            "format": CACHE_FORMAT,
            "model": self.model,
            "messages": list(call.messages),
            "frames_sha256": frames_sha256(call.frames),
            "params": call.params,
            "extra": call.extra,
            "reply": reply.to_json(),
            "created": time.time(),
        }
        atomic_write(self._path(key), json.dumps(record, ensure_ascii=False))

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
                        raise ValueError(
                            f"no API key: set ${self.server.api_key_env} (--api-key-env names "
                            "the variable), or point --base-url at a local server"
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
        server = self.server

        def attempt() -> Reply:
            try:
                text = read_reply_body(
                    client.chat.completions.with_streaming_response.create,
                    timeout_s=server.timeout_s,
                    max_bytes=server.max_reply_bytes,
                    model=self.model,
                    messages=messages,
                    extra_body=extra or None,
                    **call.params,
                )
                data = json.loads(text)
            except ValueError as error:  # not JSON (truncated), not UTF-8
                self._count(malformed_replies=1)
                raise MalformedReply(f"malformed reply from {where}: {error}") from error
            try:
                return read_reply(data, call.n)
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                # billed all the same: its tokens count where it says them
                self._count(malformed_replies=1, **_billed(data))
                raise MalformedReply(f"malformed reply from {where}: {error}") from error

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
            message = f"request {key[:12]} to {where}: {error}"
            logger.warning("%s", message)
            return Reply((), failure=message, failure_cause=REPLY_TOO_LARGE)
        except (MalformedReply, *retryable_errors()) as error:
            timeout = (
                f"; --request-timeout {server.timeout_s:g}s each"
                if isinstance(error, openai.APITimeoutError)
                else ""
            )
            raise RuntimeError(
                self._clean(
                    f"request {key[:12]} to {where} failed after {server.max_retries + 1} "
                    f"attempts: {error} (--max-retries{timeout}; rerun with --resume: answered "
                    "requests are cached)"
                )
            ) from None
        except openai.APIStatusError as error:
            if content_filtered(error):  # a refusal: an answer without text, as content null
                reply = Reply(("",) * call.n, refusals=call.n)
                self._count(requests=1, refusals=call.n)
                return reply
            raise RuntimeError(
                self._clean(
                    f"{where} refused request {key[:12]} (HTTP {error.status_code}): "
                    f"{(error_body(error) or str(error))[:500]}"
                )
            ) from None
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
            counts = dict(self.counts)
        server = self.server
        prices = (server.price_per_1k_prompt_tokens, server.price_per_1k_completion_tokens)
        return {**counts, "cost": token_cost(counts, *prices)}

    def usage_record(self) -> dict[str, Any]:
        """``usage`` (this session's, summed over processes by the caller) and, for a resumed
        run, ``usage_earlier_sessions`` (what the ledger held when it started, every process's:
        added once to the summed usage, :func:`foilkit.scorers.api.summed_usage`)."""
        return {"usage": self.usage(), "usage_earlier_sessions": dict(self.earlier) or None}


def _billed(data: Any) -> dict[str, int]:
    """The tokens a reply that could not be used says it took (none where it says nothing
    readable)."""
    try:
        prompt_tokens, completion_tokens = reply_usage(data)
    except ValueError:
        return {}
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}


class ServedVideoLLM(RequestAdapter):
    """The ``video-llm`` adapter's modes and settings, answered by a model behind an
    OpenAI-compatible server (``model_id``: the served model's name).

    Args:
        server: the server and how to talk to it.
        the rest: as :class:`~foilkit.scorers.adapters.video_llm.VideoLLMAdapter`, but
            ``preprocess``: ``reference`` sizes the frames by qwen-vl-utils before sending only
            for a served Qwen-VL checkpoint (:func:`served_sizing`); otherwise the server's
            processor sizes them, recorded with why.
    """

    name = "video-llm"
    modes = VideoLLMAdapter.modes
    options = VideoLLMAdapter.options
    asks_questions = True
    score_kind = "log_probability"

    def __init__(
        self,
        model_id: str,
        *,
        server: ServerBackend,
        reduction: str | None = None,
        continuation: str | None = None,
        prompt: str | None = None,
        preprocess: str | None = None,
        parser: str | None = None,
        **kwargs: Any,
    ):
        generating = {k: kwargs.pop(k, None) for k in ("temperature", "top_p", "num_samples")}
        generating |= {k: kwargs.pop(k, None) for k in ("max_new_tokens", "seed")}
        kwargs.pop("placement", None)
        super().__init__(model_id, **kwargs)
        #: the protocol's frame sizing: qwen-vl-utils' (``preprocess="reference"``) applied
        #: before sending where the served name names a Qwen-VL checkpoint, else the server's
        #: own processor's, recorded with why (never silently dropped)
        self.preprocess = preprocess
        self.sizing = served_sizing(model_id, preprocess)
        if "why" in self.sizing:
            logger.warning("%s", self.sizing["why"])
        settings = mode_settings(
            self.mode,
            reduction=reduction,
            continuation=continuation,
            prompt=prompt,
            parser=parser,
            **generating,
        )
        self.score_kind = settings.score_kind
        self.decoding, self.parser = settings.decoding, settings.parser
        self.reduction, self.continuation = settings.reduction, settings.continuation
        self.prompt = settings.prompt
        self.server = server
        self.client = ServedClient(model_id, server, self.sizing)

    def describe(self, *, own_questions: str = "none") -> dict[str, Any]:
        """As :meth:`VideoLLMAdapter.describe`, with the server and how it is sent to."""
        return asked_record(self._describe(), own_questions)

    def _describe(self) -> dict[str, Any]:
        common = {
            **super().describe(),
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
        if self.mode == "likelihood":
            return {
                **common,
                "prompt": LIKELIHOOD_QUESTION,
                "reduction": self.reduction,
                "continuation": self.continuation,
            }
        if self.mode == "generate":
            common |= {"decoding": self.decoding.to_record(), "parser": self.parser}
        prompt = choice_prompt(self.prompt)
        if prompt.system is not None:
            common |= {"system_prompt": prompt.system, "system_form": SYSTEM_FORM}
        return {**common, "prompt": prompt.template, "prompt_name": self.prompt}

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
            calls.append(
                Call(
                    messages,
                    request.frames,
                    params,
                    self._sampler(),
                    decoding.num_samples,
                    request.timestamps,
                )
            )
        return [
            Generations(tuple(text.strip() for text in reply.texts), fault=reply.fault)
            for reply in self.client.send_all(calls)
        ]

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
        if self.mode == "choice":
            return self._choices(requests)
        if self.mode == "entail":
            return self._entailments(requests)
        return self._likelihoods(requests)

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

    def _entailments(self, requests: Sequence[TextsRequest]) -> list[TextScores]:
        """Entail mode: each text's VELOCITI question, scored P(Yes) / (P(Yes) + P(No)) from the
        first answer token's top log-probabilities (as the in-process mode reads its logits)."""
        calls = [
            self._first_token_call(
                choice_messages(
                    self.prompt or DEFAULT_PROMPT, ENTAIL_QUESTION.format(caption=text), None
                ),
                request,
            )
            for request in requests
            for text in request.texts
        ]
        replies = iter(self.client.send_all(calls))
        results = []
        for request in requests:
            mine = [next(replies) for _ in request.texts]
            fault = self._fault(mine, "top_logprobs")
            if fault is not None:
                results.append(failed_scores(request, fault))
                continue
            yes = [self._answer_probabilities(reply, ENTAIL_ANSWERS)[0] for reply in mine]
            results.append(TextScores(tuple(yes)))
        return results

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

    def _choices(self, requests: Sequence[TextsRequest]) -> list[TextScores]:
        """Choice mode: option letters from the first answer token's top log-probabilities; a
        row's own question by its answers' prompt log-probabilities (softmax of their sums)."""
        own = [r for r in requests if r.question is not None]
        answered = dict(zip(map(id, own), self._answer_logprobs(own))) if own else {}
        calls = []
        for request in requests:
            if request.question is not None:
                continue
            count = len(request.texts)
            if count > len(LETTERS):
                raise ValueError(f"choice mode takes at most {len(LETTERS)} options, got {count}")
            for order in cyclic_orders(count):
                question = question_text(self.prompt, [request.texts[i] for i in order])
                messages = choice_messages(self.prompt, question, count, SYSTEM_FORM)
                calls.append(self._first_token_call(messages, request))
        replies = iter(self.client.send_all(calls))
        results = []
        for request in requests:
            if request.question is not None:
                logprobs = answered[id(request)]
                if isinstance(logprobs, TextScores):  # failed
                    results.append(logprobs)
                    continue
                details = likelihood_details(logprobs)
                sums = torch.tensor(details["logprob_sum"], dtype=torch.float64)
                results.append(TextScores(tuple(sums.softmax(0).tolist()), details))
                continue
            count = len(request.texts)
            mine = [next(replies) for _ in range(count)]
            fault = self._fault(mine, "top_logprobs")
            if fault is not None:
                results.append(failed_scores(request, fault))
                continue
            per_order = [[0.0] * count for _ in range(count)]
            for shift, order in enumerate(cyclic_orders(count)):
                probabilities = self._answer_probabilities(mine[shift], LETTERS[:count])
                for position, text in enumerate(order):
                    per_order[shift][text] = probabilities[position]
            details = {f"{ORDER_DETAIL}{k}": tuple(per_order[k]) for k in range(count)}
            mean = tuple(sum(row[i] for row in per_order) / count for i in range(count))
            results.append(TextScores(mean, details))
        return results

    def _answer_probabilities(self, reply: Reply, answers: Sequence[str]) -> list[float]:
        """The probabilities of the one-token ``answers`` (option letters; ``Yes``/``No``) among
        themselves, from the first answer token's top log-probabilities (each answer's tokens
        with and without a leading space pooled)."""
        if reply.top_logprobs is None:
            raise ServerCapabilityError(
                f"{self.server.base_url or 'OpenAI'} returned no logprobs for {self.model_id!r}'s "
                f"first answer token: {self.mode} mode reads the answers' probabilities from "
                "them (vLLM and OpenAI's chat completions return them); use --mode generate"
            )
        letters = list(answers)
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
        top = max(logits)
        weights = [math.exp(value - top) for value in logits]
        return [weight / sum(weights) for weight in weights]

    def _likelihoods(self, requests: Sequence[TextsRequest]) -> list[TextScores]:
        logprobs = self._answer_logprobs(requests)
        results = []
        for scored in logprobs:
            if isinstance(scored, TextScores):  # failed
                results.append(scored)
                continue
            details = likelihood_details(scored)
            results.append(TextScores(details[f"logprob_{self.reduction}"], details))
        return results

    def _answer_logprobs(
        self, requests: Sequence[TextsRequest]
    ) -> list[list[torch.Tensor] | TextScores]:
        """Per request, per text: the log-probabilities of its answer's tokens, read from the
        prompt log-probabilities of the prompt with the answer written as the assistant turn,
        past the tokens of the same prompt with an empty answer (a request whose replies score
        nothing: its failed :class:`TextScores`)."""
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
        results: list[list[torch.Tensor] | TextScores] = []
        for request, count in zip(requests, shapes):
            mine = [next(replies) for _ in range(count + 1)]
            fault = self._fault(mine, "prompt_logprobs")
            if fault is not None:
                results.append(failed_scores(request, fault))
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
        spent = {}
        for name, owner in (("backend", adapter), ("judge", getattr(adapter, "judge", None))):
            client = getattr(owner, "client", None)
            if isinstance(client, ServedClient):
                spent[name] = client.spent(folder)
        atomic_write(run_path, json.dumps({**record, "spent": spent}, indent=2))
    except (OSError, ValueError) as error:
        logger.warning("could not record the stopped run's spend in %s: %s", run_path, error)


def bill_run(adapter: Any, folder: Path | None, rank: int) -> None:
    """Account the spending of ``adapter``'s served model and of its judge, where it has them,
    to the run whose folder (its shards) is ``folder`` (:meth:`ServedClient.bill_to`)."""
    for owner in (adapter, getattr(adapter, "judge", None)):
        client = getattr(owner, "client", None)
        if isinstance(client, ServedClient):
            client.bill_to(folder, rank)


def failed_scores(request: TextsRequest, fault: tuple[str, str]) -> TextScores:
    """The scores of a request whose replies score nothing: its rows fail with ``fault``."""
    return TextScores(tuple(0.0 for _ in request.texts), fault=fault)


def _logsumexp(values: list[float]) -> float:
    if not values:
        return -math.inf
    top = max(values)
    return top + math.log(sum(math.exp(value - top) for value in values))
