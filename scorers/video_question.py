"""The video question of pair rows: which segment of the joined video a caption describes.

A pair row (video v0 with caption c0, foil video v1 with foil c1) asks, for each of its texts,
the question a benchmark declares for the :data:`~foilkit.answers.JOINED_VIDEO` role
(:func:`foilkit.scorers.prompts.caption_question`: Vinoground's video-score question) about
each of its two joined views (:mod:`foilkit.scorers.video.joined`): v0, black, v1 and v1,
black, v0. A request's two "texts" are the segments (answers ``A`` and ``B``), scored as any
question with its own answers is (``choice``: the letters' probabilities; ``generate``: the share
of answers naming each, read by the run's parser). Vinoground shows each pair in one order of
its files; foilkit asks both and averages, as its text question averages both option orders, so
position bias cancels.

The scores fill two text groups that mirror the row's ``main`` / ``foil_video`` groups:
``video_question`` holds, for each text, its score for the answer naming the video (v0), and
``foil_video_question`` for the answer naming the foil video (v1), each the mean over the two
joined views. So ``[[video_question], [foil_video_question]]`` is the item's 2x2 block for the
video score: s(v_i, c_j) = P(the question about c_j names v_i). Details: ``shown_first`` and
``shown_second``, the score from the joined view where that video comes first and from the one
where it comes second, and with several sampled answers ``sample_<s>``, sample ``s``'s score.
In ``generate`` mode every answer of the row's four questions is kept under ``video_question``
(text by text, the video-first view before the foil-video-first one), its ``choice`` the video
it named (0: the video, 1: the foil video).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from foilkit.answers import JOINED_VIDEO
from foilkit.scorers.generate import SAMPLE_DETAIL
from foilkit.scorers.plan import FOIL_VIDEO_QUESTION_GROUP, VIDEO_QUESTION_GROUP, PlannedRow
from foilkit.scorers.prompts import caption_question
from foilkit.scorers.requests import TextScores, TextsRequest
from foilkit.scorers.video.joined import PARTS, count_range, describe

#: The answers naming the joined view's segments, first then second.
SEGMENT_ANSWERS = ("A", "B")


def asks(row: PlannedRow) -> list[tuple[str, str]]:
    """The row's video questions as (joined view, text asked): each text about each view."""
    texts = row.groups.get(VIDEO_QUESTION_GROUP, ())
    return [(view, text) for text in texts for view in row.joined_views]


def request_key(view: str, text: str) -> tuple[Any, ...]:
    """The engine's key of the request asking about ``text`` on joined ``view`` (as the keys of
    other requests: view, texts, question, answers, the judge's reference: none here)."""
    asked = caption_question(JOINED_VIDEO)
    return (view, asked.options, asked.ask(text), SEGMENT_ANSWERS, None)


def request(frames: Any, timestamps: Any, text: str) -> TextsRequest:
    """The video question about ``text``, asked on a joined view's ``frames``."""
    asked = caption_question(JOINED_VIDEO)
    return TextsRequest(asked.options, frames, timestamps, asked.ask(text), SEGMENT_ANSWERS)


def combine(
    row: PlannedRow, results: Mapping[tuple[str, str], TextScores]
) -> dict[str, TextScores]:
    """The row's :data:`~foilkit.scorers.plan.VIDEO_QUESTION_GROUPS` from the answers to its
    questions (``results[(joined view, text)]``: the two segments' scores)."""
    texts = row.groups[VIDEO_QUESTION_GROUP]
    video_first, foil_first = row.joined_views

    def per_video(values) -> dict[int, tuple[tuple[float, ...], tuple[float, ...]]]:
        """Each video's (shown first, shown second) values per text, from ``values(result)``:
        a request's two segments' values."""
        # per video: the view showing it first (segment 0), the one showing it second
        shown = ((video_first, foil_first), (foil_first, video_first))
        return {
            video: tuple(
                tuple(values(results[view, text])[segment] for text in texts)
                for segment, view in enumerate(views)
            )
            for video, views in enumerate(shown)
        }

    def mean(pair: tuple[tuple[float, ...], tuple[float, ...]]) -> tuple[float, ...]:
        return tuple((a + b) / 2 for a, b in zip(*pair))

    scores = per_video(lambda result: result.scores)
    # several samples per question: each sample's shares, averaged over the views likewise
    samples = sorted(
        name for name in results[video_first, texts[0]].details if name.startswith(SAMPLE_DETAIL)
    )
    sampled = {name: per_video(lambda result, name=name: result.details[name]) for name in samples}
    groups = {}
    for video, group in enumerate((VIDEO_QUESTION_GROUP, FOIL_VIDEO_QUESTION_GROUP)):
        details = {"shown_first": scores[video][0], "shown_second": scores[video][1]}
        details |= {name: mean(values[video]) for name, values in sampled.items()}
        groups[group] = TextScores(mean(scores[video]), details)
    answers = []
    for text in texts:
        for order, (view, named) in enumerate(((video_first, (0, 1)), (foil_first, (1, 0)))):
            for answer in results[view, text].answers:
                choice = None if answer.choice is None else named[answer.choice]
                answers.append(replace(answer, choice=choice, order=order))
    if answers:
        groups[VIDEO_QUESTION_GROUP] = replace(groups[VIDEO_QUESTION_GROUP], answers=tuple(answers))
    return groups


def run_record(sampled: list[list[list[int]]]) -> dict[str, Any]:
    """How the video question was asked, for ``run.json``: the question, the joined views and,
    over the rows' joined views (``sampled[row][view]``: sampled frames in the first video, the
    separator, the second video), the range of each count."""
    counts = [view for row in sampled for view in row]
    asked = caption_question(JOINED_VIDEO)
    return {
        "question": asked.template,
        "options": list(asked.options),
        "answers": list(SEGMENT_ANSWERS),
        "views": ["video, separator, foil video", "foil video, separator, video"],
        "gap_seconds": asked.gap_seconds,
        "joined_view": describe(asked.gap_seconds),
        "sampled_frames": {
            part: count_range([view[i] for view in counts]) for i, part in enumerate(PARTS)
        },
        "scored": "each text's score for a video: the mean over both views of the probability "
        "(choice) or share of answers (generate) naming that video's segment",
    }
