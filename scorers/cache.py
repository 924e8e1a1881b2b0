"""On-disk cache of view embeddings, so a second benchmark or config on the same videos decodes nothing.

An entry is keyed by everything that determines the numbers: the model (id, revision,
adapter settings, dtype), the frames (sampling policy, decoder, temporal control and seed),
and the view (SHA-256 of the video's bytes, window, direction). Renamed or moved files still
hit; a re-encoded file misses. Entries are written atomically, so concurrent processes and
killed runs never leave a half-written entry behind.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import safetensors.torch
import torch
from foilkit.scorers.video import VideoView


def default_cache_dir() -> Path:
    """``$FOILKIT_CACHE`` or ``$HF_HOME/foilkit`` (``~/.cache/huggingface/foilkit``), then ``embeddings``."""
    if "FOILKIT_CACHE" in os.environ:
        return Path(os.environ["FOILKIT_CACHE"]) / "embeddings"
    from huggingface_hub import constants

    return Path(constants.HF_HOME) / "foilkit" / "embeddings"


def _digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True)
class CachedView:
    embedding: torch.Tensor
    frame_indices: list[int]


class EmbeddingCache:
    """View embeddings under ``directory/<namespace hash>/``, one file per view.

    ``namespace`` describes the model and frame settings (JSON-serialisable); it is written
    next to the entries as ``namespace.json`` so a cache folder explains itself.
    """

    def __init__(self, directory: str | os.PathLike, namespace: dict[str, Any]):
        self.directory = Path(directory) / _digest(namespace)[:20]
        self.namespace = namespace
        self._made: set[Path] = set()  # folders and manifest this object has made or found

    def key(self, content_hash: str, view: VideoView) -> str:
        return _digest([content_hash, view.start, view.end, view.reversed])

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.safetensors"

    def get(self, key: str) -> CachedView | None:
        path = self._path(key)
        if not path.is_file():
            return None
        entry = safetensors.torch.load(path.read_bytes())
        return CachedView(entry["embedding"], entry["frame_indices"].tolist())

    def put(self, key: str, value: CachedView) -> None:
        path = self._path(key)
        if path.parent not in self._made:  # one mkdir per subfolder, not one per entry
            path.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(path.parent)
        manifest = self.directory / "namespace.json"
        if manifest not in self._made and not manifest.is_file():
            _atomic_write(
                manifest, lambda handle: handle.write(json.dumps(self.namespace, indent=2).encode())
            )
        self._made.add(manifest)
        # safetensors, serialised in memory and written in one call: no pickle, and a tenth of
        # torch.save's and torch.load's time for an entry this small
        data = safetensors.torch.save(
            {
                "embedding": value.embedding.contiguous(),
                "frame_indices": torch.tensor(value.frame_indices, dtype=torch.int64),
            }
        )
        _atomic_write(path, lambda handle: handle.write(data))


def _atomic_write(path: Path, write: Any) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with temporary.open("wb") as handle:
        write(handle)
    os.replace(temporary, path)
