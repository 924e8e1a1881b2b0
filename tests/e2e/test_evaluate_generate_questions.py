"""``foilkit evaluate --mode generate`` on benchmarks whose rows ask their own question
(TempCompass, TOMATO): the row's ``prompt`` asked in the model's chat template (no system
prompt), the answer read by the benchmark's own parser with the row's option labels, and the
accuracy equal to the official rating of the same answers (``tests/answer_references.py``).

Synthetic videos are named after real rows (as in ``test_evaluate_tempcompass.py`` and
``test_evaluate_tomato.py``); the model is the letter-answering tiny LLaVA-NeXT-Video in process,
and an OpenAI-compatible test server for the served backend."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets
import pytest

from foilkit.cli import main
from foilkit.scorers.prompts import OWN_QUESTION
from foilkit.synthetic.videos import SyntheticScene, write_video
from tests.answer_references import tempcompass_multi_choice, tomato_pre_parser

TEMPCOMPASS_VIDEOS = {"1034419625": "left", "1034419625_reverse": "right"}
TOMATO_VIDEOS = {"human/0621-00": "left", "object/0878-00": "right"}


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("question-videos")
    for name, direction in {**TEMPCOMPASS_VIDEOS, **TOMATO_VIDEOS}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        write_video(root / f"{name}.mp4", SyntheticScene(direction=direction), num_frames=8, fps=4)
    return root


def _evaluate(benchmark: str, model: str, videos: Path, shared: Path, out: Path, *more: str):
    argv = ["evaluate", "--benchmark", benchmark, "--mode", "generate", "--model", model]
    argv += ["--videos", str(videos), "--annotations", str(shared / benchmark)]
    argv += ["--on-missing", "skip", "--min-coverage", "0", "--num-frames", "4"]
    argv += ["--n-resamples", "20", "--num-workers", "0", "--no-progress", "--out", str(out)]
    assert main([*argv, *more]) == 0
    results = json.loads((out / "results.json").read_text())
    (config,) = results["configs"]
    scores = datasets.Dataset.from_parquet(str(out / "scores" / f"{config}.parquet"))
    return results, results["configs"][config], scores


def _check_counts(entry: dict[str, Any], scores: Any, parser: str, report: str) -> None:
    """One answer per row, counted by outcome in the run record and the report; the chosen
    option scores 1, the others 0 (nothing chosen: all 0)."""
    run = entry["run"]["score"]
    assert run["mode"] == "generate" and run["adapter"]["parser"] == parser
    assert run["adapter"]["prompt"] == OWN_QUESTION and "prompt_name" not in run["adapter"]
    assert run["questions"]["rows"] == scores.num_rows and "parser" in run["questions"]["scored"]
    counted: dict[str, int] = {}
    for row in scores:
        (outcome,) = row["answer_outcomes"]
        counted[outcome] = counted.get(outcome, 0) + 1
        chosen = [row["caption_score"], *row["foil_scores"]]
        assert sorted(chosen) == [0.0] * (len(chosen) - 1) + [float(outcome == "parsed")]
    assert {k: v for k, v in run["answers"].items() if v} == counted
    outcomes = ", ".join(f"{n} {outcome}" for outcome, n in run["answers"].items())
    assert f"answers read by parser `{parser}`: {outcomes}" in report


def test_tempcompass_multi_choice_asks_the_row_prompt_and_rates_as_eval_multi_choice(
    videos, shared_data, answering_model, tmp_path, monkeypatch
):
    from transformers import AutoProcessor

    from foilkit.scorers.adapters.video_llm import VideoLLMAdapter

    seen: list[str] = []
    generate = VideoLLMAdapter.generate

    def recording(self, requests):
        seen.extend(self.chat_prompt(request.messages) for request in requests)
        return generate(self, requests)

    monkeypatch.setattr(VideoLLMAdapter, "generate", recording)
    out = tmp_path / "tempcompass"
    results, entry, scores = _evaluate(
        "tempcompass", answering_model, videos, shared_data, out, "--config", "multi_choice"
    )
    assert results["protocol"]["settings"]["parser"] == "tempcompass_multi_choice"
    # the reference's decoding (run_video_llava/inference_dataset.py), as run.json records it
    decoding = entry["run"]["score"]["adapter"]["decoding"]
    assert decoding["strategy"] == "sample" and decoding["temperature"] == 0.1
    assert decoding["max_new_tokens"] == 128 and decoding["num_samples"] == 1
    processor = AutoProcessor.from_pretrained(answering_model)
    expected = [
        processor.apply_chat_template(
            [{"role": "user", "content": [{"type": "video"}, {"type": "text", "text": prompt}]}],
            add_generation_prompt=True,
            tokenize=False,
        )
        for prompt in scores["prompt"]
    ]
    assert seen == expected and scores.num_rows > 2  # one question per row, as published
    assert entry["run"]["score"]["answers"]["parsed"] >= 1  # the letters the model answers
    _check_counts(entry, scores, "tempcompass_multi_choice", (out / "report.md").read_text())
    # the official rating (eval_multi-choice.py --disable_llm) of the same answers
    ratings = [
        tempcompass_multi_choice(answers[0], answer)[1]
        for answers, answer in zip(scores["answers"], scores["answer"])
    ]
    overall = entry["metrics"]["multiple_choice_accuracy"]["overall"]
    assert overall["accuracy"] == pytest.approx(sum(ratings) / len(ratings))
    assert set(scores["answer_outcomes"][0]) <= {"parsed", "unparseable", "refused"}


def _tomato_rating(row: dict[str, Any]) -> int:
    """TOMATO's ``pre_parser`` then ``get_single_score``: the parsed letter is the key's."""
    letters = [chr(65 + i) for i in range(len(row["options"]))]
    parsed = tomato_pre_parser(row["answers"][0], letters, dict(zip(letters, row["options"])))
    return int(parsed == letters[row["label"]])


def test_tomato_generate_in_process_and_served_rates_as_pre_parser(
    videos, shared_data, answering_model, tmp_path
):
    from tests.openai_server import OpenAICompatibleServer

    _, entry, scores = _evaluate("tomato", answering_model, videos, shared_data, tmp_path / "local")
    _check_counts(entry, scores, "tomato", (tmp_path / "local" / "report.md").read_text())
    decoding = entry["run"]["score"]["adapter"]["decoding"]  # the reference's: greedy, 1024
    assert decoding["strategy"] == "greedy" and decoding["max_new_tokens"] == 1024
    overall = entry["metrics"]["multiple_choice_accuracy"]["overall"]
    ratings = [_tomato_rating(row) for row in scores]
    assert overall["accuracy"] == pytest.approx(sum(ratings) / len(ratings))

    # served: every reply form TOMATO's pre_parser reads, one it cannot, and an empty one
    replies = iter(["Answer is: (B)", "a", "I cannot tell", "", "C: 3", "B"] * 4)
    with OpenAICompatibleServer(lambda body: next(replies)) as server:
        argv = ["--backend", "openai", "--base-url", server.base_url]
        argv += ["--cache-dir", str(tmp_path / "cache")]
        _, entry, scores = _evaluate(
            "tomato", "served", videos, shared_data, tmp_path / "served", *argv
        )
    assert len(server.requests) == scores.num_rows  # one greedy answer to each row's question
    assert {(body["temperature"], body["max_tokens"]) for body in server.requests} == {(0.0, 1024)}
    for body in server.requests:  # no system prompt of foilkit's
        assert [m["role"] for m in body["messages"]] == ["user"]
    asked = {
        next(p["text"] for p in m["content"] if p["type"] == "text")
        for body in server.requests
        for m in body["messages"]
        if m["role"] == "user"
    }
    assert asked == set(scores["prompt"])  # the row's own prompt, as published
    _check_counts(entry, scores, "tomato", (tmp_path / "served" / "report.md").read_text())
    assert {"parsed", "unparseable", "refused"} <= set(entry["run"]["score"]["answers"])
    overall = entry["metrics"]["multiple_choice_accuracy"]["overall"]
    ratings = [_tomato_rating(row) for row in scores]
    assert overall["accuracy"] == pytest.approx(sum(ratings) / len(ratings))


def test_each_config_reads_answers_with_its_benchmarks_parser_unless_one_is_named():
    from foilkit.scorers.protocols import resolve_protocol

    def parser(benchmark, config, **given):
        given = {"mode": "generate", **given}
        resolved = resolve_protocol("paper", benchmark, "video-llm", given, config=config)
        return resolved.settings.get("parser")

    assert parser("tempcompass", "multi_choice") == "tempcompass_multi_choice"
    assert parser("tempcompass", "yes_no") == "tempcompass_yes_no"
    assert parser("tempcompass", "caption_matching") == "tempcompass_caption_matching"
    assert parser("tomato", "all") == parser("tomato", "rotation") == "tomato"
    assert parser("tomato", "all", parser="yes_no") == "yes_no"  # --parser wins
    assert parser("vitatecs", "direction") == "vitatecs"  # its protocol's own
    assert parser("tempcompass", "multi_choice", mode="choice") is None  # generate mode only
