"""Per-sample results streamed to JSONL shards as they are computed, so a killed run resumes.

Each process appends to its own shard (``shards/rank-00000.jsonl``); a line is one finished
dataset row, keyed by its row index. On resume every shard is read back; a line cut short by
a kill is dropped (that row is simply scored again), and so is a line holding a bare ``NaN`` or
``Infinity`` (not JSON; older versions wrote them): that row is scored again and, when its
score is still not finite, recorded as a row error.

A row scored stays as first written: a resumed run that scores its batch again (for a row of
the batch that failed, retried) does not append it again, and a later line for it is not read.
A row that failed is replaced by its next line, in any shard (a retry's, scored or failed
again).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from foilkit.files import naming_full_disk
from foilkit.folders import ScoresFolder


class ResultStore:
    """Rows already scored (``done``) and an append-only shard for this process's new rows."""

    def __init__(self, directory: str | os.PathLike | None, rank: int = 0):
        self.shards = None if directory is None else ScoresFolder(Path(directory)).shards
        self.rank = rank
        self.done: dict[int, dict[str, Any]] = {}

    @property
    def shard(self) -> Path | None:
        return None if self.shards is None else self.shards / f"rank-{self.rank:05d}.jsonl"

    def load(self) -> dict[int, dict[str, Any]]:
        """Read every shard; returns (and remembers) finished rows by index."""
        if self.shards is None or not self.shards.is_dir():
            return self.done
        for shard in sorted(self.shards.glob("rank-*.jsonl")):
            for line in shard.read_text().splitlines():
                try:
                    record = json.loads(line, parse_constant=_not_json)
                except ValueError:  # the last line of a killed process, or a NaN score
                    continue
                if not self.scored(record["index"]):
                    self.done[record["index"]] = record
        return self.done

    def scored(self, index: int) -> bool:
        """Whether row ``index`` is already written as scored (not failed)."""
        return index in self.done and not self.done[index].get("error")

    def open(self) -> None:
        """Prepare this process's shard for appending: cut a torn last line, so appends stay
        lines."""
        if self.shard is None:
            return
        self.shards.mkdir(parents=True, exist_ok=True)
        if self.shard.is_file():
            data = self.shard.read_bytes()
            if data and not data.endswith(b"\n"):
                with self.shard.open("r+b") as handle:
                    handle.truncate(data.rfind(b"\n") + 1)

    def append(self, records: Iterable[dict[str, Any]]) -> None:
        """Append ``records`` to this process's shard, but those of rows already scored."""
        records = [record for record in records if not self.scored(record["index"])]
        if self.shard is not None and records:
            with naming_full_disk(self.shard), self.shard.open("a") as handle:
                handle.writelines(json.dumps(record, allow_nan=False) + "\n" for record in records)
                handle.flush()
                os.fsync(handle.fileno())


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")
