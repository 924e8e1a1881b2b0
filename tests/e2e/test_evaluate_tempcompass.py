"""``foilkit evaluate --benchmark tempcompass`` end to end on the real questions of two videos (a
raw clip and its reversed conflicting copy, rendered as synthetic mp4s): a tiny dual encoder on
caption matching, a tiny video LLM on the three judge-free task types asked their own questions."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest

from foilkit.builders.tempcompass.builder import DIMENSIONS
from foilkit.cli import main
from foilkit.evaluation import evaluate
from foilkit.scorers.api import ScoreOptions
from foilkit.scorers.prompts import OWN_QUESTION
from foilkit.synthetic.models import tiny_model_path
from foilkit.synthetic.videos import SyntheticScene, write_video

VIDEOS = {"1034419625": "left", "1034419625_reverse": "right"}  # action and direction questions


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tempcompass-videos")
    for name, direction in VIDEOS.items():
        write_video(root / f"{name}.mp4", SyntheticScene(direction=direction), num_frames=12, fps=4)
    return root


def _argv(model: str, config: str, run_dir: Path, videos: Path, shared_data: Path) -> list[str]:
    return [
        "evaluate",
        "--benchmark",
        "tempcompass",
        "--config",
        config,
        "--model",
        model,
        "--videos",
        str(videos),
        "--annotations",
        str(shared_data / "tempcompass"),
        "--on-missing",
        "skip",
        "--min-coverage",  # two of the 410 videos on purpose
        "0",
        "--out",
        str(run_dir),
        "--n-resamples",
        "20",
        "--num-workers",
        "0",
        "--no-progress",
    ]


def test_a_video_llm_answers_every_judge_free_task_type(videos, shared_data, tmp_path):
    run_dir = tmp_path / "run"
    model = str(tiny_model_path("llava-next-video"))
    assert main(_argv(model, "all", run_dir, videos, shared_data)) == 0
    results = json.loads((run_dir / "results.json").read_text())
    assert list(results["configs"]) == ["multi_choice", "yes_no", "caption_matching"]
    protocol = results["protocol"]
    assert (protocol["benchmark"], protocol["settings"]["mode"]) == ("tempcompass", "choice")
    assert "run_video_llava/inference_dataset.py" in protocol["reference"]
    for config, entry in results["configs"].items():
        assert entry["run"]["score"]["score_kind"] == "probability"
        assert entry["run"]["score"]["questions"]["rows"] == entry["num_rows"]
        # what was asked: each row's own question, not the adapter's VITATECS one
        adapter = entry["run"]["score"]["adapter"]
        assert adapter["prompt"] == OWN_QUESTION and "prompt_name" not in adapter
        assert "system_prompt" not in adapter and "prompt_templates" not in entry["run"]["score"]
        overall = entry["metrics"]["multiple_choice_accuracy"]["overall"]
        # the official statistics: over all questions, per aspect, per fine-grained dimension
        assert {"accuracy_action", "accuracy_direction"} <= set(overall), config
        assert {"accuracy_fine_grained_action", "accuracy_object_motion"} <= set(overall)
        assert overall["n"] == overall["n_action"] + overall["n_direction"]
        scores = datasets.Dataset.from_parquet(str(run_dir / "scores" / f"{config}.parquet"))
        assert not any(scores["error"]) and set(scores["video_id"]) == set(VIDEOS)
        for row in scores:
            # each option's probability among the item's answer labels
            total = row["caption_score"] + sum(row["foil_scores"])
            assert total == pytest.approx(1.0, abs=1e-6), row["id"]
            assert row["caption_num_tokens"] >= 1
    report = (run_dir / "report.md").read_text()
    assert "| yes_no (all) |" in report and "| direction |" in report


def test_a_dual_encoder_matches_captions_and_refuses_yes_no(videos, shared_data, tmp_path):
    clip = str(tiny_model_path("clip"))
    options = ScoreOptions(num_workers=0, progress=False, control="reversed")
    common = dict(
        videos=videos,
        annotations=shared_data / "tempcompass",
        on_missing="skip",
        n_resamples=20,
        datasets_cache_dir=str(tmp_path / "cache"),
        score_options=options,
    )
    result = evaluate(
        "tempcompass", clip, config="caption_matching", out_dir=tmp_path / "run", **common
    )
    entry = result.results.configs["caption_matching"]
    overall = entry.metrics["multiple_choice_accuracy"].overall
    assert entry.num_rows == overall["n"] > 0 and result.results.control == "reversed"
    assert entry.score.questions is None  # a dual encoder scores the option texts
    assert set(entry.metrics["multiple_choice_accuracy"].groups) == {"action", "direction"}
    assert {f"accuracy_{DIMENSIONS['object motion']}", "chance"} <= set(overall)
    with pytest.raises(ValueError, match=r"yes/no\); a dual-encoder model scores texts alone"):
        evaluate("tempcompass", clip, config="yes_no", out_dir=tmp_path / "refused", **common)
    assert not (tmp_path / "refused").exists()
    with pytest.raises(ValueError, match="'captioning' needs an LLM judge: .*--judge-model"):
        evaluate("tempcompass", clip, config="captioning", out_dir=tmp_path / "judge", **common)
