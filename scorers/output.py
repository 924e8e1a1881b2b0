"""Turning gathered records into the per-sample score ``Dataset`` and its files.

Columns (one row per dataset row, in dataset order): ``id``, ``caption_score``,
``foil_scores``, for ViLMA ``proficiency_caption_score`` and ``proficiency_foil_scores``,
``score_kind``, ``frame_indices``, ``error`` and ``error_cause``; the adapter's per-text details as
``caption_<name>`` / ``foil_<name>`` (e.g. ``caption_logprob_sum``); in ``generate`` mode the
answers behind the scores, one entry per (option order, sample), order-major: ``answers`` (the
text), ``answer_outcomes`` (``parsed``, ``unparseable``, ``refused``) and ``answer_choices``
(the index of the text chosen among caption then foils; null where none), and, where an LLM
judge ran (:mod:`foilkit.scorers.judge`), ``answer_judge_replies`` and ``answer_judge_verdicts``
(null for an answer it was not asked about); then every column
of the input dataset except its videos (``video``, a pair's ``foil_video``), copied through.

Rows with a video foil (the pair shape: Vinoground) add the foil video's scores of the same
texts, ``foil_video_caption_score`` and ``foil_video_foil_scores`` (with its details
``foil_video_caption_<name>`` / ``foil_video_foil_<name>``), and ``foil_video_frame_indices``:
with the video's ``caption_score`` / ``foil_scores``, the item's 2x2 score matrix. Datasets
without video foils get none of these columns. Where a pair row asked Vinoground's video-score
question (:mod:`foilkit.scorers.video_question`), its 2x2 block for the video score is
``video_question_caption_score`` / ``video_question_foil_scores`` (each text's score for the
answer naming the video) and ``foil_video_question_caption_score`` /
``foil_video_question_foil_scores`` (for the answer naming the foil video), with their details,
``video_question_answers`` (and outcomes, choices: 0 the video, 1 the foil video) in generate
mode, and ``video_question_frames``: each joined view's sampled frames in its first video, its
separator and its second video.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from foilkit.files import atomic_open
from foilkit.scorers.parsers import OUTCOMES
from foilkit.video_paths import VIDEO_COLUMNS

#: Per-text details (``caption_<detail>``, ``foil_<detail>``) of choice and generate mode: the
#: text's letter probability, or the share of answers choosing it, in option order ``k``
#: (``order_<k>``), and in generate mode the share in sample ``s`` (``sample_<s>``).
ORDER_DETAIL, SAMPLE_DETAIL = "order_", "sample_"

GROUP_PREFIX = {
    "main": "",
    "proficiency": "proficiency_",
    "foil_video": "foil_video_",
    "video_question": "video_question_",
    "foil_video_question": "foil_video_question_",
}
#: Per-row lists of frame indices: the video's, and a pair row's foil video's.
FRAME_COLUMNS = ("frame_indices", "foil_video_frame_indices")
#: A pair row's video question: the sampled frames of each joined view's first video, separator
#: and second video (the video first, then the foil video first).
JOINED_FRAMES = "video_question_frames"


def score_columns(
    records: Sequence[dict[str, Any]], groups: Sequence[str], score_kind: str
) -> dict[str, list]:
    """Flat per-sample columns from records (rows with an error get ``None`` scores)."""
    details = sorted(
        {(group, name) for r in records for group, names in r["details"].items() for name in names}
    )
    columns: dict[str, list] = {"id": [r["id"] for r in records]}
    for group in groups:
        prefix = GROUP_PREFIX[group]
        scores = [r["scores"].get(group) for r in records]
        columns[f"{prefix}caption_score"] = [s[0] if s else None for s in scores]
        columns[f"{prefix}foil_scores"] = [s[1:] if s else None for s in scores]
    columns["score_kind"] = [score_kind] * len(records)
    columns["frame_indices"] = [r["frame_indices"] for r in records]
    if "foil_video" in groups:
        columns["foil_video_frame_indices"] = [r.get("foil_video_frame_indices") for r in records]
    if "video_question" in groups:
        columns[JOINED_FRAMES] = [r.get(JOINED_FRAMES) for r in records]
    columns["error"] = [r["error"] for r in records]
    columns["error_cause"] = [error_cause(r) for r in records]
    for group, name in details:
        values = [r["details"].get(group, {}).get(name) for r in records]
        prefix = GROUP_PREFIX[group]
        columns[f"{prefix}caption_{name}"] = [v[0] if v else None for v in values]
        columns[f"{prefix}foil_{name}"] = [v[1:] if v else None for v in values]
    for group in groups:
        if not any(group in r.get("answers", {}) for r in records):
            continue
        answers = [r.get("answers", {}).get(group) for r in records]
        judged = any(answer.get("judge_reply") is not None for a in answers for answer in a or ())
        for column, key in (ANSWER_COLUMNS | (JUDGE_COLUMNS if judged else {})).items():
            columns[GROUP_PREFIX[group] + column] = [
                None if a is None else [answer.get(key) for answer in a] for a in answers
            ]
    return columns


#: Generate mode's per-answer columns (without the group prefix) and the answer field each holds.
ANSWER_COLUMNS = {"answers": "text", "answer_outcomes": "outcome", "answer_choices": "choice"}
#: ... and the LLM judge's, where one ran.
JUDGE_COLUMNS = {"answer_judge_replies": "judge_reply", "answer_judge_verdicts": "judge_verdict"}


def unanswered_rows(columns: Mapping[str, Sequence[Any]], group: str = "main") -> list[bool] | None:
    """Per row of per-sample ``columns``, whether every generated answer of ``group`` chose no
    text (unparseable, refused, or judged to match none): its texts all score 0, a tie that is
    no equal judgement of two texts. ``None`` where ``group`` has no answers (not generate
    mode)."""
    column = GROUP_PREFIX[group] + "answer_choices"
    if column not in columns:
        return None
    return [
        bool(choices) and all(choice is None for choice in choices) for choices in columns[column]
    ]


def answer_outcomes(records: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How many generated answers each outcome had (``parsed`` by the rules, ``judged``,
    ``unparseable``, ``refused``; every outcome, zeros too), over the scored rows' answers."""
    counts = Counter(
        answer["outcome"]
        for r in records
        for answers in r.get("answers", {}).values()
        for answer in answers
    )
    return {outcome: counts.get(outcome, 0) for outcome in OUTCOMES}


def error_cause(record: dict[str, Any]) -> str | None:
    """Why a record's row failed, in a few words (``None``: it was scored). Rows scored before
    causes were recorded (shards of an older run, resumed) have the cause ``unrecorded``."""
    if not record["error"]:
        return None
    return record.get("error_cause") or "unrecorded"


def error_causes(records: Sequence[dict[str, Any]]) -> dict[str, int]:
    """How many records failed for each cause, most frequent first."""
    counts = Counter(error_cause(r) for r in records if r["error"])
    return dict(counts.most_common())


def scores_dataset(
    records: Sequence[dict[str, Any]], groups: Sequence[str], score_kind: str, source: Any
) -> Any:
    """The per-sample ``datasets.Dataset``: score columns, then ``source``'s metadata columns."""
    import datasets

    columns = score_columns(records, groups, score_kind)
    features = {}
    for name in columns:
        if name in ("id", "score_kind", "error", "error_cause"):
            features[name] = datasets.Value("string")
        elif name in FRAME_COLUMNS or name.endswith("answer_choices"):
            features[name] = datasets.List(datasets.Value("int64"))
        elif name == JOINED_FRAMES:
            features[name] = datasets.List(datasets.List(datasets.Value("int64")))
        elif name.endswith(("answers", "answer_outcomes", *JUDGE_COLUMNS)):
            features[name] = datasets.List(datasets.Value("string"))
        elif _unprefixed(name).startswith("foil_"):
            features[name] = datasets.List(datasets.Value("float64"))
        else:
            features[name] = datasets.Value("float64")
    scores = datasets.Dataset.from_dict(columns, features=datasets.Features(features))
    metadata = source.remove_columns(
        [c for c in source.column_names if c in VIDEO_COLUMNS or c in columns]
    )
    if not metadata.column_names:
        return scores
    return datasets.concatenate_datasets([scores, metadata.flatten_indices()], axis=1)


def _unprefixed(name: str) -> str:
    """A score column's name without its text group's prefix (the longest that fits)."""
    for prefix in sorted(GROUP_PREFIX.values(), key=len, reverse=True):
        if prefix and name.startswith(prefix):
            return name.removeprefix(prefix)
    return name


def write_jsonl(dataset: Any, path: Path) -> None:
    """One JSON object per row, exact floats, written atomically; valid JSON on every line.

    Scores are finite (the engine makes a non-finite one a row error); a NaN or infinity in a
    column copied through from the input dataset is written as ``null``, JSON having no NaN.
    """
    with atomic_open(path, "w") as handle:
        for row in dataset.to_list():
            handle.write(json.dumps(_finite(row), default=str, allow_nan=False) + "\n")


def _finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float inside it replaced by ``None``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value
