"""``foilkit evaluate --benchmark tomato`` end to end on the real questions of three videos
(rendered as synthetic mp4s under the official layout): a tiny video LLM asked each question's
official prompt, scored per reasoning type and demonstration type; a dual encoder refused."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
import yaml
from huggingface_hub import parse_eval_result_entries

from foilkit.cli import main
from foilkit.evaluation import evaluate
from foilkit.scorers.api import ScoreOptions
from foilkit.synthetic.models import tiny_model_path
from foilkit.synthetic.videos import SyntheticScene, write_video

#: Videos of five questions: rotation + shape & trend (human), two counts (object), visual cues.
VIDEOS = {"human/0621-00": "left", "object/0878-00": "right", "object/0731-00": "up"}
QUESTIONS = {"rotation-8", "shape_trend-66", "count-117", "count-118", "visual_cues-0"}


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tomato-videos")
    for name, direction in VIDEOS.items():
        (root / name).parent.mkdir(exist_ok=True)
        write_video(root / f"{name}.mp4", SyntheticScene(direction=direction), num_frames=8, fps=4)
    return root


@pytest.fixture(scope="module")
def runs(videos, shared_data, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The tiny video LLM's run under the paper protocol, under the reversed control, and in
    likelihood mode (two questions)."""
    out = tmp_path_factory.mktemp("tomato-runs")
    # --limit 2 selects the first two questions before any video is looked for: their videos
    first = out / "first-videos"
    for name, direction in {"human/0209-03": "left", "human/0210-03": "up"}.items():
        (first / name).parent.mkdir(parents=True, exist_ok=True)
        write_video(first / f"{name}.mp4", SyntheticScene(direction=direction), num_frames=8, fps=4)
    model = str(tiny_model_path("llava-next-video"))
    argv = ["evaluate", "--benchmark", "tomato", "--model", model]
    argv += ["--annotations", str(shared_data / "tomato"), "--on-missing", "skip"]
    argv += ["--min-coverage", "0", "--n-resamples", "20", "--num-workers", "0", "--no-progress"]
    controls = {
        "paper": ["--videos", str(videos)],
        "reversed": ["--videos", str(videos), "--control", "reversed"],
        "likelihood": ["--videos", str(first), "--mode", "likelihood", "--limit", "2"],
    }
    for name, control in controls.items():
        assert main([*argv, *control, "--out", str(out / name)]) == 0, name
    return {name: out / name for name in controls}


def test_a_video_llm_answers_each_question_by_its_letter(runs):
    run_dir = runs["paper"]
    results = json.loads((run_dir / "results.json").read_text())
    assert list(results["configs"]) == ["all"]
    protocol = results["protocol"]
    assert (protocol["benchmark"], protocol["settings"]["mode"]) == ("tomato", "choice")
    assert protocol["settings"]["num_frames"] == 16 and "construct_prompt" in protocol["reference"]
    entry = results["configs"]["all"]
    assert entry["run"]["score"]["score_kind"] == "probability"
    assert entry["run"]["score"]["questions"]["rows"] == entry["num_rows"] == len(QUESTIONS)
    metric = entry["metrics"]["multiple_choice_accuracy"]
    overall = metric["overall"]
    # get_categorized_score.py: over all questions, per reasoning type, per demonstration type
    assert set(metric["groups"]) == {"rotation", "shape_trend", "count", "visual_cues"}
    assert (overall["n_count"], overall["n_human"], overall["n_object"]) == (2, 2, 3)
    assert {"accuracy_rotation", "accuracy_human", "accuracy_object", "chance"} <= set(overall)
    scores = datasets.Dataset.from_parquet(str(run_dir / "scores" / "all.parquet"))
    assert not any(scores["error"]) and set(scores["id"]) == QUESTIONS
    for row in scores:  # each option letter's probability among the question's letters
        total = row["caption_score"] + sum(row["foil_scores"])
        assert total == pytest.approx(1.0, abs=1e-6), row["id"]
        assert len(row["foil_scores"]) == len(row["options"]) - 1
    report = (run_dir / "report.md").read_text()
    assert "| reasoning type | accuracy | human | object | simulated | n |" in report
    assert "| shape_trend |" in report and "| visual_cues |" in report


def test_compare_pairs_the_paper_run_with_its_reversed_control(runs, tmp_path):
    reversed_results = json.loads((runs["reversed"] / "results.json").read_text())
    assert reversed_results["control"] == "reversed"
    out = tmp_path / "compare"
    assert main(["compare", str(runs["paper"]), str(runs["reversed"]), "--out", str(out)]) == 0
    comparison = json.loads((out / "comparison.json").read_text())
    scopes = comparison["tests"]["all"]["multiple_choice_accuracy"]
    assert set(scopes) == {"all", "rotation", "shape_trend", "count", "visual_cues"}
    assert all("p_value" in test["mcnemar"] for test in scopes.values())


def test_a_dual_encoder_is_refused_before_it_loads(videos, shared_data, tmp_path):
    options = ScoreOptions(num_workers=0, progress=False)
    with pytest.raises(ValueError, match=r"TOMATO's counts .*a dual-encoder model scores texts"):
        evaluate(
            "tomato",
            str(tiny_model_path("clip")),
            videos=videos,
            annotations=shared_data / "tomato",
            on_missing="skip",
            out_dir=tmp_path / "refused",
            datasets_cache_dir=str(tmp_path / "cache"),
            score_options=options,
        )
    assert not (tmp_path / "refused").exists()


def test_hub_results_and_the_leaderboard_read_the_reasoning_types(runs, tmp_path):
    """``push-results --dry-run``: one ``.eval_results`` entry per reasoning type the run scored
    and ``overall``; ``foilkit leaderboard`` ranks the paper run and its control apart."""
    out = tmp_path / "dry-run"
    argv = ["push-results", str(runs["paper"]), "--repo", "me/tomato-results"]
    argv += ["--model-repo", "me/tiny", "--min-coverage", "0", "--dry-run", str(out)]
    assert main(argv) == 0
    (path,) = (out / "model").rglob("*.yaml")
    assert path.name == "tomato.yaml"
    entries = parse_eval_result_entries(yaml.safe_load(path.read_text()))
    metric = json.loads((runs["paper"] / "results.json").read_text())["configs"]["all"]["metrics"]
    computed = metric["multiple_choice_accuracy"]
    expected = {name: group["accuracy"] for name, group in computed["groups"].items()}
    expected["overall"] = computed["overall"]["accuracy"]
    assert {e.task_id: e.value for e in entries} == {
        task: round(100 * value, 2) for task, value in expected.items()
    }
    assert {e.dataset_id for e in entries} == {"foilkit/tomato"}
    board = tmp_path / "board"
    argv = ["leaderboard", str(runs["paper"]), str(runs["reversed"]), "--out", str(board)]
    assert main([*argv, "--min-coverage", "0", "--n-resamples", "20"]) == 0
    assert "overall" in (board / "leaderboard.md").read_text()


def test_likelihood_mode_scores_each_letter_by_its_log_probability(runs):
    results = json.loads((runs["likelihood"] / "results.json").read_text())
    assert results["protocol"]["overrides"]["mode"] == {"protocol": "choice", "given": "likelihood"}
    entry = results["configs"]["all"]
    assert entry["run"]["score"]["score_kind"] == "log_probability"
    scores = datasets.Dataset.from_parquet(str(runs["likelihood"] / "scores" / "all.parquet"))
    assert scores.num_rows == 2 and not any(scores["error"])
    for row in scores:  # each letter's log-probability as the answer: below 0, one token or more
        assert row["caption_score"] < 0 and all(score < 0 for score in row["foil_scores"])
        assert row["caption_num_tokens"] >= 1
    assert entry["metrics"]["multiple_choice_accuracy"]["overall"]["n"] == 2
