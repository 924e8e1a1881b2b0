"""One OpenAI-compatible client (:mod:`foilkit.scorers.openai_client`) for served scoring, the
LLM judge and the foil pipelines: one module imports ``openai``, all three send through
``ServedClient``, and the pipelines' reply caches written before keep answering."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from foilkit.generation.llm import ChatClient, LLMRequestError, LLMSettings, request_key
from foilkit.scorers.judge import Judge, JudgeSettings
from foilkit.scorers.openai_client import Call, RequestError, ServedClient, ServerBackend
from foilkit.scorers.served import ServedVideoLLM
from tests.openai_server import OpenAICompatibleServer

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("foilkit", "scorers", "builders", "metrics", "generation", "benchmarks")


def _imports_openai(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "openai" for a in node.names
        ):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "openai":
            return True
    return False


def test_exactly_one_module_imports_openai():
    importing = sorted(
        str(path.relative_to(ROOT))
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if _imports_openai(path)
    )
    assert importing == ["scorers/openai_client.py"]


def test_served_scoring_the_judge_and_the_pipelines_share_the_client():
    served = ServedVideoLLM("vlm", server=ServerBackend(base_url="http://x/v1"), mode="choice")
    judge = Judge(JudgeSettings("gpt-4o-mini", base_url="http://x/v1"), "tomato", None)
    pipelines = ChatClient(LLMSettings(model="m", base_url="http://x/v1"))
    assert {type(owner.client) for owner in (served, judge, pipelines)} == {ServedClient}
    # one error type, whatever sent the request: the pipelines' name is the client's
    assert LLMRequestError is RequestError


def test_the_judge_and_the_pipelines_reach_the_server_with_every_setting_they_were_given():
    """One constructor (``ServerBackend.for_chat``) copies each typed setting the endpoint has,
    so none is dropped on the way (a retry wait, a reply bound, a price)."""
    endpoint = {"base_url": "http://x/v1", "api_key_env": "KEY", "max_concurrency": 3}
    limits = {"max_retries": 2, "timeout_s": 7.0, "max_reply_bytes": 1234}
    prices = {"price_per_1k_prompt_tokens": 0.5, "price_per_1k_completion_tokens": 1.5}
    backoff = {"retry_backoff_s": 0.25, "max_backoff_s": 9.0}
    given = {**endpoint, **limits, **prices}
    config = LLMSettings(model="m", cache_dir="/c", **given, **backoff)
    assert config.server() == ServerBackend(
        sampler_params=False, cache_dir="/c", **given, **backoff
    )
    judge = Judge(JudgeSettings("j", **given), "tomato", "/cache")
    assert judge.server == ServerBackend(sampler_params=False, cache_dir="/cache", **given)


def test_the_endpoint_takes_the_fields_given_over_the_settings():
    backend = ServerBackend.for_chat(LLMSettings(model="m", base_url="http://a/v1"), base_url=None)
    assert backend.base_url is None and backend.sampler_params is False


def test_a_pipeline_cache_record_written_before_the_shared_client_still_answers(tmp_path):
    """The pipelines' own records (the reply's texts and tokens at the top level) are read as
    replies: a rerun after the upgrade sends nothing for what was answered."""
    config = LLMSettings(
        model="test-model", base_url="http://127.0.0.1:9/v1", cache_dir=str(tmp_path)
    )
    messages = [{"role": "user", "content": "a caption"}]
    key = request_key(messages, config)
    path = tmp_path / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    old = {
        "format": 1,
        "key": key,
        "model": "test-model",
        "sampling": config.sampling(),
        "request_seed": None,
        "messages": messages,
        "texts": ["a foil"],
        "prompt_tokens": 7,
        "completion_tokens": 2,
        "created": 0.0,
    }
    path.write_text(json.dumps(old), encoding="utf-8")
    client = ChatClient(config)  # the server at port 9 is never reached
    completion = client.complete(messages)
    assert completion.cached and completion.texts == ("a foil",)
    assert (completion.prompt_tokens, client.usage.cache_hits, client.usage.requests) == (7, 1, 0)


def test_a_served_failure_names_the_scoring_flags_and_a_pipeline_one_its_own():
    def timeout_names(client_config) -> str:
        with OpenAICompatibleServer(
            lambda body: "echo " + body["messages"][-1]["content"], trickle_s=0.02
        ) as server:
            client = client_config(server)
            with pytest.raises(RequestError) as failed:
                client()
        return str(failed.value)

    def served(server):
        backend = ServerBackend(base_url=server.base_url, max_retries=0, timeout_s=0.3)
        client = ServedClient("m", backend)
        return lambda: client.send_all([Call(({"role": "user", "content": "x"},), None, {}, {})])

    def pipeline(server):
        config = LLMSettings(model="m", base_url=server.base_url, max_retries=0, timeout_s=0.3)
        return lambda: ChatClient(config).complete([{"role": "user", "content": "x"}])

    assert "--request-timeout 0.3s" in timeout_names(served)
    assert "--resume" in timeout_names(served)
    assert "--timeout-s 0.3s" in timeout_names(pipeline)
