"""Where ViLMA's annotation files and scoring code are published, pinned to one commit: the
builder downloads at it, and the paper protocols and judge cite it (:data:`REFERENCE`)."""

from __future__ import annotations

from foilkit.builders.annotations import GitHubSource

SOURCE = GitHubSource(
    repo="ilkerkesen/ViLMA",
    commit="746912b7c8e81d53eb946abe26456ad8b7db826f",
    licence="mit",
    licence_note="MIT (the LICENSE beside the annotation files).",
)

#: The commit the protocols' and judge's references name: the builder's, short.
REFERENCE = SOURCE.pin
