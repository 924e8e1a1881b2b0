"""Planning a scoring run: the unique views and texts of a dataset, grouped by video file.

Nothing is decoded here. Rows that show the same window of the same file share a view;
views of the same file (windows, reversed copies, ViLMA's main and proficiency items) form
one ``DecodeUnit``, so each file is opened and decoded once per run.

A row with a video foil (the pair shape of :mod:`foilkit.builders.schema`: Vinoground) has a
second view, ``foil_view``, scored against the row's main texts as the text group
``foil_video``; its two files join one unit (units sharing a file merge), so the row's four
scores come from one batch while each file is still decoded once.

Planned with ``video_question`` (a video LLM asked questions, ``choice`` or ``generate`` mode), a
pair row also asks the video question a benchmark declares (Vinoground's video-score question):
which segment of a video made of its two videos (:mod:`foilkit.scorers.video.joined`, black
frames between them) a caption describes. Its
two joined views (the video first, then the foil video first) belong to the row's unit and are
built from the same decode of each file; the answers fill the text groups
:data:`VIDEO_QUESTION_GROUPS` (:mod:`foilkit.scorers.video_question`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from foilkit.answers import JOINED_VIDEO
from foilkit.scorers.prompts import caption_question
from foilkit.scorers.video import VideoView
from foilkit.scorers.video.joined import JoinedView
from foilkit.video_paths import RootsGiven, named_roots, resolve_video_path

# Each text group is scored as a unit: a true text first, then its foils.
TEXT_GROUPS = {
    "main": ("caption", "foils"),
    "proficiency": ("proficiency_caption", "proficiency_foils"),
}
#: Columns of a main text group asked as a question (TempCompass): the item's own prompt, and how
#: an answer names the caption and each foil.
QUESTION_COLUMNS = ("prompt", "caption_answer", "foil_answers")
#: The question and ground-truth answer a benchmark's official LLM judge is shown (TempCompass),
#: read where a row has them (:mod:`foilkit.scorers.judge`).
JUDGE_COLUMNS = ("judge_question", "judge_answer")
#: The text group of a row's foil video: its main texts (caption, foils) against the second view.
FOIL_VIDEO_GROUP = "foil_video"
#: The text groups of a pair row's video question: its texts' scores as the answer naming the
#: video, and as the answer naming the foil video (one question per text, both videos shown).
VIDEO_QUESTION_GROUP, FOIL_VIDEO_QUESTION_GROUP = "video_question", "foil_video_question"
VIDEO_QUESTION_GROUPS = (VIDEO_QUESTION_GROUP, FOIL_VIDEO_QUESTION_GROUP)
#: The pair shape's columns the planner reads: the foil video and its window.
FOIL_VIDEO_PLAN_COLUMNS = ("foil_video", "foil_start", "foil_end")
PLAN_COLUMNS = (
    ("id", "video", "start", "end", "reversed", "time_unit")
    + tuple(c for pair in TEXT_GROUPS.values() for c in pair)
    + QUESTION_COLUMNS
    + JUDGE_COLUMNS
    + FOIL_VIDEO_PLAN_COLUMNS
)
#: A row whose ``time_unit`` is one of these gave its window as frame indices (ViLMA's Action
#: Counting Easy, ``pts`` = frames of the 30 fps QUVA copies): ViLMA slices those frames
#: ``[start, end)`` rather than calling ``read_video``, so the window stays half-open whatever
#: rule the protocol names.
FRAME_INDEX_UNITS = ("pts",)


@dataclass(frozen=True)
class PlannedRow:
    """One dataset row: its view (``None`` for text-only models or a missing video), text
    groups and, where the row asks its main group as a question, the question and the answer
    naming each of the group's texts."""

    index: int
    id: str
    view: str | None
    groups: Mapping[str, tuple[str, ...]]
    error: str | None = None
    foil_view: str | None = None
    question: str | None = None
    answers: tuple[str, ...] | None = None
    reference: tuple[str, str] | None = None
    #: the joined views of its video question: the video first, then the foil video first
    joined_views: tuple[str, ...] = ()

    def asked(self, group: str) -> tuple[str | None, tuple[str, ...] | None]:
        """(question, answers) of text group ``group``; ``(None, None)`` for texts scored
        alone. A pair row's foil video is asked its main group's question too."""
        asks = group in ("main", FOIL_VIDEO_GROUP)
        return (self.question, self.answers) if asks else (None, None)

    def judged(self, group: str) -> tuple[str, str] | None:
        """What the official LLM judge is shown about text group ``group``'s answers (the
        question and its ground-truth answer); ``None`` for texts asked no question."""
        return self.reference if self.asked(group)[0] is not None else None

    def view_of(self, group: str) -> str | None:
        """The view text group ``group`` is scored against: the foil video's for
        :data:`FOIL_VIDEO_GROUP`, else the row's video."""
        return self.foil_view if group == FOIL_VIDEO_GROUP else self.view

    @property
    def views(self) -> tuple[str, ...]:
        """The row's views (its video's, then its foil video's), each once."""
        return tuple(dict.fromkeys(v for v in (self.view, self.foil_view) if v is not None))


@dataclass
class DecodeUnit:
    """All views of one video file, and the rows that use them: decoded together, exactly once.

    ``source`` is the file; a unit joined by rows with a video foil holds the views of several
    files (``source``: the first), each file still decoded once.
    """

    source: str | None
    views: list[str] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    #: joined views of its rows' video questions (``ScoringPlan.joined``), built from its files
    joined: list[str] = field(default_factory=list)


@dataclass
class ScoringPlan:
    rows: list[PlannedRow]
    views: dict[str, VideoView]
    units: list[DecodeUnit]
    joined: dict[str, JoinedView] = field(default_factory=dict)

    def texts(self, units: Iterable[DecodeUnit] | None = None) -> list[str]:
        """Unique texts of ``units`` (all by default), in first-seen order."""
        rows = (
            self.rows[i] for unit in (self.units if units is None else units) for i in unit.rows
        )
        return list(
            dict.fromkeys(text for row in rows for group in row.groups.values() for text in group)
        )

    def batches(self, batch_size: int) -> list[list[DecodeUnit]]:
        """Consecutive units grouped into batches of at least ``batch_size`` rows (the last may be
        smaller)."""
        batches: list[list[DecodeUnit]] = [[]]
        for unit in self.units:
            if sum(len(u.rows) for u in batches[-1]) >= batch_size:
                batches.append([])
            batches[-1].append(unit)
        return [batch for batch in batches if batch]

    def pooled(self) -> ScoringPlan:
        """The retrieval plan: every row's view against the captions of all rows, in row order."""
        if any(row.foil_view is not None for row in self.rows):
            raise ValueError(
                "a retrieval pool scores one video per row; these rows have video foils "
                "(foil_video): score them per row (foilkit.score), not as a pool"
            )
        pool = {"pool": tuple(row.groups["main"][0] for row in self.rows)}
        rows = [replace(row, groups=pool) for row in self.rows]
        return ScoringPlan(rows, self.views, self.units, self.joined)


def view_key(view: VideoView, source_key: str | None = None) -> str:
    """A stable name for a view: its file (or bytes hash), window and direction; ``source_key``
    names the video instead of ``view.source_key`` (e.g. its content hash)."""
    window = "" if view.start is None and view.end is None else f"@{view.start}-{view.end}"
    if window and view.window_rule != "half-open":
        window += f"[{view.window_rule}]"
    return f"{source_key or view.source_key}{window}{':reversed' if view.reversed else ''}"


def _text_groups(row: Mapping[str, Any], index: int) -> dict[str, tuple[str, ...]]:
    groups = {}
    for name, (true_column, foils_column) in TEXT_GROUPS.items():
        true_text, foils = row.get(true_column), row.get(foils_column)
        if not true_text:
            if name == "main":
                raise ValueError(f"row {index} (id={row.get('id')!r}) has no {true_column!r}")
            continue
        foils = list(foils or [])
        if not all(isinstance(foil, str) and foil for foil in foils):
            raise ValueError(
                f"row {index} (id={row.get('id')!r}) has an empty or non-text entry in "
                f"{foils_column!r}: {foils!r}"
            )
        groups[name] = (true_text, *foils)
    return groups


def _question(row: Mapping[str, Any], index: int, size: int) -> dict[str, Any]:
    """The row's question and answers (:data:`QUESTION_COLUMNS`), one answer per main text;
    ``{}`` for a row that asks none."""
    prompt = row.get("prompt")
    if prompt is None:
        return {}
    answers = [row.get("caption_answer"), *(row.get("foil_answers") or [])]
    if len(answers) != size or not all(isinstance(a, str) and a for a in answers):
        raise ValueError(
            f"row {index} (id={row.get('id')!r}) asks a question ('prompt') but its "
            f"'caption_answer' and 'foil_answers' ({answers!r}) do not name its {size} texts"
        )
    asked: dict[str, Any] = {"question": prompt, "answers": tuple(answers)}
    reference = tuple(row.get(column) for column in JUDGE_COLUMNS)
    if all(isinstance(value, str) and value for value in reference):
        asked["reference"] = reference
    return asked


def _source(video: Any, roots: Sequence[Path] | None) -> str | bytes | None:
    """The file path or bytes of a ``Video`` cell (``decode=False``); a path must lie inside one
    of ``roots`` (:func:`foilkit.video_paths.resolve_video_path`; ``None``: unconfined).

    Raises :class:`foilkit.video_paths.VideoPathError` (a ``ValueError``) for a path outside
    every root, relative or absolute, before the file is opened: a row must not read files the
    user did not hand over.
    """
    if video is None:
        return None
    if isinstance(video, Mapping):
        if video.get("bytes") is not None:
            return video["bytes"]
        video = video.get("path")
        if not video:
            return None
    return str(resolve_video_path(video, roots))


def _window_error(row: Mapping[str, Any], prefix: str = "") -> str | None:
    """Why the row's ``start``/``end`` window (``prefix``: ``foil_`` for the foil video's) cannot
    be played (``None`` when it can)."""
    start_name, end_name = f"{prefix}start", f"{prefix}end"
    for name in (start_name, end_name):
        value = row.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"field {name!r} is not a number of seconds: {value!r}"
        if not value >= 0:  # NaN fails too
            return f"field {name!r} is {value!r}; a window bound must be a number >= 0"
    start, end = row.get(start_name), row.get(end_name)
    if start is not None and end is not None and end <= start:
        return f"field {end_name!r} is {end!r}, not after field {start_name!r} ({start!r})"
    return None


def _row_view(
    row: Mapping[str, Any],
    index: int,
    roots: Sequence[Path] | None,
    window_rule: str,
    foil: bool = False,
) -> tuple[VideoView | None, str | None]:
    """The row's view of its video (``foil``: of its foil video), or why there is none."""
    column, prefix = ("foil_video", "foil_") if foil else ("video", "")
    row_id = row["id"]
    try:
        source = _source(row.get(column), roots)
    except ValueError as problem:
        return None, f"row {index} (id={row_id!r}), field {column!r}: {problem}"
    window = _window_error(row, prefix)
    if window is not None:
        return None, f"row {index} (id={row_id!r}): {window}"
    if source is None:
        return None, f"row {index} (id={row_id!r}) has no {column.replace('_', ' ')}"
    rule = "half-open" if row.get("time_unit") in FRAME_INDEX_UNITS else window_rule
    start, end = row.get(f"{prefix}start"), row.get(f"{prefix}end")
    return VideoView(source, start, end, bool(row.get("reversed") or False), rule), None


def make_plan(
    rows: Iterable[Mapping[str, Any]],
    *,
    needs_video: bool = True,
    video_root: RootsGiven = None,
    window_rule: str = "half-open",
    video_question: bool = False,
) -> ScoringPlan:
    """Plan rows in the canonical schema (``id``, ``video``, ``start``, ``end``, ``reversed``,
    texts; the pair shape's ``foil_video``, ``foil_start``, ``foil_end``).

    ``video_root``: the folder(s) every video path must resolve inside (a row whose path does
    not gets a row error); ``None``: unconfined (:func:`foilkit.video_paths.video_roots_for`
    decides which, from what the user named). ``window_rule``
    (:data:`foilkit.scorers.video.WINDOW_RULES`) turns windows into frames, except for rows whose
    ``time_unit`` indexes frames (:data:`FRAME_INDEX_UNITS`). A row with a ``foil_video`` column
    (even ``None``: then the row fails, naming it) is a pair row (see the module docstring);
    ``video_question``: pair rows also ask the video question about their joined views.
    """
    roots = named_roots(video_root)
    planned: list[PlannedRow] = []
    views: dict[str, VideoView] = {}
    units = _Units()
    lone: list[DecodeUnit] = []  # rows decoded by no one: text-only models, missing videos
    joined: dict[str, JoinedView] = {}
    seen_ids: dict[str, int] = {}
    for index, row in enumerate(rows):
        row_id = str(row["id"])
        if row_id in seen_ids:
            raise ValueError(f"row {index}: id {row_id!r} repeats row {seen_ids[row_id]}")
        seen_ids[row_id] = index
        groups = _text_groups(row, index)
        asked = _question(row, index, len(groups["main"]))
        pair = "foil_video" in row
        if pair:
            groups[FOIL_VIDEO_GROUP] = groups["main"]
            if video_question:
                groups.update(dict.fromkeys(VIDEO_QUESTION_GROUPS, groups["main"]))
        if not needs_video:
            planned.append(PlannedRow(index, row_id, None, groups, **asked))
            lone.append(DecodeUnit(None, [], [index]))
            continue
        # a row whose video or window cannot be used fails alone, naming itself; the others plan
        row_views = [_row_view(row, index, roots, window_rule)]
        if pair:
            row_views.append(_row_view(row, index, roots, window_rule, foil=True))
        error = next((problem for _, problem in row_views if problem is not None), None)
        if error is not None:
            planned.append(PlannedRow(index, row_id, None, groups, error, **asked))
            lone.append(DecodeUnit(None, [], [index]))
            continue
        keys = []
        for view, _ in row_views:
            key = view_key(view)
            views.setdefault(key, view)
            keys.append(key)
        units.add(index, [(key, views[key].source_key) for key in keys])
        row_joined: tuple[str, ...] = ()
        if pair and video_question:  # the video shown first, then the foil video first
            gap = caption_question(JOINED_VIDEO).gap_seconds
            both = [JoinedView(a, b, gap) for a, b in (keys, keys[::-1])]
            joined.update((view.key, view) for view in both)
            row_joined = tuple(view.key for view in both)
        planned.append(
            PlannedRow(
                index,
                row_id,
                keys[0],
                groups,
                foil_view=keys[1] if pair else None,
                joined_views=row_joined,
                **asked,
            )
        )
    made = units.units()
    for unit in made:
        unit.joined = list(dict.fromkeys(k for i in unit.rows for k in planned[i].joined_views))
    return ScoringPlan(
        planned, views, sorted([*made, *lone], key=lambda unit: unit.rows[0]), joined
    )


class _Units:
    """The decode units of a plan: one per file, merged where a row's views lie in several files
    (a video and its foil video), so each file is decoded once and each row in one unit."""

    def __init__(self) -> None:
        self._of: dict[str, DecodeUnit] = {}  # file -> its unit

    def add(self, index: int, views: Sequence[tuple[str, str]]) -> None:
        """Row ``index`` uses ``views`` (view key, file)."""
        unit = None
        for _, source in views:
            found = self._of.get(source)
            if found is None or found is unit:
                continue
            if unit is None:
                unit = found
                continue
            unit.views += [view for view in found.views if view not in unit.views]
            unit.rows = sorted(unit.rows + found.rows)
            for file, owner in self._of.items():
                if owner is found:
                    self._of[file] = unit
        if unit is None:
            unit = DecodeUnit(views[0][1])
        for key, source in views:
            self._of[source] = unit
            if key not in unit.views:
                unit.views.append(key)
        unit.rows.append(index)

    def units(self) -> list[DecodeUnit]:
        return list({id(unit): unit for unit in self._of.values()}.values())
