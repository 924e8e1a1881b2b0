"""Inputs are checked before any model loads, each mistake one line with its fix in flag syntax
(issue 29): a video root that does not exist, is one level off or was forgotten, missing videos
summarised with their full list written, a model's frame-count constraint (X-CLIP)."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from launch import score_argv

from foilkit.cli import main


@pytest.fixture(scope="module")
def benchmark(tmp_path_factory) -> Path:
    """The demo's synthetic benchmark (exported layout: ``videos/order/*.mp4``)."""
    from foilkit.demo import write_demo_benchmark

    return write_demo_benchmark(tmp_path_factory.mktemp("inputs") / "benchmark")


@pytest.fixture
def no_model(monkeypatch):
    """Loading a model fails the test: every check here must come before it."""

    def refuse(*args, **kwargs):
        raise AssertionError("the model was loaded before the inputs were checked")

    monkeypatch.setattr("foilkit.scorers.job.load_adapter", refuse)


def _score(model: str, dataset: Path, out: Path, *extra: str) -> list[str]:
    quick = ("--config", "order", "--num-workers", "0", "--no-cache", "--no-progress")
    return score_argv(model, dataset, out, *quick, *extra)


def _error_line(capsys) -> str:
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines, "no error printed"
    return lines[-1]


def _videos(benchmark: Path) -> list[Path]:
    return sorted((benchmark / "videos" / "order").glob("*.mp4"))


def test_a_video_root_that_does_not_exist_is_one_line(
    benchmark, tiny_clip, tmp_path, no_model, capsys
):
    root = tmp_path / "no-such-folder"
    argv = _score(tiny_clip, benchmark, tmp_path / "out", "--video-root", str(root))
    assert main(argv) == 2
    line = _error_line(capsys)
    assert f"--video-root {root} does not exist" in line
    assert "they expect order/... under it" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("given", ["benchmark", "benchmark/videos/order"])
def test_a_video_root_one_level_off_names_the_right_one(
    benchmark, tiny_clip, tmp_path, no_model, capsys, given
):
    root = benchmark.parent / given
    argv = _score(tiny_clip, benchmark, tmp_path / "out", "--video-root", str(root))
    assert main(argv) == 2
    line = _error_line(capsys)
    right = benchmark / "videos"
    assert f"none of the {len(_videos(benchmark))} videos is under {root}" in line
    assert f"but {right} holds them" in line and "rows expect order/... under" in line
    assert f"pass --video-root {right} (video_root='{right}' in Python)" in line


def test_a_forgotten_video_root_of_an_export_is_one_line(
    benchmark, tiny_clip, tmp_path, no_model, capsys
):
    export = tmp_path / "export"  # the parquet without its videos, as an export is shared
    shutil.copytree(benchmark, export, ignore=shutil.ignore_patterns("videos"))
    assert main(_score(tiny_clip, export, tmp_path / "out")) == 2
    line = _error_line(capsys)
    assert f"none of the {len(_videos(benchmark))} videos is under the video root {export} " in line
    assert "rows expect order/... under the video root" in line
    assert "pass --video-root DIR (video_root=DIR in Python)" in line
    assert len(line) < 1000


def test_missing_videos_are_one_line_with_the_full_list_written(
    benchmark, tiny_clip, tmp_path, caplog
):
    videos = _videos(benchmark)
    root = tmp_path / "videos"
    (root / "order").mkdir(parents=True)
    for video in videos[:2]:
        shutil.copy(video, root / "order" / video.name)
    out = tmp_path / "out"
    with caplog.at_level(logging.WARNING, logger="foilkit.scorers.runner"):
        main(_score(tiny_clip, benchmark, out, "--video-root", str(root), "--min-coverage", "0"))
    listed = (out / "missing_videos.txt").read_text().splitlines()
    assert listed == [f"order/{video.name}" for video in videos[2:]]
    summary = [r.getMessage() for r in caplog.records if "missing_videos.txt" in r.getMessage()]
    assert len(summary) == 1
    assert summary[0].startswith(f"{len(videos) - 2} of {len(videos)} rows' videos")
    assert f"e.g. order/{videos[2].name}" in summary[0]
    assert f"the full list: {out / 'missing_videos.txt'}" in summary[0]


def test_xclip_frame_count_is_refused_before_the_model_loads(benchmark, tmp_path, no_model, capsys):
    from foilkit.synthetic.models import NUM_FRAMES, tiny_model_path

    xclip = str(tiny_model_path("xclip"))
    argv = _score(xclip, benchmark, tmp_path / "out", "--num-frames", str(NUM_FRAMES // 2))
    assert main(argv) == 2
    line = _error_line(capsys)
    assert f"takes exactly {NUM_FRAMES} frames per video (its config's vision_config" in line
    assert (
        f"not {NUM_FRAMES // 2}: pass --num-frames {NUM_FRAMES} (num_frames={NUM_FRAMES} in" in line
    )


def test_evaluate_checks_every_config_before_its_run_folder_or_a_model(
    benchmark, tiny_clip, tmp_path, no_model, capsys
):
    """The issue's case: an export evaluated without --video-root used to load the model, score,
    print every missing file and leave a half-written run folder."""
    from foilkit.demo import DEMO_BENCHMARK

    export = tmp_path / "export"
    shutil.copytree(benchmark, export, ignore=shutil.ignore_patterns("videos"))
    out = tmp_path / "run"
    argv = [
        "evaluate",
        "--benchmark",
        DEMO_BENCHMARK,
        "--model",
        tiny_clip,
        "--dataset",
        str(export),
    ]
    assert main([*argv, "--config", "order", "--out", str(out), "--num-workers", "0"]) == 2
    line = _error_line(capsys)
    assert "none of the" in line and "pass --video-root DIR (video_root=DIR in Python)" in line
    assert not out.exists()


@pytest.mark.parametrize(
    ("dataset", "said"),
    [
        ("./no-such-export", "looks like a local path, but {cwd}/no-such-export does not exist"),
        ("someone/no-such-dataset", "is neither a local folder nor a Hub dataset id that can be"),
    ],
)
def test_a_dataset_neither_a_folder_nor_a_hub_id_is_one_line(
    tiny_clip, tmp_path, no_model, capsys, monkeypatch, dataset, said
):
    monkeypatch.chdir(tmp_path)
    argv = _score(tiny_clip, Path(dataset), tmp_path / "out")
    argv[argv.index(str(Path(dataset)))] = dataset
    assert main(argv) == 2
    line = _error_line(capsys)
    assert f"--dataset {dataset!r}" in line and said.format(cwd=tmp_path) in line
    assert "pass an exported folder (foilkit build --out DIR) or a Hub dataset id" in line
