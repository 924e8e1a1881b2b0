"""RTime's train split: upstream ``train.json`` at the pinned commit (the same keyed format as
``test.json``/``valid.json``), built on request from the pinned URL or a local folder, and
fine-tuned on. The upstream file is not in ../shared/data (not fetched in tests): a small one
in its format is written here."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest

from foilkit.builders import build, export, load_builder
from foilkit.builders.rtime.builder import SOURCE
from foilkit.synthetic.videos import SyntheticScene, write_video

TRAIN_URL = f"https://raw.githubusercontent.com/qyr0403/Reversed-in-Time/{SOURCE.commit}/train.json"


def _record(forward: str, reverse: str | None, url: str) -> dict:
    """One source video as upstream writes it; ``reverse=None``: the annotators found the
    reversal unrealistic (the paper keeps such videos in training only, unreversed)."""
    return {
        "temporal": True,
        "reverse": reverse is not None,
        "forward_captions": [forward],
        "reverse_captions": [] if reverse is None else [reverse],
        "forward_rewrites": [f"{forward} (rewrite {i})" for i in range(9)],
        "reverse_rewrites": []
        if reverse is None
        else [f"{reverse} (rewrite {i})" for i in range(9)],
        "url": url,
    }


TRAIN = {
    "1001": _record("a man opens a door", "a man closes a door", "https://example.org/1001"),
    "1002": _record("a glass fills with water", "a glass empties", "https://example.org/1002"),
    "1003": _record("a cup falls and breaks", None, "https://example.org/1003"),
    "1004": _record("a car drives forward", "a car drives backward", "https://example.org/1004"),
    "1005": _record(
        "a girl climbs up a ladder", "a girl climbs down a ladder", "https://example.org/1005"
    ),
}
EVAL = {
    "2001": _record(
        "a boy jumps into a pool", "a boy jumps out of a pool", "https://example.org/2001"
    )
}


def _annotations(folder: Path, *, train: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("test.json", "valid.json"):
        (folder / name).write_text(json.dumps(EVAL), encoding="utf-8")
    if train:
        (folder / "train.json").write_text(json.dumps(TRAIN), encoding="utf-8")
    return folder


def _build(folder: Path, tmp_path: Path, config: str = "hard", **options):
    return build(
        "rtime",
        config,
        annotations=folder,
        on_missing="keep",
        cache_dir=str(tmp_path / "cache"),
        **options,
    )


def test_train_split_from_a_local_folder(tmp_path: Path):
    splits = _build(_annotations(tmp_path / "rtime"), tmp_path, train_split=True)
    assert set(splits) == {"train", "test", "validation"}
    train = splits["train"]
    # each reversible video a forward and a reversed row; 1003's reversal was rejected: forward only
    assert train.num_rows == 2 * 4 + 1
    rows = {row["id"]: row for row in train}
    forward, backward = rows["1001-forward"], rows["1001-reverse"]
    assert (forward["caption"], forward["foils"], forward["reversed"]) == (
        "a man opens a door",
        ["a man closes a door"],
        False,
    )
    assert (backward["caption"], backward["foils"], backward["reversed"]) == (
        "a man closes a door",
        ["a man opens a door"],
        True,
    )
    assert forward["video_path"] == backward["video_path"] == "1001.mp4"
    assert len(forward["rewrites"]) == len(forward["foil_rewrites"]) == 9
    lone = rows["1003-forward"]
    assert (lone["foils"], lone["foil_rewrites"], lone["reversible"]) == ([], [], False)
    assert "1003-reverse" not in rows
    assert _build(tmp_path / "rtime", tmp_path, "origin", train_split=True)["train"].num_rows == 5


def test_foilkit_build_train_split_writes_the_train_split(tmp_path: Path, capsys):
    from foilkit.cli import main

    out = tmp_path / "export"
    argv = ["build", "rtime", "--config", "hard", "--out", str(out), "--on-missing", "keep"]
    argv += ["--annotations", str(_annotations(tmp_path / "rtime"))]
    argv += ["--datasets-cache", str(tmp_path / "cache")]
    assert main([*argv, "--train-split"]) == 0
    assert "hard/train-00000-of-00001.parquet" in capsys.readouterr().out
    reloaded = datasets.load_dataset(str(out), "hard", cache_dir=str(tmp_path / "reload"))
    assert reloaded["train"].num_rows == 9 and reloaded["test"].num_rows == 2
    # without the flag the build reads no train.json and writes no train split
    assert main([*argv[:5], str(tmp_path / "plain"), *argv[6:]]) == 0
    assert "train-" not in capsys.readouterr().out


def test_without_train_split_the_builder_needs_no_train_file(tmp_path: Path):
    splits = _build(_annotations(tmp_path / "rtime", train=False), tmp_path)
    assert set(splits) == {"test", "validation"}


def test_a_local_folder_without_train_json_is_a_clear_error(tmp_path: Path):
    folder = _annotations(tmp_path / "rtime", train=False)
    with pytest.raises(FileNotFoundError, match=r"has no train\.json: the train split") as error:
        _build(folder, tmp_path, train_split=True)
    assert TRAIN_URL in str(error.value)


class Mirror(datasets.DownloadManager):
    """Serves the pinned upstream URLs from local files and records what was asked for."""

    def __init__(self, files: dict[str, Path]) -> None:
        super().__init__()
        self.files, self.requested = files, []

    def download(self, url_or_urls):
        self.requested += list(url_or_urls.values())
        return {key: str(self.files[url]) for key, url in url_or_urls.items()}


def test_default_source_is_train_json_at_the_pinned_commit(tmp_path: Path):
    folder = _annotations(tmp_path / "rtime")
    base = f"https://raw.githubusercontent.com/qyr0403/Reversed-in-Time/{SOURCE.commit}"
    mirror = Mirror(
        {f"{base}/{name}": folder / name for name in ("train.json", "test.json", "valid.json")}
    )
    builder = load_builder(
        "rtime", "hard", on_missing="keep", cache_dir=str(tmp_path / "cache"), train_split=True
    )
    builder.download_and_prepare(dl_manager=mirror)
    assert TRAIN_URL in mirror.requested
    assert builder.as_dataset()["train"].num_rows == 9


@pytest.fixture()
def exported(tmp_path: Path) -> tuple[Path, Path]:
    """The ``hard`` config exported with its train split, a synthetic video per source id."""
    videos = tmp_path / "videos"
    for index, source_id in enumerate([*TRAIN, *EVAL]):
        scene = SyntheticScene(direction=("left", "right", "up", "down")[index % 4])
        write_video(videos / f"{source_id}.mp4", scene, num_frames=12)
    out = export(
        "rtime",
        tmp_path / "export",
        ["hard"],
        annotations=_annotations(tmp_path / "rtime"),
        video_root=videos,
        cache_dir=tmp_path / "cache",
        train_split=True,
    )
    return out, videos


def test_finetune_trains_on_an_rtime_export_train_split(exported, tmp_path: Path):
    from foilkit.finetune import finetune
    from foilkit.synthetic.models import tiny_model_path

    out, videos = exported
    settings = {
        "config": "hard",
        "num_frames": 4,
        "batch_size": 4,
        "epochs": 1,
        "temporal_layers": 1,
        "workers": 1,
        "learning_rate": 1e-3,
    }
    model = str(tiny_model_path("clip"))
    # 1003 has no reversal: an error before training, unless such items are kept
    with pytest.raises(
        ValueError, match=r"1 of 5 training items have no reversed caption \('1003-forward'\)"
    ):
        finetune(model, str(out), out_dir=tmp_path / "refused", video_root=videos, **settings)
    assert not (tmp_path / "refused").exists()
    result = finetune(
        model,
        str(out),
        out_dir=tmp_path / "run",
        video_root=videos,
        irreversible="keep",
        **settings,
    )
    record = result.record
    assert record["data"]["split"] == "train" and record["data"]["items"] == 5
    assert record["data"]["reversed_caption_rules"] == {"reversed row": 4, "none": 1}
    assert (result.model_dir / "config.json").is_file() and result.losses


def test_finetune_refuses_an_rtime_export_without_a_train_split(tmp_path: Path):
    from foilkit.finetune import finetune
    from foilkit.synthetic.models import tiny_model_path

    out = export(
        "rtime",
        tmp_path / "export",
        ["hard"],
        annotations=_annotations(tmp_path / "rtime"),
        on_missing="keep",
        cache_dir=tmp_path / "cache",
    )
    with pytest.raises(ValueError, match="no 'train' split"):
        finetune(str(tiny_model_path("clip")), str(out), config="hard", out_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()
