"""Action-counting captions and foils from ``exactly <number>`` templates (ViLMA §3.2, app. C.2).

A template such as "a man skips rope exactly <number> times." gets the true count in the
caption and a wrong count in the foil. Counts above ``max_count`` (10 in the published data:
ViLMA's number words stop at "ten") make no item; the command reports each such row. The two
subtests differ in where the *small* numbers (1 to ``small_max`` = 3,
those most frequent in pretraining text) go:

* **easy**: the caption has a small count, the foil a count in ``small_max+1 .. max_count``;
* **difficult**: the caption has a larger count, the foil a small one,

so a model biased towards small numbers is right on easy and wrong on difficult items. Numbers
are spelled ("three") or digits; with a count of one, the counted noun loses its plural -s
("exactly one time", "exactly one pull-up").

**Foil count** (ViLMA's ``count_repetitions`` and ``make_choices``): drawn, independently of the
caption's count, with probability proportional to how many windows hold each count across
*every* window of *every* video (a video of R repetitions has R - N + 1 windows of N, for N up
to ``max_count``), restricted to the other subtest's range: :func:`window_counts` tallies the
windows, :func:`foil_count_weights` restricts and normalises, :func:`counting_pair` draws. The
caption's own count is never drawn, the two ranges being disjoint. ViLMA has no uniform draw.

**Windows** (ViLMA's ``tasks/counting/create_instrument.py``): QUVA annotates each video with
the frame at which every repetition ends (``annotations/<video>.npy``). ViLMA rescales these
frames to 30 fps (the frame rate it re-encodes the videos at), puts a boundary at frame 0 before
the first end point, and cuts a window ``[boundary t, boundary t+N]`` holding exactly the N
repetitions between them. A video's candidate windows are every such window whose N is in the
subtest's range (1 to ``small_max`` for easy, ``small_max+1`` to ``max_count`` for difficult,
and at most the video's repetitions); ten are drawn per video without replacement, or, when a
video has fewer, all of them plus draws with replacement up to ten. The published items give
the window in frames ("pts", 30 fps) and in seconds (frames / 30, four decimals).
"""

from __future__ import annotations

import os
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from foilkit.generation.foil import Foil

RULE = "vilma.counting"
FOIL_TYPE = "counting"
PLACEHOLDER = "<number>"
SMALL_MAX = 3
MAX_COUNT = 10
SUBTESTS = ("easy", "difficult")
ANNOTATION_FPS = 30.0  # ViLMA's normalize_annotations.py rescales QUVA's frames to 30 fps
WINDOWS_PER_VIDEO = 10  # ViLMA: 1000 items per subtest // 100 QUVA videos
SECONDS_DECIMALS = 4  # ViLMA's convert2seconds.py rounds the seconds to four places

_SPELLED = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
).split()


def spell_number(number: int) -> str:
    if not 0 <= number < len(_SPELLED):
        raise ValueError(f"can only spell 0..{len(_SPELLED) - 1}, got {number}")
    return _SPELLED[number]


def fill_count_template(
    template: str, number: int, *, spelled: bool = True, singular_template: str | None = None
) -> str:
    """``template`` with its ``<number>`` filled.

    For one, ``singular_template`` (ViLMA's hand-written singular form, e.g. from
    ``quva-templates-processed.json``) is used when given; otherwise the word after the number
    loses its plural -s.
    """
    if number == 1 and singular_template is not None:
        template = singular_template
    if template.count(PLACEHOLDER) != 1:
        raise ValueError(f"template must contain {PLACEHOLDER} once: {template!r}")
    text = template.replace(PLACEHOLDER, spell_number(number) if spelled else str(number))
    if number == 1 and singular_template is None:  # "exactly one lunges" -> "exactly one lunge"
        word = re.escape(spell_number(1) if spelled else "1")
        text = re.sub(rf"\b({word} [\w-]+?[^s])s\b", r"\1", text, count=1)
    return text


def counting_subtest(count: int, *, small_max: int = SMALL_MAX) -> str:
    """``"easy"`` for a small true count, ``"difficult"`` otherwise."""
    return "easy" if count <= small_max else "difficult"


def subtest_counts(
    subtest: str, *, small_max: int = SMALL_MAX, max_count: int = MAX_COUNT
) -> range:
    """The true counts of a subtest's captions: ``1..small_max`` (easy) or the rest."""
    if subtest not in SUBTESTS:
        raise ValueError(f"subtest must be one of {SUBTESTS}, got {subtest!r}")
    return range(1, small_max + 1) if subtest == "easy" else range(small_max + 1, max_count + 1)


def foil_counts(count: int, *, small_max: int = SMALL_MAX, max_count: int = MAX_COUNT) -> list[int]:
    """The counts a foil may take for a caption with ``count``: the other subtest's range."""
    if not 1 <= count <= max_count:
        raise ValueError(f"count {count} is outside 1..{max_count}")
    other = "difficult" if counting_subtest(count, small_max=small_max) == "easy" else "easy"
    return list(subtest_counts(other, small_max=small_max, max_count=max_count))


def window_counts(repetitions: Iterable[int], *, max_count: int = MAX_COUNT) -> dict[int, int]:
    """Count N -> how many windows of N consecutive repetitions (N in 1..``max_count``) videos
    with the given numbers of repetitions have: ``R - N + 1`` for a video of R (ViLMA's
    ``count_repetitions`` over every annotation file). Counts no window holds are left out."""
    counts: dict[int, int] = {}
    for total in repetitions:
        if total < 0:
            raise ValueError(f"a video cannot have {total} repetitions")
        for count in range(1, min(total, max_count) + 1):
            counts[count] = counts.get(count, 0) + total - count + 1
    return dict(sorted(counts.items()))


def foil_count_weights(
    counts: Mapping[int, int],
    subtest: str,
    *,
    small_max: int = SMALL_MAX,
    max_count: int = MAX_COUNT,
) -> dict[int, float]:
    """The probability of each foil count for the captions of ``subtest``.

    ``counts`` maps a count to how often it occurs: over every window of every video
    (:func:`window_counts`, as ViLMA), or over a set of items (``Counter`` of their counts).
    Only the foils' range, the other subtest's, is kept, and normalised: ViLMA's
    ``make_choices`` over its ``count_dict`` filtered per subtest. Counts that never occur get
    no weight, as they are not among ViLMA's choices.
    """
    if subtest not in SUBTESTS:
        raise ValueError(f"subtest must be one of {SUBTESTS}, got {subtest!r}")
    other = "difficult" if subtest == "easy" else "easy"
    allowed = subtest_counts(other, small_max=small_max, max_count=max_count)
    negative = {count: n for count, n in counts.items() if n < 0}
    if negative:
        raise ValueError(f"frequencies must not be negative, got {negative}")
    kept = {count: counts[count] for count in sorted(counts) if count in allowed and counts[count]}
    total = sum(kept.values())
    if not total:
        raise ValueError(
            f"no window or item with a count in {allowed.start}..{allowed.stop - 1} to weight "
            f"the foil counts of {subtest!r} captions by (frequencies: {dict(counts)})"
        )
    return {count: n / total for count, n in kept.items()}


def counting_pair(
    template: str,
    count: int,
    *,
    rng: random.Random,
    foil_weights: Mapping[int, float],
    small_max: int = SMALL_MAX,
    max_count: int = MAX_COUNT,
    spelled: bool = True,
    singular_template: str | None = None,
) -> tuple[str, Foil] | None:
    """The caption and foil for a video whose action happens ``count`` times, or ``None`` when
    the count exceeds ``max_count`` (or is below one).

    The foil's count is drawn with ``rng`` from ``foil_weights`` (count -> weight, from
    :func:`foil_count_weights` for the caption's subtest); a weighted count outside the
    caption's foil range (:func:`foil_counts`) raises ``ValueError``.
    """
    if not 1 <= count <= max_count:
        return None
    allowed = foil_counts(count, small_max=small_max, max_count=max_count)
    stray = sorted(set(foil_weights) - set(allowed))
    if stray:
        raise ValueError(
            f"foil_weights give counts {stray} outside the foil range {allowed} of a caption "
            f"counting {count}"
        )
    choices = sorted(foil_weights)
    weights = [float(foil_weights[choice]) for choice in choices]
    if any(weight < 0 for weight in weights) or not sum(weights) > 0:
        raise ValueError(f"foil_weights must be >= 0 with a positive sum, got {foil_weights}")
    foil_count = rng.choices(choices, weights=weights)[0]
    fill = {"spelled": spelled, "singular_template": singular_template}
    caption = fill_count_template(template, count, **fill)
    foil = Foil(
        fill_count_template(template, foil_count, **fill),
        FOIL_TYPE,
        RULE,
        parameters={
            "subtest": counting_subtest(count, small_max=small_max),
            "small_max": small_max,
            "max_count": max_count,
            "spelled": spelled,
            "foil_count_weights": {str(choice): w for choice, w in zip(choices, weights)},
        },
        source={"template": template, "count": count, "foil_count": foil_count},
    )
    return caption, foil


@dataclass(frozen=True)
class CountingWindow:
    """A clip of a video holding exactly ``count`` repetitions: frames ``start_pts`` to
    ``end_pts`` of a video (or annotation) at ``fps`` frames per second."""

    start_pts: int
    end_pts: int
    count: int
    fps: float

    @property
    def start(self) -> float:
        """The window's start in seconds, rounded as ViLMA's ``-sec`` files are."""
        return round(self.start_pts / self.fps, SECONDS_DECIMALS)

    @property
    def end(self) -> float:
        """The window's end in seconds, rounded as ViLMA's ``-sec`` files are."""
        return round(self.end_pts / self.fps, SECONDS_DECIMALS)


def repetition_boundaries(ends: Sequence[int]) -> list[int]:
    """Frame 0 followed by the frames at which each repetition ends: repetition ``i`` (from 1)
    lies between boundaries ``i-1`` and ``i``. The end points must increase strictly."""
    boundaries = [0, *(int(end) for end in ends)]
    for index in range(1, len(boundaries)):
        if boundaries[index] <= boundaries[index - 1]:
            raise ValueError(
                f"repetition end points must increase strictly from frame 1: end point "
                f"{index - 1} is {boundaries[index]} after {boundaries[index - 1]}"
            )
    return boundaries


def windows_with_count(ends: Sequence[int], count: int, *, fps: float) -> list[CountingWindow]:
    """Every window holding exactly ``count`` consecutive repetitions of a video whose
    repetitions end at frames ``ends``, in order of start."""
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count}")
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    boundaries = repetition_boundaries(ends)
    return [
        CountingWindow(boundaries[first], boundaries[first + count], count, fps)
        for first in range(len(boundaries) - count)
    ]


def candidate_windows(
    ends: Sequence[int],
    subtest: str,
    *,
    fps: float,
    small_max: int = SMALL_MAX,
    max_count: int = MAX_COUNT,
) -> list[CountingWindow]:
    """ViLMA's candidate windows of a video for ``subtest``: every window of N consecutive
    repetitions with N in the subtest's range, ordered by start, then N (ViLMA's order)."""
    counts = subtest_counts(subtest, small_max=small_max, max_count=max_count)
    windows = [window for count in counts for window in windows_with_count(ends, count, fps=fps)]
    return sorted(windows, key=lambda window: (window.start_pts, window.count))


def sample_windows(
    ends: Sequence[int],
    subtest: str,
    *,
    fps: float,
    rng: random.Random,
    per_video: int = WINDOWS_PER_VIDEO,
    small_max: int = SMALL_MAX,
    max_count: int = MAX_COUNT,
) -> list[CountingWindow]:
    """The windows of one video for ``subtest``, chosen as ViLMA chooses them.

    ``per_video`` candidates are drawn without replacement; a video with fewer candidates gives
    all of them (in :func:`candidate_windows` order) followed by draws with replacement up to
    ``per_video``. A video with no candidate (fewer repetitions than the subtest's smallest
    count) gives none.
    """
    if per_video < 1:
        raise ValueError(f"per_video must be >= 1, got {per_video}")
    candidates = candidate_windows(ends, subtest, fps=fps, small_max=small_max, max_count=max_count)
    if not candidates:
        return []
    if len(candidates) >= per_video:
        return rng.sample(candidates, per_video)
    return candidates + rng.choices(candidates, k=per_video - len(candidates))


def normalize_frames(
    ends: Sequence[int], fps: float, *, target_fps: float = ANNOTATION_FPS
) -> list[int]:
    """Frame indices of a video at ``fps`` as frames at ``target_fps`` (ViLMA's
    ``normalize_annotations.py``: rescale, round to the nearest frame)."""
    if fps <= 0 or target_fps <= 0:
        raise ValueError(f"frame rates must be positive, got fps={fps}, target_fps={target_fps}")
    return [round(int(end) / fps * target_fps) for end in ends]


def read_quva_annotations(folder: str | os.PathLike) -> dict[str, list[int]]:
    """QUVA's repetition annotations: ``<video>.npy`` files (as QUVA ships them, one 1-D array
    of the frames at which each repetition ends) -> video name (the file's stem) -> frames.

    Raises ``ValueError`` naming the file when an array is not 1-D, holds a non-integral
    frame, or does not increase strictly; ``FileNotFoundError`` when the folder has no file.
    """
    import numpy as np

    folder = Path(folder)
    paths = sorted(folder.glob("*.npy"))
    if not paths:
        raise FileNotFoundError(f"no QUVA annotation (*.npy) in {folder}")
    annotations = {}
    for path in paths:
        frames = np.load(path, allow_pickle=False)
        if frames.ndim != 1:
            raise ValueError(f"{path}: expected a 1-D array of frames, got shape {frames.shape}")
        if frames.size and not np.array_equal(frames, np.round(frames)):
            raise ValueError(f"{path}: frames must be whole numbers, got {frames.tolist()}")
        ends = [int(frame) for frame in frames]
        try:
            repetition_boundaries(ends)
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None
        annotations[path.stem] = ends
    return annotations
