"""Each benchmark end to end: real annotation rows, synthetic videos named after them, the ``Video``
feature decoding a frame, export in the Hub layout, ``load_dataset(folder, config)``, re-attach."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest

import foilkit
from foilkit.builders import build, builder_class, export
from foilkit.builders.card import exported_benchmark, exported_features

# benchmark, config, how many distinct videos to render (their rows are the ones kept)
CASES = [
    ("vitatecs", "direction", 2),
    (
        "vilma",
        "change_of_state_action",
        3,
    ),  # COIN, YouCook2 and Something-Something (.webm) layouts
    ("vilma", "action_counting_easy", 1),  # QUVA, windows converted from frames
    ("rtime", "hard", 2),  # forward + reversed view of each video, test and validation
    ("contrast_sets", "verb_lm", 2),
]


def _first_videos(video_paths: list[str], sources: list[str] | None, count: int) -> list[str]:
    """The first ``count`` distinct videos, one per source dataset where rows say which."""
    chosen: dict[str, str] = {}
    for index, path in enumerate(video_paths):
        key = sources[index] if sources else path
        if key not in chosen and path not in chosen.values():
            chosen[key] = path
        if len(chosen) == count:
            break
    return list(chosen.values())


@pytest.fixture(scope="module", params=CASES, ids=[f"{name}-{config}" for name, config, _ in CASES])
def built(
    request,
    shared_data: Path,
    cache_dir: str,
    tmp_path_factory: pytest.TempPathFactory,
    write_videos,
):
    """(name, config, annotations, video root, chosen videos, DatasetDict built with
    on_missing='skip')."""
    name, config, count = request.param
    annotations = shared_data / name
    text_only = build(name, config, annotations=annotations, cache_dir=cache_dir, on_missing="keep")
    videos = []
    for split in text_only.values():
        sources = split["source_dataset"] if "source_dataset" in split.column_names else None
        videos += _first_videos(list(split["video_path"]), sources, count)
    root = tmp_path_factory.mktemp(f"videos-{name}")
    write_videos(root, videos)
    dataset = build(
        name,
        config,
        annotations=annotations,
        cache_dir=cache_dir,
        video_root=root,
        on_missing="skip",
    )
    return name, config, annotations, root, videos, dataset


def test_only_rows_with_a_video_are_kept_and_each_decodes(built):
    _, _, _, root, videos, dataset = built
    for split in dataset.values():
        assert split.num_rows > 0
        assert set(split["video_path"]) <= set(videos)
        first = split[0]
        decoder = first["video"]
        frame = decoder[0]
        assert tuple(frame.shape) == (3, 48, 64)
        assert decoder.metadata.path == str(root / first["video_path"])


@pytest.mark.parametrize("built", [("rtime", "hard", 2)], indirect=True, ids=["rtime-hard"])
def test_rtime_rows_come_in_forward_and_reversed_pairs(built):
    *_, dataset = built
    for split in dataset.values():
        assert split["reversed"] == [False, True] * (split.num_rows // 2)
        assert split["source_id"][0::2] == split["source_id"][1::2]


def _export_and_reload(built, cache_dir: str, tmp_path: Path, **options):
    """The built config exported in the Hub layout (``options`` added), and loaded back from it
    with ``load_dataset``: (export folder, reloaded DatasetDict)."""
    name, config, annotations, root, *_ = built
    out = export(
        name,
        tmp_path / "hub",
        [config],
        video_root=root,
        on_missing="skip",
        annotations=annotations,
        cache_dir=cache_dir,
        **options,
    )
    return out, datasets.load_dataset(str(out), config, cache_dir=str(tmp_path / "cache"))


def test_export_reload_and_attach(built, cache_dir: str, tmp_path: Path):
    name, config, _, root, _, dataset = built
    out, reloaded = _export_and_reload(built, cache_dir, tmp_path)
    card = (out / "README.md").read_text()
    assert f"config_name: {config}" in card and "skip" in card
    source = builder_class(name).SOURCE  # built from a local folder: said so, and of what
    link = f"[{source.repo}]({source.homepage})"
    assert "- Annotations: a local copy (the `annotations` folder given to the build" in card
    assert f"should be a copy of the files of {link} at commit `{source.commit}`;" in card
    assert f"{link} at commit `{source.commit}` (unchanged" not in card  # not as downloaded
    assert exported_benchmark(out) == name  # what evaluate --dataset <export> reads
    assert set(reloaded) == set(dataset)
    for split, original in dataset.items():
        loaded = reloaded[split]
        # stored undecoded (issue 29): the first row reads, a relative path, no decoder's crash
        assert loaded.features == exported_features(original.features, embed_videos=False)
        assert loaded[0]["video"] == {"path": loaded[0]["video_path"], "bytes": None}
        assert (
            loaded.remove_columns("video").to_list() == original.remove_columns("video").to_list()
        )
        stored = loaded.cast_column("video", datasets.Video(decode=False))["video"]
        assert [video["path"] for video in stored] == loaded["video_path"]  # relative, no bytes
        assert all(video["bytes"] is None for video in stored)
    attached = foilkit.attach_videos(reloaded, root)
    for split, original in dataset.items():
        assert attached[split].features == original.features
        assert attached[split][0]["video"][0].shape == original[0]["video"][0].shape


def test_export_with_embedded_video_bytes_needs_no_video_root_to_decode(
    built, cache_dir: str, tmp_path: Path
):
    *_, root, _, dataset = built
    out, reloaded = _export_and_reload(built, cache_dir, tmp_path, embed_videos=True)
    assert "embed the video bytes" in (out / "README.md").read_text()
    split = next(iter(dataset))
    stored = reloaded[split].cast_column("video", datasets.Video(decode=False))[0]["video"]
    assert stored["path"] == reloaded[split][0]["video_path"]
    assert stored["bytes"] == (root / stored["path"]).read_bytes()
    assert reloaded[split][0]["video"][0].shape == dataset[split][0]["video"][0].shape
