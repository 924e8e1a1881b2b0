"""The shared chat client against a local OpenAI-compatible server: real client, real HTTP."""

from __future__ import annotations

import json

import pytest
from openai_server import MALFORMED_BODY, OpenAICompatibleServer

from foilkit.generation.llm import (
    ChatClient,
    LLMRequestError,
    LLMResponseError,
    LLMSettings,
    request_key,
    request_seed,
)


def _echo(body: dict) -> str:
    return "echo: " + body["messages"][-1]["content"]


def _messages(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "be brief"}, {"role": "user", "content": text}]


def _config(server: OpenAICompatibleServer, **overrides) -> LLMSettings:
    return LLMSettings(
        model="test-model", base_url=server.base_url, retry_backoff_s=0.001, **overrides
    )


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_request_carries_model_and_sampling():
    with OpenAICompatibleServer(_echo) as server:
        client = ChatClient(_config(server, temperature=0.7, top_p=0.9, max_tokens=33, seed=5))
        completion = client.complete(_messages("hello"))
    assert completion.texts == ("echo: hello",)
    assert not completion.cached
    (body,) = server.requests
    assert body["model"] == "test-model"
    assert body["messages"] == _messages("hello")
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.7, 0.9, 33)
    assert completion.prompt_tokens == 3 and completion.completion_tokens == 2


def test_each_request_is_sent_a_seed_derived_from_the_base_seed_and_recorded(tmp_path):
    prompts = [_messages("one"), _messages("two")]
    with OpenAICompatibleServer(_echo) as server:
        client = ChatClient(_config(server, seed=5, cache_dir=str(tmp_path)))
        answers = client.complete_many(prompts, progress=False)
        reseeded = ChatClient(_config(server, seed=6)).complete(prompts[0])
        unseeded = ChatClient(_config(server)).complete(prompts[0])
        not_sent = ChatClient(_config(server, seed=5, send_seed=False)).complete(prompts[0])
    sent = {body["messages"][-1]["content"]: body.get("seed") for body in server.requests[:2]}
    keys = [request_key(p, client.config) for p in prompts]
    assert sent == {"one": request_seed(keys[0]), "two": request_seed(keys[1])}
    assert [a.seed for a in answers] == [sent["one"], sent["two"]] and sent["one"] != sent["two"]
    assert reseeded.seed not in (None, sent["one"]) and server.requests[2]["seed"] == reseeded.seed
    assert "seed" not in server.requests[3] and unseeded.seed is None
    assert "seed" not in server.requests[4] and not_sent.seed is None
    # Recorded with the reply, and given back by the cache.
    assert (
        json.loads(client.client.cache_path(keys[0]).read_text())["params"]["seed"] == sent["one"]
    )
    assert (
        ChatClient(_config(server, seed=5, cache_dir=str(tmp_path))).complete(prompts[0]).seed
        == sent["one"]
    )


def test_n_choices_become_texts():
    with OpenAICompatibleServer(lambda body: [f"answer {i}" for i in range(body["n"])]) as server:
        completion = ChatClient(_config(server, n=3)).complete(_messages("x"))
    assert completion.texts == ("answer 0", "answer 1", "answer 2")


@pytest.mark.parametrize("status", [429, 503])
def test_retries_with_backoff_then_succeeds(status):
    with OpenAICompatibleServer(_echo, fail_first=2, fail_status=status) as server:
        client = ChatClient(_config(server, max_retries=3))
        completion = client.complete(_messages("again"))
    assert completion.texts == ("echo: again",)
    assert len(server.requests) == 3
    assert client.usage.retries == 2 and client.usage.requests == 1


def test_retries_exhausted_names_request():
    with OpenAICompatibleServer(_echo, fail_first=10) as server:
        client = ChatClient(_config(server, max_retries=2))
        with pytest.raises(LLMRequestError, match=r"failed after 3 attempts") as error:
            client.complete(_messages("never"))
    assert request_key(_messages("never"), client.config) in str(error.value)
    assert len(server.requests) == 3


def test_client_error_is_not_retried():
    with OpenAICompatibleServer(_echo, fail_first=5, fail_status=400) as server:
        client = ChatClient(_config(server))
        with pytest.raises(LLMRequestError, match="HTTP 400"):
            client.complete(_messages("bad request"))
    assert len(server.requests) == 1


def test_cache_survives_restart_with_zero_requests(tmp_path):
    prompts = [_messages(f"caption {i}") for i in range(5)]
    with OpenAICompatibleServer(_echo) as server:
        first = ChatClient(_config(server, cache_dir=str(tmp_path)))
        answers = first.complete_many(prompts, progress=False)
    assert len(server.requests) == 5
    assert not any(answer.cached for answer in answers)

    # A new client on the same cache folder, the server gone: everything comes from disk.
    restarted = ChatClient(
        LLMSettings(model="test-model", base_url="http://127.0.0.1:9/v1", cache_dir=str(tmp_path))
    )
    again = restarted.complete_many(prompts, progress=False)
    assert [a.texts for a in again] == [a.texts for a in answers]
    assert all(a.cached for a in again)
    assert restarted.usage.requests == 0 and restarted.usage.cache_hits == 5
    cached = json.loads(restarted.client.cache_path(again[0].key).read_text())
    assert cached["messages"] == prompts[0] and cached["model"] == "test-model"


def test_cache_key_depends_on_sampling_and_model(tmp_path):
    with OpenAICompatibleServer(_echo) as server:
        ChatClient(_config(server, cache_dir=str(tmp_path))).complete(_messages("a"))
        ChatClient(_config(server, cache_dir=str(tmp_path), top_p=0.5)).complete(_messages("a"))
        ChatClient(
            LLMSettings(model="other", base_url=server.base_url, cache_dir=str(tmp_path))
        ).complete(_messages("a"))
    assert len(server.requests) == 3


def test_malformed_reply_is_retried_like_a_server_error():
    attempts = []

    def truncated_twice(body: dict) -> bool:
        attempts.append(body)
        return len(attempts) <= 2

    with OpenAICompatibleServer(_echo, malformed=truncated_twice) as server:
        client = ChatClient(_config(server, max_retries=3))
        completion = client.complete(_messages("flaky"))
    assert completion.texts == ("echo: flaky",) and len(server.requests) == 3
    assert client.usage.retries == 2 and client.usage.requests == 1


def test_failed_requests_are_parked_and_the_rest_finish(tmp_path):
    prompts = [_messages(f"caption {i}") for i in range(4)]
    bad = prompts[1][-1]["content"]
    with OpenAICompatibleServer(
        _echo, malformed=lambda body: body["messages"][-1]["content"] == bad
    ) as server:
        client = ChatClient(_config(server, cache_dir=str(tmp_path), max_retries=2))
        answers = client.complete_many(prompts, progress=False, park=True)
    assert [a.failed for a in answers] == [False, True, False, False]
    assert answers[1].texts == () and answers[0].texts == ("echo: caption 0",)
    assert len(server.requests) == 3 + 3  # the bad one: 1 attempt + 2 retries
    (failure,) = client.failures
    assert failure.key == request_key(prompts[1], client.config) == answers[1].key
    assert failure.reply == MALFORMED_BODY.decode() and "after 3 attempts" in failure.error
    assert answers[1].failure == failure
    assert (client.usage.failures, client.usage.retries, client.usage.requests) == (1, 2, 3)
    # Parked requests are not cached: a rerun asks for them, and only them, again.
    with OpenAICompatibleServer(_echo) as healthy:
        rerun = ChatClient(_config(healthy, cache_dir=str(tmp_path)))
        again = rerun.complete_many(prompts, progress=False, park=True)
    assert [r["messages"][-1]["content"] for r in healthy.requests] == [bad]
    assert not any(a.failed for a in again) and rerun.failures == []


def test_malformed_reply_raises_naming_request_and_keeps_the_rest(tmp_path):
    prompts = [_messages(f"caption {i}") for i in range(6)]
    bad = prompts[3][-1]["content"]
    with OpenAICompatibleServer(
        _echo, malformed=lambda body: body["messages"][-1]["content"] == bad
    ) as server:
        client = ChatClient(_config(server, cache_dir=str(tmp_path), max_concurrency=3))
        with pytest.raises(LLMResponseError) as error:
            client.complete_many(prompts, progress=False)
    assert request_key(prompts[3], client.config) in str(error.value)
    # The five good replies were cached: a rerun against a healthy server asks only for the one.
    with OpenAICompatibleServer(_echo) as healthy:
        rerun = ChatClient(_config(healthy, cache_dir=str(tmp_path)))
        answers = rerun.complete_many(prompts, progress=False)
    assert [r["messages"][-1]["content"] for r in healthy.requests] == [bad]
    assert [a.cached for a in answers] == [True, True, True, False, True, True]


def test_reply_without_choices_is_malformed():
    with (
        OpenAICompatibleServer(lambda body: []) as server,
        pytest.raises(LLMResponseError, match="no choices"),
    ):
        ChatClient(_config(server)).complete(_messages("empty"))


def test_bounded_concurrency_and_order():
    prompts = [_messages(f"q{i}") for i in range(8)]
    with OpenAICompatibleServer(_echo, delay_s=0.05) as server:
        client = ChatClient(_config(server, max_concurrency=2))
        answers = client.complete_many(prompts, progress=False)
    assert [a.texts[0] for a in answers] == [f"echo: q{i}" for i in range(8)]
    assert server.max_concurrent == 2


def test_duplicate_requests_are_sent_once():
    with OpenAICompatibleServer(_echo) as server:
        answers = ChatClient(_config(server)).complete_many(
            [_messages("same"), _messages("other"), _messages("same")], progress=False
        )
    assert len(server.requests) == 2
    assert answers[0] == answers[2]


def test_usage_and_cost(tmp_path):
    with OpenAICompatibleServer(_echo) as server:
        client = ChatClient(
            _config(
                server,
                cache_dir=str(tmp_path),
                price_per_1k_prompt_tokens=1.0,
                price_per_1k_completion_tokens=2.0,
            )
        )
        client.complete(_messages("one two"))  # prompt 4 tokens, reply 3
        client.complete(_messages("one two"))  # cache hit: free
    usage = client.usage.to_record()
    assert usage == {
        "requests": 1,
        "cache_hits": 1,
        "retries": 0,
        "failures": 0,
        "malformed_replies": 0,
        "refusals": 0,
        "prompt_tokens": 4,
        "completion_tokens": 3,
        "cost": pytest.approx((4 * 1.0 + 3 * 2.0) / 1000),
    }
    assert ChatClient(LLMSettings(model="m")).usage.cost is None


def test_missing_key_for_openai_endpoint_is_explained():
    client = ChatClient(LLMSettings(model="gpt-3.5-turbo", api_key_env="FOILKIT_TEST_NO_SUCH_KEY"))
    with pytest.raises(LLMRequestError, match="FOILKIT_TEST_NO_SUCH_KEY"):
        client.complete(_messages("x"))


def test_base_url_from_environment(monkeypatch):
    with OpenAICompatibleServer(_echo) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert ChatClient(LLMSettings(model="m")).complete(_messages("env")).texts == ("echo: env",)


@pytest.mark.parametrize("bad", [[], [{"role": "user"}], [{"role": "user", "content": 3}]], ids=str)
def test_bad_messages_rejected(bad):
    with pytest.raises(ValueError, match="message"):
        ChatClient(LLMSettings(model="m")).complete(bad)


# --- a server that misbehaves on purpose (issue 41) -------------------------------------------

SECRET = "sk-generation-secret-0123456789"


def test_a_refusal_is_an_empty_answer_cached_not_a_failure(tmp_path):
    with OpenAICompatibleServer(lambda body: None) as server:
        client = ChatClient(_config(server, cache_dir=str(tmp_path), max_retries=3))
        (answer,) = client.complete_many([_messages("refuse me")], progress=False, park=True)
        assert answer.texts == ("",) and not answer.failed and answer.refusals == 1
        assert (client.usage.refusals, client.usage.retries, len(server.requests)) == (1, 0, 1)
        again = ChatClient(_config(server, cache_dir=str(tmp_path))).complete(
            _messages("refuse me")
        )
    assert again.cached and again.texts == ("",) and len(server.requests) == 1


def test_a_trickling_reply_is_cut_off_at_the_total_deadline():
    import time

    with OpenAICompatibleServer(_echo, trickle_s=0.02) as server:
        client = ChatClient(_config(server, timeout_s=0.3, max_retries=1))
        start = time.monotonic()
        with pytest.raises(LLMRequestError, match=r"after 2 attempts.*--timeout-s 0.3s"):
            client.complete(_messages("slowly"))
    assert time.monotonic() - start < 4 and client.usage.retries == 1


def test_a_reply_past_the_size_bound_fails_its_request_without_retries(tmp_path):
    with OpenAICompatibleServer(lambda body: "x" * 2**21) as server:
        client = ChatClient(_config(server, max_reply_bytes=2**20, max_retries=3))
        (answer,) = client.complete_many([_messages("huge")], progress=False, park=True)
    assert answer.failed and "larger than 1 MB" in answer.failure.error
    assert len(server.requests) == 1


@pytest.mark.parametrize("kind", ["error", "malformed"])
def test_an_echoed_key_is_redacted_from_parked_failures(monkeypatch, kind):
    """What ``<output>.run.json`` keeps of a failed request (its error and the reply) holds no
    key the server echoed."""
    monkeypatch.setenv("FOILKIT_TEST_GEN_KEY", SECRET)
    broken = {"faults": (400,)} if kind == "error" else {"malformed": lambda body: True}
    with OpenAICompatibleServer(_echo, echo_key=True, **broken) as server:
        client = ChatClient(_config(server, api_key_env="FOILKIT_TEST_GEN_KEY", max_retries=0))
        client.complete_many([_messages("x")], progress=False, park=True)
    assert "authorization" in server.headers[0]
    (failure,) = client.failures
    assert SECRET not in json.dumps(failure.to_record()) and "[redacted]" in failure.reply


@pytest.mark.parametrize("name", [SECRET, "gsk_" + "k" * 30, "hf_" + "Ab1" * 11, "AIza" + "z" * 35])
def test_a_key_given_as_the_key_variable_is_refused_with_the_fix(name):
    with pytest.raises(ValueError, match="--api-key-env MY_KEY") as refused:
        LLMSettings(model="m", api_key_env=name)
    assert name not in str(refused.value)


@pytest.mark.parametrize("price", [float("nan"), -1.0])
def test_prices_are_finite_and_not_negative(price):
    with pytest.raises(ValueError, match="--price-per-1k-prompt-tokens must be a finite"):
        LLMSettings(model="m", price_per_1k_prompt_tokens=price)


def test_negative_usage_is_rejected_and_malformed_replies_are_billed():
    with OpenAICompatibleServer(
        _echo, usage=lambda body: {"prompt_tokens": 4, "completion_tokens": -1}
    ) as server:
        client = ChatClient(_config(server, max_retries=0))
        with pytest.raises(LLMResponseError, match="cannot be negative"):
            client.complete(_messages("x"))
    broken = iter([True])
    with OpenAICompatibleServer(
        lambda body: [] if next(broken, False) else "fine",
        usage=lambda body: {"prompt_tokens": 5, "completion_tokens": 1},
    ) as server:
        client = ChatClient(_config(server, max_retries=2))
        client.complete(_messages("x"))
    usage = client.usage
    assert (usage.requests, usage.malformed_replies, usage.prompt_tokens) == (1, 1, 10)


def test_a_content_filter_refusing_the_prompt_is_an_empty_answer(tmp_path):
    with OpenAICompatibleServer(_echo, faults=(400,), error_code="content_filter") as server:
        client = ChatClient(_config(server, cache_dir=str(tmp_path)))
        (answer,) = client.complete_many([_messages("filtered")], progress=False, park=True)
        assert answer.texts == ("",) and not answer.failed and client.usage.refusals == 1
        assert (
            ChatClient(_config(server, cache_dir=str(tmp_path)))
            .complete(_messages("filtered"))
            .cached
        )
