"""The served video LLM backend (``--backend openai``) against the local OpenAI-compatible server:
what is sent (frames in order, the protocol's question, decoding), how replies are read
(answers, top log-probabilities, prompt log-probabilities), retries, the concurrency bound and
the reply cache."""

from __future__ import annotations

import base64
import io
import math
import re
import zlib

import numpy as np
import pytest
import torch
from PIL import Image

from foilkit.builders.velociti.answers import ENTAIL_QUESTION
from foilkit.builders.vitatecs.answers import CHOICE_SYSTEM
from foilkit.scorers.generate import cyclic_orders
from foilkit.scorers.openai_client import ServerBackend
from foilkit.scorers.prompts import question_text
from foilkit.scorers.requests import Decoding, GenerateRequest, TextsRequest
from foilkit.scorers.served import ServedVideoLLM, ServerCapabilityError
from tests.openai_server import OpenAICompatibleServer

TEXTS = ("a dog runs to the left", "a dog runs to the right")
SECRET = "sk-served-secret-0123456789"


def frames(count: int = 3) -> torch.Tensor:
    """``count`` distinct 3 x 8 x 12 frames (frame i is a flat i-dependent colour, noise added)."""
    generator = torch.Generator().manual_seed(0)
    base = torch.arange(count, dtype=torch.float32)[:, None, None, None] * 60
    noise = torch.randint(0, 5, (count, 3, 8, 12), generator=generator).float()
    return (base + noise).clamp(0, 255).to(torch.uint8)


def decoded_images(body: dict) -> list[np.ndarray]:
    """The frames a request carried, decoded from its image parts in order."""
    images = []
    for message in body["messages"]:
        if not isinstance(message["content"], list):
            continue
        for part in message["content"]:
            if part["type"] == "image_url":
                data = part["image_url"]["url"].split(",", 1)[1]
                image = Image.open(io.BytesIO(base64.b64decode(data)))
                images.append(np.asarray(image).transpose(2, 0, 1))
    return images


def user_text(body: dict) -> str:
    (user,) = [m for m in body["messages"] if m["role"] == "user"]
    return "".join(part["text"] for part in user["content"] if part["type"] == "text")


def answer_right(body: dict) -> str:
    """The letter of the option that says "right", as a model would write it."""
    options = re.findall(r"\(([A-J])\) (.*?)(?= \([A-J]\)| Respond)", user_text(body))
    (letter,) = [letter for letter, text in options if text.endswith("right")]
    return f"({letter})"


def served(tmp_path, server, mode="generate", **options) -> ServedVideoLLM:
    settings = {"cache_dir": str(tmp_path / "replies"), "retry_backoff_s": 0.001}
    settings |= {k: options.pop(k) for k in list(options) if k in ServerBackend.__annotations__}
    backend = ServerBackend(base_url=server.base_url, api_key_env="SERVED_TEST_KEY", **settings)
    return ServedVideoLLM("served-video-llm", server=backend, mode=mode, **options)


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("SERVED_TEST_KEY", SECRET)


def test_generate_sends_the_protocols_question_with_every_frame_in_order(tmp_path):
    """Each option order is one chat completion: the VITATECS system prompt, the frames as
    images in order, the question as the protocol writes it, n samples from the request's own
    seed, no other sampler; the answers are parsed into scores; a rerun sends nothing."""
    view = frames()
    request = TextsRequest(TEXTS, view, timestamps=(0.0, 0.5, 1.0))
    options = {"temperature": 0.7, "num_samples": 2, "max_new_tokens": 8, "seed": 3}
    with OpenAICompatibleServer(lambda body: [answer_right(body), "no idea"]) as server:
        adapter = served(tmp_path, server, **options)
        (scores,) = adapter.score([request])
        assert len(server.requests) == 2  # both orders of the options
        decoding = Decoding(temperature=0.7, num_samples=2, max_new_tokens=8, seed=3)
        assert all(h["authorization"] == f"Bearer {SECRET}" for h in server.headers)
        for order in cyclic_orders(2):  # sent concurrently: in any order
            question = question_text("vitatecs", [TEXTS[i] for i in order])
            (body,) = [b for b in server.requests if user_text(b) == question]
            assert body["model"] == "served-video-llm"
            assert body["messages"][0] == {
                "role": "system",
                "content": CHOICE_SYSTEM.format(count="two"),
            }
            sent = decoded_images(body)
            assert len(sent) == 3
            assert all(np.array_equal(a, b.numpy()) for a, b in zip(sent, view))  # PNG: exact
            asked = GenerateRequest(
                tuple(adapter_messages(question)), view, request.timestamps, decoding
            )
            assert body["seed"] == asked.sample_seed()
            assert (body["n"], body["temperature"], body["top_p"], body["max_tokens"]) == (
                2,
                0.7,
                1.0,
                8,
            )
            assert (body["top_k"], body["repetition_penalty"]) == (-1, 1.0)
        assert scores.scores == (0.0, 0.5)  # "right" in every order's first sample only
        assert [a.outcome for a in scores.answers].count("unparseable") == 2
        record = adapter.backend_record()
        assert record["frames_sent"] == [
            {"frames": 3, "height": 8, "width": 12, "timed": False, "requests": 2}
        ]
        assert record["usage"]["requests"] == 2 and record["usage"]["completion_tokens"] > 0
        assert SECRET not in str(record) and record["api_key_env"] == "SERVED_TEST_KEY"
        again = served(tmp_path, server, **options)
        assert again.score([request]) == [scores]
        assert len(server.requests) == 2  # the rerun's replies all came from the cache
        assert again.backend_record()["usage"]["cache_hits"] == 2
    for path in (tmp_path / "replies").rglob("*"):
        assert not path.is_file() or SECRET not in path.read_text()


def adapter_messages(question: str) -> list[dict]:
    from foilkit.scorers.prompts import choice_messages

    return choice_messages("vitatecs", question, 2)


def test_video_part_carries_every_frame_and_their_times_as_vllm_reads_them(tmp_path):
    """One ``video/jpeg`` part of every frame; their times (a reversed view: shown from the
    earliest time at the sampling interval, 2 fps) as vLLM's media IO metadata, the first time
    a whole interval (0.5 s: index 1), and Qwen2.5-VL's fps; none where the times are unknown."""
    with OpenAICompatibleServer(answer_right) as server:
        adapter = served(tmp_path, server, frames_as="video")
        adapter.score([TextsRequest(TEXTS, frames(4), timestamps=(2.0, 1.5, 1.0, 0.5))])
        adapter.score([TextsRequest(TEXTS, frames(2))])  # times unknown
        timed, untimed = server.requests[:2], server.requests[2:]
        for body in server.requests:
            (user,) = [m for m in body["messages"] if m["role"] == "user"]
            (video,) = [p for p in user["content"] if p["type"] == "video_url"]
            head, data = video["video_url"]["url"].split(",", 1)
            assert head == "data:video/jpeg;base64"
            assert len(data.split(",")) == (4 if body in timed else 2)
        for body in timed:
            assert body["media_io_kwargs"] == {
                "video": {
                    "num_frames": -1,
                    "fps": 2.0,
                    "frames_indices": [1, 2, 3, 4],
                    "total_num_frames": 5,
                    "duration": 2.5,
                }
            }
            assert body["mm_processor_kwargs"] == {"fps": 2.0}
        assert not any("media_io_kwargs" in body for body in untimed)
        record = adapter.backend_record()
        assert record["frame_times"] == "metadata"
        assert [(e["frames"], e["timed"]) for e in record["frames_sent"]] == [
            (2, False),
            (4, True),
        ]


def test_frame_times_as_text_precede_each_image_and_none_by_default(tmp_path):
    view, times = frames(3), (3.0, 1.0, 2.0)  # shuffled: shown at 1, 2, 3 s
    with OpenAICompatibleServer(answer_right) as server:
        served(tmp_path, server, frame_times="text").score([TextsRequest(TEXTS, view, times)])
        served(tmp_path / "b", server).score([TextsRequest(TEXTS, view, times)])
        for index, body in enumerate(server.requests):
            (user,) = [m for m in body["messages"] if m["role"] == "user"]
            kinds = [p["type"] if p["type"] != "text" else p["text"] for p in user["content"]]
            image, question = "image_url", kinds[-1]
            assert question.startswith("Which of the following best describes")
            if index < 2:
                assert kinds[:-1] == ["<1.0 seconds>", image, "<2.0 seconds>", image] + [
                    "<3.0 seconds>",
                    image,
                ]
            else:  # images carry no time, and none is written
                assert kinds[:-1] == [image] * 3
            assert "media_io_kwargs" not in body
    with pytest.raises(ValueError, match="--frame-times metadata needs --frames-as video"):
        ServerBackend(frame_times="metadata")
    with pytest.raises(ValueError, match="with --frames-as video the times go as the video's"):
        ServerBackend(frames_as="video", frame_times="text")


def test_reference_sizing_is_qwen_vl_utils_for_a_served_qwen_vl_and_recorded_otherwise(tmp_path):
    """``preprocess="reference"``: a served Qwen2.5-VL is sent its frames as the in-process
    reference sizes them (qwen-vl-utils' size and resize, rounded to 8 bits); a served model
    foilkit cannot place is sent them as decoded, and the record says why."""
    from types import SimpleNamespace

    from foilkit.scorers.adapters._qwen_vl_utils import QwenVLUtilsResolution

    view = frames(4)
    qwen25 = SimpleNamespace(patch_size=14, merge_size=2, temporal_patch_size=2)
    expected, _ = QwenVLUtilsResolution().prepare(view, qwen25)
    expected = expected.round().clamp(0, 255).to(torch.uint8)
    with OpenAICompatibleServer(answer_right) as server:
        backend = ServerBackend(base_url=server.base_url, cache_dir=str(tmp_path), max_retries=0)
        reference = {"server": backend, "preprocess": "reference", "mode": "generate"}
        qwen = ServedVideoLLM("Qwen/Qwen2.5-VL-72B-Instruct", **reference)
        qwen.score([TextsRequest(TEXTS, view)])
        sent = decoded_images(server.requests[0])
        assert len(sent) == 4 and all(np.array_equal(a, b.numpy()) for a, b in zip(sent, expected))
        assert qwen.backend_record()["sizing"]["rule"] == "qwen-vl-utils"
        assert qwen.backend_record()["frames_sent"][0]["height"] == expected.shape[2] > 8
        other = ServedVideoLLM("gpt-4o", **reference)
        other.score([TextsRequest(TEXTS, view)])
        assert decoded_images(server.requests[-1])[0].shape == (3, 8, 12)
        sizing = other.describe()["backend"]["sizing"]
        assert sizing["rule"] == "server" and "names no Qwen2/2.5/3-VL checkpoint" in sizing["why"]


def test_429_5xx_and_malformed_replies_are_retried_and_a_refusal_is_one_clear_error(tmp_path):
    malformed = iter([True])
    with OpenAICompatibleServer(
        answer_right, faults=(429, 500, 503), malformed=lambda body: next(malformed, False)
    ) as server:
        adapter = served(tmp_path, server)
        (scores,) = adapter.score([TextsRequest(TEXTS, frames())])
        assert scores.scores == (0.0, 1.0)
        assert adapter.backend_record()["usage"]["retries"] == 4
    with OpenAICompatibleServer(answer_right, faults=(400,)) as server:
        adapter = served(tmp_path / "other", server, max_retries=1)
        with pytest.raises(RuntimeError, match=r"refused request \w+ \(HTTP 400\)"):
            adapter.score([TextsRequest(TEXTS, frames())])


def test_a_server_slower_than_the_timeout_is_retried_then_named(tmp_path):
    with OpenAICompatibleServer(answer_right, delay_s=0.4) as server:
        adapter = served(tmp_path, server, timeout_s=0.1, max_retries=1)
        with pytest.raises(RuntimeError, match="failed after 2 attempts: Request timed out"):
            adapter.score([TextsRequest(TEXTS, frames())])
        assert adapter.backend_record()["usage"]["retries"] == 2  # each order's request once


def test_backend_settings_are_checked_before_any_work(monkeypatch):
    from foilkit.scorers.options import ScoreOptions, server_backend

    with pytest.raises(ValueError, match="--base-url applies to a served model: add --backend"):
        ScoreOptions(base_url="http://localhost:8000/v1")
    with pytest.raises(ValueError, match="--frame-times applies to a served model"):
        ScoreOptions(frame_times="text")
    with pytest.raises(ValueError, match="--device-map applies to a model loaded here"):
        ScoreOptions(backend="openai", device_map="auto")
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    options = ScoreOptions(backend="openai", api_key_env="NO_SUCH_KEY_VAR")
    with pytest.raises(ValueError, match=r"\$NO_SUCH_KEY_VAR is unset"):
        server_backend(options).check_key()


def test_requests_run_at_most_max_concurrency_at_once(tmp_path):
    requests = [TextsRequest((*TEXTS, f"a dog sits {i}"), frames()) for i in range(2)]
    with OpenAICompatibleServer(lambda body: "(A)", delay_s=0.05) as server:
        served(tmp_path, server, max_concurrency=2).score(requests)
        assert len(server.requests) == 6 and server.max_concurrent == 2


def test_choice_reads_the_option_letters_from_the_first_tokens_log_probabilities(tmp_path):
    top = {"A": math.log(0.6), " B": math.log(0.2), "B": math.log(0.1), "x": math.log(0.1)}
    with OpenAICompatibleServer(lambda body: "A", top_logprobs=lambda body: top) as server:
        (scores,) = served(tmp_path, server, mode="choice").score([TextsRequest(TEXTS, frames())])
        body = server.requests[0]
        assert (body["logprobs"], body["top_logprobs"], body["max_tokens"]) == (True, 20, 1)
        # order 0 shows the caption as (A): 0.6 / 0.9; order 1 as (B): 0.3 / 0.9
        assert scores.details["order_0"] == pytest.approx((2 / 3, 1 / 3))
        assert scores.details["order_1"] == pytest.approx((1 / 3, 2 / 3))
        assert scores.scores == pytest.approx((0.5, 0.5))
    with OpenAICompatibleServer(lambda body: "A") as server:  # no logprobs in its replies
        with pytest.raises(ServerCapabilityError, match="no logprobs .* use --mode generate"):
            served(tmp_path / "b", server, mode="choice").score([TextsRequest(TEXTS, frames())])


def test_entail_reads_yes_and_no_from_the_first_tokens_log_probabilities(tmp_path):
    """VELOCITI's question per text, P(Yes) / (P(Yes) + P(No)) among the top log-probabilities
    (a token with and without its leading space pooled)."""

    def top(body):
        asked = body["messages"][-1]["content"][-1]["text"]
        yes = 0.6 if TEXTS[0] in asked else 0.2
        return {"Yes": math.log(yes / 2), " Yes": math.log(yes / 2), "No": math.log(0.3), "x": -9}

    with OpenAICompatibleServer(lambda body: "Yes", top_logprobs=top) as server:
        (scores,) = served(tmp_path, server, mode="entail").score([TextsRequest(TEXTS, frames())])
        asked = [body["messages"][-1]["content"][-1]["text"] for body in server.requests]
        assert sorted(asked) == sorted(ENTAIL_QUESTION.format(caption=text) for text in TEXTS)
        assert scores.scores == pytest.approx((0.6 / 0.9, 0.2 / 0.5))


def word_logprobs(body: dict) -> list[tuple[int, float]]:
    """A stand-in tokenizer and model: each word of the messages' texts is a token, its
    log-probability minus a tenth of its length."""
    words = []
    for message in body["messages"]:
        content = message["content"]
        parts = [content] if isinstance(content, str) else [p.get("text", "") for p in content]
        words += " ".join(parts).split()
    return [(zlib.crc32(word.encode()), -len(word) / 10) for word in words]


def test_likelihood_reads_the_answers_prompt_log_probabilities(tmp_path):
    with OpenAICompatibleServer(lambda body: "", prompt_logprobs=word_logprobs) as server:
        adapter = served(tmp_path, server, mode="likelihood", reduction="sum")
        (scores,) = adapter.score([TextsRequest(TEXTS, frames())])
        expected = [-sum(len(w) for w in text.split()) / 10 for text in TEXTS]
        assert scores.scores == pytest.approx(expected)
        assert scores.details["num_tokens"] == (6.0, 6.0)
        answer = {"role": "assistant", "content": TEXTS[0]}
        (body,) = [b for b in server.requests if b["messages"][-1] == answer]
        assert (body["prompt_logprobs"], body["continue_final_message"]) == (0, True)
        assert body["add_generation_prompt"] is False
    with OpenAICompatibleServer(lambda body: "") as server:
        with pytest.raises(ServerCapabilityError, match="no prompt log-probabilities"):
            served(tmp_path / "b", server, mode="likelihood").score([TextsRequest(TEXTS, frames())])


def test_the_key_setting_names_a_variable_never_holds_a_key():
    with pytest.raises(ValueError, match="--api-key-env MY_KEY"):
        ServerBackend(base_url="http://localhost:1/v1", api_key_env=SECRET)


# --- a server that misbehaves on purpose (issue 41) -------------------------------------------


@pytest.mark.parametrize("mode", ["generate", "choice", "likelihood"])
def test_a_refusal_is_an_answer_on_its_row_never_asked_again(tmp_path, mode):
    """``content: null`` (OpenAI's refusal form) is no malformed reply: generate mode records
    the answer ``refused`` (choosing nothing); a mode that needs log-probabilities and gets
    none fails the request alone (cause ``refused``), the run goes on; either way the reply is
    cached and a rerun (``--resume``) asks nothing again."""
    request = TextsRequest(TEXTS, frames())
    with OpenAICompatibleServer(lambda body: None) as server:
        adapter = served(tmp_path, server, mode=mode, max_retries=2)
        (scores,) = adapter.score([request])
        sent = len(server.requests)
        usage = adapter.backend_record()["usage"]
        assert usage["retries"] == 0 and usage["refusals"] == sent == usage["requests"]
        if mode == "generate":
            assert scores.fault is None and scores.scores == (0.0, 0.0)
            assert [(a.text, a.outcome, a.choice) for a in scores.answers] == [
                ("", "refused", None)
            ] * 2
        else:
            message, cause = scores.fault
            assert cause == "refused" and "without text or log-probabilities" in message
        again = served(tmp_path, server, mode=mode)
        assert again.score([request]) == [scores]
        assert len(server.requests) == sent  # from the cache: the refusal stands


def test_a_trickling_reply_is_cut_off_at_the_total_deadline(tmp_path):
    """A server that sends a byte every 20 ms never trips a per-read timeout of 0.3 s: the
    deadline is the whole request's, so it is cut off, retried and named."""
    import time

    with OpenAICompatibleServer(answer_right, trickle_s=0.02) as server:
        adapter = served(tmp_path, server, timeout_s=0.3, max_retries=1)
        start = time.monotonic()
        with pytest.raises(
            RuntimeError, match=r"failed after 2 attempts: .*--request-timeout 0.3s"
        ):
            adapter.score([TextsRequest(TEXTS, frames())])
        assert time.monotonic() - start < 4  # the reply alone would take 10 s and more
    assert adapter.backend_record()["timeout_s"] == 0.3  # recorded in run.json's backend


def test_a_reply_past_the_size_bound_fails_its_request_alone(tmp_path):
    """A 2 MB body against a 1 MB bound: not read further, not retried, not cached; that
    request's row fails (cause ``reply too large``), the other is scored."""
    big = TextsRequest(("a huge reply please", "a dog runs to the right"), frames())
    small = TextsRequest(TEXTS, frames())

    def answer(body: dict) -> str:
        return "x" * 2**21 if "huge" in user_text(body) else answer_right(body)

    with OpenAICompatibleServer(answer) as server:
        adapter = served(tmp_path, server, max_reply_bytes=2**20, max_retries=3)
        failed, scored = adapter.score([big, small])
        assert len(server.requests) == 4  # each order of each request once: no retry
        message, cause = failed.fault
        assert cause == "reply too large" and "larger than 1 MB" in message
        assert "--max-reply-mb" in message
        assert scored.fault is None and scored.scores == (0.0, 1.0)
        assert adapter.backend_record()["usage"]["failed"] == 2
        served(tmp_path, server, max_reply_bytes=2**20).score([big])
        assert len(server.requests) == 6  # asked again: a failure is not cached


def test_a_key_the_server_echoes_is_redacted_from_the_error_line(tmp_path):
    with OpenAICompatibleServer(answer_right, faults=(401,), echo_key=True) as server:
        adapter = served(tmp_path, server)
        with pytest.raises(RuntimeError, match=r"HTTP 401") as refused:
            adapter.score([TextsRequest(TEXTS, frames())])
    assert SECRET not in str(refused.value) and "[redacted]" in str(refused.value)
    assert refused.value.__cause__ is None  # no chained error repeating the body either
    with OpenAICompatibleServer(answer_right, malformed=lambda body: True, echo_key=True) as server:
        adapter = served(tmp_path / "b", server, max_retries=1)
        with pytest.raises(RuntimeError, match=r"failed after 2 attempts") as failed:
            adapter.score([TextsRequest(TEXTS, frames())])
    assert SECRET not in str(failed.value)


@pytest.mark.parametrize(
    "name", [SECRET, "gsk_" + "a1" * 20, "hf_" + "B2" * 17, "AIza" + "c3" * 18, "Bearer abc"]
)
def test_a_key_given_as_the_key_variable_is_refused_with_the_fix(name):
    with pytest.raises(ValueError, match="not the key .*--api-key-env MY_KEY") as refused:
        ServerBackend(base_url="http://localhost:1/v1", api_key_env=name)
    assert name not in str(refused.value)
    ServerBackend(base_url="http://localhost:1/v1", api_key_env="hf_token")  # a name, kept


@pytest.mark.parametrize("price", [math.nan, -0.5, math.inf])
def test_prices_are_finite_and_not_negative(price):
    from foilkit.scorers.api import ScoreOptions

    with pytest.raises(ValueError, match="--price-per-1k-prompt-tokens must be a finite number"):
        ScoreOptions(backend="openai", price_per_1k_prompt_tokens=price)
    with pytest.raises(ValueError, match="--price-per-1k-completion-tokens must be a finite"):
        ServerBackend(price_per_1k_completion_tokens=price)


def test_negative_usage_is_rejected_and_malformed_replies_are_billed(tmp_path):
    """A reply that reports negative tokens is malformed (retried, its count not taken); a
    reply retried as malformed is counted, with the tokens it says it took: spend is what was
    billed."""
    with OpenAICompatibleServer(
        answer_right, usage=lambda body: {"prompt_tokens": -5, "completion_tokens": 3}
    ) as server:
        adapter = served(tmp_path, server, max_retries=1)
        with pytest.raises(RuntimeError, match="cannot be negative"):
            adapter.score([TextsRequest(TEXTS, frames())])
        assert adapter.backend_record()["usage"]["prompt_tokens"] == 0
    broken = iter([True])
    with OpenAICompatibleServer(
        lambda body: [] if next(broken, False) else answer_right(body),
        usage=lambda body: {"prompt_tokens": 7, "completion_tokens": 2},
        delay_s=0.05,
    ) as server:
        adapter = served(tmp_path / "b", server, max_concurrency=1)
        adapter.score([TextsRequest(TEXTS, frames())])
        usage = adapter.backend_record()["usage"]
    assert (usage["requests"], usage["malformed_replies"], usage["retries"]) == (2, 1, 1)
    assert (usage["prompt_tokens"], usage["completion_tokens"]) == (3 * 7, 3 * 2)  # 3 billed


def test_a_served_run_records_no_dtype(tmp_path):
    with OpenAICompatibleServer(answer_right) as server:
        assert served(tmp_path, server).dtype_record() == "not applicable (served)"


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--api-key-env", SECRET], "not the key"),
        (["--judge-model", "gpt-4o-mini", "--judge-api-key-env", "hf_" + "Q1" * 17], "not the key"),
        (["--price-per-1k-prompt-tokens", "nan"], "'nan' is not a price >= 0"),
        (["--judge-price-per-1k-completion-tokens", "-1"], "'-1' is not a price >= 0"),
        (["--request-timeout", "0"], "'0' is not a number > 0"),
        (["--max-reply-mb", "inf"], "'inf' is not a number > 0"),
    ],
)
def test_served_flags_are_checked_before_any_work_in_one_line(tmp_path, capsys, flags, said):
    from foilkit.cli import main

    argv = ["score", "--model", "served", "--dataset", str(tmp_path), "--out", str(tmp_path / "o")]
    try:
        status = main([*argv, "--backend", "openai", *flags])
    except SystemExit as exited:  # argparse's own one line
        status = exited.code
    assert status == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and SECRET not in err and "Q1Q1" not in err
    assert not (tmp_path / "o").exists()


def test_a_served_run_recorded_as_float32_before_resumes(tmp_path):
    """Served runs recorded ``dtype: float32`` before (meaningless for a remote model); such a
    run still resumes under the record's ``not applicable (served)``, and nothing else does."""
    import json

    from foilkit.scorers.runner import check_out_dir
    from foilkit.scorers.video import MAX_DECODE_PIXELS

    identity = {"model": "served-video-llm", "dtype": "not applicable (served)"}
    identity["max_decode_pixels"] = MAX_DECODE_PIXELS

    def record(dtype: str) -> str:  # a finished run's: one that scored nothing blocks nothing
        return json.dumps({"identity": {**identity, "dtype": dtype}, "finished_at": "then"})

    (tmp_path / "run.json").write_text(record("float32"))
    assert check_out_dir(tmp_path, identity, resume=True) is False  # resumed, not started over
    (tmp_path / "run.json").write_text(record("float16"))
    with pytest.raises(ValueError, match="dtype was 'float16'"):
        check_out_dir(tmp_path, identity, resume=True)


def test_a_content_filter_refusing_the_prompt_is_a_refusal_not_a_failed_run(tmp_path):
    """Azure OpenAI's filter refuses a prompt with a 400 coded ``content_filter``: an answer
    without text (``refused``), cached, as ``content: null``; any other 400 still stops the
    run naming it."""
    request = TextsRequest(TEXTS, frames())
    with OpenAICompatibleServer(
        answer_right, faults=(400, 400), error_code="content_filter"
    ) as server:
        adapter = served(tmp_path, server)
        (scores,) = adapter.score([request])
        assert [a.outcome for a in scores.answers] == ["refused", "refused"]
        assert adapter.backend_record()["usage"]["refusals"] == 2
        assert served(tmp_path, server).score([request]) == [scores]
        assert len(server.requests) == 2
