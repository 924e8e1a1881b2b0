"""The engine's promises: decode once, cache, resume, temporal controls, retrieval matrices."""

from __future__ import annotations

import json
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

import foilkit
from foilkit.scorers import engine as engine_module
from foilkit.scorers.controls import apply_control
from foilkit.scorers.store import ResultStore
from foilkit.scorers.video import DecodedFrames, decoding

RUN = {"num_workers": 0, "progress": False}


@pytest.fixture
def opened(monkeypatch) -> Counter:
    """Counts ``open_video`` calls per file during the test."""
    counts: Counter = Counter()
    real = decoding.open_video

    def counting(view, backend="torchcodec", *options):
        counts[Path(view.source).name] += 1
        return real(view, backend, *options)

    monkeypatch.setattr(decoding, "open_video", counting)
    return counts


@pytest.mark.parametrize("model", ["clip", "blip-itm"])
def test_each_video_is_decoded_once(model, tiny_model, benchmark, opened, cache_dir):
    """Forward, reversed and windowed views, main and proficiency texts: one open per file."""
    foilkit.score(tiny_model(model), benchmark, cache_dir=cache_dir, batch_size=2, **RUN)
    assert opened == {f"motion_{d}.mp4": 1 for d in ("left", "right", "up", "down")}


def test_the_cache_makes_a_second_run_decode_nothing(
    tiny_model, benchmark, opened, cache_dir, tmp_path
):
    first = foilkit.score(
        tiny_model("clip"), benchmark, cache_dir=cache_dir, out_dir=str(tmp_path / "a"), **RUN
    )
    assert sum(opened.values()) == 4
    opened.clear()
    second = foilkit.score(
        tiny_model("clip"), benchmark, cache_dir=cache_dir, out_dir=str(tmp_path / "b"), **RUN
    )
    assert sum(opened.values()) == 0
    assert second.to_list() == first.to_list()
    run = json.loads((tmp_path / "b" / "run.json").read_text())
    assert (
        run["throughput"]["cached_views"] == run["dataset"]["num_views"]
        and run["throughput"]["decoded_videos"] == 0
    )
    # other frames are another cache entry
    foilkit.score(tiny_model("clip"), benchmark, cache_dir=cache_dir, num_frames=4, **RUN)
    assert sum(opened.values()) == 4


def test_a_killed_run_resumes_to_the_same_file(
    tiny_model, benchmark_with_broken, tmp_path, killed_at_the_third_batch
):
    options = {**RUN, "batch_size": 2, "use_cache": False}
    foilkit.score(
        tiny_model("clip"), benchmark_with_broken, out_dir=str(tmp_path / "whole"), **options
    )

    with killed_at_the_third_batch():
        foilkit.score(
            tiny_model("clip"), benchmark_with_broken, out_dir=str(tmp_path / "killed"), **options
        )
    finished = [
        json.loads(line)
        for line in (tmp_path / "killed/shards/rank-00000.jsonl").read_text().splitlines()
    ]
    assert 0 < len(finished) < len(benchmark_with_broken)

    with pytest.raises(FileExistsError, match="resume"):
        foilkit.score(
            tiny_model("clip"), benchmark_with_broken, out_dir=str(tmp_path / "killed"), **options
        )
    with pytest.raises(ValueError, match="frames was 8, now 4"):
        foilkit.score(
            tiny_model("clip"),
            benchmark_with_broken,
            out_dir=str(tmp_path / "killed"),
            resume=True,
            **{**options, "num_frames": 4},
        )
    foilkit.score(
        tiny_model("clip"),
        benchmark_with_broken,
        out_dir=str(tmp_path / "killed"),
        resume=True,
        **options,
    )
    whole, resumed = (
        (tmp_path / "whole/scores.jsonl").read_bytes(),
        (tmp_path / "killed/scores.jsonl").read_bytes(),
    )
    assert resumed == whole
    run = json.loads((tmp_path / "killed/run.json").read_text())["throughput"]
    assert run["resumed_rows"] == len(finished)
    assert run["rows"] == len(benchmark_with_broken) - len(
        finished
    )  # finished rows were not recomputed


@pytest.mark.parametrize("model", ["clip", "blip-itm"])
def test_decoding_threads_change_nothing_but_speed(
    model, tiny_model, benchmark_with_broken, tmp_path, request
):
    """Bit-identical rows (bad videos included) whether frames come from threads or inline.

    The model runs on one thread in both runs: on a CPU, its thread count changes the last bits
    of a score (and the engine leaves the model the cores its decoding threads do not take).
    """
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    request.addfinalizer(lambda: torch.set_num_threads(before))
    options = {**RUN, "batch_size": 2, "use_cache": False}
    inline = foilkit.score(
        tiny_model(model), benchmark_with_broken, out_dir=str(tmp_path / "0"), **options
    )
    threaded = foilkit.score(
        tiny_model(model),
        benchmark_with_broken,
        out_dir=str(tmp_path / "3"),
        **{**options, "num_workers": 3},
    )
    assert (tmp_path / "3/scores.jsonl").read_bytes() == (tmp_path / "0/scores.jsonl").read_bytes()
    assert threaded.to_list() == inline.to_list()
    assert sum(row["error"] is not None for row in threaded.to_list()) == 2
    recorded = {n: json.loads((tmp_path / n / "run.json").read_text()) for n in ("0", "3")}
    assert recorded["0"]["model_threads"] == recorded["3"]["model_threads"] == 1


@pytest.mark.parametrize("workers, expected", [(0, 3), (1, 3), (2, 2), (4, 1)])
def test_the_model_gets_the_cores_the_decoding_threads_leave(workers, expected, monkeypatch):
    monkeypatch.setattr(engine_module, "available_cores", lambda: 4)
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        with engine_module.cores_beside_workers(workers):
            assert torch.get_num_threads() == expected
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)


def test_an_interrupted_run_stops_its_decoding_threads(tiny_model, benchmark, monkeypatch):
    def dies(self, buffer, bar):
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(engine_module.Engine, "_flush", dies)
    with pytest.raises(KeyboardInterrupt):
        foilkit.score(
            tiny_model("clip"), benchmark, **{**RUN, "num_workers": 2, "use_cache": False}
        )
    assert not [t for t in threading.enumerate() if t.name.startswith("foilkit-decode")]


def test_a_torn_last_line_is_dropped_and_cut(tmp_path):
    store = ResultStore(tmp_path, rank=0)
    store.open()
    store.append([{"index": 0, "id": "a"}, {"index": 1, "id": "b"}])
    with store.shard.open("a") as handle:
        handle.write('{"index": 2, "id"')  # killed mid-write
    assert sorted(ResultStore(tmp_path).load()) == [0, 1]
    again = ResultStore(tmp_path, rank=0)
    again.open()
    again.append([{"index": 2, "id": "c"}])
    assert sorted(ResultStore(tmp_path).load()) == [0, 1, 2]


def _decoded(count: int = 8) -> DecodedFrames:
    frames = (
        np.arange(count, dtype=np.uint8)[:, None, None, None].repeat(3, 1).repeat(4, 2).repeat(4, 3)
    )
    import torch

    return DecodedFrames(
        torch.from_numpy(frames), np.arange(10, 10 + count), np.arange(count) / 8.0, "torchcodec"
    )


@pytest.mark.parametrize("control", ["reversed", "shuffled", "single"])
def test_controls_reorder_frames_and_indices_together(control):
    decoded = _decoded()
    out = apply_control(decoded, control, seed=3, view_key="v")
    assert [int(frame[0, 0, 0]) + 10 for frame in out.frames] == out.indices.tolist()
    if control == "reversed":
        assert out.indices.tolist() == decoded.indices[::-1].tolist()
    elif control == "shuffled":
        assert sorted(out.indices.tolist()) == decoded.indices.tolist() != out.indices.tolist()
        assert (
            apply_control(decoded, control, seed=3, view_key="v").indices.tolist()
            == out.indices.tolist()
        )
        assert (
            apply_control(decoded, control, seed=4, view_key="v").indices.tolist()
            != out.indices.tolist()
        )
    else:
        assert out.indices.tolist() == [14]


@pytest.mark.parametrize(
    ("control", "model"), [("reversed", "clip"), ("shuffled", "clip"), ("single", "xclip")]
)
def test_controls_are_run_options_and_recorded(control, model, tiny_model, benchmark, tmp_path):
    result = foilkit.score(
        tiny_model(model),
        benchmark,
        control=control,
        seed=1,
        out_dir=str(tmp_path),
        cache_dir=str(tmp_path / "cache"),
        **RUN,
    )
    assert json.loads((tmp_path / "run.json").read_text())["control"] == control
    forward = result[result["id"].index("left-forward")]["frame_indices"]
    plain = [0, 3, 6, 9, 13, 16, 19, 23]
    expected = {"reversed": plain[::-1], "single": [13]}
    if control == "shuffled":
        assert sorted(forward) == plain != forward
    else:
        assert forward == expected[control]


@pytest.mark.parametrize("use_cache", [False, True])
def test_shuffled_frames_follow_the_video_content_not_its_folder(
    use_cache, tiny_model, benchmark_in, tmp_path
):
    """The same videos in two folders (another checkout, another machine) are shuffled alike;
    a seed changes the permutation."""

    def frame_orders(folder: str, seed: int = 1) -> list[list[int]]:
        options = {**RUN, "use_cache": use_cache, "cache_dir": str(tmp_path / f"cache-{folder}")}
        rows = benchmark_in(tmp_path / folder)
        scores = foilkit.score(tiny_model("clip"), rows, control="shuffled", seed=seed, **options)
        return scores["frame_indices"]

    here = frame_orders("here")
    assert frame_orders("elsewhere") == here
    assert frame_orders("here", seed=2) != here
    if use_cache:  # entries of path-seeded shuffles (older versions) are in another namespace
        manifests = list((tmp_path / "cache-here").rglob("namespace.json"))  # seeds 1 and 2
        assert len(manifests) == 2 and all(
            json.loads(m.read_text())["shuffle_key"] == "content-sha256" for m in manifests
        )


@pytest.mark.parametrize("model", ["clip", "blip-itm"])
def test_score_matrix_agrees_with_pairwise_scores(model, tiny_model, benchmark, cache_dir):
    pool = benchmark.filter(lambda row: row["id"] != "left-window")
    matrix = foilkit.score_matrix(tiny_model(model), pool, cache_dir=cache_dir, **RUN)
    scores = foilkit.score(tiny_model(model), pool, cache_dir=cache_dir, **RUN)
    assert (
        matrix.scores.shape == (8, 8)
        and matrix.ids == pool["id"]
        and matrix.texts == pool["caption"]
    )
    for i, row in enumerate(scores):
        assert matrix.scores[i, i] == pytest.approx(row["caption_score"], abs=1e-6)
        foil_column = matrix.texts.index(row["foils"][0])  # RTime: the other direction's caption
        assert matrix.scores[i, foil_column] == pytest.approx(row["foil_scores"][0], abs=1e-6)


def test_score_matrix_refuses_choice_mode(tiny_model, benchmark):
    with pytest.raises(ValueError, match="choice"):
        foilkit.score_matrix(tiny_model("llava-next-video"), benchmark, mode="choice", **RUN)


def test_unknown_options_and_values_fail_early(tiny_model, benchmark):
    with pytest.raises(TypeError, match="frame_count"):
        foilkit.score(tiny_model("clip"), benchmark, frame_count=8)
    with pytest.raises(ValueError, match="backwards"):
        foilkit.score(tiny_model("clip"), benchmark, control="backwards")
    with pytest.raises(ValueError, match="dual-encoder adapter takes no 'mode' option"):
        foilkit.score(tiny_model("clip"), benchmark, mode="choice", **RUN)
    with pytest.raises(ValueError, match="unknown pooling 'max'"):
        foilkit.score(tiny_model("clip"), benchmark, pooling="max", **RUN)
