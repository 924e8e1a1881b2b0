"""On-disk cache of view embeddings: another benchmark on the same videos decodes nothing.

An entry is keyed by everything that determines the numbers: the model (id, revision,
adapter settings, dtype), the frames (sampling policy, decoder, temporal control and seed),
and the view (SHA-256 of the video's bytes, window, direction). Renamed or moved files still
hit; a re-encoded file misses. Entries are written atomically, so concurrent processes and
killed runs never leave a half-written entry behind.

An entry carries its own key (namespace digest and view key) and its embedding's shape and
dtype in the safetensors metadata, and is checked on every read: a file that is truncated,
empty, not safetensors, of another key (copied or swapped in) or of the wrong shape or dtype is
moved to ``<cache dir>/quarantine/<namespace>/`` with a warning naming it, and counts as a miss,
so the view is recomputed instead of the run crashing or scoring someone else's numbers.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import safetensors
import safetensors.torch
import torch

from foilkit.files import atomic_write
from foilkit.scorers.video import VideoView

logger = logging.getLogger(__name__)
_FORMAT = 2  # 2: entries carry their namespace, key, shape and dtype in the metadata


def default_cache_dir() -> Path:
    """``$FOILKIT_CACHE`` or ``$HF_HOME/foilkit`` (``~/.cache/huggingface/foilkit``), then
    ``embeddings``."""
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


class InvalidEntry(ValueError):
    """A cache entry that cannot be trusted; the message says why."""


class EmbeddingCache:
    """View embeddings under ``directory/<namespace hash>/``, one file per view.

    ``namespace`` describes the model and frame settings (JSON-serialisable); it is written
    next to the entries as ``namespace.json``, with the dtype and width of their embeddings, so
    a cache folder explains itself and an entry of another width stands out.
    """

    def __init__(self, directory: str | os.PathLike, namespace: dict[str, Any]):
        # the format is part of the digest: entries written before they carried their key live
        # in other folders and are never read
        self.digest = _digest({"format": _FORMAT, **namespace})
        self.directory = Path(directory) / self.digest[:20]
        self.quarantine = Path(directory) / "quarantine" / self.digest[:20]
        self.namespace = namespace
        self._made: set[Path] = set()  # folders and manifest this object has made or found
        self._layout: dict[str, Any] | None = None  # the manifest's {"dtype", "width"}, once read

    def key(self, content_hash: str, view: VideoView) -> str:
        return _digest([content_hash, view.start, view.end, view.reversed])

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.safetensors"

    def get(self, key: str) -> CachedView | None:
        """The entry of ``key``, or ``None`` when there is none or it fails validation (then
        it is quarantined, so the caller recomputes and rewrites it)."""
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            return self._read(path, key)
        except InvalidEntry as error:
            self._quarantine(path, str(error))
            return None

    def _read(self, path: Path, key: str) -> CachedView:
        try:
            with safetensors.safe_open(path, framework="pt") as handle:
                metadata = handle.metadata() or {}
                tensors = {name: handle.get_tensor(name) for name in handle.keys()}  # noqa: SIM118
        except (safetensors.SafetensorError, OSError) as error:  # one type for any malformed file
            raise InvalidEntry(f"unreadable ({type(error).__name__}: {error})") from None
        if (metadata.get("namespace"), metadata.get("key")) != (self.digest, key):
            raise InvalidEntry(
                f"it is the entry of namespace {metadata.get('namespace')!r}, key "
                f"{metadata.get('key')!r}, not of namespace {self.digest!r}, key {key!r}"
            )
        if set(tensors) != {"embedding", "frame_indices"}:
            raise InvalidEntry(f"it holds {sorted(tensors)}, not 'embedding' and 'frame_indices'")
        embedding, indices = tensors["embedding"], tensors["frame_indices"]
        if indices.dtype != torch.int64 or indices.dim() != 1:
            raise InvalidEntry(
                f"frame_indices is {indices.dtype} of shape {list(indices.shape)}, not 1-D int64"
            )
        recorded = (metadata.get("shape"), metadata.get("dtype"))
        if recorded != (json.dumps(list(embedding.shape)), str(embedding.dtype)):
            raise InvalidEntry(
                f"its embedding has shape {list(embedding.shape)} and dtype {embedding.dtype}, "
                f"but the entry records shape {recorded[0]} and dtype {recorded[1]}"
            )
        if embedding.dim() not in (1, 2):  # one embedding per view, or per frame
            raise InvalidEntry(f"its embedding has shape {list(embedding.shape)}, not 1-D or 2-D")
        layout = self._manifest_layout()
        if layout is not None and layout != _layout(embedding):
            raise InvalidEntry(
                f"its embedding is {embedding.dtype} of width {embedding.shape[-1]}; this cache's "
                f"entries are {layout['dtype']} of width {layout['width']}"
            )
        return CachedView(embedding, indices.tolist())

    def _manifest_layout(self) -> dict[str, Any] | None:
        """The embeddings' dtype and width as ``namespace.json`` records them (``None``:
        unknown)."""
        if self._layout is None:
            try:
                self._layout = json.loads((self.directory / "namespace.json").read_text())[
                    "embedding"
                ]
            except (OSError, ValueError, KeyError, TypeError):
                return None
        return self._layout

    def _quarantine(self, path: Path, reason: str) -> None:
        self.quarantine.mkdir(parents=True, exist_ok=True)
        target, copy = self.quarantine / path.name, 1
        while target.exists():  # the same view may go bad again
            target, copy = self.quarantine / f"{path.name}.{copy}", copy + 1
        try:
            os.replace(path, target)
        except FileNotFoundError:  # another process quarantined or rewrote it first
            return
        logger.warning(
            "embedding cache entry %s is invalid: %s. Moved it to %s; the view is recomputed.",
            path,
            reason,
            target,
        )

    def put(self, key: str, value: CachedView) -> None:
        path = self._path(key)
        if path.parent not in self._made:  # one mkdir per subfolder, not one per entry
            path.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(path.parent)
        embedding = value.embedding.contiguous()
        manifest = self.directory / "namespace.json"
        if manifest not in self._made and self._manifest_layout() is None:
            self._layout = _layout(embedding)
            text = json.dumps({**self.namespace, "embedding": self._layout}, indent=2)
            atomic_write(manifest, text)
        self._made.add(manifest)
        # safetensors, serialised in memory and written in one call: no pickle, and a tenth of
        # torch.save's and torch.load's time for an entry this small. The metadata names the
        # entry, so a file copied or swapped in under another name is refused on read.
        data = safetensors.torch.save(
            {
                "embedding": embedding,
                "frame_indices": torch.tensor(value.frame_indices, dtype=torch.int64),
            },
            metadata={
                "namespace": self.digest,
                "key": key,
                "shape": json.dumps(list(embedding.shape)),
                "dtype": str(embedding.dtype),
            },
        )
        atomic_write(path, data)


def _layout(embedding: torch.Tensor) -> dict[str, Any]:
    return {"dtype": str(embedding.dtype), "width": int(embedding.shape[-1])}
