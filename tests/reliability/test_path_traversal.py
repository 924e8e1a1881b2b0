"""A video path that leads out of the video root is refused, naming the row and field
(issue 15, item 5): ``../`` in a name, an absolute name, a symlink pointing elsewhere."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from upstream_formats import FILES, RTIME, TSV_HEADER, VILMA, VITATECS

import foilkit
from foilkit.builders.annotations import AnnotationError
from foilkit.builders.videos import VideoPathError
from foilkit.scorers.plan import make_plan


@pytest.fixture
def video_root(tmp_path, motion_videos) -> Path:
    """``root/MSRVTT/video0.mp4`` (a real video), ``inside.mp4`` (a symlink to it) and
    ``outside.mp4`` (a symlink to ``secret/outside.mp4``, a real video beside the root)."""
    root, secret = tmp_path / "root", tmp_path / "secret"
    (root / "MSRVTT").mkdir(parents=True)
    secret.mkdir()
    shutil.copyfile(motion_videos["left"], root / "MSRVTT" / "video0.mp4")
    shutil.copyfile(motion_videos["right"], secret / "outside.mp4")
    (root / "MSRVTT" / "inside.mp4").symlink_to(root / "MSRVTT" / "video0.mp4")
    (root / "MSRVTT" / "outside.mp4").symlink_to(secret / "outside.mp4")
    return root


# relative path -> whether it stays under the root
PATHS = {
    "MSRVTT/video0.mp4": True,
    "MSRVTT/inside.mp4": True,
    "MSRVTT/../MSRVTT/video0.mp4": True,
    "MSRVTT/../../secret/outside.mp4": False,
    "MSRVTT/outside.mp4": False,
}


def _outside(root: Path, relative: str) -> str:
    """The refusal of a path outside ``root``: the path as given and the root, never where it
    leads (that would tell a dataset's author which files exist)."""
    return (
        f"{relative!r} is not inside the video root {root.resolve()} (symlinks followed); a "
        "video must lie under a folder named as a video root (--video-root DIR; video_root= in "
        "Python)"
    )


def test_the_plan_refuses_rows_outside_the_root_and_plans_the_others(video_root):
    rows = [
        {"id": f"r{index}", "video": {"path": path, "bytes": None}, "caption": "c", "foils": ["f"]}
        for index, path in enumerate(PATHS)
    ]
    plan = make_plan(rows, video_root=video_root)
    errors = [row.error for row in plan.rows]
    assert errors == [
        None
        if inside
        else f"row {index} (id='r{index}'), field 'video': {_outside(video_root, path)}"
        for index, (path, inside) in enumerate(PATHS.items())
    ]
    assert [row.view is not None for row in plan.rows] == list(PATHS.values())


def test_scoring_refuses_rows_outside_the_root_and_scores_the_others(
    video_root, tiny_clip, scoring_dataset, tmp_path
):
    dataset = scoring_dataset(
        [
            {"id": f"r{index}", "video": path, "caption": "a square moves left"}
            for index, path in enumerate(PATHS)
        ]
    )
    scores = foilkit.score(
        tiny_clip,
        dataset,
        video_root=str(video_root),
        num_workers=0,
        progress=False,
        cache_dir=str(tmp_path / "cache"),
    )
    assert [row["error"] for row in scores] == [
        None
        if inside
        else f"row {index} (id='r{index}'), field 'video': {_outside(video_root, path)}"
        for index, (path, inside) in enumerate(PATHS.items())
    ]
    assert [row["caption_score"] is not None for row in scores] == list(PATHS.values())


# benchmark -> (annotation content whose second record names a video outside the root,
#               the row, the field, its value)
OUTSIDE = {
    "vitatecs-video_name": (
        "vitatecs",
        "\n".join(
            json.dumps(r)
            for r in (VITATECS, {**VITATECS, "video_name": "../../secret/outside.mp4"})
        ),
        2,
        "video_name",
        "../../secret/outside.mp4",
    ),
    "vitatecs-absolute": (
        "vitatecs",
        "\n".join(json.dumps(r) for r in (VITATECS, {**VITATECS, "video_name": "/etc/passwd"})),
        2,
        "video_name",
        "/etc/passwd",
    ),
    "vilma-dataset": (
        "vilma",
        json.dumps({"a": VILMA, "b": {**VILMA, "dataset": ".."}}),
        "b",
        "dataset",
        "..",
    ),
    "vilma-video_file": (
        "vilma",
        json.dumps({"a": VILMA, "b": {**VILMA, "video_file": "../../x.mp4"}}),
        "b",
        "video_file",
        "../../x.mp4",
    ),
    "vilma-youtube_id": (
        "vilma",
        json.dumps({"a": VILMA, "b": {**VILMA, "youtube_id": "..\\..\\x"}}),
        "b",
        "youtube_id",
        "..\\..\\x",
    ),
    "rtime-key": (
        "rtime",
        json.dumps({"1": RTIME, "../../secret/outside": RTIME}),
        "../../secret/outside",
        "key",
        "../../secret/outside",
    ),
    "contrast-clip": (
        "contrast_sets",
        TSV_HEADER + "video0\ta\tb\tc\td\te\t1\n../secret/outside\ta\tb\tc\td\te\t1\n",
        3,
        "clip",
        "../secret/outside",
    ),
}


@pytest.mark.parametrize(
    ("benchmark", "content", "row", "field", "value"), OUTSIDE.values(), ids=OUTSIDE
)
def test_the_builder_refuses_an_annotation_naming_a_video_outside_the_root(
    annotations, benchmark, content, row, field, value
):
    folder = annotations.write(benchmark, content)
    with pytest.raises(AnnotationError) as error:
        annotations.build(benchmark, folder)
    assert str(error.value) == (
        f"{folder / FILES[benchmark][1]}, row {row}: field {field!r} is {value!r}: "
        "a video must be a relative path under the video root"
    )


def test_the_builder_refuses_a_symlink_out_of_the_root(annotations, video_root):
    names = ["video0.mp4", "inside.mp4", "outside.mp4"]
    folder = annotations.write(
        "vitatecs", "\n".join(json.dumps({**VITATECS, "video_name": name}) for name in names)
    )
    with pytest.raises(VideoPathError) as error:
        annotations.build("vitatecs", folder, video_root=video_root, on_missing="error")
    assert str(error.value) == (
        "split 'test', row 2 (id='direction-3'), field 'video_path': "
        + _outside(video_root, "MSRVTT/outside.mp4")
    )


def test_without_the_bad_row_the_symlink_inside_the_root_builds(annotations, video_root):
    names = ["video0.mp4", "inside.mp4"]
    folder = annotations.write(
        "vitatecs", "\n".join(json.dumps({**VITATECS, "video_name": name}) for name in names)
    )
    built = annotations.build("vitatecs", folder, video_root=video_root, on_missing="error")
    assert built["test"]["video_path"] == ["MSRVTT/video0.mp4", "MSRVTT/inside.mp4"]


@pytest.mark.parametrize("relative", ["MSRVTT/../../secret/outside.mp4", "MSRVTT/outside.mp4"])
def test_attaching_videos_refuses_a_path_out_of_the_root(annotations, video_root, relative):
    """A dataset from the Hub carries its own ``video_path``: it must not pick the file."""
    import datasets

    dataset = datasets.Dataset.from_list(
        [{"id": "ok", "video_path": "MSRVTT/video0.mp4"}, {"id": "bad", "video_path": relative}]
    )
    with pytest.raises(VideoPathError) as error:
        foilkit.attach_videos(dataset, video_root)
    assert str(error.value) == (
        f"split 'dataset', row 1 (id='bad'), field 'video_path': {_outside(video_root, relative)}"
    )
