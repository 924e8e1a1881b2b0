"""A video path that leads out of the video root is refused, naming the row and field
(issue 15, item 5): ``../`` in a name, an absolute name, a symlink pointing elsewhere."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from upstream_formats import FILES, RTIME, TSV_HEADER, VILMA, VITATECS

import foilkit
from foilkit.builders.annotations import AnnotationError
from foilkit.builders.videos import VideoPathError
from foilkit.errors import LOW_COVERAGE_EXIT
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


# --- issue 35: the video root is a boundary for absolute paths too ---------------------------


@pytest.fixture
def opened(monkeypatch) -> list[str]:
    """Every file a decoder opened or looked up (``open_video``'s existence check and each
    backend), symlinks followed: the record of what scoring and ``report.html`` touched."""
    from foilkit.scorers.video import decoding

    seen: list[str] = []

    def record(view) -> None:
        if isinstance(view.source, str):
            seen.append(os.path.realpath(view.source))

    for name, opener in list(decoding.DECODERS.items()):

        def spy(view, *args, _opener=opener, **kwargs):
            record(view)
            return _opener(view, *args, **kwargs)

        monkeypatch.setitem(decoding.DECODERS, name, spy)
    check = decoding._check_exists
    monkeypatch.setattr(decoding, "_check_exists", lambda view: (record(view), check(view))[1])
    return seen


@pytest.fixture
def two_roots(tmp_path, motion_videos) -> dict[str, Path]:
    """``first/video0.mp4`` and ``second/clip.mp4`` (two roots the user names), and beside them
    ``secret/outside.mp4``, a real video no root holds."""
    folders = {name: tmp_path / name for name in ("first", "second", "secret")}
    for folder in folders.values():
        folder.mkdir()
    shutil.copyfile(motion_videos["left"], folders["first"] / "video0.mp4")
    shutil.copyfile(motion_videos["right"], folders["second"] / "clip.mp4")
    shutil.copyfile(motion_videos["right"], folders["secret"] / "outside.mp4")
    return folders


def _rows(folders: dict[str, Path]) -> list[tuple[str, str, bool]]:
    """``(id, video, inside a root)``: absolute paths in each root and a relative one found under
    the second, then an existing file outside both, a missing one, and ``/etc/passwd``."""
    return [
        ("abs-first", str(folders["first"] / "video0.mp4"), True),
        ("rel-second", "clip.mp4", True),
        ("abs-second", str(folders["second"] / "clip.mp4"), True),
        ("outside", str(folders["secret"] / "outside.mp4"), False),
        ("missing-outside", str(folders["secret"] / "missing.mp4"), False),
        ("passwd", "/etc/passwd", False),
    ]


def _refused(index: int, row_id: str, video: str, folders: dict[str, Path]) -> str:
    roots = f"{folders['first'].resolve()}, {folders['second'].resolve()}"
    return (
        f"row {index} (id={row_id!r}), field 'video': {video!r} is not inside the video roots "
        f"{roots} (symlinks followed); a video must lie under a folder named as a video root "
        "(--video-root DIR; video_root= in Python)"
    )


def _check_scored(rows: list[dict], folders: dict[str, Path], opened: list[str]) -> None:
    """Rows inside a root scored, the others refused in the same words whether or not the file
    exists, and no file outside the roots looked at."""
    expected = _rows(folders)
    assert [row["error"] for row in rows] == [
        None if inside else _refused(index, row_id, video, folders)
        for index, (row_id, video, inside) in enumerate(expected)
    ]
    assert [row["caption_score"] is not None for row in rows] == [e[2] for e in expected]
    existing, missing = rows[3]["error"], rows[4]["error"]
    assert existing.replace("outside.mp4", "X").replace("'outside'", "'missing-outside'").replace(
        "row 3", "row 4"
    ) == missing.replace("missing.mp4", "X")
    inside = {os.path.realpath(folders["first"]), os.path.realpath(folders["second"])}
    assert opened and {os.path.dirname(path) for path in opened} <= inside
    assert "/etc/passwd" not in opened


def test_score_api_confines_absolute_paths_to_the_video_roots(
    two_roots, opened, tiny_clip, scoring_dataset, tmp_path
):
    dataset = scoring_dataset(
        [
            {"id": row_id, "video": video, "caption": "a square moves left"}
            for row_id, video, _ in _rows(two_roots)
        ]
    )
    scores = foilkit.score(
        tiny_clip,
        dataset,
        video_root=[str(two_roots["first"]), str(two_roots["second"])],
        num_workers=0,
        progress=False,
        cache_dir=str(tmp_path / "cache"),
    )
    _check_scored(list(scores), two_roots, opened)


def test_score_cli_confines_a_saved_dataset_to_repeated_video_roots(
    two_roots, opened, tiny_clip, scoring_dataset, tmp_path
):
    from foilkit.cli import main

    saved = tmp_path / "someone-elses-dataset"  # a parquet folder, as on the Hub
    scoring_dataset(
        [
            {"id": row_id, "video": video, "caption": "a square moves left"}
            for row_id, video, _ in _rows(two_roots)
        ]
    ).to_parquet(str(saved / "test.parquet"), batch_size=100)  # no size estimate: no stat
    out = tmp_path / "run"
    argv = ["score", "--model", tiny_clip, "--dataset", str(saved), "--out", str(out)]
    argv += ["--video-root", str(two_roots["first"]), "--video-root", str(two_roots["second"])]
    argv += ["--num-workers", "0", "--no-progress", "--cache-dir", str(tmp_path / "cache")]
    assert main(argv) == LOW_COVERAGE_EXIT  # the refused rows leave it below --min-coverage
    rows = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    order = [row_id for row_id, _, _ in _rows(two_roots)]
    _check_scored(sorted(rows, key=lambda row: order.index(row["id"])), two_roots, opened)
    run = json.loads((out / "run.json").read_text())
    assert run["video_roots"] == [str(two_roots["first"]), str(two_roots["second"])]


def test_without_a_video_root_a_local_dataset_folder_is_its_own_root(
    tmp_path, motion_videos, opened, tiny_clip, scoring_dataset
):
    """A ``videofolder``-style dataset stores absolute paths inside its own folder: it keeps
    working with no ``--video-root``; a path out of the folder is refused."""
    from foilkit.cli import main

    folder = tmp_path / "my-videofolder"
    rows = [
        {"id": "own", "video": str(folder / "videos" / "clip.mp4"), "caption": "a square"},
        {"id": "elsewhere", "video": str(motion_videos["left"]), "caption": "a square"},
    ]
    (folder / "videos").mkdir(parents=True)
    shutil.copyfile(motion_videos["right"], folder / "videos" / "clip.mp4")
    scoring_dataset(rows).to_parquet(str(folder / "test.parquet"), batch_size=100)
    out = tmp_path / "run"
    argv = ["score", "--model", tiny_clip, "--dataset", str(folder), "--out", str(out)]
    # one row of two refused: written all the same, and below --min-coverage
    assert main([*argv, "--num-workers", "0", "--no-progress", "--no-cache"]) == LOW_COVERAGE_EXIT
    scored = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    errors = {row["id"]: row["error"] for row in scored}
    assert errors["own"] is None
    assert errors["elsewhere"].startswith(
        f"row 1 (id='elsewhere'), field 'video': {str(motion_videos['left'])!r} is not inside "
        f"the video roots {folder.resolve()}, {(folder / 'videos').resolve()}"
    )
    assert os.path.realpath(motion_videos["left"]) not in opened
    assert json.loads((out / "run.json").read_text())["video_roots"] == [
        str(folder),
        str(folder / "videos"),
    ]


def test_a_dataset_object_without_a_video_root_is_unconfined_and_recorded_so(
    motion_videos, tiny_clip, scoring_dataset, tmp_path
):
    """The one unconfined case: a ``datasets.Dataset`` the caller hands over with its own
    absolute paths and no ``video_root``; ``run.json`` says so (``video_roots: null``)."""
    from foilkit.scorers.api import ScoreOptions, score_rows

    dataset = scoring_dataset([{"id": "a", "video": str(motion_videos["left"]), "caption": "c"}])
    options = ScoreOptions(
        num_workers=0, progress=False, use_cache=False, out_dir=str(tmp_path / "run")
    )
    scored = score_rows(tiny_clip, dataset, None, options)
    assert scored.rows["error"] == [None]
    assert scored.run["video_roots"] is None and scored.run["video_root"] is None


def test_report_thumbnails_come_only_from_files_inside_a_video_root(demo_dir, tmp_path, opened):
    """``report.html`` (what ``push-results`` uploads) embeds no frame of a file outside every
    root, absolute or ``../``, and never opens it; an absolute path inside a root named with
    ``foilkit report --video-root`` (repeatable), and the run's own relative paths under its
    recorded root, keep their thumbnails."""
    import re

    import pyarrow as pa
    import pyarrow.parquet as pq

    from foilkit.cli import main

    run = tmp_path / "run"
    shutil.copytree(demo_dir / "runs" / "clip", run)
    recorded_root = demo_dir / "benchmark" / "videos"
    table = pq.read_table(run / "scores" / "all.parquet").to_pylist()
    folders = {name: tmp_path / name for name in ("secret", "first", "second")}
    for name, folder in folders.items():
        folder.mkdir()
        shutil.copyfile(recorded_root / table[0]["video_path"], folder / f"{name}.mp4")
    outside = folders["secret"] / "secret.mp4"
    paths = {
        0: str(outside),
        1: str(folders["secret"] / "missing.mp4"),
        2: "/etc/passwd",
        3: os.path.relpath(outside, recorded_root),  # ../../.. out of the recorded root
        4: str(folders["first"] / "first.mp4"),
        5: str(folders["second"] / "second.mp4"),
    }
    for index, path in paths.items():
        table[index]["video_path"] = path
    pq.write_table(pa.Table.from_pylist(table), run / "scores" / "all.parquet")
    argv = ["report", str(run), "--max-thumbnails", "36"]
    assert (
        main([*argv, "--video-root", str(folders["first"]), "--video-root", str(folders["second"])])
        == 0
    )
    text = (run / "report.html").read_text(encoding="utf-8")
    data = json.loads(
        re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text, re.S)[1]
    )
    items = {item["id"]: item for item in data["items"]}
    refused = {table[index]["id"] for index in (0, 1, 2, 3)}
    assert not [name for name in refused if "k" in items[name]]
    assert all("k" in item for name, item in items.items() if name not in refused)
    assert "outside every video root" in data["thumbnailNote"]
    assert os.path.realpath(outside) not in opened and "/etc/passwd" not in opened
    assert {os.path.realpath(folders["first"] / "first.mp4")} <= set(opened)
