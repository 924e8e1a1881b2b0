"""Where VITATECS's annotation files and scoring code are published, pinned to one commit: the
builder downloads at it, and the paper protocols and judge cite it (:data:`REFERENCE`)."""

from __future__ import annotations

from foilkit.builders.annotations import GitHubSource

SOURCE = GitHubSource(
    repo="lscpku/VITATECS",
    commit="58bff59bb1d3ed287983fca8ca7589498f4db6b2",
    licence="cc-by-4.0",
    licence_note="CC BY 4.0, as stated in the VITATECS README.",
)

#: The commit the protocols' and judge's references name: the builder's, short.
REFERENCE = SOURCE.pin
