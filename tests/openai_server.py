"""A local OpenAI-compatible chat-completions server for offline tests.

Tests of the LLM pipelines run the real ``openai`` client over real HTTP against this server,
so the code under test (request building, retries, response parsing, caching) is the code that
talks to OpenAI, vLLM or Ollama. The server answers ``POST /v1/chat/completions`` with what a
``responder`` callable returns for the request body, and can be told to fail the first requests
(rate limits, server errors) or to send malformed replies. For served video LLMs it takes
multimodal messages as they come (image and video parts), returns the first answer token's
``logprobs``/``top_logprobs`` when asked (``top_logprobs``) and vLLM's ``prompt_logprobs``
(``prompt_logprobs``), fails requests with a list of statuses (``faults``) and can be slow.
It misbehaves on purpose where a test asks: a choice without text (the responder returns
``None``: OpenAI's refusal form, ``content: null``), a reply trickled a byte at a time
(``trickle_s``), any body size (the responder's text), the caller's key echoed in its error and
malformed bodies (``echo_key``), and the usage it reports (``usage``, negative counts too).

Example::

    with OpenAICompatibleServer(lambda body: "a reply") as server:
        client = ChatClient(LLMSettings(model="test", base_url=server.base_url))
        client.complete([{"role": "user", "content": "hi"}])
        assert len(server.requests) == 1
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_COMPLETIONS_PATH = "/v1/chat/completions"
# What a malformed reply looks like: a JSON body cut off mid-way, as a dropped proxy sends it.
MALFORMED_BODY = b'{"id": "chatcmpl-malformed", "object": "chat.completion", "choices": [{"ind'


def _count_tokens(text: str) -> int:
    """Whitespace tokens: a deterministic stand-in for a tokenizer, enough for usage accounting."""
    return len(text.split())


class OpenAICompatibleServer:
    """A real HTTP server (``http.server`` in a thread) speaking ``POST /v1/chat/completions``.

    Args:
        responder: request body (the parsed JSON the client sent) -> the reply text, or a list of
            texts, one per choice (so a request with ``n=3`` gets three choices when the
            responder returns three texts); ``None`` for a choice: a refusal (``content: null``
            with OpenAI's ``refusal`` text).
        fail_first: the first ``fail_first`` requests are answered with ``fail_status`` and an
            OpenAI-style error body (a ``retry-after: 0`` header on 429s).
        fail_status: the HTTP status of those failures (429 rate limit, 500/503 server error).
        malformed: request body -> whether to answer it with a truncated, unparseable JSON body.
        delay_s: seconds each reply is held back, to make concurrency observable.
        faults: HTTP statuses the first requests get, in turn (``(429, 500, 503)``), before
            ``fail_first``'s.
        top_logprobs: request body -> the first answer token's log-probabilities
            (``{token: logprob}``), sent as ``logprobs.content[0].top_logprobs`` (the
            ``top_logprobs`` most likely) when the request asks for ``logprobs``; ``None``:
            a server that returns none.
        prompt_logprobs: request body -> the prompt's tokens as ``(token_id, logprob)``, sent
            as vLLM does (``prompt_logprobs``: ``None`` for the first token, then
            ``{id: {"logprob", "rank", "decoded_token"}}``) when the request asks for them.
        trickle_s: seconds between the bytes of each reply body (its headers come at once): a
            proxy that keeps a connection alive a byte at a time.
        echo_key: error and malformed bodies repeat the request's ``Authorization`` header, as a
            server echoing a bad key does.
        usage: request body -> the ``usage`` the reply reports (default: whitespace tokens).
        error_code: the ``code`` of the error bodies (``content_filter``: Azure OpenAI's
            refusal of a prompt its filter stops, with a 400).

    Attributes:
        base_url: ``"http://127.0.0.1:<port>/v1"``, set once the server has started.
        requests: every request body received, failures included, in arrival order.
        headers: every request's headers, in the same order.
        max_concurrent: the most requests the server was handling at the same time.
    """

    def __init__(
        self,
        responder: Callable[[dict], str | list[str]],
        *,
        fail_first: int = 0,
        fail_status: int = 429,
        malformed: Callable[[dict], bool] | None = None,
        delay_s: float = 0.0,
        faults: tuple[int, ...] = (),
        top_logprobs: Callable[[dict], dict[str, float]] | None = None,
        prompt_logprobs: Callable[[dict], list[tuple[int, float]]] | None = None,
        trickle_s: float = 0.0,
        echo_key: bool = False,
        usage: Callable[[dict], dict[str, Any]] | None = None,
        error_code: str | None = None,
    ) -> None:
        self.responder = responder
        self.fail_first = fail_first
        self.fail_status = fail_status
        self.malformed = malformed
        self.delay_s = delay_s
        self.faults = list(faults)
        self.top_logprobs = top_logprobs
        self.prompt_logprobs = prompt_logprobs
        self.trickle_s = trickle_s
        self.echo_key = echo_key
        self.usage = usage
        self.error_code = error_code
        self.requests: list[dict] = []
        #: every request's HTTP headers (lower-case names), in arrival order
        self.headers: list[dict[str, str]] = []
        self.max_concurrent = 0
        self.base_url = ""
        self._lock = threading.Lock()
        self._in_flight = 0
        self._failures_left = fail_first
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> OpenAICompatibleServer:
        if self._httpd is not None:
            raise RuntimeError(f"server already running at {self.base_url}")
        handler = type("Handler", (_Handler,), {"server_state": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        host, port = self._httpd.server_address[:2]
        self.base_url = f"http://{host}:{port}/v1"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        self._httpd = self._thread = None

    def __enter__(self) -> OpenAICompatibleServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- request handling ----------------------------------------------------------------------

    def _reply(self, body: dict, headers: dict[str, str]) -> tuple[int, bytes, dict[str, str]]:
        """Status, body and extra headers for one request body."""
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            status = self.faults.pop(0) if self.faults else None
            failing = status is None and self._failures_left > 0
            if failing:
                self._failures_left -= 1
                status = self.fail_status
        echoed = f" (got {headers.get('authorization')})" if self.echo_key else ""
        if status is not None:
            error = {
                "error": {
                    "message": f"simulated failure (HTTP {status}){echoed}",
                    "type": "rate_limit_error" if status == 429 else "server_error",
                    "code": self.error_code,
                    "param": None,
                }
            }
            extra = {"retry-after": "0"} if status == 429 else {}
            return status, json.dumps(error).encode(), extra
        if self.malformed is not None and self.malformed(body):
            return 200, MALFORMED_BODY + echoed.encode(), {}
        return 200, json.dumps(self._completion(body)).encode(), {}

    def _completion(self, body: dict) -> dict[str, Any]:
        answer = self.responder(body)
        texts = [answer] if answer is None or isinstance(answer, str) else list(answer)
        prompt = " ".join(str(message.get("content", "")) for message in body.get("messages", []))
        completion_tokens = sum(_count_tokens(text) for text in texts if text is not None)
        reply = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [
                {
                    "index": index,
                    "message": {"role": "assistant", "content": text}
                    if text is not None
                    else {"role": "assistant", "content": None, "refusal": "I can't help."},
                    "finish_reason": "stop",
                }
                for index, text in enumerate(texts)
            ],
            "usage": {
                "prompt_tokens": _count_tokens(prompt),
                "completion_tokens": completion_tokens,
                "total_tokens": _count_tokens(prompt) + completion_tokens,
            },
        }
        if self.usage is not None:
            reply["usage"] = self.usage(body)
        if body.get("logprobs") and self.top_logprobs is not None:
            ranked = sorted(self.top_logprobs(body).items(), key=lambda item: -item[1])
            top = [{"token": t, "logprob": lp, "bytes": None} for t, lp in ranked]
            for choice in reply["choices"]:
                choice["logprobs"] = {
                    "content": [{**top[0], "top_logprobs": top[: body.get("top_logprobs") or 0]}]
                }
        if body.get("prompt_logprobs") is not None and self.prompt_logprobs is not None:
            tokens = self.prompt_logprobs(body)
            reply["prompt_logprobs"] = [None] + [
                {str(token): {"logprob": lp, "rank": 1, "decoded_token": str(token)}}
                for token, lp in tokens[1:]
            ]
        return reply


class _Handler(BaseHTTPRequestHandler):
    server_state: OpenAICompatibleServer
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        state = self.server_state
        length = int(self.headers.get("content-length", 0))
        raw = self.rfile.read(length)
        if self.path.rstrip("/") != CHAT_COMPLETIONS_PATH:
            self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}).encode())
            return
        try:
            body = json.loads(raw)
        except json.JSONDecodeError as error:
            self._send(400, json.dumps({"error": {"message": f"bad JSON: {error}"}}).encode())
            return
        with state._lock:
            state._in_flight += 1
            state.max_concurrent = max(state.max_concurrent, state._in_flight)
        try:
            if state.delay_s:
                time.sleep(state.delay_s)
            status, payload, headers = state._reply(
                body, {name.lower(): value for name, value in self.headers.items()}
            )
        finally:
            with state._lock:
                state._in_flight -= 1
        self._send(status, payload, headers)

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            if not self.server_state.trickle_s:
                self.wfile.write(payload)
                return
            for index in range(len(payload)):
                self.wfile.write(payload[index : index + 1])
                self.wfile.flush()
                time.sleep(self.server_state.trickle_s)
        except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass
