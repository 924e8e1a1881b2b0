"""Rows with a video foil (the pair shape, Vinoground): the planner joins a pair's files into one
unit, each file is decoded once, and the foil video's scores are those its video would get as a
row of its own, for dual encoders and video LLMs, under the temporal controls too."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import datasets
import pytest

import foilkit
from foilkit.scorers.plan import make_plan
from foilkit.scorers.video import decoding
from foilkit.synthetic.videos import SyntheticScene, write_video

RUN = {"num_workers": 0, "progress": False, "use_cache": False, "num_frames": 4}
DIRECTIONS = ("left", "right", "up", "down")


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("pair-videos")
    return {
        d: str(write_video(folder / f"{d}.mp4", SyntheticScene(direction=d), num_frames=12, fps=4))
        for d in DIRECTIONS
    }


def _pair(row_id: str, video: str, foil_video: str, **changes) -> dict:
    return {
        "id": row_id,
        "video": video,
        "foil_video": foil_video,
        "caption": f"a square moves {Path(video).stem}",
        "foils": [f"a square moves {Path(foil_video or 'nothing').stem}"],
        "start": None,
        "end": None,
        "foil_start": None,
        "foil_end": None,
        "reversed": False,
        **changes,
    }


def _pairs(videos: dict[str, str]) -> list[dict]:
    """Two pairs sharing no file, and a third sharing one file with each: one unit of four
    files."""
    return [
        _pair("lr", videos["left"], videos["right"]),
        _pair("ud", videos["up"], videos["down"]),
        _pair("ru", videos["right"], videos["up"], foil_start=0.0, foil_end=2.0),
    ]


def _plain(pairs: list[dict]) -> list[dict]:
    """Each pair's foil video as a row of its own with the pair's texts: what its scores must be."""
    keep = ("id", "caption", "foils", "reversed")
    return [
        {
            **{key: row[key] for key in keep},
            "id": f"{row['id']}-foil",
            "video": row["foil_video"],
            "start": row["foil_start"],
            "end": row["foil_end"],
        }
        for row in pairs
    ]


def test_a_pairs_files_join_one_unit_and_units_sharing_a_file_merge(videos):
    plan = make_plan(_pairs(videos)[:2])
    assert [len(unit.views) for unit in plan.units] == [2, 2]
    assert [unit.rows for unit in plan.units] == [[0], [1]]
    plan = make_plan(_pairs(videos))
    (unit,) = plan.units
    assert unit.rows == [0, 1, 2] and len(unit.views) == 5  # "up": whole, and a window
    row = plan.rows[2]
    assert row.groups["foil_video"] == row.groups["main"] and row.foil_view != row.view
    assert plan.views[row.foil_view].end == 2.0 and plan.views[row.view].end is None


def test_a_pair_row_without_its_foil_video_fails_alone_naming_the_field(videos):
    rows = [
        _pair("no-foil", videos["left"], None),
        _pair("bad-window", videos["left"], videos["right"], foil_start=3.0, foil_end=1.0),
        _pair("good", videos["up"], videos["down"]),
    ]
    plan = make_plan(rows)
    assert plan.rows[0].error == "row 0 (id='no-foil') has no foil video"
    assert "field 'foil_end' is 1.0, not after field 'foil_start'" in plan.rows[1].error
    assert plan.rows[2].error is None
    with pytest.raises(ValueError, match="video foils"):
        plan.pooled()


@pytest.fixture
def opened(monkeypatch) -> Counter:
    counts: Counter = Counter()
    real = decoding.open_video

    def counting(view, *options):
        counts[Path(view.source).name] += 1
        return real(view, *options)

    monkeypatch.setattr(decoding, "open_video", counting)
    return counts


def _scores(model: str, rows: list[dict], **options):
    features = None
    if "foil_video" in rows[0]:
        features = datasets.Features(
            {
                **{k: datasets.Value("string") for k in ("id", "video", "foil_video", "caption")},
                "foils": datasets.List(datasets.Value("string")),
                **{
                    k: datasets.Value("float64") for k in ("start", "end", "foil_start", "foil_end")
                },
                "reversed": datasets.Value("bool"),
            }
        )
    data = datasets.Dataset.from_list(rows, features=features)
    return foilkit.score(model, data, **{**RUN, **options}).to_list()


def test_dual_encoder_decodes_each_file_once_and_scores_the_foil_video_as_its_own_row(
    tiny_model, videos, opened
):
    pairs = _pairs(videos)
    scored = _scores(tiny_model("clip"), pairs)
    assert opened == {f"{d}.mp4": 1 for d in DIRECTIONS}  # four files, once each
    plain = _scores(tiny_model("clip"), _plain(pairs))
    for pair, alone in zip(scored, plain, strict=True):
        assert pair["error"] is None
        assert pair["foil_video_caption_score"] == pytest.approx(alone["caption_score"], rel=1e-5)
        assert pair["foil_video_foil_scores"] == pytest.approx(alone["foil_scores"], rel=1e-5)
        assert pair["foil_video_frame_indices"] == alone["frame_indices"]
    assert "foil_video" not in scored[0]  # scores carry paths, not the decoded foil video


def test_video_llm_scores_both_videos_of_a_pair_reversed_each_decoded_once(
    tiny_model, videos, opened
):
    """A pair and its swap (the same texts, the videos exchanged): the foil video's scores of one
    are the video's scores of the other; under the reversed control both play backwards."""
    pair = _pair("lr", videos["left"], videos["right"])
    swapped = {**pair, "id": "rl", "video": pair["foil_video"], "foil_video": pair["video"]}
    scored = _scores(tiny_model("llava-next-video"), [pair, swapped], control="reversed")
    assert opened == {"left.mp4": 1, "right.mp4": 1}
    first, second = scored
    assert first["foil_video_caption_score"] == second["caption_score"]
    assert first["foil_video_foil_scores"] == second["foil_scores"]
    assert second["foil_video_caption_score"] == first["caption_score"]
    assert first["caption_score"] != second["caption_score"]  # two videos, two scores
    for row in scored:
        for frames in (row["frame_indices"], row["foil_video_frame_indices"]):
            assert frames == sorted(frames, reverse=True) and len(set(frames)) == 4
    assert first["score_kind"] == "log_probability"


def test_a_missing_foil_video_fails_its_row_only(tiny_model, videos, tmp_path):
    gone = str(tmp_path / "gone.mp4")
    rows = [_pair("lr", videos["left"], videos["right"]), _pair("l-gone", videos["left"], gone)]
    scored = _scores(tiny_model("clip"), rows, control="shuffled")
    assert scored[0]["error"] is None and scored[0]["foil_video_caption_score"] is not None
    assert scored[1]["error_cause"] == "video missing" and "gone.mp4" in scored[1]["error"]
    assert scored[1]["caption_score"] is None


def test_a_second_run_serves_both_videos_from_the_cache(tiny_model, videos, opened, tmp_path):
    pairs = _pairs(videos)[:2]
    first = _scores(tiny_model("clip"), pairs, use_cache=True, cache_dir=str(tmp_path))
    assert sum(opened.values()) == 4
    opened.clear()
    second = _scores(tiny_model("clip"), pairs, use_cache=True, cache_dir=str(tmp_path))
    assert sum(opened.values()) == 0 and second == first
