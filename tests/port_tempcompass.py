"""A port of TempCompass' rule-based rating and statistics (llyx97/TempCompass@e1b4631), written
from reading ``eval_multi-choice.py``, ``eval_yes_no.py``, ``eval_caption_matching.py`` (run with
``--disable_llm``: an answer the rules cannot match is rated 0) and ``utils/eval_utils.py``
``print_result``, to test foilkit's metric against on the same inputs.

Input: predictions as the official scripts read them, ``{video id: {aspect: [{"question",
"answer", "prediction"}, ...]}}`` (a ``None`` prediction is a refusal: rated 0). Output: the
ratings in the same layout, and the statistics ``print_result`` prints (percentages rounded to
one decimal), plus the same numbers unrounded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ASPECTS = ("action", "direction", "speed", "order", "attribute_change")
DIMENSIONS = (
    "fine-grained action",
    "coarse-grained action",
    "object motion",
    "camera motion",
    "absolute speed",
    "relative speed",
    "order",
    "color & light change",
    "size & shape change",
    "combined change",
    "other change",
)


def rate_multi_choice(prediction: str, answer: str) -> int | None:
    """1/0 by the multi-choice rules; ``None`` when no rule matches."""
    letters = ("A", "B", "C", "D")
    if prediction == answer:
        return 1
    if prediction in letters:
        return int(prediction == answer[0])
    for closing in (".", ")"):
        if any(prediction.startswith(letter + closing) for letter in letters):
            return int(prediction.split(closing)[0] == answer[0])
    return None


def rate_yes_no(prediction: str, answer: str) -> int | None:
    """1/0 when the lower-cased prediction starts with yes or no; ``None`` otherwise."""
    lowered = prediction.lower()
    for word in ("yes", "no"):
        if lowered.startswith(word):
            return int(word == answer)
    return None


def rate_caption_matching(prediction: str, question: str, answer: str) -> int | None:
    """The caption-matching rules: the prediction must equal an option line, an option's
    sentence (also after a ``") "``), or an option's index with or without its word ("Caption
    A", "A"; full stops dropped); the last rule that matches decides which. ``None``: no match."""
    lines = question.split("\n")[1:]
    sentences = [line.split(": ")[1] for line in lines]
    names = [line.split(": ")[0] for line in lines]
    short = [
        name.replace("Sentence ", "").replace("Option ", "").replace("Caption ", "")
        for name in names
    ]
    chosen = None
    for line in lines:
        if line == prediction:
            chosen = line
    for sentence in sentences:
        after = prediction.split(") ")[1] if ") " in prediction else None
        if sentence == prediction or sentence == after:
            chosen = sentence
    for name in names + short:
        if name == prediction or name == prediction.replace(".", ""):
            chosen = name
    if chosen is None:
        return None
    accepted = (
        answer,
        answer.split(":")[0],
        answer.split(": ")[1],
        answer.split(": ")[0].split()[1],
    )
    return int(chosen in accepted)


def rate(task: str, prediction: str | None, question: str, answer: str) -> dict[str, Any]:
    """One rated prediction as the official scripts store it (``rating``, ``match_success``);
    ``--disable_llm``: an unmatched prediction is rated 0."""
    if prediction is None:
        return {"match_success": False, "rating": 0}
    prediction = prediction.replace("</s>", "").strip()
    if task == "multi_choice":
        rating = rate_multi_choice(prediction, answer)
    elif task == "yes_no":
        rating = rate_yes_no(prediction, answer)
    else:
        rating = rate_caption_matching(prediction, question, answer)
    return {"match_success": rating is not None, "rating": rating or 0}


def evaluate(task: str, predictions: dict[str, dict[str, list[dict[str, Any]]]]) -> dict:
    """Ratings of every prediction, in the predictions' layout."""
    return {
        video: {
            aspect: [rate(task, p["prediction"], p["question"], p["answer"]) for p in items]
            for aspect, items in by_aspect.items()
        }
        for video, by_aspect in predictions.items()
    }


def statistics(ratings: dict, meta_info: Path) -> dict[str, dict[str, float]]:
    """``print_result``: accuracy per aspect (with ``avg`` over all questions), per fine-grained
    dimension and the match rate, as percentages rounded to one decimal (``rounded``) and as
    fractions (``exact``)."""
    meta = json.loads(meta_info.read_text())
    correct_aspect = dict.fromkeys(ASPECTS, 0)
    count_aspect = dict.fromkeys(ASPECTS, 0)
    correct_dimension = dict.fromkeys(DIMENSIONS, 0)
    count_dimension = dict.fromkeys(DIMENSIONS, 0)
    matched = 0
    for video, by_aspect in ratings.items():
        for aspect, results in by_aspect.items():
            key = video.replace(".jpg", "").replace(".mp4", "")
            dimension = "order" if aspect == "order" else meta[key]["eval_dim"][aspect]["type"]
            for result in results:
                correct_aspect[aspect] += result["rating"]
                correct_dimension[dimension] += result["rating"]
                count_aspect[aspect] += 1
                count_dimension[dimension] += 1
                matched += result["match_success"]
    total = sum(count_aspect.values())
    sums = {"avg": (sum(correct_aspect.values()), total)}
    sums |= {a: (correct_aspect[a], count_aspect[a]) for a in ASPECTS if count_aspect[a]}
    sums |= {
        d: (correct_dimension[d], count_dimension[d]) for d in DIMENSIONS if count_dimension[d]
    }
    return {
        # print_result's own arithmetic: round(correct * 100 / count, 1)
        "rounded": {name: round(right * 100 / count, 1) for name, (right, count) in sums.items()},
        "exact": {name: right / count for name, (right, count) in sums.items()},
        "match_rate": round(matched / total * 100, 1),
    }
