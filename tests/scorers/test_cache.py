"""The embedding cache writes each entry and its manifest atomically (``foilkit.files``): what
one writer or several concurrent ones leave is a whole entry, with no temporary file beside it."""

from __future__ import annotations

import json
import threading

import torch

from foilkit.scorers.cache import CachedView, EmbeddingCache

NAMESPACE = {"model": "tiny-clip", "revision": "abc", "frames": 8, "sampling": "uniform"}
KEY = "ab" * 32


def _files(cache: EmbeddingCache) -> list[str]:
    return sorted(
        p.relative_to(cache.directory).as_posix() for p in cache.directory.rglob("*") if p.is_file()
    )


def test_an_entry_round_trips_with_its_manifest(tmp_path):
    cache = EmbeddingCache(tmp_path, NAMESPACE)
    cache.put(KEY, CachedView(torch.arange(6, dtype=torch.float32).reshape(2, 3), [0, 4]))
    entry = cache.get(KEY)
    assert entry is not None and entry.frame_indices == [0, 4]
    assert torch.equal(entry.embedding, torch.arange(6, dtype=torch.float32).reshape(2, 3))
    manifest = json.loads((cache.directory / "namespace.json").read_text())
    assert manifest["embedding"] == {"dtype": "torch.float32", "width": 3}
    assert _files(cache) == [f"{KEY[:2]}/{KEY}.safetensors", "namespace.json"]


def test_concurrent_writers_of_one_entry_leave_a_whole_one(tmp_path):
    caches = [EmbeddingCache(tmp_path, NAMESPACE) for _ in range(6)]
    views = [CachedView(torch.full((4, 64), float(i)), [i]) for i in range(6)]
    threads = [
        threading.Thread(target=cache.put, args=(KEY, view))
        for cache, view in zip(caches, views, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    entry = EmbeddingCache(tmp_path, NAMESPACE).get(KEY)
    assert entry is not None and entry.frame_indices[0] in range(6)
    assert torch.equal(entry.embedding, views[entry.frame_indices[0]].embedding)
    assert _files(caches[0]) == [f"{KEY[:2]}/{KEY}.safetensors", "namespace.json"]
