"""A corrupt or foreign embedding-cache entry is quarantined, named in a warning, and recomputed
(issue 15, item 3): never a crash of every later run, never someone else's numbers."""

from __future__ import annotations

import json
import logging
import random
import re
import shutil
from pathlib import Path

import pytest
import safetensors
import safetensors.torch
import torch

import foilkit
from foilkit.scorers.cache import CachedView, EmbeddingCache

NAMESPACE = {"model": "tiny-clip", "revision": "abc", "frames": 8, "sampling": "uniform"}
KEY, OTHER = "ab" * 32, "cd" * 32


def _truncated(path: Path, other: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _zero_length(path: Path, other: Path) -> None:
    path.write_bytes(b"")


def _random_bytes(path: Path, other: Path) -> None:
    path.write_bytes(random.Random(0).randbytes(path.stat().st_size))


def _wrong_width(path: Path, other: Path) -> None:
    """A well-formed entry of this key whose embedding is narrower than every other one."""
    with safetensors.safe_open(path, framework="pt") as handle:
        metadata = handle.metadata()
        embedding = handle.get_tensor("embedding")[..., :-1].contiguous()
        indices = handle.get_tensor("frame_indices")
    metadata["shape"] = json.dumps(list(embedding.shape))
    path.write_bytes(
        safetensors.torch.save({"embedding": embedding, "frame_indices": indices}, metadata)
    )


def _swapped(path: Path, other: Path) -> None:
    """Another view's valid entry under this view's name."""
    shutil.copyfile(other, path)


# fault -> what the warning says about the entry
FAULTS = {
    "truncated": (_truncated, r"unreadable \(SafetensorError: "),
    "zero-length": (_zero_length, r"unreadable \(SafetensorError: "),
    "random-bytes": (_random_bytes, r"unreadable \(SafetensorError: "),
    "wrong-shape": (
        _wrong_width,
        r"its embedding is torch\.float32 of width \d+; "
        r"this cache's entries are torch\.float32 of width \d+",
    ),
    "swapped": (
        _swapped,
        r"it is the entry of namespace '[0-9a-f]{64}', key '[0-9a-f]{64}', "
        r"not of namespace '[0-9a-f]{64}', key '[0-9a-f]{64}'",
    ),
}


def _assert_quarantined(cache: EmbeddingCache, path: Path, reason: str, caplog) -> None:
    target = cache.quarantine / path.name
    assert target.is_file() and not path.exists()
    [record] = [r for r in caplog.records if r.name == "foilkit.scorers.cache"]
    assert record.levelno == logging.WARNING
    assert re.fullmatch(
        rf"embedding cache entry {re.escape(str(path))} is invalid: {reason}.*\. Moved it to "
        rf"{re.escape(str(target))}; the view is recomputed\.",
        record.getMessage(),
    )


@pytest.mark.parametrize(("fault", "reason"), FAULTS.values(), ids=FAULTS)
def test_a_bad_entry_is_a_miss_quarantined_with_a_warning(tmp_path, caplog, fault, reason):
    cache = EmbeddingCache(tmp_path / "cache", NAMESPACE)
    entry = CachedView(torch.arange(24, dtype=torch.float32).reshape(3, 8), [0, 4, 8])
    cache.put(KEY, entry)
    cache.put(OTHER, CachedView(-entry.embedding, [1, 5, 9]))
    path, other = cache._path(KEY), cache._path(OTHER)
    fault(path, other)
    with caplog.at_level(logging.WARNING, logger="foilkit.scorers.cache"):
        assert cache.get(KEY) is None
    _assert_quarantined(cache, path, reason, caplog)
    # the other entry is untouched, and the recomputed entry is served again
    assert torch.equal(cache.get(OTHER).embedding, -entry.embedding)
    cache.put(KEY, entry)
    assert torch.equal(cache.get(KEY).embedding, entry.embedding)
    assert cache.get(KEY).frame_indices == [0, 4, 8]


def test_an_entry_of_another_model_is_refused(tmp_path, caplog):
    """Same view key, other namespace: the file copied into this cache is not this model's."""
    ours, theirs = (
        EmbeddingCache(tmp_path / "cache", NAMESPACE),
        EmbeddingCache(tmp_path / "cache", {**NAMESPACE, "revision": "def"}),
    )
    ours.put(OTHER, CachedView(torch.ones(8), [0]))
    theirs.put(KEY, CachedView(torch.zeros(8), [0]))
    ours._path(KEY).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(theirs._path(KEY), ours._path(KEY))
    with caplog.at_level(logging.WARNING, logger="foilkit.scorers.cache"):
        assert ours.get(KEY) is None
    _assert_quarantined(
        ours,
        ours._path(KEY),
        rf"it is the entry of namespace '{theirs.digest}', key '{KEY}'",
        caplog,
    )


def test_a_bad_entry_quarantined_twice_keeps_both_copies(tmp_path):
    cache = EmbeddingCache(tmp_path / "cache", NAMESPACE)
    for _ in range(2):
        cache.put(KEY, CachedView(torch.ones(8), [0]))
        cache._path(KEY).write_bytes(b"")
        assert cache.get(KEY) is None
    assert sorted(p.name for p in cache.quarantine.iterdir()) == [
        f"{KEY}.safetensors",
        f"{KEY}.safetensors.1",
    ]


def _assert_same_scores(scores, expected) -> None:
    """The same rows, frames and scores; a view encoded alone rather than in a batch of two may
    differ in the last float32 bit."""
    columns = ["caption_score", "foil_scores"]
    assert scores.remove_columns(columns).to_list() == expected.remove_columns(columns).to_list()
    assert scores["caption_score"] == pytest.approx(expected["caption_score"], rel=1e-6)
    flat = [score for row in scores["foil_scores"] for score in row]
    assert flat == pytest.approx([s for row in expected["foil_scores"] for s in row], rel=1e-6)


@pytest.mark.parametrize(("fault", "reason"), FAULTS.values(), ids=FAULTS)
def test_a_run_over_a_bad_entry_recomputes_it_and_scores_the_same(
    tmp_path, caplog, tiny_clip, motion_videos, scoring_dataset, fault, reason
):
    """The engine's second run over a damaged cache: same scores, one view decoded again."""
    dataset = scoring_dataset(
        [
            {"id": direction, "video": str(path), "caption": f"a square moves {direction}"}
            for direction, path in motion_videos.items()
        ]
    )
    options = {"cache_dir": str(tmp_path / "cache"), "num_workers": 0, "progress": False}
    first = foilkit.score(tiny_clip, dataset, **options)
    entries = sorted((tmp_path / "cache").glob("*/*/*.safetensors"))
    assert len(entries) == 2
    fault(entries[0], entries[1])
    with caplog.at_level(logging.WARNING, logger="foilkit.scorers.cache"):
        second = foilkit.score(tiny_clip, dataset, out_dir=str(tmp_path / "run"), **options)
    _assert_same_scores(second, first)
    [warning] = [r.getMessage() for r in caplog.records if r.name == "foilkit.scorers.cache"]
    assert re.match(
        rf"embedding cache entry {re.escape(str(entries[0]))} is invalid: {reason}", warning
    )
    throughput = json.loads((tmp_path / "run" / "run.json").read_text())["throughput"]
    assert (throughput["cached_views"], throughput["decoded_videos"]) == (1, 1)
    # rewritten: a third run reads both entries from the cache
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="foilkit.scorers.cache"):
        third = foilkit.score(tiny_clip, dataset, out_dir=str(tmp_path / "again"), **options)
    assert third.to_list() == second.to_list() and not caplog.records
    throughput = json.loads((tmp_path / "again" / "run.json").read_text())["throughput"]
    assert (throughput["cached_views"], throughput["decoded_videos"]) == (2, 0)
