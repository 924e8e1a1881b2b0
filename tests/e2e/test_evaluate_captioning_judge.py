"""TempCompass captioning end to end: a tiny video LLM in generate mode writes each caption, the
local OpenAI-compatible server plays ``eval_captioning.py``'s judge (asked the official prompt
with the video's first multi-choice question), and the accuracy is the official rating of the
judge's replies; the judge is recorded (never its key), a rerun asks it nothing, and without a
judge captioning is refused naming the judge flags."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest

from foilkit.cli import main
from foilkit.synthetic.videos import SyntheticScene, write_video
from tests.answer_references import captioning_parse_llm_output, tempcompass_captioning_request

KEY = "sk-captioning-judge-secret-42"


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("captioning-videos")
    write_video(root / "1034419625.mp4", SyntheticScene(direction="left"), num_frames=8, fps=4)
    return root


def test_captioning_is_generated_then_judged_as_eval_captioning(
    videos, shared_data, answering_model, tmp_path, monkeypatch, capsys
):
    from foilkit.builders.tempcompass.answers import CAPTIONING as TEMPCOMPASS_CAPTIONING

    argv = ["evaluate", "--benchmark", "tempcompass", "--config", "captioning"]
    argv += ["--model", answering_model, "--mode", "generate", "--max-new-tokens", "8"]
    argv += ["--videos", str(videos), "--annotations", str(shared_data / "tempcompass")]
    argv += ["--on-missing", "skip", "--min-coverage", "0", "--num-frames", "4"]
    argv += ["--n-resamples", "20", "--num-workers", "0", "--no-progress"]
    argv += ["--cache-dir", str(tmp_path / "cache")]
    # off by default: refused, naming the flags that turn the judge on
    assert main([*argv, "--out", str(tmp_path / "refused")]) == 2
    assert "--judge-model" in capsys.readouterr().err

    monkeypatch.setenv("CAPTION_JUDGE_KEY", KEY)
    replies = ["Reasoning: it says so.\nAnswer: A. dunking a basketball", "Answer: B. x, C. y"]
    with OpenAICompatibleServerAt(lambda body: replies[len(server.requests) % 2]) as server:
        judge = ["--judge-model", "gpt-3.5-turbo-1106", "--judge-base-url", server.base_url]
        judge += ["--judge-api-key-env", "CAPTION_JUDGE_KEY"]
        judge += ["--judge-price-per-1k-prompt-tokens", "0.5"]
        judge += ["--judge-price-per-1k-completion-tokens", "1.5"]
        out = tmp_path / "run"
        assert main([*argv, *judge, "--out", str(out)]) == 0
        sent = list(server.requests)
        # a rerun: the captions are generated again, every judge reply comes from the cache
        assert main([*argv, *judge, "--out", str(tmp_path / "again")]) == 0
        assert len(server.requests) == len(sent)

    results = json.loads((out / "results.json").read_text())
    entry = results["configs"]["captioning"]
    scores = datasets.Dataset.from_parquet(str(out / "scores" / "captioning.parquet"))
    # one ask per distinct (caption, multi-choice question): identical requests are sent once
    # (an empty caption is refused: rated 0 there, as a prediction of None, and not asked)
    asked = {(row["answers"][0], row["judge_question"]) for row in scores if row["answers"][0]}
    assert len(sent) == len(asked) >= 1 and scores.num_rows > 2
    replies_of, refused = {}, 0
    for row in scores:
        (caption,) = row["answers"]
        if not caption.strip():
            assert row["answer_outcomes"] == ["refused"] and row["answer_judge_replies"] == [None]
            replies_of[row["id"]], refused = 0, refused + 1
            continue
        mc = {"question": row["judge_question"], "answer": row["judge_answer"]}
        official = tempcompass_captioning_request(caption, mc, TEMPCOMPASS_CAPTIONING)
        (body,) = [b for b in sent if b["messages"] == official["messages"]][:1]
        assert {k: v for k, v in body.items() if k != "stream"} == official
        (reply,) = row["answer_judge_replies"]
        replies_of[row["id"]] = captioning_parse_llm_output(reply, row["judge_answer"])["rating"]
        (outcome,) = row["answer_outcomes"]
        assert outcome == "judged"
    overall = entry["metrics"]["multiple_choice_accuracy"]["overall"]
    assert overall["accuracy"] == pytest.approx(sum(replies_of.values()) / len(replies_of))
    record = entry["run"]["score"]["judge"]
    assert record["model"] == "gpt-3.5-turbo-1106" and record["base_url"] == server.base_url
    assert (
        record["api_key_env"] == "CAPTION_JUDGE_KEY"
        and "eval_captioning.py" in (record["prompt_version"])
    )
    assert record["answers"] == {
        "parsed_by_rules": 0,
        "settled_by_judge": scores.num_rows - refused,
        "still_unparseable": 0,
        "refused": refused,
    }
    assert entry["run"]["score"]["answers"]["judged"] == scores.num_rows - refused
    # its cost: the tokens it was sent and wrote at the prices given, shown in the report
    usage = record["usage"]
    assert usage["requests"] == len(sent) and usage["prompt_tokens"] > 0
    cost = (usage["prompt_tokens"] * 0.5 + usage["completion_tokens"] * 1.5) / 1000
    assert record["price_per_1k_prompt_tokens"] == 0.5 and usage["cost"] == pytest.approx(cost)
    report = (out / "report.md").read_text()
    assert f"LLM judge `gpt-3.5-turbo-1106` at {server.base_url}" in report
    assert f"the judge's cost: {cost:.4f} at the given prices" in report
    for path in [*out.rglob("*"), *(tmp_path / "cache").rglob("*")]:
        assert not path.is_file() or KEY.encode() not in path.read_bytes()


def OpenAICompatibleServerAt(responder):  # noqa: N802 (the server class, imported late)
    from tests.openai_server import OpenAICompatibleServer

    return OpenAICompatibleServer(responder)
