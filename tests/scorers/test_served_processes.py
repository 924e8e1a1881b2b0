"""A served video LLM (``--backend openai``) run by several processes, or killed and resumed:
the scores and record of one process, each request sent once (checked at the server), the
reply cache shared safely between processes."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import zlib

import pytest
from launch import accelerate_launch, run_to_success, score_argv

import foilkit
from foilkit.scorers.openai_client import Call, ServedClient, ServerBackend
from foilkit.scorers.requests import TextsRequest
from foilkit.scorers.served import ServedVideoLLM
from tests.openai_server import OpenAICompatibleServer

SERVED = "served-vlm"
#: generate mode, 4 frames sent as a video with their times, batches of one video, no decoding
#: threads
RUN = {"mode": "generate", "num_frames": 4, "frames_as": "video", "batch_size": 1}
RUN |= {"num_workers": 0}
FLAGS = ["--mode", "generate", "--frames", "4", "--frames-as", "video", "--batch-size", "1"]
FLAGS += ["--num-workers", "0"]
#: what differs between two runs of the same work: when and how fast, on how many processes and
#: with how many threads each (``accelerate launch`` splits the cores among its processes)
TIMING = ("finished_at", "throughput", "hardware", "model_threads")


def answer(body: dict) -> str:
    """A letter that depends on the whole question (options in their order included)."""
    return "(A)" if zlib.crc32(json.dumps(body["messages"]).encode()) % 2 else "(B)"


def bodies(requests: list[dict]) -> list[str]:
    return [json.dumps(body, sort_keys=True) for body in requests]


def options(server: OpenAICompatibleServer, cache) -> dict:
    common = {"backend": "openai", "base_url": server.base_url, "progress": False}
    return {**common, **RUN, "cache_dir": str(cache)}


@pytest.fixture(scope="module")
def one(saved_benchmark, tmp_path_factory):
    """The benchmark scored by one process from start to end: its folder and the requests the
    server received."""
    out = tmp_path_factory.mktemp("served") / "one"
    with OpenAICompatibleServer(answer) as server:
        foilkit.score(SERVED, str(saved_benchmark), out_dir=str(out), **options(server, out / "c"))
    return out, server.requests


def record(out) -> dict:
    """``run.json`` less what differs between two runs of the same work (and the test server's
    port)."""
    run = json.loads((out / "run.json").read_text())
    run["backend"].pop("base_url")
    return {key: value for key, value in run.items() if key not in TIMING}


@pytest.mark.slow
def test_two_processes_send_each_request_once_and_score_as_one(one, saved_benchmark, tmp_path):
    whole, asked = one
    with OpenAICompatibleServer(answer) as server:
        argv = score_argv(SERVED, saved_benchmark, tmp_path / "two", *FLAGS, "--no-progress")
        argv += ["--backend", "openai", "--base-url", server.base_url]
        run_to_success(
            [*accelerate_launch(2), "-m", "foilkit", *argv, "--cache-dir", str(tmp_path / "c")]
        )
    assert len(asked) == len(set(bodies(asked))) == 36  # 9 rows, 2 text groups, 2 orders
    assert sorted(bodies(server.requests)) == sorted(bodies(asked))  # each once, none twice
    two = tmp_path / "two"
    assert (two / "scores.jsonl").read_bytes() == (whole / "scores.jsonl").read_bytes()
    assert json.loads((two / "run.json").read_text())["hardware"]["num_processes"] == 2
    assert record(two) == record(whole)  # the backend's record and usage too
    backend = record(two)["backend"]
    assert backend["usage"]["requests"] == 36  # summed over the processes
    assert backend["frames_sent"] == [
        {"frames": 4, "height": 48, "width": 64, "timed": True, "requests": 36}
    ]


def test_a_killed_run_resumes_without_asking_again(
    one, saved_benchmark, tmp_path, killed_at_the_third_batch
):
    """Killed after two batches, the run resumes to the same file; what was asked before the
    kill (its rows' answers not yet written included) is not asked again."""
    whole, asked = one
    killed = tmp_path / "killed"
    with OpenAICompatibleServer(answer) as server:
        run = options(server, tmp_path / "cache")
        with killed_at_the_third_batch():
            foilkit.score(SERVED, str(saved_benchmark), out_dir=str(killed), **run)
        before = len(server.requests)
        foilkit.score(SERVED, str(saved_benchmark), out_dir=str(killed), resume=True, **run)
    assert 0 < before < len(asked)
    assert sorted(bodies(server.requests)) == sorted(bodies(asked))  # each once, none twice
    assert (killed / "scores.jsonl").read_bytes() == (whole / "scores.jsonl").read_bytes()


def test_processes_sharing_the_cache_send_a_request_once_and_read_one_reply(tmp_path):
    """Two clients on one cache asking the same question at once (two ranks whose rows ask
    it): one request, both read its reply, although this server answers each ask differently;
    a claim its holder left behind when it died is taken over."""
    answers = iter(["(A)", "(B)"])
    texts = ("a dog runs to the left", "a dog runs to the right")
    with OpenAICompatibleServer(lambda body: next(answers), delay_s=0.3) as server:
        backend = ServerBackend(base_url=server.base_url, cache_dir=str(tmp_path))
        adapters = [ServedVideoLLM(SERVED, server=backend, mode="generate") for _ in range(2)]
        results = [None, None]

        def ask(index: int) -> None:
            results[index] = adapters[index].score([TextsRequest(texts)])

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(server.requests) == 2  # the two option orders, each once
        assert results[0] == results[1]
        # a dead process's claim on a request: taken over, the request sent
        client = ServedClient(SERVED, backend)
        call = Call(({"role": "user", "content": "hi"},), None, {"max_tokens": 4}, {})
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        claim = client.cache_path(client.key(call)).with_suffix(".claim")
        claim.parent.mkdir(parents=True, exist_ok=True)
        claim.write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname()}))
        server.responder = lambda body: "(A)"
        (reply,) = client.send_all([call])
        assert reply.texts == ("(A)",) and len(server.requests) == 3 and not claim.exists()


def test_a_stopped_run_keeps_its_spend_and_the_resumed_run_records_its_whole_life(
    one, saved_benchmark, tmp_path, killed_at_the_third_batch
):
    """Killed mid-run, the run's folder holds what it spent; resumed, ``run.json`` counts every
    request billed over both sessions (the answered ones only once: the rest came from the
    cache), not only the resumed session's; the record says the dtype is not applicable."""
    whole, asked = one
    out = tmp_path / "run"
    with OpenAICompatibleServer(answer) as server:
        run = options(server, tmp_path / "cache")
        with killed_at_the_third_batch():
            foilkit.score(SERVED, str(saved_benchmark), out_dir=str(out), **run)
        before = len(server.requests)
        (ledger,) = (out / "shards").glob("usage-served-rank-*.jsonl")
        spent = [json.loads(line) for line in ledger.read_text().splitlines()]
        assert sum(entry.get("requests", 0) for entry in spent) == before > 0
        stopped = json.loads((out / "run.json").read_text())  # its record says so too
        assert stopped["spent"]["backend"]["requests"] == before and "judge" not in stopped["spent"]
        foilkit.score(SERVED, str(saved_benchmark), out_dir=str(out), resume=True, **run)
    backend = json.loads((out / "run.json").read_text())["backend"]
    assert len(server.requests) == len(asked) == backend["usage"]["requests"] == 36
    assert backend["usage_earlier_sessions"]["requests"] == before
    assert json.loads((out / "run.json").read_text())["dtype"] == "not applicable (served)"
    assert backend["usage"] == json.loads((whole / "run.json").read_text())["backend"]["usage"]


def test_a_reply_past_the_size_bound_fails_its_row_and_the_run_goes_on(saved_benchmark, tmp_path):
    """One row's reply is 2 MB against a 1 MB bound: that row is an error with its cause, every
    other row is scored, and the run ends normally."""
    flagged = []

    def huge_once(body: dict) -> str:
        if not flagged or flagged[0] == json.dumps(body["messages"][-1], sort_keys=True):
            flagged[:] = [json.dumps(body["messages"][-1], sort_keys=True)]
            return "x" * 2**21
        return answer(body)

    out = tmp_path / "run"
    with OpenAICompatibleServer(huge_once) as server:
        rows = foilkit.score(
            SERVED,
            str(saved_benchmark),
            out_dir=str(out),
            max_reply_mb=1,
            **options(server, tmp_path / "cache"),
        )
    causes = [cause for cause in rows["error_cause"] if cause is not None]
    assert causes == ["reply too large"]
    assert sum(error is None for error in rows["error"]) == len(rows) - 1
    record = json.loads((out / "run.json").read_text())
    assert record["errors"]["causes"] == {"reply too large": 1}
    assert record["backend"]["max_reply_bytes"] == 2**20
