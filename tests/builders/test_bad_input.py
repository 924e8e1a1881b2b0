"""Bad annotations fail with the file, row and field named; missing videos follow the policy."""

from __future__ import annotations

import json
import re
from pathlib import Path

import datasets
import pytest
from upstream_formats import RTIME, TSV_HEADER, VILMA, VITATECS

import foilkit
from foilkit.builders import build, export, load_builder, prepare
from foilkit.builders.annotations import AnnotationError
from foilkit.builders.contrast_sets.builder import ContrastSetUnavailableError
from foilkit.builders.videos import MissingVideosError
from foilkit.video_paths import VideoRootError


def _jsonl(folder: Path, rows: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Direction.jsonl").write_text("\n".join(rows) + "\n")
    return folder


def _build(name: str, config: str, annotations: Path, tmp_path: Path, **options):
    options.setdefault("on_missing", "keep")
    return build(
        name, config, annotations=annotations, cache_dir=str(tmp_path / "cache"), **options
    )


def test_malformed_json_line_names_file_and_line(tmp_path):
    folder = _jsonl(
        tmp_path / "vitatecs", [json.dumps(VITATECS), '{"src_dataset": "MSRVTT", "video_na']
    )
    with pytest.raises(AnnotationError, match=r"Direction\.jsonl, row 2: malformed JSON") as error:
        _build("vitatecs", "direction", folder, tmp_path)
    assert error.value.row == 2


@pytest.mark.parametrize("field", sorted(VITATECS))
def test_vitatecs_missing_field_is_named_with_its_line(tmp_path, field):
    broken = {key: value for key, value in VITATECS.items() if key != field}
    folder = _jsonl(tmp_path / "vitatecs", [json.dumps(VITATECS)] * 2 + [json.dumps(broken)])
    with pytest.raises(AnnotationError, match=rf"Direction\.jsonl, row 3: missing field '{field}'"):
        _build("vitatecs", "direction", folder, tmp_path)


def test_vitatecs_row_of_another_aspect_is_rejected(tmp_path):
    folder = _jsonl(tmp_path / "vitatecs", [json.dumps({**VITATECS, "aspect": "Type"})])
    with pytest.raises(
        AnnotationError, match=r"row 1: field 'aspect' is 'Type' in the file of aspect 'direction'"
    ):
        _build("vitatecs", "direction", folder, tmp_path)


def _vilma(folder: Path, items: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "counting-easy-spelled-pts.json").write_text(json.dumps(items))
    return folder


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (("proficiency", "human", "caption"), "missing field 'proficiency.human.caption'"),
        (("mturk", "caption"), "missing field 'mturk.caption'"),
        (("time_unit",), "missing field 'time_unit'"),
    ],
)
def test_vilma_missing_nested_field_is_named_with_its_example_id(tmp_path, path, message):
    broken = json.loads(json.dumps(VILMA))
    parent = broken
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    folder = _vilma(tmp_path / "vilma", {"ok-1": VILMA, "bad-2": broken})
    with pytest.raises(
        AnnotationError, match=rf"counting-easy-spelled-pts\.json, row bad-2: {message}"
    ):
        _build("vilma", "action_counting_easy", folder, tmp_path)


def test_vilma_unknown_time_unit_and_pts_conversion(tmp_path):
    folder = _vilma(tmp_path / "ok", {"a": VILMA})
    row = _build("vilma", "action_counting_easy", folder, tmp_path)["test"][0]
    assert (row["start"], row["end"], row["video_path"]) == (1.0, 3.0, "QUVA/000_rope.mp4")
    folder = _vilma(tmp_path / "bad", {"a": {**VILMA, "time_unit": "ms"}})
    with pytest.raises(AnnotationError, match=r"row a: field 'time_unit' is 'ms'"):
        _build("vilma", "action_counting_easy", folder, tmp_path)


def test_rtime_needs_one_human_caption_per_direction(tmp_path):
    folder = tmp_path / "rtime"
    folder.mkdir()
    (folder / "valid.json").write_text(json.dumps({"1": RTIME}))
    (folder / "test.json").write_text(
        json.dumps({"7": {**RTIME, "reverse_captions": ["one", "two"]}})
    )
    with pytest.raises(
        AnnotationError, match=r"test\.json, row 7: field 'reverse_captions' should hold one"
    ):
        _build("rtime", "hard", folder, tmp_path)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("video1\ta\tb\tc\td\te\t7", "field 'label' is 7, outside 0..4"),
        ("video1\ta\tb\tc\td\te\tx", "field 'label' is not an integer: 'x'"),
        ("video1\ta\tb\tc\td\te", "expected 7 tab-separated fields"),
        ("video1\ta\t\tc\td\te\t0", "field 'ending1' is empty"),
    ],
)
def test_contrast_set_bad_row_is_named_with_its_line(tmp_path, line, message):
    folder = tmp_path / "contrast_sets"
    folder.mkdir()
    (folder / "msrvtt_lm_contrast_set.tsv").write_text(
        TSV_HEADER + "video0\ta\tb\tc\td\te\t1\n" + line + "\n"
    )
    with pytest.raises(AnnotationError, match=rf"msrvtt_lm_contrast_set\.tsv, row 3: {message}"):
        _build("contrast_sets", "verb_lm", folder, tmp_path)


def test_local_folder_without_the_file_says_which(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match=r"lacks 1 file\(s\).*Sequence\.jsonl"):
        _build("vitatecs", "sequence", tmp_path / "empty", tmp_path)


@pytest.mark.parametrize("config", ["gender", "random"])
def test_gender_and_random_contrast_sets_say_what_they_need(tmp_path, config):
    with pytest.raises(
        ContrastSetUnavailableError, match=r"Yu et al\. \(2018.*multiple_choice_file=<path>"
    ):
        _build("contrast_sets", config, tmp_path, tmp_path)
    with pytest.raises(FileNotFoundError, match="nowhere.tsv does not exist"):
        _build(
            "contrast_sets",
            config,
            tmp_path,
            tmp_path,
            multiple_choice_file=str(tmp_path / "nowhere.tsv"),
        )


def test_unknown_policy_and_option_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="on_missing must be one of"):
        _build(
            "vitatecs",
            "direction",
            _jsonl(tmp_path / "v", [json.dumps(VITATECS)]),
            tmp_path,
            on_missing="drop",
        )
    with pytest.raises(ValueError, match="aspect"):
        load_builder("vitatecs", "direction", aspekt="type")


# --- missing videos -------------------------------------------------------------------------


@pytest.fixture
def two_of_three_videos(tmp_path, write_videos):
    """Annotations with three rows over three videos, of which video2.mp4 is absent."""
    rows = [json.dumps({**VITATECS, "video_name": f"video{index}.mp4"}) for index in range(3)]
    annotations = _jsonl(tmp_path / "annotations", rows)
    root = tmp_path / "videos"
    write_videos(root, ["MSRVTT/video0.mp4", "MSRVTT/video1.mp4"])
    return annotations, root


def test_missing_video_error_counts_and_names_them(tmp_path, two_of_three_videos):
    annotations, root = two_of_three_videos
    with pytest.raises(
        MissingVideosError, match=r"1 video\(s\) used by 1 of 3 rows .* e\.g\. MSRVTT/video2\.mp4"
    ):
        _build("vitatecs", "direction", annotations, tmp_path, video_root=root, on_missing="error")


def test_missing_video_skip_drops_and_reports(tmp_path, two_of_three_videos):
    annotations, root = two_of_three_videos
    builder = load_builder(
        "vitatecs",
        "direction",
        annotations=annotations,
        video_root=root,
        on_missing="skip",
        cache_dir=str(tmp_path / "cache"),
    )
    test = prepare(builder)["test"]
    assert test["video_path"] == ["MSRVTT/video0.mp4", "MSRVTT/video1.mp4"]
    report = builder.video_reports["test"]
    assert (report.rows, report.dropped, report.missing) == (3, 1, ("MSRVTT/video2.mp4",))
    assert report.summary() in builder.info.description
    card = (
        export(
            "vitatecs",
            tmp_path / "out",
            ["direction"],
            annotations=annotations,
            video_root=root,
            on_missing="skip",
            cache_dir=str(tmp_path / "cache"),
        )
        / "README.md"
    ).read_text()
    assert (
        "1 of 3 rows (1 distinct videos) have no video" in card
        and "dropped them, 2 rows remain" in card
    )


def test_missing_video_keep_gives_a_text_only_row(tmp_path, two_of_three_videos):
    annotations, root = two_of_three_videos
    test = _build(
        "vitatecs", "direction", annotations, tmp_path, video_root=root, on_missing="keep"
    )["test"]
    videos = test.cast_column("video", datasets.Video(decode=False))["video"]
    assert [video is None for video in videos] == [False, False, True]
    assert test["video_path"][2] == "MSRVTT/video2.mp4"  # still there, to attach the video later


def test_skip_with_no_video_at_all_is_an_error_not_an_empty_dataset(tmp_path, two_of_three_videos):
    annotations, _ = two_of_three_videos
    (tmp_path / "empty").mkdir()
    with pytest.raises(MissingVideosError, match="would leave no rows"):
        _build(
            "vitatecs",
            "direction",
            annotations,
            tmp_path,
            video_root=tmp_path / "empty",
            on_missing="skip",
        )


def test_a_video_root_that_does_not_exist_or_is_one_level_off_is_named(
    tmp_path, two_of_three_videos
):
    """Issue 29: the build names the root's mistake, not '3 videos missing'."""
    annotations, root = two_of_three_videos
    with pytest.raises(VideoRootError, match=r"--video-root \S*nowhere does not exist.*MSRVTT/"):
        _build("vitatecs", "direction", annotations, tmp_path, video_root=tmp_path / "nowhere")
    inner = root / "MSRVTT"
    with pytest.raises(VideoRootError, match=rf"but {re.escape(str(root))} holds them"):
        _build("vitatecs", "direction", annotations, tmp_path, video_root=inner)


@pytest.mark.parametrize(("on_missing", "rows"), [("skip", 2), ("keep", 3)])
def test_attach_videos_applies_the_policy(tmp_path, two_of_three_videos, on_missing, rows):
    annotations, root = two_of_three_videos
    text_only = _build(
        "vitatecs", "direction", annotations, tmp_path
    )  # no video root: all video=None
    attached = foilkit.attach_videos(text_only, root, on_missing=on_missing)["test"]
    assert attached.num_rows == rows
    assert attached.column_names == text_only["test"].column_names
    assert attached[0]["video"].metadata.path == str(root / "MSRVTT" / "video0.mp4")
    single = foilkit.attach_videos(text_only["test"], root, on_missing=on_missing)
    assert single["video_path"] == attached["video_path"]
    with pytest.raises(MissingVideosError, match="MSRVTT/video2.mp4"):
        foilkit.attach_videos(text_only, root)


def test_evaluating_rtime_test_builds_only_the_test_split(tmp_path, write_videos):
    """Issue 29: ``--split test`` needs neither RTime's validation annotations nor its videos."""
    from foilkit.builders import get_benchmark
    from foilkit.evaluation import load_benchmark_split

    folder = tmp_path / "rtime"
    folder.mkdir()
    (folder / "test.json").write_text(json.dumps({"7": RTIME}))  # no valid.json
    root = tmp_path / "videos"
    write_videos(root, ["7.mp4"])
    spec = get_benchmark("rtime")
    options = {"videos": root, "annotations": folder, "cache_dir": str(tmp_path / "cache")}
    loaded = load_benchmark_split(spec, "hard", split="test", **options)
    assert loaded.data.num_rows == 2 and loaded.dropped_missing == 0  # forward and reversed
    with pytest.raises(ValueError, match=r"has no split 'dev'; it has test, validation"):
        load_benchmark_split(spec, "hard", split="dev", **options)
