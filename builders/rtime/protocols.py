"""RTime's paper protocols per model family: the paper published data only, and names
mean-pooled CLIP baselines, which is the uniform protocol; frames and sampling are not published.
"""

from __future__ import annotations

from foilkit.protocol import Protocol, paper_protocols

#: Model family -> the protocol of the paper's own code (none published: the uniform values).
PROTOCOLS: dict[str, Protocol] = paper_protocols(
    "rtime",
    others="its repository holds data only; CLIP and BLIP baselines mean-pool frames",
    native=True,
)
