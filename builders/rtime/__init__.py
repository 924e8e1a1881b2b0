"""RTime (Du et al.): videos and their time-reversed counterparts, each with its own caption.

Upstream: ``test.json`` (1000 source videos) and ``valid.json`` (500), objects keyed by source
video id with one human-written ``forward_captions``/``reverse_captions`` caption, nine GPT-4
rewrites of each, the source ``url`` and the annotators' ``temporal``/``reverse`` flags. The
pinned commit also holds ``train.json`` (added with them in commit 7707a82, git blob
09fbda114ee00fbc685f3e72d59f66d6fa524140; the paper's train split, 18,537 views), which
``train_split=True`` builds as a ``train`` split in the same format: a source video whose
reversal the annotators found unrealistic (``reverse: false``; the paper keeps such videos in
training only) gives a forward row alone, with no foil.

Each source video gives a forward row and a reversed row: the reversed view is the *same file*
with ``reversed=True`` (no second file, no re-encoding); its caption is the reverse caption and
each row's foil is the other direction's caption. Configs follow the paper's three tasks:
``origin`` (forward views only: the standard retrieval pool), ``hard`` (forward and reversed
views in one pool) and ``binary`` (the same rows as ``hard``; the metric pairs them by
``source_id``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from foilkit.builders.rtime.protocols import PROTOCOLS
from foilkit.builders.spec import Benchmark, CardMetadata, HubTask, MetricSpec

TASKS = ("origin", "hard", "binary")


def _binary_blocks(rows: Mapping[str, Any]) -> dict[str, Any]:
    """RTime-Binary's 2x2 block per source video: [forward, reversed] views x [forward, reverse]
    captions.

    Sources with only one of their two views scored (the other's video failed) are left out.

    A forward row holds (its view, forward caption) and (its view, reverse caption) as its
    caption and foil; a reversed row holds (its view, reverse caption) and (its view, forward
    caption).
    """
    views: dict[str, dict[str, tuple[float, float]]] = {}
    for source, direction, caption, foils in zip(
        rows["source_id"],
        rows["direction"],
        rows["caption_score"],
        rows["foil_scores"],
        strict=True,
    ):
        if len(foils) != 1:
            raise ValueError(
                f"RTime source {source!r} ({direction}): expected one foil score, got {list(foils)}"
            )
        forward_caption, reverse_caption = (
            (caption, foils[0]) if direction == "forward" else (foils[0], caption)
        )
        views.setdefault(source, {})[direction] = (forward_caption, reverse_caption)
    blocks = [
        [list(pair["forward"]), list(pair["reverse"])] for pair in views.values() if len(pair) == 2
    ]
    return {"scores": blocks, "cluster": None}  # one block per source video: nothing to cluster


def _retrieval(matrix: Mapping[str, Any]) -> dict[str, Any]:
    """The views x texts matrix with its ground truth: view ``i`` matches every text equal to
    caption ``i``."""
    texts = list(matrix["texts"])
    positions: dict[str, list[int]] = {}
    for index, caption in enumerate(texts):
        positions.setdefault(caption, []).append(index)
    return {"scores": matrix["scores"], "ground_truth": [positions[caption] for caption in texts]}


RECALL = MetricSpec(
    "retrieval_recall",
    _retrieval,
    {
        "T2V R@1": "t2v_r1",
        "T2V R@5": "t2v_r5",
        "T2V R@10": "t2v_r10",
        "V2T R@1": "v2t_r1",
        "V2T R@5": "v2t_r5",
        "V2T R@10": "v2t_r10",
    },
    matrix=True,
    per_group=False,
)

BINARY = MetricSpec(
    "binary_retrieval_accuracy",
    _binary_blocks,
    {"T2V": "t2v_accuracy", "V2T": "v2t_accuracy"},
    per_group=False,
    chance={"T2V": 0.5, "V2T": 0.5},  # a video and its reversal: a coin flip
)

#: The documented leaderboard task ids (``foilkit.builders.hub``'s eval.yaml; values are
#: percentages, higher is better): changing one breaks every leaderboard.
HUB_TASKS = (
    *(
        HubTask(
            f"{config}_{direction}_r1",
            config,
            f"RTime-{config.title()} {direction.upper()} recall@1",
            ((config, None, f"{direction}_r1"),),
        )
        for config in ("origin", "hard")
        for direction in ("t2v", "v2t")
    ),
    *(
        HubTask(
            f"binary_{direction}",
            "binary",
            f"RTime-Binary {direction.upper()} accuracy",
            (("binary", None, f"{direction}_accuracy"),),
        )
        for direction in ("t2v", "v2t")
    ),
)

#: Video-text retrieval has no Hub category ("text-retrieval" is text-only retrieval): RTime's
#: tasks are a video and its reversal told apart by their captions, scored like the others.
CARD = CardMetadata(
    ("zero-shot-classification", "video-text-to-text"),
    ("original",),
    "https://github.com/qyr0403/Reversed-in-Time",
)

BENCHMARK = Benchmark.of_builder(
    "rtime",
    all_configs=TASKS,
    metrics=lambda config: (BINARY,) if config == "binary" else (RECALL,),
    cluster_column="source_id",
    paper_table="Tables 3-4: R@K on RTime-Origin and RTime-Hard, accuracy on RTime-Binary",
    protocols=PROTOCOLS,
    card=CARD,
    hub_tasks=HUB_TASKS,
    hub_repo="foilkit/rtime",
    video_layout=(
        "`<video_root>/<source_id>.mp4`, the video downloaded from its `url` and named by its "
        "RTime id. The reversed view reads the same file (`reversed=True`): no reversed copy is "
        "needed."
    ),
)
