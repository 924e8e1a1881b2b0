"""Where TOMATO's annotation files and scoring code are published, pinned to one commit: the
builder downloads at it, and the paper protocols and judge cite it (:data:`REFERENCE`)."""

from __future__ import annotations

from foilkit.builders.annotations import GitHubSource

SOURCE = GitHubSource(
    repo="yale-nlp/TOMATO",
    commit="fe2025f4b9e1ce339618e0eecfd10f09caf67142",
    licence="cc-by-sa-4.0",
    licence_note="CC BY-SA 4.0, as the authors' Hub copy of the same questions declares (dataset "
    "card of yale-nlp/TOMATO); the GitHub repository these files are pinned to states no "
    "licence, and none is stated for the videos.",
)

#: The commit the protocols' and judge's references name: the builder's, short.
REFERENCE = SOURCE.pin
