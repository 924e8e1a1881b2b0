"""``foilkit import``: answers a model gave outside foilkit, scored as a foilkit run.

The TempCompass fixture ``tests/data/imports/tempcompass/video-llava/multi-choice.json`` is the
authors' published ``predictions/video-llava/multi-choice.json`` (llyx97/TempCompass@e1b4631,
CC BY-NC 4.0), re-serialised without indentation; the questions it answers are the published
ones in ../shared/data/tempcompass (tests using them skip cleanly without it).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from foilkit.cli import main
from foilkit.compare import compare_runs
from foilkit.imports import IMPORTED, NO_ANSWER, RUN_BY, is_imported
from foilkit.leaderboard import local_entries
from foilkit.run import RunFolder, RunResults

PREDICTIONS = Path(__file__).parent / "data" / "imports" / "tempcompass" / "video-llava"
#: TempCompass README, multi-choice QA, Video-LLaVA: action, direction, speed, order,
#: attribute change, average (%).
README_TABLE = {
    "action": 76.0,
    "direction": 35.2,
    "speed": 35.6,
    "order": 37.7,
    "attribute_change": 41.0,
}
README_AVERAGE = 45.6


def _import(source: Path, out: Path, shared_data: Path, *flags: str) -> int:
    return main(
        [
            "import",
            str(source),
            "--benchmark",
            "tempcompass",
            "--out",
            str(out),
            "--annotations",
            str(shared_data / "tempcompass"),
            "--n-resamples",
            "100",
            *flags,
        ]
    )


@pytest.fixture(scope="module")
def published(shared_data: Path, tmp_path_factory) -> Path:
    """The published Video-LLaVA multi-choice answers, imported."""
    out = tmp_path_factory.mktemp("imports") / "video-llava"
    assert _import(PREDICTIONS, out, shared_data) == 0
    return out


def test_published_video_llava_answers_give_the_readme_table_with_cis(published: Path):
    results = RunResults.load(published)
    entry = results.configs["multi_choice"]
    overall = entry.metrics["multiple_choice_accuracy"].overall
    for aspect, value in README_TABLE.items():
        assert round(overall[f"accuracy_{aspect}"] * 100, 1) == value, aspect
        low, high = overall[f"accuracy_{aspect}_ci"]
        assert low < overall[f"accuracy_{aspect}"] < high, aspect
    assert round(overall["accuracy"] * 100, 1) == README_AVERAGE
    assert entry.coverage.scored == 1580 and entry.coverage.failed == 0
    report = (published / "report.md").read_text()
    assert "| action | 76.0 [" in report and "| all | 45.6 [" in report
    assert "answers imported, model run outside foilkit, from `multi-choice.json` (TempCompass" in (
        report
    )
    assert "None frames" not in report and "new tokens" not in report


def test_the_record_says_where_the_answers_came_from(published: Path):
    results = RunResults.load(published)
    record = results.configs["multi_choice"].score
    assert is_imported(results) and record.adapter_name == IMPORTED
    assert record.adapter["model_run_by"] == RUN_BY
    assert record.adapter["parser"] == "tempcompass_multi_choice"
    (source,) = record.adapter["sources"]
    digest = hashlib.sha256((PREDICTIONS / "multi-choice.json").read_bytes()).hexdigest()
    assert source["format"] == "tempcompass-predictions"
    assert source["file"].endswith("video-llava/multi-choice.json")
    assert source["sha256"] == digest
    assert record.answers["parsed"] == 1580
    assert results.label == "video-llava"


def test_every_row_is_accounted_for_and_a_changed_prompt_is_flagged(
    published: Path, shared_data: Path, tmp_path: Path
):
    """The same answers as JSONL, a tenth of them: the other rows fail with their cause and are
    listed; a prompt that is not foilkit's is flagged on its row; the paired test against the
    whole import has no discordant item on the rows both have."""
    scores = RunFolder(published).load_scores("multi_choice").to_pandas()
    chosen = scores.iloc[::10]
    lines = [
        {"id": row.id, "answer": row.answers[0], "prompt": row.prompt}
        for row in chosen.itertuples()
    ]
    lines[0]["prompt"] = "Another question?"
    source = tmp_path / "answers.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "run"
    assert _import(source, out, shared_data, "--config", "multi_choice", "--label", "x") == 0
    results = RunResults.load(out)
    coverage = results.configs["multi_choice"].coverage
    assert (coverage.scored, coverage.failed) == (len(lines), 1580 - len(lines))
    assert coverage.causes == {NO_ANSWER: 1580 - len(lines)}
    rows = RunFolder(out).load_scores("multi_choice").to_pandas()
    assert len(rows) == 1580
    assert set(rows.loc[rows.error.notna(), "id"]) == set(scores.id) - set(chosen.id)
    assert list(rows.loc[rows.imported_prompt_differs, "id"]) == [lines[0]["id"]]
    tests = compare_runs(published, out, n_resamples=100)
    mcnemar = tests["multi_choice"]["multiple_choice_accuracy"]["all"]["mcnemar"]
    assert (mcnemar["a_only"], mcnemar["b_only"]) == (0, 0)
    assert sum(rows.error.isna()) == len(lines)  # the pairs: the rows both runs scored


def _lmms_eval_sample(doc_id: int, video: str, aspect: str, item: dict, saved: bool) -> dict:
    """One line of lmms-eval 0.7's ``--log_samples`` file for its ``tempcompass_multi_choice``
    task, with the document fields of lmms-lab's TempCompass dataset (``video_id``, ``dim``,
    ``question``, ``answer``): as lmms-eval 0.7.3 saves it (``saved``:
    ``EvaluationTracker.save_results_samples`` drops ``doc`` and ``arguments``, keeps the prompt
    as ``input`` and the one response unlisted; the document's fields stand in the records the
    task's ``process_results`` logs, as a real run writes them:
    ``tests/test_imports_lmms_eval.py``), or in the unsaved form
    ``evaluator._process_document_results`` builds."""
    prompt = item["question"] + "\nPlease directly give the best option:"
    prediction = item["prediction"]
    doc = {"video_id": video, "dim": aspect, "question": item["question"], "answer": item["answer"]}
    if saved:
        record = {
            "video_id": video,
            "question": item["question"],
            "gt-answer": item["answer"],
            "video-llm-prediction": prediction,
            "match_success": True,
            "rating": 0,
            "dim": aspect,
        }
        return {
            "doc_id": doc_id,
            "target": item["answer"],
            "filtered_resps": prediction,
            "token_counts": [None],
            "doc_hash": "0" * 64,
            "avg_accuracy": record,
            f"{aspect}_accuracy": record,
            "input": prompt,
        }
    return {
        "doc_id": doc_id,
        "doc": doc,
        "target": item["answer"],
        "arguments": [prompt, {"max_new_tokens": 128}, doc_id, "tempcompass_multi_choice", "test"],
        "resps": [[prediction]],
        "filtered_resps": [prediction],
        "doc_hash": "0" * 64,
    }


@pytest.mark.parametrize("saved", [True, False], ids=["as-saved", "unsaved"])
def test_lmms_eval_samples_match_by_document_fields_not_position(
    published: Path, shared_data: Path, tmp_path: Path, saved: bool
):
    """The published answers as lmms-eval samples of a fifth of the items, in reversed order:
    each reaches its row by video, aspect and question; the paired test against the published
    import has no discordant item; the producer's version is read from its results file."""
    data = json.loads((PREDICTIONS / "multi-choice.json").read_text())
    items = [
        (video, aspect, item)
        for video, by_aspect in data.items()
        for aspect, listed in by_aspect.items()
        for item in listed
    ][::5]
    folder = tmp_path / "lmms-eval" / "video-llava"
    folder.mkdir(parents=True)
    lines = [_lmms_eval_sample(n, *item, saved) for n, item in enumerate(items)][::-1]
    samples = folder / "20261129_000000_samples_tempcompass_multi_choice.jsonl"
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (folder / "20261129_000000_results.json").write_text(
        json.dumps({"lmms_eval_version": "0.7.3", "results": {}})
    )
    # another run's results in the same folder say nothing of these samples
    other = {"lmms_eval_version": "main@0000000", "config": {"model": "qwen2_vl"}}
    (folder / "20261128_000000_results.json").write_text(json.dumps(other))
    out = tmp_path / "run"
    assert _import(folder, out, shared_data) == 0
    results = RunResults.load(out)
    record = results.configs["multi_choice"].score
    (source,) = record.adapter["sources"]
    assert (source["tool"], source["version"]) == ("lmms-eval", "0.7.3") and "model" not in source
    assert record.adapter["prompts_differ"] == 0  # lmms-eval asks foilkit's prompt
    coverage = results.configs["multi_choice"].coverage
    assert (coverage.scored, coverage.failed) == (len(items), 1580 - len(items))
    mcnemar = compare_runs(published, out, n_resamples=100)["multi_choice"][
        "multiple_choice_accuracy"
    ]["all"]["mcnemar"]
    assert (mcnemar["a_only"], mcnemar["b_only"]) == (0, 0)
    rows = RunFolder(out).load_scores("multi_choice").to_pandas().set_index("id")
    mine = RunFolder(published).load_scores("multi_choice").to_pandas().set_index("id")
    scored = rows.index[rows.error.isna()]
    assert (rows.loc[scored, "caption_score"] == mine.loc[scored, "caption_score"]).all()


def test_the_leaderboard_marks_an_imported_run(published: Path):
    entries = local_entries([published])
    assert entries and all(entry.imported for entry in entries)
    assert all("imported" in entry.notes for entry in entries)


@pytest.mark.parametrize(
    "content, message",
    [
        ("just text\n", "answers.jsonl:1: unknown answer format"),
        ('{"id": "1034419625-action-0", "answer": "A"}\n{"id": \n', "answers.jsonl:2: not a JSON"),
        ('{"id": "no-such-item", "answer": "A"}\n', "answers.jsonl:1: no tempcompass item"),
        (
            '{"id": "1034419625-action-0", "answer": "A"}\n{"id": "1034419625-action-0", '
            '"answer": "B"}\n',
            "answers.jsonl:2: a second answer to the item of ",
        ),
        ('{"id": "1034419625-action-0", "answer": 3}\n', "answers.jsonl:1: 'answer' must be"),
        (
            '{"doc": {"video_id": "1034419625"}, "filtered_resps": ["A"]}\n',
            "answers.jsonl:1: lmms-eval task 'answers' is not one foilkit imports",
        ),
    ],
)
def test_bad_input_is_one_line_naming_file_and_line(
    shared_data: Path, tmp_path: Path, capsys, content: str, message: str
):
    source = tmp_path / "answers.jsonl"
    source.write_text(content)
    assert _import(source, tmp_path / "run", shared_data, "--config", "multi_choice") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("foilkit import: error: ") and message in err
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_tempcompass_answers_refuse_another_benchmark(tmp_path: Path, capsys):
    argv = ["import", str(PREDICTIONS), "--benchmark", "vitatecs", "--out", str(tmp_path / "r")]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "multi-choice.json:1: these are TempCompass answers" in err
    assert err.endswith("pass --benchmark tempcompass")


def test_an_lmms_eval_sample_without_its_document_fields_names_its_line(
    shared_data: Path, tmp_path: Path, capsys
):
    source = tmp_path / "20261129_samples_tempcompass_multi_choice.jsonl"
    line = {"doc": {"video_id": "1034419625", "question": "q"}, "filtered_resps": ["A"]}
    source.write_text(json.dumps(line) + "\n")
    assert _import(source, tmp_path / "run", shared_data) == 2
    err = capsys.readouterr().err.strip()
    assert f"{source}:1: not an lmms-eval sample of tempcompass_multi_choice (KeyError" in err


def test_the_judge_reads_what_the_rules_cannot_as_in_generate_mode(
    shared_data: Path, tmp_path: Path, monkeypatch
):
    """``--judge-model``: the official judge is asked about the answer the rules leave
    unparseable (TempCompass' eval_multi-choice.py protocol) and its verdict scores the row."""
    from tests.openai_server import OpenAICompatibleServer

    monkeypatch.setenv("FOILKIT_TEST_JUDGE_KEY", "sk-test")
    monkeypatch.setenv("FOILKIT_CACHE", str(tmp_path / "cache"))  # the judge's replies: none yet
    lines = [
        {"id": "1034419625-action-0", "answer": "A"},
        {"id": "1034419625-action-1", "answer": "The man dunks the ball."},
    ]
    source = tmp_path / "answers.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with OpenAICompatibleServer(lambda body: "Correct") as server:
        flags = ["--config", "multi_choice", "--judge-model", "gpt-3.5-turbo-1106"]
        flags += ["--judge-base-url", server.base_url]
        flags += ["--judge-api-key-env", "FOILKIT_TEST_JUDGE_KEY"]
        assert _import(source, tmp_path / "run", shared_data, *flags) == 0
        (asked,) = server.requests
    assert "The man dunks the ball." in asked["messages"][1]["content"]
    record = RunResults.load(tmp_path / "run").configs["multi_choice"].score
    assert record.answers["judged"] == 1 and record.answers["parsed"] == 1
    assert record.judge["model"] == "gpt-3.5-turbo-1106"
    rows = RunFolder(tmp_path / "run").load_scores("multi_choice").to_pandas()
    judged = rows.set_index("id").loc["1034419625-action-1"]
    assert list(judged.answer_outcomes) == ["judged"] and judged.caption_score == 1.0


def test_push_results_takes_an_imported_run(published: Path, tmp_path: Path):
    out = tmp_path / "push"
    argv = ["push-results", str(published), "--repo", "me/video-llava", "--dry-run", str(out)]
    assert main(argv) == 0
    sent = {path.relative_to(out).as_posix() for path in out.rglob("*") if path.is_file()}
    assert {"dataset/scores/multi_choice.parquet", "dataset/results.json"} <= sent


def _captioning_sample(doc_id: int, video: str, aspect: str, item: dict, caption: str) -> dict:
    """A ``tempcompass_captioning`` line as lmms-eval 0.7.3 saves it: no ``doc``; the
    document's fields in the record its ``process_results`` logs (``avg_accuracy``)."""
    record = {"video_id": video, "question": item["question"], "video-llm-prediction": caption}
    record |= {"gt-answer": item["answer"], "rating": 0, "dim": aspect}
    return {
        "doc_id": doc_id,
        "target": item["answer"],
        "filtered_resps": caption,
        "token_counts": [None],
        "avg_accuracy": record,
        f"{aspect}_accuracy": record,
        "input": item["question"],
    }


def test_captioning_imports_are_rated_by_the_judge_alone(
    shared_data: Path, tmp_path: Path, monkeypatch, capsys
):
    """Captioning is rated by TempCompass' judge only (eval_captioning.py): without
    ``--judge-model`` the import refuses it in one line; with it, every caption is shown to the
    judge beside the video's multi-choice question, and its answer rates the row."""
    from tests.openai_server import OpenAICompatibleServer

    published = json.loads((shared_data / "tempcompass/questions/captioning.json").read_text())
    items = published["1034419625"]["action"][:2]
    captions = ["A man dunks a basketball.", "A man walks a dog."]
    lines = [
        _captioning_sample(n, "1034419625", "action", item, caption)
        for n, (item, caption) in enumerate(zip(items, captions, strict=True))
    ]
    source = tmp_path / "20261129_000000_samples_tempcompass_captioning.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert _import(source, tmp_path / "refused", shared_data) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--judge-model" in err
    assert not (tmp_path / "refused").exists()

    def judge(body: dict) -> str:
        caption = body["messages"][-1]["content"].split("Video Description:")[-1]
        if "dunks" in caption:
            return "Reasoning: the man dunks.\nAnswer: A. dunking a basketball"
        return "Reasoning: no basketball.\nAnswer: None of the choices are correct"

    monkeypatch.setenv("FOILKIT_TEST_JUDGE_KEY", "sk-test")
    monkeypatch.setenv("FOILKIT_CACHE", str(tmp_path / "cache"))
    with OpenAICompatibleServer(judge) as server:
        flags = ["--judge-model", "gpt-3.5-turbo-1106", "--judge-base-url", server.base_url]
        flags += ["--judge-api-key-env", "FOILKIT_TEST_JUDGE_KEY"]
        assert _import(source, tmp_path / "run", shared_data, *flags) == 0
        asked = server.requests
    assert len(asked) == 2  # every caption, none read by rules
    assert all(
        "Multi-Choice Question:\nWhat is the man doing" in a["messages"][-1]["content"]
        for a in asked
    )
    results = RunResults.load(tmp_path / "run")
    entry = results.configs["captioning"]
    assert entry.score.answers["judged"] == 2 and entry.coverage.scored == 2
    rows = RunFolder(tmp_path / "run").load_scores("captioning").to_pandas()
    scored = rows[rows.error.isna()].set_index("question")
    assert list(scored.loc[[item["question"] for item in items], "caption_score"]) == [1.0, 0.0]
