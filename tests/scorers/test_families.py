"""Every model family scores the synthetic benchmark end to end on CPU, in the per-sample schema."""

from __future__ import annotations

import json
import math

import pytest
import torch
from answering_model import assert_greedy_answer_follows_the_logits

import foilkit
from foilkit.scorers.adapters import load_adapter
from foilkit.synthetic.videos import SyntheticScene, render_frames

# (tiny model, options, adapter chosen from the config, score kind)
FAMILIES = {
    "clip-mean": ("clip", {}, "dual-encoder", "similarity"),
    "clip-mean-of-similarities": (
        "clip",
        {"pooling": "mean-of-similarities"},
        "dual-encoder",
        "similarity",
    ),
    "siglip": ("siglip", {}, "dual-encoder", "similarity"),
    "xclip": ("xclip", {}, "xclip", "similarity"),
    "blip-itm": ("blip-itm", {}, "blip-itm", "probability"),
    "video-llm-likelihood": (
        "llava-next-video",
        {"mode": "likelihood"},
        "video-llm",
        "log_probability",
    ),
    "video-llm-choice": ("llava-next-video", {"mode": "choice"}, "video-llm", "probability"),
    # VELOCITI's entailment probability; each family's cache path: tests/scorers/test_video_llm.py
    "video-llm-entail": ("llava-next-video", {"mode": "entail"}, "video-llm", "probability"),
    "qwen2-vl-likelihood": ("qwen2-vl", {"mode": "likelihood"}, "video-llm", "log_probability"),
    "qwen2-vl-choice": ("qwen2-vl", {"mode": "choice"}, "video-llm", "probability"),
    # caches that cannot be cut back: linear attention, a sliding window shorter than the prompt
    "qwen3.5-likelihood": ("qwen3.5", {"mode": "likelihood"}, "video-llm", "log_probability"),
    "gemma4-choice": ("gemma4", {"mode": "choice"}, "video-llm", "probability"),
    "text-lm": ("gpt2", {}, "text-lm", "perplexity"),
}


@pytest.fixture(scope="module", params=list(FAMILIES))
def scored(request, tiny_model, benchmark_with_broken, tmp_path_factory):
    name, options, adapter, kind = FAMILIES[request.param]
    out = tmp_path_factory.mktemp(request.param)
    result = foilkit.score(
        tiny_model(name),
        benchmark_with_broken,
        out_dir=str(out / "run"),
        num_workers=0,
        cache_dir=str(out / "cache"),
        progress=False,
        **options,
    )
    return request.param, result, json.loads((out / "run" / "run.json").read_text()), adapter, kind


def test_rows_follow_the_dataset(scored, benchmark_with_broken):
    _, result, _, _, _ = scored
    assert result["id"] == benchmark_with_broken["id"]
    for column in ("aspect", "source_id", "direction", "caption", "foils", "reversed"):
        assert result[column] == benchmark_with_broken[column], column
    assert "video" not in result.column_names


def test_every_text_is_scored(scored):
    _, result, run, adapter, kind = scored
    assert run["adapter"]["adapter"] == adapter and run["score_kind"] == kind
    for row in result:
        assert row["score_kind"] == kind
        if row["error"]:
            continue
        assert math.isfinite(row["caption_score"])
        assert len(row["foil_scores"]) == len(row["foils"]) and all(
            map(math.isfinite, row["foil_scores"])
        )
        assert (row["proficiency_caption_score"] is None) == (row["proficiency_caption"] is None)
        if row["proficiency_caption"] is not None:
            assert len(row["proficiency_foil_scores"]) == len(row["proficiency_foils"])


def test_broken_videos_are_reported_not_scored(scored):
    family, result, run, _, _ = scored
    errors = {row["id"]: row["error"] for row in result if row["error"]}
    if family == "text-lm":  # the video is never read
        assert errors == {} and run["errors"]["rows"] == 0
        return
    assert set(errors) == {"corrupt", "missing"}
    assert "corrupt.mp4" in errors["corrupt"] and "missing.mp4" in errors["missing"]
    assert run["errors"]["rows"] == 2 and len(run["errors"]["messages"]) == 2
    for row in result:
        if row["error"]:
            assert (
                row["caption_score"] is None
                and row["foil_scores"] is None
                and row["frame_indices"] == []
            )


def test_frame_indices_record_what_the_model_saw(scored):
    family, result, _, _, _ = scored
    for row in result:
        if family == "text-lm" or row["error"]:
            assert row["frame_indices"] == []
            continue
        indices = row["frame_indices"]
        assert len(indices) == 8
        assert indices == sorted(indices, reverse=row["reversed"])
    window = result[result["id"].index("left-window")]
    if family != "text-lm":  # 0.5 s to 2.5 s at 8 fps: frames 4..19
        assert min(window["frame_indices"]) >= 4 and max(window["frame_indices"]) <= 19


def test_mode_specific_numbers(scored):
    family, result, _, _, _ = scored
    for row in (row for row in result if not row["error"]):
        if family.endswith("-choice"):  # option probabilities, position bias averaged out
            assert row["caption_score"] + sum(row["foil_scores"]) == pytest.approx(1.0, abs=1e-5)
        if family.endswith("-likelihood") or family == "text-lm":
            mean, total, count = (
                row["caption_logprob_mean"],
                row["caption_logprob_sum"],
                row["caption_num_tokens"],
            )
            assert total == pytest.approx(mean * count, rel=1e-5) and mean < 0
        if family.endswith("-likelihood"):
            assert row["caption_score"] == row["caption_logprob_mean"]
        if family == "text-lm":
            assert row["caption_score"] == pytest.approx(math.exp(-row["caption_logprob_mean"]))
        if family.startswith("blip") or family.endswith("-entail"):
            assert 0 < row["caption_score"] < 1


@pytest.mark.parametrize(
    "scored", ["clip-mean", "clip-mean-of-similarities", "siglip"], indirect=True
)
def test_order_invariant_pooling_ties_a_view_and_its_reversal(scored):
    """Frame pooling cannot see time: a reversed view scores each text exactly as the forward
    view."""
    _, result, _, _, _ = scored
    rows = {row["id"]: row for row in result}
    for direction in ("left", "right", "up", "down"):
        forward, reverse = rows[f"{direction}-forward"], rows[f"{direction}-reverse"]
        assert forward["caption_score"] == reverse["foil_scores"][0]
        assert forward["foil_scores"][0] == reverse["caption_score"]


def test_scores_feed_pairwise_foil_accuracy(scored):
    _, result, _, _, kind = scored
    ok = [row for row in result if not row["error"]]
    pairwise = pytest.importorskip("foilkit.metrics.pairwise_foil_accuracy.pairwise_foil_accuracy")
    out = pairwise.pairwise_foil_accuracy(
        [r["caption_score"] for r in ok], [r["foil_scores"] for r in ok], score_kind=kind
    )
    assert 0.0 <= out["accuracy"] <= 1.0


@pytest.mark.parametrize("name", ["llava-next-video", "qwen2-vl", "qwen3.5", "gemma4"])
def test_video_llms_generate_what_their_logits_rank_first(name, tiny_model):
    """``--mode generate`` on each family: a greedy answer is the full forward's argmax."""
    scene = SyntheticScene(direction="left")
    frames = torch.from_numpy(render_frames(scene, num_frames=4)).permute(0, 3, 1, 2).contiguous()
    adapter = load_adapter(tiny_model(name), mode="generate", device="cpu")
    assert_greedy_answer_follows_the_logits(adapter, frames, ("a square moves", "it stays"))
