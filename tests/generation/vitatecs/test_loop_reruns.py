"""The loop offline and on reruns: models that cannot load, settings changed without hand
editing, labels that were already exemplars, and convergence that needs F1 not to fall."""

from __future__ import annotations

import argparse
import csv

import pytest
import yaml

from foilkit.errors import UserError
from foilkit.generation.vitatecs import cli, stages
from foilkit.generation.vitatecs.loop import IterationRecord, Loop, LoopState, converged


def _run(*argv) -> int:
    parser = argparse.ArgumentParser()
    cli.configure(parser)
    return cli.run(parser.parse_args([str(a) for a in argv]))


@pytest.fixture
def loop(tmp_path, capsys):
    _run("init", "--loop", tmp_path / "loop")
    capsys.readouterr()
    return Loop(tmp_path / "loop")


@pytest.mark.parametrize(
    ("option", "make"),
    [("nli.model", stages.nli_filter), ("toxicity.model", stages.toxicity_filter)],
)
def test_a_model_that_cannot_load_names_itself_and_its_option(loop, tmp_path, option, make):
    # The defaults are Hub ids; offline (as in the tests) they are not in the cache.
    section, key = option.split(".")
    default = getattr(getattr(loop.config, section), key)
    with pytest.raises(UserError) as raised:
        make(loop)
    message = str(raised.value)
    assert f"{option} = {default!r} could not be loaded" in message
    assert f"foilkit generate vitatecs set --loop {loop.root} {option}=" in message
    # A missing local folder, set without editing config.yaml by hand.
    assert _run("set", "--loop", loop.root, f"{option}={tmp_path / 'absent'}") == 0
    with pytest.raises(UserError, match=rf"{option} = '.*absent' could not be loaded"):
        make(Loop(loop.root))


def test_train_filter_fails_on_its_model_before_training(loop, tmp_path):
    _run("set", "--loop", loop.root, f"filter.init_model={tmp_path / 'absent'}")
    with pytest.raises(UserError, match=r"filter.init_model = '.*absent' could not be loaded"):
        stages.train_filter(Loop(loop.root))
    assert Loop(loop.root).load_state().current.filter is None


def test_set_switches_the_safety_filter_off_and_checks_values(loop):
    assert _run("set", "--loop", loop.root, "toxicity.model=null", "loop.min_f1_gain=0.02") == 0
    config = yaml.safe_load(loop.config_path.read_text())
    assert config["toxicity"]["model"] is None and config["loop"]["min_f1_gain"] == 0.02
    assert stages.toxicity_filter(Loop(loop.root)) is None
    with pytest.raises(ValueError, match=r"filter: unknown key\(s\) \['epoch'\]"):
        _run("set", "--loop", loop.root, "filter.epoch=2")
    with pytest.raises(UserError, match="not key=value"):
        _run("set", "--loop", loop.root, "filter.epochs")


def test_import_counts_only_labels_new_to_the_sets(loop, tmp_path):
    known = loop.exemplars().positive["direction"][0]
    path = tmp_path / "revision.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["caption", "counterfactual", "target_aspect", "label"])
        writer.writerow([known.caption, known.counterfactual, "direction", "direction"])
        writer.writerow(["a man sits down", "a man stands up", "direction", "direction"])
        writer.writerow(["a man sits down", "a man sits down fast", "direction", "invalid"])
    result = stages.import_labels(loop, path)
    record = loop.load_state().current
    assert (result["labels"], result["new_labels"], result["unchanged"]) == (3, 2, 1)
    assert (record.human_labels, record.valid_samples) == (2, 1)


def _state(*f1):
    records = [
        IterationRecord(i, 1, 10, {}, filter=None if f is None else {"f1": f})
        for i, f in enumerate(f1)
    ]
    return LoopState(iterations=records)


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        ((0.17,), None),
        ((0.17, 0.10), False),  # F1 fell: never convergence
        ((0.50, 0.505), True),
        ((0.50, 0.50), True),
        ((0.50, 0.60), False),
        ((0.50, None, 0.40), False),
    ],
)
def test_convergence_needs_f1_not_to_fall(scores, expected):
    assert converged(_state(*scores), 0.01) is expected


def test_a_request_the_server_keeps_answering_badly_is_parked(
    tmp_path, capsys, captions_file, responder, query_caption
):
    """Truncated JSON for one prompt: retried, then parked (key and reply recorded) while the
    stage finishes with the rest; the exit is 1 unless --allow-failed-requests; a rerun asks
    only for the parked request again."""
    from openai_server import MALFORMED_BODY, OpenAICompatibleServer

    from foilkit.generation.provenance import RunRecord
    from foilkit.generation.vitatecs.generate import REQUEST_FAILED
    from foilkit.generation.vitatecs.loop import read_candidates

    bad = "a woman walks into a shop"

    def is_bad(body: dict) -> bool:
        return query_caption(body["messages"][-1]["content"]) == bad

    root = tmp_path / "loop"
    generate = ("generate", "--loop", root, "--captions", captions_file, "--aspects", "direction")
    with OpenAICompatibleServer(responder, malformed=is_bad) as server:
        config = {"llm": {"base_url": server.base_url, "retry_backoff_s": 0.001, "max_retries": 2}}
        (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
        assert _run("init", "--loop", root, "--config", tmp_path / "config.yaml") == 0
        assert _run(*generate, "--per-aspect", 10) == 1
        assert sum(is_bad(body) for body in server.requests) == 3  # 1 attempt + 2 retries
        assert len(server.requests) == 10 + 2
    assert "1 LLM requests failed after their retries and were parked" in capsys.readouterr().out
    folder = root / "iterations" / "1"
    candidates = read_candidates(folder / "candidates.jsonl")
    assert len(candidates) == 10
    (failed,) = [c for c in candidates if c.status == REQUEST_FAILED]
    assert failed.query.caption == bad and failed.raw == MALFORMED_BODY.decode()
    results = RunRecord.read(folder / "generate.run.json").results
    (failure,) = results["failures"]
    assert failure["key"] == failed.request_key and failure["reply"] == MALFORMED_BODY.decode()
    assert (results["usage"]["failures"], results["usage"]["retries"]) == (1, 2)
    # The server recovers: a rerun sends only the parked request; parked failures may be let pass.
    with OpenAICompatibleServer(responder) as healthy:
        _run("set", "--loop", root, f"llm.base_url={healthy.base_url}")
        assert _run(*generate, "--per-aspect", 10, "--force", "--allow-failed-requests") == 0
        assert [query_caption(b["messages"][-1]["content"]) for b in healthy.requests] == [bad]
    statuses = {c.status for c in read_candidates(folder / "candidates.jsonl")}
    assert REQUEST_FAILED not in statuses


def test_a_failed_stage_still_writes_its_run_record(tmp_path, monkeypatch, captions_file):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    from foilkit.generation.llm import LLMRequestError
    from foilkit.generation.provenance import RunRecord

    root = tmp_path / "loop"
    assert _run("init", "--loop", root) == 0  # OpenAI's endpoint, and no key
    with pytest.raises(LLMRequestError, match="no API key"):
        _run("generate", "--loop", root, "--captions", captions_file, "--per-aspect", 1)
    results = RunRecord.read(root / "iterations" / "1" / "generate.run.json").results
    assert "no API key" in results["failed"]
    assert results["usage"]["requests"] == 0 and results["failures"] == []


def test_the_llm_is_sent_a_seed_from_the_loop_seed_and_the_request(
    tmp_path, capsys, captions_file, responder, query_caption
):
    from openai_server import OpenAICompatibleServer

    from foilkit.generation.llm import request_seed
    from foilkit.generation.provenance import RunRecord
    from foilkit.generation.vitatecs.loop import read_candidates

    root = tmp_path / "loop"
    with OpenAICompatibleServer(responder) as server:
        _run("init", "--loop", root, "--seed", 7, "--base-url", server.base_url)
        assert _run("generate", "--loop", root, "--captions", captions_file, "--per-aspect", 2) == 0
    sent = {
        (query_caption(b["messages"][-1]["content"]), b["messages"][-1]["content"]): b["seed"]
        for b in server.requests
    }
    candidates = read_candidates(root / "iterations" / "1" / "candidates.jsonl")
    assert len(candidates) == len(server.requests) == 12
    assert all(isinstance(seed, int) for seed in sent.values()) and len(set(sent.values())) == 12
    assert sorted(sent.values()) == sorted(c.request_seed for c in candidates)
    assert all(c.request_seed == request_seed(c.request_key) for c in candidates)
    record = RunRecord.read(root / "iterations" / "1" / "generate.run.json")
    assert record.models["llm"]["seed"] == 7
    # A rerun that refuses (the candidates exist) ran nothing: the run's record stands.
    with pytest.raises(UserError, match="already has its candidates"):
        _run("generate", "--loop", root, "--captions", captions_file, "--per-aspect", 2)
    assert RunRecord.read(root / "iterations" / "1" / "generate.run.json") == record
