"""One commit to a Hub repository, sent or written to disk as a dry run.

``foilkit push-results`` (a dataset repo) and ``foilkit metrics push`` (a Space) both send a set
of files as one commit. A dry run writes exactly those files under ``<folder>/<name>/`` as they
would sit in the repo, and ``<folder>/<name>_commit.json`` with the repo, the commit message and
each operation's path and sha256, so what would be sent can be checked offline.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class RepoCommit:
    """Files for one commit: path in the repo -> local file (symlinks followed) or bytes."""

    repo_id: str
    repo_type: str
    files: Mapping[str, Path | bytes]
    commit_message: str
    create_options: Mapping[str, Any] = field(default_factory=dict)
    #: Open the commit as a pull request (a repo the sender may not own).
    create_pr: bool = False
    #: Create the repo when missing (not for someone else's model).
    create_repo: bool = True

    def contents(self, path_in_repo: str) -> bytes:
        """The bytes the commit sends for ``path_in_repo``."""
        source = self.files[path_in_repo]
        return source if isinstance(source, bytes) else Path(source).read_bytes()

    def operations(self) -> list[Any]:
        """The commit as ``huggingface_hub.CommitOperationAdd`` operations, one per file."""
        from huggingface_hub import CommitOperationAdd

        return [CommitOperationAdd(path, self.contents(path)) for path in self.files]

    def push(self, *, token: str | None = None, private: bool | None = None) -> str:
        """Create the repo when missing (``create_repo``), send the commit (as a pull request
        with ``create_pr``); returns the commit URL, or the pull request's."""
        from huggingface_hub import HfApi

        api = HfApi(token=token)
        if self.create_repo:
            api.create_repo(
                self.repo_id,
                repo_type=self.repo_type,
                private=private,
                exist_ok=True,
                **self.create_options,
            )
        commit = api.create_commit(
            self.repo_id,
            self.operations(),
            repo_type=self.repo_type,
            commit_message=self.commit_message,
            create_pr=self.create_pr,
        )
        return str(commit.pr_url if self.create_pr and commit.pr_url else commit.commit_url)

    def write_dry_run(self, folder: str | os.PathLike, name: str) -> Path:
        """Write the files to ``folder/name/`` and the commit to ``folder/name_commit.json``."""
        out = Path(folder)
        for path in self.files:
            target = out / name / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.contents(path))
        commit = {
            "repo_id": self.repo_id,
            "repo_type": self.repo_type,
            "create_repo": dict(self.create_options) if self.create_repo else None,
            "create_pr": self.create_pr,
            "commit_message": self.commit_message,
            "operations": [
                {
                    "operation": "add",
                    "path_in_repo": path,
                    "sha256": hashlib.sha256(self.contents(path)).hexdigest(),
                }
                for path in self.files
            ],
        }
        (out / f"{name}_commit.json").write_text(json.dumps(commit, indent=2))
        return out / name
