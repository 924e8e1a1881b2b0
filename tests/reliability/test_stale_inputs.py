"""What is scored is what the files say now (issue 40, sections 1 and 2): a dataset folder
rewritten in place or another of the same name, a benchmark rebuilt after videos arrive, a
resumed run whose dataset changed, and failed rows retried once their inputs are fixed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pytest
import yaml

from foilkit.builders.card import card_configs
from foilkit.builders.schema import TEXT, canonical_features
from foilkit.cli import main
from foilkit.synthetic.videos import SyntheticScene, write_video

QUIET = ["--num-workers", "0", "--no-progress", "--no-cache"]


@pytest.fixture(autouse=True)
def datasets_cache(tmp_path, monkeypatch) -> Path:
    """A datasets cache of this test's own: what one folder prepared there is what a later
    load of another (same name, same config) would be served."""
    cache = tmp_path / "hf-datasets"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(cache))
    return cache


@pytest.fixture(scope="module")
def clip_video(tmp_path_factory) -> Path:
    return write_video(tmp_path_factory.mktemp("clip") / "clip.mp4", SyntheticScene())


def write_folder(folder: Path, captions: list[str], video: Path) -> Path:
    """A dataset folder in the Hub layout with a card declaring ``configs:`` (no
    ``dataset_info``): config ``direction``, one row per caption, each on ``videos/<i>.mp4``
    (copies of ``video``) under the folder."""
    rows = []
    for index, caption in enumerate(captions):
        name = f"{index}.mp4"
        (folder / "videos").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(video, folder / "videos" / name)
        rows.append(
            {
                "id": f"direction-{index}",
                "video": name,
                "video_path": name,
                "caption": caption,
                "foils": [f"not {caption}"],
                "start": None,
                "end": None,
                "reversed": False,
                "aspect": "direction",
            }
        )
    parquet = folder / "direction" / "test-00000-of-00001.parquet"
    parquet.parent.mkdir(parents=True, exist_ok=True)
    features = canonical_features(aspect=TEXT)
    datasets.Dataset.from_list(rows, features=features).to_parquet(parquet, batch_size=100)
    header = {"configs": card_configs({"direction": {"test": "direction/test-*.parquet"}})}
    (folder / "README.md").write_text(f"---\n{yaml.safe_dump(header)}---\n\n# a benchmark\n")
    return folder


def scored_captions(command: str, clip: str, folder: Path, out: Path) -> list[str]:
    """The captions the scores of ``foilkit <command>`` on ``folder`` into ``out`` hold."""
    if command == "score":
        argv = ["score", "--model", clip, "--dataset", str(folder), "--config", "direction"]
    else:
        argv = ["evaluate", "--benchmark", "synthetic", "--config", "direction", "--model", clip]
        argv += ["--dataset", str(folder), "--n-resamples", "20"]
    assert main([*argv, "--out", str(out), *QUIET]) == 0
    if command == "score":
        return [json.loads(line)["caption"] for line in (out / "scores.jsonl").open()]
    return datasets.Dataset.from_parquet(str(out / "scores" / "direction.parquet"))["caption"]


@pytest.mark.parametrize("command", ["score", "evaluate"])
def test_a_folder_rewritten_in_place_is_scored_as_it_is_now(
    command, tiny_clip, clip_video, tmp_path
):
    folder = write_folder(tmp_path / "a" / "bench", ["first"], clip_video)
    assert scored_captions(command, tiny_clip, folder, tmp_path / "run1") == ["first"]
    write_folder(folder, ["second"], clip_video)  # the same folder, rewritten
    assert scored_captions(command, tiny_clip, folder, tmp_path / "run2") == ["second"]


@pytest.mark.parametrize("command", ["score", "evaluate"])
def test_another_folder_of_the_same_name_is_scored_from_its_own_files(
    command, tiny_clip, clip_video, tmp_path
):
    first = write_folder(tmp_path / "a" / "bench", ["first"], clip_video)
    assert scored_captions(command, tiny_clip, first, tmp_path / "run1") == ["first"]
    other = write_folder(tmp_path / "b" / "bench", ["second"], clip_video)  # same name
    assert scored_captions(command, tiny_clip, other, tmp_path / "run2") == ["second"]


def run_argv(command: str, clip: str, folder: Path, out: Path, *extra: str) -> list[str]:
    """``foilkit <command>`` (score or evaluate) of ``clip`` on ``folder``'s ``direction``
    config into ``out``."""
    if command == "score":
        argv = ["score", "--model", clip, "--dataset", str(folder), "--config", "direction"]
    else:
        argv = ["evaluate", "--benchmark", "synthetic", "--config", "direction", "--model", clip]
        argv += ["--dataset", str(folder), "--n-resamples", "20"]
    return [*argv, "--out", str(out), *QUIET, *extra]


def scores_file(command: str, out: Path) -> Path:
    """The per-sample scores (``scores.jsonl``) the scorer wrote for ``command``'s run."""
    return out / "scores.jsonl" if command == "score" else out / "scoring/direction/scores.jsonl"


@pytest.mark.parametrize("command", ["score", "evaluate"])
def test_resume_refuses_a_run_whose_dataset_changed(
    command, tiny_clip, clip_video, tmp_path, capsys
):
    folder = write_folder(tmp_path / "bench", ["first", "other"], clip_video)
    out = tmp_path / "run"
    assert main(run_argv(command, tiny_clip, folder, out)) == 0
    record = json.loads((scores_file(command, out).parent / "run.json").read_text())
    assert record["identity"]["dataset"]["rows"] == 2  # the fingerprint, recorded
    assert main(run_argv(command, tiny_clip, folder, out, "--resume")) == 0  # unchanged: resumes
    written = scores_file(command, out).read_bytes()
    write_folder(folder, ["second", "other"], clip_video)
    capsys.readouterr()
    assert main(run_argv(command, tiny_clip, folder, out, "--resume")) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"cannot resume {scores_file(command, out).parent}: its dataset changed" in line
    assert "(other values in 'caption', 'foils')" in line and "--out" in line
    assert scores_file(command, out).read_bytes() == written  # nothing mixed in


@pytest.mark.parametrize("command", ["score", "evaluate"])
def test_resume_scores_the_rows_whose_video_arrived_and_keeps_the_others(
    command, tiny_clip, clip_video, tmp_path, capsys, monkeypatch
):
    """A row that failed for a missing video is scored once the video is there and the run
    resumed (as the advice printed says); the rows scored before keep their lines byte for
    byte, though their batch is scored again (here with other numbers, as another device's
    last bits would be)."""
    from foilkit.scorers.engine import Engine

    folder = write_folder(tmp_path / "bench", ["first", "second", "third"], clip_video)
    (folder / "videos" / "1.mp4").unlink()
    out = tmp_path / "run"
    assert main(run_argv(command, tiny_clip, folder, out)) == 3  # below --min-coverage
    assert "fix the inputs and rerun with --resume" in capsys.readouterr().err
    before = scores_file(command, out).read_bytes().splitlines()
    assert [json.loads(line)["error_cause"] for line in before] == [None, "video missing", None]

    real_flush = Engine._flush

    def other_numbers(self, buffer, bar):
        records = real_flush(self, buffer, bar)
        return [
            {**r, "scores": {g: [s + 1.0 for s in v] for g, v in r["scores"].items()}}
            for r in records
        ]

    monkeypatch.setattr(Engine, "_flush", other_numbers)
    shutil.copyfile(clip_video, folder / "videos" / "1.mp4")  # the input fixed
    assert main(run_argv(command, tiny_clip, folder, out, "--resume")) == 0
    after = scores_file(command, out).read_bytes().splitlines()
    assert after[0] == before[0] and after[2] == before[2]  # kept, byte for byte
    retried = json.loads(after[1])
    assert retried["error"] is None and retried["caption_score"] is not None
    throughput = json.loads((scores_file(command, out).parent / "run.json").read_text())
    assert throughput["throughput"]["resumed_rows"] == 2
    assert throughput["throughput"]["retried_rows"] == 1
    assert throughput["errors"]["rows"] == 0


@pytest.mark.parametrize("name, config", [("vitatecs", "direction"), ("contrast_sets", "verb_lm")])
def test_a_build_after_videos_arrive_keeps_their_rows(
    name, config, shared_data, datasets_cache, tmp_path, capsys
):
    """``foilkit build`` with ``--on-missing skip``, a video added, built again into a fresh
    ``--out``: the new build keeps the new video's rows (before, datasets checked it against
    the first build's split sizes: ``NonMatchingSplitsSizesError``)."""
    from foilkit.builders import build

    text_only = build(name, config, annotations=shared_data / name, on_missing="keep")
    videos = list(dict.fromkeys(text_only["test"]["video_path"]))[:2]
    root = tmp_path / "videos"

    def add(video: str) -> None:
        (root / video).parent.mkdir(parents=True, exist_ok=True)
        write_video(root / video, SyntheticScene(), num_frames=12)

    def built(out: Path) -> int:
        argv = ["build", name, "--config", config, "--out", str(out), "--on-missing", "skip"]
        argv += ["--annotations", str(shared_data / name), "--video-root", str(root)]
        assert main([*argv, "--datasets-cache", str(datasets_cache)]) == 0, capsys.readouterr()
        return datasets.load_dataset(str(out), config, split="test").num_rows

    add(videos[0])
    first = built(tmp_path / "out1")
    add(videos[1])
    expected = sum(1 for path in text_only["test"]["video_path"] if path in videos)
    assert first < built(tmp_path / "out2") == expected


def test_a_run_from_before_the_fingerprint_still_resumes(tiny_clip, clip_video, tmp_path):
    """A ``run.json`` written before datasets were fingerprinted resumes under its rows' hash."""
    import foilkit

    folder = write_folder(tmp_path / "bench", ["first"], clip_video)
    options = dict(out_dir=str(tmp_path / "run"), num_workers=0, progress=False, use_cache=False)
    foilkit.score(tiny_clip, str(folder), "direction", **options)
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    del record["identity"]["dataset"]  # as a run.json written before the fingerprint
    (tmp_path / "run" / "run.json").write_text(json.dumps(record))
    resumed = foilkit.score(tiny_clip, str(folder), "direction", resume=True, **options)
    assert resumed["caption"] == ["first"] and resumed["error"] == [None]


@pytest.mark.parametrize(
    "lines, kept",
    [
        # a row failed, then retried and scored by a process whose shard is read first
        ({"rank-00001": [{"error": "gone", "n": 1}], "rank-00000": [{"error": None, "n": 2}]}, 2),
        # scored, then its batch scored again (a retry of another row): the first line stays
        ({"rank-00000": [{"error": None, "n": 1}, {"error": None, "n": 2}]}, 1),
        # failed, then failed again: the later line
        ({"rank-00000": [{"error": "gone", "n": 1}, {"error": "corrupt", "n": 2}]}, 2),
    ],
)
def test_a_scored_row_stays_as_first_written_and_a_failed_one_gives_way(tmp_path, lines, kept):
    from foilkit.scorers.store import ResultStore

    (tmp_path / "shards").mkdir()
    for shard, records in lines.items():
        text = "".join(json.dumps({"index": 0, "id": "a", **r}) + "\n" for r in records)
        (tmp_path / "shards" / f"{shard}.jsonl").write_text(text)
    store = ResultStore(tmp_path, rank=0)
    assert store.load()[0]["n"] == kept
    store.open()
    store.append([{"index": 0, "id": "a", "error": None, "n": 3}])
    assert ResultStore(tmp_path).load()[0]["n"] == (kept if store.scored(0) else 3)


@pytest.mark.parametrize("on_missing", ["keep", "skip"])
def test_evaluate_resumes_a_built_benchmark_whose_video_arrived(
    on_missing, shared_data, tiny_clip, tmp_path, capsys
):
    """Built from its annotations with ``--on-missing keep``, a row without its video fails;
    the video added, ``--resume`` scores it (the build's ``video`` column changed from nothing
    to the file: an input fixed, not another dataset) and keeps the other row's line. With
    ``skip`` the row was dropped: the advice says ``--overwrite``, not ``--resume``, and
    rightly: it comes back as a new row of another dataset, and the resume is refused,
    naming the change and the fix."""
    from foilkit.builders import build

    text_only = build(
        "vitatecs", "direction", annotations=shared_data / "vitatecs", on_missing="keep"
    )
    first, second = text_only["test"]["video_path"][:2]
    assert first != second
    root = tmp_path / "videos"
    for video in (first, second):
        (root / video).parent.mkdir(parents=True, exist_ok=True)
    write_video(root / first, SyntheticScene(), num_frames=12)
    argv = ["evaluate", "--benchmark", "vitatecs", "--config", "direction", "--model", tiny_clip]
    argv += ["--annotations", str(shared_data / "vitatecs"), "--video-root", str(root)]
    argv += ["--on-missing", on_missing, "--limit", "2", "--n-resamples", "20"]
    argv += ["--out", str(tmp_path / "run"), *QUIET]
    scores = tmp_path / "run" / "scoring" / "direction" / "scores.jsonl"
    if on_missing == "skip":
        assert main(argv) == 3  # 1 of the 2 rows selected scored, the other dropped at build
        advice = capsys.readouterr().err
        assert "1 dropped at build (video missing)" in advice
        assert "add the missing videos and rerun with --overwrite" in advice
        assert "--resume" not in advice
        written = scores.read_bytes()
        write_video(root / second, SyntheticScene(), num_frames=12)
        capsys.readouterr()
        assert main([*argv, "--resume"]) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert (
            "its dataset changed since the run started (2 rows, was 1; other values in 'id'" in line
        )
        assert "--out" in line and scores.read_bytes() == written
        return
    assert main(argv) == 3, capsys.readouterr().err  # 1 of 2 rows scored
    before = scores.read_bytes().splitlines()
    assert [json.loads(line)["error"] is None for line in before] == [True, False]
    write_video(root / second, SyntheticScene(), num_frames=12)
    assert main([*argv, "--resume"]) == 0, capsys.readouterr().err
    after = scores.read_bytes().splitlines()
    assert after[0] == before[0] and json.loads(after[1])["error"] is None


@pytest.mark.parametrize(
    "cause, retried",
    [
        ("video missing", True),
        ("corrupt video", True),
        ("fewer than two frames", True),
        ("window out of range", True),
        ("invalid row", True),
        (None, True),  # a row failed in a run from before causes were recorded
        ("non-finite score", False),  # the model's own: the same inputs give it again
        ("refused", False),  # a served model's refusal
        ("reply too large", False),
    ],
)
def test_resume_retries_the_rows_that_failed_for_their_inputs(cause, retried):
    from foilkit.scorers.engine import retried_on_resume

    failed = {"index": 0, "id": "a", "error": "it failed", "error_cause": cause}
    assert retried_on_resume(failed) is retried
    assert retried_on_resume({**failed, "error": None}) is False  # scored: kept
