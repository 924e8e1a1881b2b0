"""Where TempCompass's annotation files and scoring code are published, pinned to one commit: the
builder downloads at it, and the paper protocols and judge cite it (:data:`REFERENCE`)."""

from __future__ import annotations

from foilkit.builders.annotations import GitHubSource

SOURCE = GitHubSource(
    repo="llyx97/TempCompass",
    commit="e1b463166400633e6061962d890a9ae85db29f70",
    licence="cc-by-nc-4.0",
    licence_note="CC BY-NC 4.0 (academic research only), as stated in the TempCompass README "
    "and LICENSE.",
)

#: The commit the protocols' and judge's references name: the builder's, short.
REFERENCE = SOURCE.pin
