"""The LLM judge of generate mode against the local OpenAI-compatible server playing the judge:
each request body equals the one the official script sends (``tests/answer_references.py``) on
real TempCompass / TOMATO / VITATECS items, each reply is read as the official code reads it,
re-asks stop where the official loops stop, a rerun is served from the cache, the key is sent
but written nowhere, and no judge runs unless one is configured."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from foilkit.scorers.generate import read_answers, score_by_generation
from foilkit.scorers.judge import Judge, JudgeCase, JudgeSettings
from foilkit.scorers.parsers import get_parser
from foilkit.scorers.requests import Decoding, Generations, TextsRequest
from tests.answer_references import (
    captioning_parse_llm_output,
    get_eval_result,
    tempcompass_captioning_request,
    tempcompass_judge_request,
    tomato_gpt_parser_request,
    tomato_parse_with_gpt,
)
from tests.openai_server import OpenAICompatibleServer

# a real TempCompass multi-choice item (questions/multi-choice.json, video 1034419625, action)
MC = {
    "question": "What is the man doing in the video?\nA. dunking a basketball\n"
    "B. dribbling a basketball\nC. passing a basketball",
    "answer": "A. dunking a basketball",
}
MC_OPTIONS = ("dunking a basketball", "dribbling a basketball", "passing a basketball")
KEY = "sk-judge-secret-0123456789"


def _body(sent: dict) -> dict:
    """A request as the official scripts write theirs: no stream flags the client adds."""
    return {k: v for k, v in sent.items() if k not in ("stream",)}


def _judge(server: OpenAICompatibleServer, parser: str, cache: Path, model: str) -> Judge:
    settings = JudgeSettings(model, server.base_url, "FOILKIT_TEST_JUDGE_KEY")
    return Judge(settings, parser, str(cache))


def test_tempcompass_judge_asks_as_eval_multi_choice_and_reads_as_get_eval_result(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("FOILKIT_TEST_JUDGE_KEY", KEY)
    predictions = ["The man dunks the ball.</s>", "He is playing", "none of them"]
    # replies per prediction: one read at once, one after a reply saying neither word, one never
    replies = {
        predictions[0]: ["Correct"],
        predictions[1]: ["I cannot say.", "The prediction is Incorrect."],
        predictions[2]: ["hmm"] * 11,
    }
    asked: dict[str, int] = {}

    def respond(body: dict) -> str:
        prompt = body["messages"][1]["content"]
        which = next(p for p in predictions if p.replace("</s>", "").strip() in prompt)
        asked[which] = asked.get(which, 0) + 1
        return replies[which][asked[which] - 1]

    cases = [
        JudgeCase(p, MC_OPTIONS, ("A", "B", "C"), 0, (MC["question"], MC["answer"]))
        for p in predictions
    ]
    with OpenAICompatibleServer(respond) as server:
        judge = _judge(server, "tempcompass_multi_choice", tmp_path / "cache", "gpt-3.5-turbo-1106")
        verdicts = judge.judge(cases)
        sent = list(server.requests)
        # the first ask of each is the official request body, byte for byte in its fields
        for prediction in predictions:
            official = tempcompass_judge_request("multi-choice", {**MC, "prediction": prediction})
            assert official in [_body(b) for b in sent]
        # re-asks: the same request with seed = the attempt (each its own cached request)
        assert sorted(b.get("seed", 0) for b in sent) == [0, 0, 0, 1, 1, *range(2, 11)]
        for prediction, verdict in zip(predictions, verdicts):
            reply, rating, used = get_eval_result(replies[prediction])
            assert verdict.reply == reply and verdict.asks == used
            if verdict.verdict is None:  # unsettled: the official rating 0, unparseable here
                assert rating == 0 and verdict.outcome == "unparseable" and used == 11
            else:
                assert verdict.outcome == "judged"
                assert (verdict.choice == 0) == (rating == 1) == (verdict.verdict == "correct")
        # the key went to the server, and nowhere else
        assert all(
            h.get("Authorization", h.get("authorization")) == f"Bearer {KEY}"
            for h in server.headers
        )

        # a rerun asks nothing: every reply comes from the cache
        again = _judge(server, "tempcompass_multi_choice", tmp_path / "cache", "gpt-3.5-turbo-1106")
        assert again.judge(cases) == verdicts and len(server.requests) == len(sent)
        assert again.client.usage()["cache_hits"] == len(sent)
    record = str(judge.to_record())
    assert "FOILKIT_TEST_JUDGE_KEY" in record and KEY not in record
    assert judge.to_record()["official_model"] == "gpt-3.5-turbo-1106"
    for path in (tmp_path / "cache").rglob("*"):
        assert not path.is_file() or KEY not in path.read_text()


def test_tomato_judge_asks_as_gpt_parser_and_takes_a_letter_of_the_options(tmp_path):
    # a real TOMATO item's options (rotation), an answer pre_parser cannot read
    options = ("Clockwise", "Counter-clockwise", "Not rotating")
    letters = ["A", "B", "C"]
    answer = "It seems to turn the other way, counter-clockwise."
    replies = iter(["b", "B"])  # TOMATO checks the reply as returned: "b" is no letter
    with OpenAICompatibleServer(lambda body: next(replies)) as server:
        judge = _judge(server, "tomato", tmp_path / "cache", "gpt-4o-mini")
        (verdict,) = judge.judge([JudgeCase(answer, options, tuple(letters), 1)])
    official = tomato_gpt_parser_request(answer, letters, dict(zip(letters, options)))
    assert _body(server.requests[0]) == official
    assert _body(server.requests[1]) == {**official, "seed": 1}
    assert tomato_parse_with_gpt(["b", "B"], letters) == ("B", 2)
    assert (verdict.outcome, verdict.choice, verdict.verdict, verdict.asks) == ("judged", 1, "B", 2)


def test_captioning_judge_answers_the_mc_question_as_eval_captioning(tmp_path):
    from foilkit.builders.tempcompass.answers import CAPTIONING as TEMPCOMPASS_CAPTIONING

    # the judge replies published in TempCompass' auto_eval_results/video-llava/captioning.json
    replies = [
        "Reasoning: The video description mentions that the man is dunking a basketball.\n"
        "Answer: A. dunking a basketball",
        "Reasoning: The description mentions dribbling, dunking and passing.\n"
        "Answer: B. dribbling a basketball, C. passing a basketball",
        "Answer: None of the choices are correct",
        "A. dunking a basketball",
    ]
    captions = [f"A man handles a basketball, take {n}.</s>" for n in range(len(replies))]

    def respond(body: dict) -> str:
        prompt = body["messages"][1]["content"]
        return replies[next(n for n, c in enumerate(captions) if c[:-5] in prompt)]

    reference = (MC["question"], MC["answer"])
    cases = [JudgeCase(c, ("x", "y", "z"), ("A", "B", "C"), 1, reference) for c in captions]
    with OpenAICompatibleServer(respond) as server:
        judge = _judge(server, "tempcompass_captioning", tmp_path / "cache", "gpt-3.5-turbo-1106")
        verdicts = judge.judge(cases)
    assert len(server.requests) == len(captions)  # one ask each, never again
    official = [tempcompass_captioning_request(c, MC, TEMPCOMPASS_CAPTIONING) for c in captions]

    def written(body: dict) -> str:
        return json.dumps(body, sort_keys=True)

    assert sorted(written(_body(b)) for b in server.requests) == sorted(map(written, official))
    for reply, verdict in zip(replies, verdicts):
        rating = captioning_parse_llm_output(reply, MC["answer"])["rating"]
        assert verdict.outcome == "judged" and verdict.asks == 1 and verdict.reply == reply
        assert (verdict.choice == 1) == (rating == 1) == (verdict.verdict == "correct")
    assert [v.verdict for v in verdicts] == ["correct", "incorrect", "incorrect", "correct"]


def test_vitatecs_judge_is_lmms_evals_and_reads_only_what_the_rules_miss(tmp_path):
    from tests.answer_references import vitatecs_lmms_eval

    caption, foil = "a man opens the door", "a man closes the door"
    request = TextsRequest((caption, foil))

    class Answers:
        def generate(self, requests):
            return [Generations(("A",)), Generations(("Maybe the first one",))]

    with OpenAICompatibleServer(lambda body: "Correct") as server:
        judge = _judge(server, "vitatecs", tmp_path / "cache", "gpt-3.5-turbo-1106")
        (scores,) = score_by_generation(
            Answers(),
            [request],
            prompt="lmms-eval",
            decoding=Decoding(),
            parser=get_parser("vitatecs"),
            judge=judge,
        )
    (body,) = server.requests  # order 0's "A" was read by the rules; order 1's went to the judge
    prompt = body["messages"][1]["content"]
    # order 1 shows the foil first: lmms-eval's question and answer for that order
    assert (
        "Caption Matching Question: Which of the following best describes the content of the "
        "video: \n(A) A man closes the door. \n(B) A man opens the door." in prompt
    )
    assert (
        "Ground-Truth Answer: (B) A man opens the door.\n\nModel Prediction: Maybe the first one"
        in prompt
    )
    assert vitatecs_lmms_eval("A", caption, foil, "(A) A man opens the door.")[0]  # rules read it
    assert [a.outcome for a in scores.answers] == ["parsed", "judged"]
    assert [a.judge_verdict for a in scores.answers] == [None, "correct"]
    assert scores.scores == (1.0, 0.0)


def test_no_judge_unless_one_is_configured():
    from foilkit.scorers.api import ScoreOptions

    answers = [Generations(("perhaps",))]
    read = read_answers(("yes", "no"), answers, get_parser("tempcompass_yes_no"), ("yes", "no"))
    assert [a.outcome for a in read.answers] == ["unparseable"] and read.answers[
        0
    ].judge_reply is None
    assert ScoreOptions().judge_model is None  # off by default: no judge is made, none asked
    with pytest.raises(ValueError, match="--judge-base-url configures an LLM judge, which is off"):
        ScoreOptions(judge_base_url="http://localhost:1/v1")
    with pytest.raises(ValueError, match="not the key"):
        ScoreOptions(judge_model="m", judge_api_key_env=KEY)
    with pytest.raises(ValueError, match="no official LLM judge"):
        Judge(JudgeSettings("m", "http://localhost:1/v1"), "yes_no", None)


def test_a_judge_is_refused_outside_generate_mode_and_without_its_key(monkeypatch):
    from foilkit.scorers.api import ScoreOptions
    from foilkit.scorers.generate import check_generation
    from foilkit.scorers.job import make_judge
    from foilkit.scorers.protocols import resolve_protocol

    options = ScoreOptions(judge_model="gpt-3.5-turbo-1106", judge_base_url="http://h:1/v1")
    choice = resolve_protocol("paper", "tempcompass", "video-llm", {}, config="multi_choice")
    with pytest.raises(ValueError, match="add --mode generate"):
        make_judge(options, choice)
    generate = resolve_protocol(
        "paper", "tempcompass", "video-llm", {"mode": "generate"}, config="captioning"
    )
    assert make_judge(ScoreOptions(), generate) is None  # off by default
    assert make_judge(options, generate).protocol.name == "tempcompass_captioning"
    with pytest.raises(ValueError, match="--judge-model NAME"):  # captions need the judge
        check_generation(generate.settings, judged=False)
    monkeypatch.delenv("FOILKIT_UNSET_JUDGE_KEY", raising=False)
    hosted = ScoreOptions(judge_model="gpt-4o-mini", judge_api_key_env="FOILKIT_UNSET_JUDGE_KEY")
    with pytest.raises(ValueError, match=r"\$FOILKIT_UNSET_JUDGE_KEY is unset.*--judge-base-url"):
        make_judge(hosted, generate)


def test_the_judges_cost_is_its_tokens_summed_over_processes_at_its_prices(tmp_path, monkeypatch):
    """``--judge-price-per-1k-*-tokens``: ``run.json``'s judge records its prices, and its cost is
    the tokens of every process (gathered as ``accelerate`` gathers them) at those prices."""
    import accelerate.utils

    from foilkit.scorers.options import ScoreOptions, judge_settings
    from foilkit.scorers.runner import _judge_record

    options = ScoreOptions(
        judge_model="gpt-4o-mini",
        judge_base_url="http://h:1/v1",
        judge_price_per_1k_prompt_tokens=0.15,
        judge_price_per_1k_completion_tokens=0.6,
    )
    settings = judge_settings(options)
    rotation = ("Clockwise", "Counter-clockwise", "Not rotating")
    cases = [JudgeCase(f"it turns, take {n}", rotation, ("A", "B", "C"), 1) for n in range(3)]
    with OpenAICompatibleServer(lambda body: "B") as server:
        settings = JudgeSettings(**{**vars(settings), "base_url": server.base_url})
        judge = Judge(settings, "tomato", str(tmp_path / "cache"))
        judge.judge(cases)
    usage = judge.to_record()["usage"]
    assert usage["requests"] == 3 and usage["prompt_tokens"] > 0 and usage["completion_tokens"]
    assert usage["cost"] == pytest.approx(
        (usage["prompt_tokens"] * 0.15 + usage["completion_tokens"] * 0.6) / 1000
    )

    # two processes: the other one asked about 2 answers in 2 requests of other sizes
    other = {"requests": 2, "cache_hits": 1, "retries": 0, "prompt_tokens": 1000}
    other |= {"completion_tokens": 10, "answers_judged": 2, "asks": 2}
    monkeypatch.setattr(accelerate.utils, "gather_object", lambda parts: [*parts, other])

    class TwoProcesses:
        num_processes = 2

    class Adapter:
        pass

    Adapter.judge = judge
    record = _judge_record(TwoProcesses(), Adapter(), [])
    summed = record["usage"]
    assert summed["requests"] == 5 and (record["answers_judged"], record["asks"]) == (5, 5)
    assert summed["prompt_tokens"] == usage["prompt_tokens"] + 1000
    assert summed["completion_tokens"] == usage["completion_tokens"] + 10
    assert summed["cost"] == pytest.approx(
        (summed["prompt_tokens"] * 0.15 + summed["completion_tokens"] * 0.6) / 1000
    )
    assert (record["price_per_1k_prompt_tokens"], record["price_per_1k_completion_tokens"]) == (
        0.15,
        0.6,
    )
    # no prices: no cost known; a price without a judge, or below 0, is refused naming its flag
    unpriced = Judge(JudgeSettings("m", "http://h:1/v1"), "tomato", None)
    assert unpriced.to_record()["usage"]["cost"] is None
    with pytest.raises(ValueError, match="--judge-price-per-1k-completion-tokens configures"):
        ScoreOptions(judge_price_per_1k_completion_tokens=0.6)
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(
            ValueError,
            match=rf"--judge-price-per-1k-prompt-tokens must be a finite number >= 0, "
            rf"got {bad}",
        ):
            ScoreOptions(judge_model="m", judge_price_per_1k_prompt_tokens=bad)


# --- a judge server that misbehaves on purpose (issue 41), and its bookkeeping (issue 40) -------

ROTATION = ("Clockwise", "Counter-clockwise", "Not rotating")


def test_a_judge_refusal_is_an_unsettled_reply_asked_no_more_than_the_protocol_asks(tmp_path):
    """``content: null`` from the judge: read as an empty reply, asked again while TOMATO asks
    again (5 times), then unsettled; cached, so a rerun (``--resume``) asks nothing."""
    case = JudgeCase("it turns, I think", ROTATION, ("A", "B", "C"), 1)
    with OpenAICompatibleServer(lambda body: None) as server:
        judge = _judge(server, "tomato", tmp_path / "cache", "gpt-4o-mini")
        (verdict,) = judge.judge([case])
        assert (verdict.outcome, verdict.choice, verdict.asks, verdict.fault) == (
            "unparseable",
            None,
            5,
            None,
        )
        assert len(server.requests) == 5 and judge.to_record()["usage"]["refusals"] == 5
        again = _judge(server, "tomato", tmp_path / "cache", "gpt-4o-mini")
        assert again.judge([case]) == [verdict] and len(server.requests) == 5


def test_a_judge_reply_past_the_size_bound_fails_its_rows_alone(tmp_path):
    cases = [JudgeCase(f"huge {n}" if n else "small", ROTATION, ("A", "B", "C"), 1) for n in (0, 1)]

    def reply(body: dict) -> str:
        return "B" * 2**21 if "huge" in body["messages"][-1]["content"] else "B"

    with OpenAICompatibleServer(reply) as server:
        settings = JudgeSettings("gpt-4o-mini", server.base_url, max_reply_bytes=2**20)
        small, huge = Judge(settings, "tomato", None).judge(cases)
    assert small.verdict == "B" and small.fault is None
    assert huge.fault[1] == "reply too large" and len(server.requests) == 2
    # read into the row: it fails with that cause
    scores = read_answers(
        ROTATION, [Generations(("huge 1",))], get_parser("tomato"), None, {(0, 0): huge}
    )
    assert scores.fault == huge.fault


def test_a_key_the_judge_server_echoes_is_redacted(tmp_path, monkeypatch):
    monkeypatch.setenv("FOILKIT_TEST_JUDGE_KEY", KEY)
    case = JudgeCase("it turns", ROTATION, ("A", "B", "C"), 1)
    with OpenAICompatibleServer(lambda body: "B", faults=(403,), echo_key=True) as server:
        judge = _judge(server, "tomato", tmp_path / "cache", "gpt-4o-mini")
        with pytest.raises(RuntimeError, match="HTTP 403") as refused:
            judge.judge([case])
    assert KEY not in str(refused.value) and "[redacted]" in str(refused.value)
    for name in (KEY, "gsk_" + "x9" * 20):
        with pytest.raises(ValueError, match="--judge-api-key-env MY_KEY") as given:
            JudgeSettings("gpt-4o-mini", None, name)
        assert name not in str(given.value)


def test_shared_judge_replies_are_a_recorded_departure_and_every_ask_is_counted(tmp_path):
    """Rows whose judge prompt is identical share one reply (TempCompass' script asks each
    row): recorded as a departure, and the asks add up: requests + cache hits + shared."""
    same = JudgeCase("it turns, I think", ROTATION, ("A", "B", "C"), 1)
    other = JudgeCase("it turns the other way", ROTATION, ("A", "B", "C"), 1)
    with OpenAICompatibleServer(lambda body: "B") as server:
        judge = _judge(server, "tomato", tmp_path / "cache", "gpt-4o-mini")
        judge.judge([same, same, other, same])
        judge.judge([other])  # a later batch: from the cache
    record = judge.to_record()
    usage = record["usage"]
    assert (usage["requests"], usage["shared"], usage["cache_hits"]) == (2, 2, 1)
    assert record["asks"] == 5 == usage["requests"] + usage["cache_hits"] + usage["shared"]
    assert usage["asks"] == 5  # kept with the usage: over a resumed run's whole life too
    assert "share one reply" in record["departures"]
