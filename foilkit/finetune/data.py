"""Training data: clips and captions, each item's reversed view, batches that keep them together.

**Which caption the reversed view gets** (:func:`training_items`), first rule that applies:

1. RTime's layout: the dataset has a row for the same video and window with the opposite
   ``reversed`` flag: that row's caption (RTime's reverse caption). The two rows form one item.
2. A foil that is the reversal: the item's ``aspect`` is one whose foils describe the
   reversed playback (:data:`REVERSAL_ASPECTS`: the synthetic benchmark's ``direction`` and
   ``order``, VITATECS' ``direction``): the item's first foil.
3. Otherwise the item has no reversed caption; with ``hard_negatives="reversed"`` that is an
   error naming the items, raised before any training, unless ``irreversible="keep"``: then
   such items train alone, without a reversal in their batch (RTime's train split holds
   videos whose reversal its annotators found unrealistic: a forward row only).

**Batches.** ``reversed``: each batch holds ``batch_size // 2`` items and, next to each, its
reversed view with the reversed caption: the reversed view is the same decoded frames in the
reverse order (one decode per item). ``none`` (the ablation): the dataset's rows (RTime's
reversed rows included, as rows of their own) in random batches of ``batch_size``, each row
decoded for itself; foils never become training texts.

**Look-alikes apart** (``distinct_by``, a column): items whose values in that column are equal
never share a batch; an item and its reversal count as one item, so with ``none`` an item's
reversed row never sits in its batch either. Naming what a frame-averaging model sees of a
video (the synthetic train split's ``static_content``: colour, axis and pace of a moving
square) makes every ``none`` batch separable by static cues, as random batches of a large,
varied dataset almost always are (RTime's train split: 18,537 videos); ``reversed`` batches
then differ from them only by the reversals, RTime's point.

**Processes.** A batch is the global batch: with several processes each takes a contiguous
share of its items (an item's reversal stays with it, so one decode serves both), and the
loss gathers every process's embeddings (:func:`foilkit.finetune.train.gathered_loss`).
"""

from __future__ import annotations

import itertools
import random
import threading
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import torch

from foilkit.finetune.negatives import REVERSAL_ASPECTS, check_batch
from foilkit.scorers.plan import _source
from foilkit.scorers.video import SamplingPolicy, VideoView, decode_views
from foilkit.video_paths import RootsGiven, named_roots


@dataclass(frozen=True)
class TrainingItem:
    """One video window with its caption and (when known) the caption of its reversal."""

    id: str
    view: VideoView
    caption: str
    reversed_caption: str | None
    reversed_rule: str | None  # "reversed row", "foil (aspect ...)" or None
    group: str | None = None  # the ``distinct_by`` value: equal groups never share a batch


@dataclass(frozen=True)
class Clip:
    """One training example: an item's view, forward or reversed, and its caption."""

    item: int
    reversed: bool
    caption: str


def training_items(
    rows: Sequence[Mapping[str, Any]],
    *,
    video_root: RootsGiven = None,
    reversal_aspects: Sequence[str] = REVERSAL_ASPECTS,
    distinct_by: str | None = None,
) -> list[TrainingItem]:
    """The items of a split's rows (``video`` undecoded), pairing RTime's forward/reversed rows.

    ``distinct_by``: a column whose value becomes each item's :attr:`TrainingItem.group`;
    ``video_root``: the folder(s) every video path must lie inside (``None``: unconfined; see
    :func:`foilkit.video_paths.video_roots_for`).
    """
    if distinct_by is not None and rows and distinct_by not in rows[0]:
        raise ValueError(
            f"distinct_by={distinct_by!r} is not a column of the split (it has {sorted(rows[0])})"
        )
    roots = named_roots(video_root)
    keyed: dict[tuple, list[int]] = {}
    views = []
    for index, row in enumerate(rows):
        row_id = str(row.get("id", index))
        try:
            source = _source(row.get("video"), roots)
        except ValueError as error:
            raise ValueError(f"row {index} (id={row_id!r}), field 'video': {error}") from None
        if source is None:
            raise ValueError(f"row {index} (id={row_id!r}) has no video")
        if not row.get("caption"):
            raise ValueError(f"row {index} (id={row_id!r}) has no caption")
        view = VideoView(source, row.get("start"), row.get("end"), bool(row.get("reversed")))
        views.append(view)
        keyed.setdefault((view.source_key, view.start, view.end), []).append(index)
    items, used = [], set()
    for index, row in enumerate(rows):
        if index in used:
            continue
        view = views[index]
        same_window = keyed[(view.source_key, view.start, view.end)]
        opposite = (j for j in same_window if j not in used and views[j].reversed != view.reversed)
        partner = next(opposite, None)
        used.add(index)
        caption, rule = None, None
        if partner is not None:
            used.add(partner)
            caption, rule = rows[partner]["caption"], "reversed row"
        elif row.get("aspect") in reversal_aspects and row.get("foils"):
            caption, rule = row["foils"][0], f"foil (aspect {row['aspect']!r})"
        group = None
        if distinct_by is not None:
            if row[distinct_by] is None:
                raise ValueError(
                    f"row {index} (id={row.get('id', index)!r}) has no {distinct_by!r}"
                )
            group = str(row[distinct_by])
        items.append(
            TrainingItem(str(row.get("id", index)), view, row["caption"], caption, rule, group)
        )
    return items


def check_reversible(items: Sequence[TrainingItem], reversal_aspects: Sequence[str]) -> None:
    """Raise ``ValueError`` naming the items that have no reversed caption."""
    missing = [item.id for item in items if item.reversed_caption is None]
    if missing:
        shown = ", ".join(repr(i) for i in missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise ValueError(
            f"{len(missing)} of {len(items)} training items have no reversed caption ({shown}): "
            "hard negatives need, per item, a row of the same video and window with the opposite "
            f"'reversed' flag (RTime's layout) or an 'aspect' in {list(reversal_aspects)} whose "
            "first foil is the reversal; pass hard_negatives='none' (--hard-negatives none) to "
            "train without them, reversal_aspects= (--reversal-aspects) to name such aspects, or "
            "irreversible='keep' (--irreversible keep) to train these items without a reversal "
            "of their own"
        )


def epoch_batches(
    items: Sequence[TrainingItem], hard_negatives: str, batch_size: int, seed: int, epoch: int
) -> list[list[Clip]]:
    """One epoch's batches, shuffled by ``(seed, epoch)`` (see the module docstring).

    The last, smaller batch is kept when it has at least two clips (a contrastive loss needs
    a negative). With item groups (``distinct_by``) there are as many batches as the clips
    need or the largest group has units (an item with its reversal, or a row), whichever is
    more, filled as evenly as the groups allow.
    """
    check_batch(hard_negatives, batch_size)
    rng = random.Random(f"{seed}:{epoch}")
    if hard_negatives == "reversed":
        # an item without a reversed caption (``irreversible="keep"``) comes alone
        units = [
            (Clip(i, False, item.caption), Clip(i, True, item.reversed_caption))
            if item.reversed_caption is not None
            else (Clip(i, False, item.caption),)
            for i, item in enumerate(items)
        ]
    else:
        units = [(Clip(i, False, item.caption),) for i, item in enumerate(items)]
        units += [
            (Clip(i, True, item.reversed_caption),)
            for i, item in enumerate(items)
            if item.reversed_rule == "reversed row"
        ]
    rng.shuffle(units)
    if any(item.group is not None for item in items):
        batches = _distinct(units, [items[unit[0].item].group for unit in units], batch_size)
        rng.shuffle(batches)
    else:
        batches, batch = [], []
        for unit in units:
            if len(batch) + len(unit) > batch_size:
                batches.append(batch)
                batch = []
            batch += unit
        batches.append(batch)
    return [batch for batch in batches if len(batch) >= 2]


def _distinct(units: list[tuple[Clip, ...]], groups: list[str], size: int) -> list[list[Clip]]:
    """``units`` in batches of at most ``size`` clips, no group twice in a batch, as even as the
    groups allow: as many batches as the clips need or the largest group has units, each
    group's units dealt to consecutive batches in turn, the largest groups first."""
    members: dict[str, list[tuple[Clip, ...]]] = {}
    for unit, group in zip(units, groups, strict=True):
        members.setdefault(group, []).append(unit)
    clips = sum(len(unit) for unit in units)
    count = max(-(-clips // size), max(len(group) for group in members.values()))
    batches: list[list[Clip]] = [[] for _ in range(count)]
    seen: list[set[str]] = [set() for _ in range(count)]
    cursor = 0
    for group, group_units in sorted(members.items(), key=lambda entry: -len(entry[1])):
        for unit in group_units:
            for step in range(len(batches)):
                slot = (cursor + step) % len(batches)
                if group not in seen[slot] and len(batches[slot]) + len(unit) <= size:
                    break
            else:
                slot = len(batches)
                batches.append([])
                seen.append(set())
            batches[slot] += unit
            seen[slot].add(group)
            cursor = slot + 1
    return batches


def _units(batch: Sequence[Clip]) -> list[list[Clip]]:
    """A batch's clips in runs of one item (an item and its reversal, next to each other)."""
    return [list(run) for _, run in itertools.groupby(batch, key=lambda clip: clip.item)]


def process_share(batch: Sequence[Clip], process_index: int, num_processes: int) -> list[Clip]:
    """This process's contiguous share of a global batch, an item's clips kept together
    (shares differ by at most one item; as accelerate's ``split_between_processes``)."""
    units = _units(batch)
    base, extra = divmod(len(units), num_processes)
    start = process_index * base + min(process_index, extra)
    end = start + base + (process_index < extra)
    return [clip for unit in units[start:end] for clip in unit]


def shareable(batch: Sequence[Clip], num_processes: int) -> bool:
    """Whether every process gets part of the batch (a process with no clips cannot take part)."""
    return len(_units(batch)) >= num_processes


class FramePipeline:
    """Decodes, samples and preprocesses the clips of a batch.

    ``share_decode``: an item's forward and reversed clips in one batch come from one decode
    (the reversed view is the same frames flipped); off, every clip is decoded for itself
    (what a loader without foilkit's views does; ``benchmarks/training_speed.py`` compares).
    ``cache``: keep each item's preprocessed frames in memory across epochs (for small
    datasets; the sampling policy must be deterministic).
    """

    def __init__(
        self,
        items: Sequence[TrainingItem],
        policy: SamplingPolicy,
        image_processor: Any,
        *,
        workers: int = 4,
        share_decode: bool = True,
        cache: bool = False,
    ):
        self.items, self.policy, self.image_processor = items, policy, image_processor
        self.share_decode, self.cache = share_decode, cache
        self._pool = ThreadPoolExecutor(max(1, workers), thread_name_prefix="foilkit-finetune")
        self._cached: dict[int, torch.Tensor] = {}
        self._lock = threading.Lock()
        self.decodes = 0

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def _forward_pixels(self, item: int) -> torch.Tensor:
        """The item's frames (its own direction), preprocessed: ``T x C x H x W`` float."""
        if self.cache and item in self._cached:
            return self._cached[item]
        (decoded,) = decode_views([self.items[item].view], self.policy)
        with self._lock:
            self.decodes += 1
        pixels = self.image_processor(images=list(decoded.frames), return_tensors="pt").pixel_values
        if self.cache:
            self._cached[item] = pixels
        return pixels

    def pixels(self, batch: Sequence[Clip]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """A batch's frames as ``(pixels, rows, flips)``.

        ``pixels``: ``U x T x C x H x W`` float, one entry per decode (per item with
        ``share_decode``, per clip without); clip ``b`` is entry ``rows[b]``, played backwards
        where ``flips[b]``. The model embeds each entry's frames once and flips the frame
        embeddings of reversed clips (:meth:`TemporalClip.forward`).
        """
        keys: dict[Any, int] = {}
        rows, flips, jobs = [], [], []
        for position, clip in enumerate(batch):
            key = clip.item if self.share_decode else position
            if key not in keys:
                keys[key] = len(jobs)
                jobs.append(self._pool.submit(self._forward_pixels, clip.item))
            rows.append(keys[key])
            flips.append(clip.reversed)
        pixels = torch.stack([job.result() for job in jobs])
        return pixels, torch.tensor(rows), torch.tensor(flips)

    def iterate(self, batches: Sequence[Sequence[Clip]]) -> Iterator[tuple[Sequence[Clip], tuple]]:
        """``(batch, self.pixels(batch))`` per batch; the next batch is prepared while the caller
        trains."""
        if not batches:
            return
        loader = ThreadPoolExecutor(1, thread_name_prefix="foilkit-prefetch")
        try:
            pending = loader.submit(self.pixels, batches[0])
            for index, batch in enumerate(batches):
                pixels = pending.result()
                if index + 1 < len(batches):
                    pending = loader.submit(self.pixels, batches[index + 1])
                yield batch, pixels
        finally:
            loader.shutdown(wait=True)
