"""Vinoground from its upstream format (``vinoground.csv``, Hub-only: a fixture in
tests/upstream_formats.py): pair rows with a foil video, the missing-video policy over both
videos, errors naming the row and field, and an export that keeps both videos portable."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest
from upstream_formats import VINOGROUND_HEADER, VINOGROUND_ROWS, vinoground_csv

from foilkit import attach_videos
from foilkit.builders import build, export
from foilkit.builders.annotations import AnnotationError
from foilkit.builders.videos import MissingVideosError
from foilkit.builders.vinoground.builder import SOURCE


def _annotations(folder: Path, rows=VINOGROUND_ROWS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vinoground.csv").write_text(vinoground_csv(rows))
    return folder


def _build(folder: Path, cache_dir: str, **options):
    options.setdefault("on_missing", "keep")
    return build("vinoground", "all", annotations=folder, cache_dir=cache_dir, **options)["test"]


def test_rows_are_pairs_of_the_csv(tmp_path, cache_dir):
    rows = _build(_annotations(tmp_path / "ann"), cache_dir)
    assert rows.num_rows == len(VINOGROUND_ROWS)
    row = rows[1]
    assert row["id"] == "1"
    assert (row["video_path"], row["foil_video_path"]) == (
        "vinoground_videos/1_pos.mp4",
        "vinoground_videos/1_neg.mp4",
    )
    # quoted fields with commas and quotes, as the csv module writes them
    assert row["caption"] == 'the person says "go" before the ball rolls'
    assert row["foils"] == ['the ball rolls before the person says "go"']
    assert (row["major"], row["minor"]) == ("object", ["interaction", "cyclical"])
    assert row["categories"] == ["object", "interaction", "cyclical"]
    assert rows[0]["minor"] == [] and rows[0]["categories"] == ["action"]
    assert isinstance(rows.features["foil_video"], datasets.Video)
    assert (
        SOURCE.url("vinoground.csv") == "hf://datasets/HanSolo9682/Vinoground@main/vinoground.csv"
    )


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (("7", *VINOGROUND_ROWS[1][1:]), "field 'index' is '7', but this is pair 1"),
        (("1", "sound", *VINOGROUND_ROWS[1][2:]), "field 'major' is 'sound'"),
        (("1", "object", "interaction;timing", *VINOGROUND_ROWS[1][3:]), "'timing' is not one of"),
        ((*VINOGROUND_ROWS[1][:10], " "), "field 'neg_cap' is empty"),
    ],
)
def test_a_bad_row_names_its_file_line_and_field(tmp_path, cache_dir, row, message):
    folder = _annotations(tmp_path / "ann", (VINOGROUND_ROWS[0], row))
    with pytest.raises(AnnotationError, match=message) as raised:
        _build(folder, cache_dir)
    assert "vinoground.csv, row 3" in str(raised.value)


def test_a_header_without_a_column_the_scorers_read_is_refused(tmp_path, cache_dir):
    header = tuple("caption" if name == "pos_cap" else name for name in VINOGROUND_HEADER)
    folder = tmp_path / "ann"
    folder.mkdir()
    (folder / "vinoground.csv").write_text(vinoground_csv(header=header))
    with pytest.raises(AnnotationError, match=r"header lacks column\(s\) \['pos_cap'\]"):
        _build(folder, cache_dir)


def test_a_pair_needs_both_videos_and_exports_keep_both_portable(tmp_path, cache_dir, write_videos):
    folder = _annotations(tmp_path / "ann")
    root = tmp_path / "videos"
    # pair 0 complete, pair 1 without its negative video, pairs 2 and 3 absent
    write_videos(root, ["vinoground_videos/0_pos.mp4", "vinoground_videos/0_neg.mp4"])
    write_videos(root, ["vinoground_videos/1_pos.mp4"])
    with pytest.raises(MissingVideosError, match="vinoground_videos/1_neg.mp4"):
        _build(folder, cache_dir, video_root=root, on_missing="error")
    kept = _build(folder, cache_dir, video_root=root, on_missing="skip")
    assert kept["id"] == ["0"]
    undecoded = kept.cast_column("foil_video", datasets.Video(decode=False))[0]["foil_video"]
    assert undecoded["path"] == str(root / "vinoground_videos/0_neg.mp4")

    out = export(
        "vinoground",
        tmp_path / "export",
        video_root=root,
        on_missing="skip",
        annotations=folder,
        cache_dir=cache_dir,
    )
    card = (out / "README.md").read_text()
    assert "| `all` | test | 1 | 2 |" in card and "Each row is a **pair**" in card
    exported = datasets.load_dataset(str(out), "all", split="test")
    for column, path in (("video", "0_pos.mp4"), ("foil_video", "0_neg.mp4")):
        assert exported.features[column].decode is False
        assert exported[0][column] == {"path": f"vinoground_videos/{path}", "bytes": None}
    attached = attach_videos(exported, root)
    paths = attached.cast_column("foil_video", datasets.Video(decode=False))[0]["foil_video"]
    assert paths["path"] == str(root / "vinoground_videos/0_neg.mp4")
    assert not (out / "eval.yaml").is_file()  # 1 of 4 pairs: a partial export, no benchmark
