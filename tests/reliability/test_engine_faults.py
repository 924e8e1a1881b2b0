"""Faults of the scoring engine itself (issue 15, items 4, 12, 13): a model that returns NaN or
infinity for one text, runs split over process counts, a killed ``accelerate`` launcher."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import datasets
import pytest
import torch
from accelerate import PartialState
from launch import ONE_THREAD, accelerate_launch, launched_score, run_to_success

import foilkit
from foilkit.scorers.adapters import ADAPTERS, RequestAdapter, register_adapter
from foilkit.scorers.adapters.dual_encoder import DualEncoderAdapter
from foilkit.scorers.distributed import split
from foilkit.scorers.output import write_jsonl
from foilkit.scorers.plan import make_plan
from foilkit.scorers.requests import TextScores, TextsRequest
from foilkit.scorers.store import ResultStore
from foilkit.synthetic.videos import DIRECTIONS, SyntheticScene, write_video

RUN = {"num_workers": 0, "progress": False, "use_cache": False}
ACCELERATE = accelerate_launch(2)
#: the text the faulty models score NaN or infinite: the foil of row ``right`` only
BAD_TEXT = "a square moves down"


def _strict_json(line: str) -> dict:
    """A JSON line parsed as JSON, not Python: a bare NaN or Infinity is an error."""

    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} in {line!r}")

    return json.loads(line, parse_constant=refuse)


class NonFiniteScorer(RequestAdapter):
    """A cross-encoder stand-in (no model) scoring every text 0.5, but ``BAD_TEXT`` ``value``."""

    score_kind = "probability"
    options = ()
    value = math.nan

    def score(self, requests: Sequence[TextsRequest]) -> list[TextScores]:
        return [
            TextScores(tuple(self.value if t == BAD_TEXT else 0.5 for t in request.texts))
            for request in requests
        ]


@pytest.fixture
def nonfinite_scorer():
    """``NonFiniteScorer`` registered as ``test-nonfinite`` for one test (no other lists it)."""
    register_adapter("test-nonfinite")(NonFiniteScorer)
    yield NonFiniteScorer
    del ADAPTERS["test-nonfinite"]


@pytest.fixture
def two_rows(motion_videos, scoring_dataset):
    return scoring_dataset(
        [
            {
                "id": "left",
                "video": str(motion_videos["left"]),
                "caption": "a square moves left",
                "foils": ["a square moves right"],
            },
            {
                "id": "right",
                "video": str(motion_videos["right"]),
                "caption": "a square moves right",
                "foils": [BAD_TEXT, "a square moves up"],
            },
        ]
    )


def _check_nonfinite_row(out: Path, value: float) -> None:
    """The bad row is a row error naming its id and text; every written line is JSON."""
    lines = [_strict_json(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    shard = [
        _strict_json(line) for line in (out / "shards/rank-00000.jsonl").read_text().splitlines()
    ]
    assert [row["id"] for row in lines] == ["left", "right"] and len(shard) == 2
    left, right = lines
    assert left["error"] is None and all(
        math.isfinite(s) for s in [left["caption_score"], *left["foil_scores"]]
    )
    assert right["caption_score"] is None and right["foil_scores"] is None
    assert "row 1 (id='right')" in right["error"] and f"foil 1 {BAD_TEXT!r}" in right["error"]
    assert "non-finite score" in right["error"] and str(value) in right["error"]
    run = json.loads((out / "run.json").read_text())
    assert run["errors"]["rows"] == 1 and run["errors"]["messages"] == [right["error"]]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_nonfinite_score_from_a_request_adapter_fails_its_row(
    value, nonfinite_scorer, two_rows, tmp_path, monkeypatch
):
    monkeypatch.setattr(nonfinite_scorer, "value", value)
    out = tmp_path / "run"
    scores = foilkit.score("no-model", two_rows, adapter="test-nonfinite", out_dir=str(out), **RUN)
    assert scores["error"][0] is None and scores["caption_score"][0] == 0.5
    _check_nonfinite_row(out, value)


def test_a_nan_text_embedding_fails_the_rows_of_that_text(
    tiny_clip, two_rows, tmp_path, monkeypatch
):
    real = DualEncoderAdapter.encode_texts

    def nan_for_the_bad_text(self, texts):
        embeddings = real(self, texts)
        return torch.stack(
            [
                torch.full_like(e, math.nan) if t == BAD_TEXT else e
                for t, e in zip(texts, embeddings)
            ]
        )

    monkeypatch.setattr(DualEncoderAdapter, "encode_texts", nan_for_the_bad_text)
    out = tmp_path / "run"
    foilkit.score(tiny_clip, two_rows, out_dir=str(out), **RUN)
    _check_nonfinite_row(out, math.nan)


def test_a_nan_view_embedding_fails_its_rows_and_is_not_cached(
    tiny_clip, two_rows, tmp_path, monkeypatch
):
    real = DualEncoderAdapter.encode_views

    def run(name: str) -> tuple[datasets.Dataset, dict]:
        options = {**RUN, "use_cache": True, "cache_dir": str(tmp_path / "cache")}
        scores = foilkit.score(tiny_clip, two_rows, out_dir=str(tmp_path / name), **options)
        return scores, json.loads((tmp_path / name / "run.json").read_text())["throughput"]

    def nan_views(self, views):
        return [torch.full_like(embedding, math.nan) for embedding in real(self, views)]

    monkeypatch.setattr(DualEncoderAdapter, "encode_views", nan_views)
    scores, _ = run("broken")
    assert all("non-finite score" in error for error in scores["error"])
    monkeypatch.setattr(DualEncoderAdapter, "encode_views", real)  # the model fixed
    scores, throughput = run("fixed")  # nothing was cached: both views encoded again
    assert scores["error"] == [None, None] and throughput["cached_views"] == 0
    assert run("again")[1]["cached_views"] == 2  # the finite embeddings are cached


def test_a_shard_line_with_a_nan_is_scored_again(tmp_path):
    """Older versions wrote bare NaN tokens into shards: such a row is not taken as done."""
    shards = tmp_path / "shards"
    shards.mkdir()
    good = {
        "index": 0,
        "id": "a",
        "scores": {"main": [0.1, 0.2]},
        "details": {},
        "frame_indices": [0],
        "error": None,
    }
    bad = {**good, "index": 1, "id": "b", "scores": {"main": [math.nan, 0.2]}}
    (shards / "rank-00000.jsonl").write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    assert "NaN" in (shards / "rank-00000.jsonl").read_text()
    assert list(ResultStore(tmp_path).load()) == [0]
    with pytest.raises(ValueError):
        ResultStore(tmp_path).append([bad])


def test_scores_jsonl_writes_a_nan_in_a_copied_column_as_null(tmp_path):
    dataset = datasets.Dataset.from_dict(
        {"id": ["a", "b"], "caption_score": [0.5, 0.25], "start": [1.0, math.nan]}
    )
    write_jsonl(dataset, tmp_path / "scores.jsonl")
    lines = [_strict_json(line) for line in (tmp_path / "scores.jsonl").read_text().splitlines()]
    assert lines == [
        {"id": "a", "caption_score": 0.5, "start": 1.0},
        {"id": "b", "caption_score": 0.25, "start": None},
    ]


# --- item 12: the same batches whatever the process count ---------------------------------------


class _Processes:
    """Process ``process_index`` of ``num_processes``, split by accelerate's own code."""

    split_between_processes = PartialState.split_between_processes

    def __init__(self, num_processes: int, process_index: int):
        self.num_processes, self.process_index = num_processes, process_index


def _units_rows(units: int, rows_per_unit: Sequence[int]) -> list[dict]:
    rows = []
    for unit in range(units):
        for copy in range(rows_per_unit[unit % len(rows_per_unit)]):
            rows.append(
                {
                    "id": f"{unit}-{copy}",
                    "video": f"/videos/{unit}.mp4",
                    "start": None,
                    "end": None,
                    "reversed": bool(copy % 2),
                    "caption": "c",
                    "foils": ["f"],
                }
            )
    return rows


@pytest.mark.parametrize("batch_size", [1, 3, 4])
@pytest.mark.parametrize("num_processes", [2, 3, 4])
def test_processes_take_whole_planned_batches(batch_size, num_processes):
    """Each process runs whole batches of the one-process plan: no model call sees other inputs."""
    plan = make_plan(_units_rows(11, [1, 2, 3]))
    batches = plan.batches(batch_size)
    shares = [split(_Processes(num_processes, rank), batches) for rank in range(num_processes)]
    assert [batch for share in shares for batch in share] == batches
    assert all(share for share in shares)


def _score_args(out: Path, model: str, dataset: Path, *extra: str) -> list[str]:
    """``foilkit score`` in batches of 3 rows (2 units: 3 divides neither 20 rows nor 10 units)."""
    return launched_score(model, dataset, out, 3, 0, *extra)


@pytest.fixture(scope="module")
def ten_videos(tmp_path_factory) -> Path:
    """20 rows over 10 videos (a forward and a reversed row each), saved with ``save_to_disk``."""
    folder = tmp_path_factory.mktemp("ten")
    rows = []
    for i in range(10):
        direction = DIRECTIONS[i % 4]
        path = write_video(
            folder / f"v{i}.mp4", SyntheticScene(direction=direction, speed=0.5 + 0.05 * i)
        )
        for reverse in (False, True):
            rows.append(
                {
                    "id": f"v{i}-{reverse}",
                    "video": str(path),
                    "start": None,
                    "end": None,
                    "reversed": reverse,
                    "caption": f"a square moves {direction}",
                    "foils": [f"a square moves {DIRECTIONS[(i + 1) % 4]}"],
                }
            )
    datasets.Dataset.from_list(rows).cast_column("video", datasets.Video()).save_to_disk(
        str(folder / "ds")
    )
    return folder / "ds"


@pytest.mark.slow
@pytest.mark.parametrize(
    "env",
    [{"OMP_NUM_THREADS": "1"}, {"MKL_CBWR": "AUTO,STRICT"}],
    ids=["same-thread-count", "mkl-strict-any-thread-count"],
)
def test_one_and_two_processes_give_bit_identical_scores(env, tiny_clip, ten_videos, tmp_path):
    """20 rows of 10 videos in batches of 3 rows (5 batches of 2 videos, split 3 + 2), no
    decoding threads.

    On a CPU the last bits of a score depend on the model's thread count, which ``accelerate
    launch`` sets to cores / processes: the scores are bit-identical with the same thread count
    (OMP_NUM_THREADS) or with MKL's strict reproducible mode (MKL_CBWR), whatever the count.
    """
    run_to_success([sys.executable, *_score_args(tmp_path / "one", tiny_clip, ten_videos)], env)
    run_to_success([*ACCELERATE, *_score_args(tmp_path / "two", tiny_clip, ten_videos)], env)
    runs = [json.loads((tmp_path / name / "run.json").read_text()) for name in ("one", "two")]
    assert [run["hardware"]["num_processes"] for run in runs] == [1, 2]
    assert all((tmp_path / "two/shards" / f"rank-0000{r}.jsonl").read_text() for r in (0, 1))
    assert (tmp_path / "two/scores.jsonl").read_bytes() == (
        tmp_path / "one/scores.jsonl"
    ).read_bytes()


# --- item 13: killing the launcher stops its workers --------------------------------------------


def _workers(launcher: int) -> list[int]:
    """The launcher's child processes that run ``foilkit score`` (not its passing helpers, nor a
    fork of the launcher itself that has not yet run its program and still shows its command)."""
    own = Path(f"/proc/{launcher}/cmdline").read_bytes()
    found = []
    for task in Path(f"/proc/{launcher}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                command = Path(f"/proc/{child}/cmdline").read_bytes()
            except FileNotFoundError:
                continue
            words = command.split(b"\0")
            if command != own and b"foilkit" in words and b"score" in words:
                found.append(int(child))
    return found


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")
def test_killing_the_launcher_stops_its_workers_and_the_folder_resumes(
    tiny_clip, ten_videos, tmp_path
):
    slow = tmp_path / "slow"  # each appended batch takes a while, so the kill lands mid-run
    slow.mkdir()
    (slow / "sitecustomize.py").write_text(
        "import os, time\n"
        "if 'LOCAL_RANK' in os.environ:\n"
        "    from foilkit.scorers.store import ResultStore\n"
        "    append = ResultStore.append\n"
        "    def slow_append(self, records):\n"
        "        append(self, records)\n"
        "        time.sleep(4.0)\n"
        "    ResultStore.append = slow_append\n"
    )
    env = {
        **ONE_THREAD,
        "PYTHONPATH": os.pathsep.join([str(slow), os.environ.get("PYTHONPATH", "")]),
    }
    out = tmp_path / "killed"
    launcher = subprocess.Popen(
        ACCELERATE + _score_args(out, tiny_clip, ten_videos),
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 240
        shards = [out / "shards" / f"rank-0000{r}.jsonl" for r in (0, 1)]
        while not all(shard.is_file() and shard.stat().st_size for shard in shards):
            assert launcher.poll() is None, "the launcher ended before any shard was written"
            assert time.monotonic() < deadline, "no shards after 240 s"
            workers.update(_workers(launcher.pid))
            time.sleep(0.05)
        workers.update(_workers(launcher.pid))
        assert len(workers) == 2, f"launcher {launcher.pid} runs {sorted(workers)}"
        launcher.kill()
        launcher.wait()
        stopped_by = time.monotonic() + 5  # a worker sleeps 4 s after each of its 2 or 3 batches
        while any(_alive(pid) for pid in workers) and time.monotonic() < stopped_by:
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in workers), "workers outlived their launcher"
    finally:
        for pid in [launcher.pid, *workers]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    lines = sum(len(shard.read_text().splitlines()) for shard in shards)
    assert 4 <= lines < 20  # stopped mid-run
    run_to_success([sys.executable, *_score_args(out, tiny_clip, ten_videos, "--resume")])
    run_to_success([sys.executable, *_score_args(tmp_path / "whole", tiny_clip, ten_videos)])
    assert (out / "scores.jsonl").read_bytes() == (tmp_path / "whole/scores.jsonl").read_bytes()


@pytest.mark.parametrize(
    ("given", "used"), [("cpu:0", "cpu"), ("cpu", "cpu"), ("cuda:1", "cuda:1")]
)
def test_a_launched_process_runs_its_model_on_plain_cpu(given, used):
    """accelerate calls a launched process's CPU ``cpu:0``, where transformers computes other
    bits."""
    from foilkit.scorers.distributed import model_device

    class State:
        device = torch.device(given)

    assert model_device(State()) == torch.device(used)
