"""TOMATO: rows from the published questions (counts, prompt, options), and the metric against a
port of the official ``get_categorized_score.py`` (``tests/port_tomato.py``) on the same
predictions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from foilkit.builders import get_benchmark, load_builder
from foilkit.builders.annotations import AnnotationError
from foilkit.builders.tomato import REASONING_TYPES
from foilkit.metrics import metric_function
from tests import port_tomato as port

#: Questions per reasoning type in the published files (1,484 in all, as the paper counts).
PUBLISHED = {
    "count": 292,
    "direction": 403,
    "rotation": 286,
    "shape_trend": 223,
    "velocity_frequency": 210,
    "visual_cues": 70,
}


def _rows(annotations: Path, config: str = "all") -> list[dict]:
    builder = load_builder("tomato", config, annotations=annotations)
    (generator,) = builder._split_generators(None)
    return list(builder._rows(generator.gen_kwargs["files"]))


@pytest.fixture(scope="module")
def rows(shared_data: Path) -> list[dict]:
    return _rows(shared_data / "tomato")


def _published(shared_data: Path, name: str) -> dict:
    return json.loads(
        (shared_data / "tomato" / "data" / f"{REASONING_TYPES[name]}.json").read_text()
    )


def test_every_published_question_is_a_row(rows, shared_data: Path):
    assert len(rows) == sum(PUBLISHED.values()) == 1484
    assert len({row["id"] for row in rows}) == len(rows)
    for name, count in PUBLISHED.items():
        published = _published(shared_data, name)
        ours = [row for row in rows if row["reasoning_type"] == name]
        assert len(ours) == len(published) == count, name
        for row, (question_id, item) in zip(ours, published.items(), strict=True):
            assert row["id"] == f"{name}-{question_id}"
            assert (row["question"], row["options"], row["label"]) == (
                item["question"],
                item["options"],
                item["answer"],
            )
            assert row["video_path"] == f"{item['demonstration_type']}/{item['key']}.mp4"
            assert row["motion_type"] == item["motion_type"]
            assert {v: row[v] for v in item["variation"]} == {
                v: bool(flag) for v, flag in item["variation"].items()
            }
    # one config per reasoning type holds that type's questions
    builder = load_builder("tomato", "visual_cues", annotations=shared_data / "tomato")
    assert builder.count_rows() == {"test": PUBLISHED["visual_cues"]}


def test_rows_ask_the_official_prompt_with_lettered_options(rows):
    for row in rows:
        prompt, letters, index2ans = port.construct_prompt(row["question"], row["options"], 16)
        assert row["prompt"] == prompt, row["id"]
        assert row["option_labels"] == letters
        assert row["caption_answer"] == port.ground_truth(row["options"], row["label"])[0]
        assert row["caption"] == index2ans[row["caption_answer"]]
        assert [index2ans[letter] for letter in row["foil_answers"]] == row["foils"]
        assert row["needs_question"]
    assert {len(row["options"]) for row in rows} == {3, 4, 5, 6, 7}


def test_metric_equals_the_official_categorized_scores(rows):
    """Random option scores, every 9th item tied at the top: the response is the top option's
    letter (a tie parses to nothing, which never equals the answer); the port of
    get_categorized_score.py equals foilkit's accuracy per reasoning type, per demonstration
    type and over all questions."""
    rng = np.random.default_rng(27)
    scores, results = [], {}
    stems = {name: stem for name, stem in REASONING_TYPES.items()}
    for index, row in enumerate(rows):
        option_scores = rng.random(len(row["options"])).round(2).tolist()
        if index % 9 == 0:  # a tie at the top, with the true option or between two others
            top = int(np.argmax(option_scores))
            partner = row["label"] if index % 2 and row["label"] != top else top - 1
            option_scores[partner] = option_scores[top]
        scores.append(option_scores)
        best = np.flatnonzero(np.array(option_scores) == max(option_scores))
        response = row["option_labels"][best[0]] if len(best) == 1 else ""
        key = (stems[row["reasoning_type"]], row["demonstration_type"])
        results.setdefault(key, []).append(
            {
                "id": row["question_id"],
                "response": response,
                "gt": port.ground_truth(row["options"], row["label"]),
            }
        )
    official = port.categorized_scores(results)
    spec = get_benchmark("tomato").metrics("all")[0]
    columns = {
        "caption_score": [s[r["label"]] for s, r in zip(scores, rows)],
        "foil_scores": [s[: r["label"]] + s[r["label"] + 1 :] for s, r in zip(scores, rows)],
        **{n: [r[n] for r in rows] for n in ("label", "reasoning_type", "demonstration_type")},
    }
    ours = metric_function(spec.metric)(
        **spec.inputs(columns), **spec.options, score_kind="probability", n_resamples=0
    )
    assert ours["n_tied"] > 0 and ours["n"] == 1484
    assert ours["accuracy"] == pytest.approx(official["model"]["model"], abs=1e-12)
    for name, stem in REASONING_TYPES.items():
        assert ours[f"accuracy_{name}"] == pytest.approx(
            official["reasoning_type"][stem], abs=1e-12
        ), name
        assert ours[f"n_{name}"] == PUBLISHED[name]
    assert set(official["demonstration_type"]) == {"human", "object", "simulated"}
    for name, value in official["demonstration_type"].items():
        assert ours[f"accuracy_{name}"] == pytest.approx(value, abs=1e-12), name


def test_the_benchmark_evaluates_all_six_types_in_one_config():
    spec = get_benchmark("tomato")
    assert spec.configs == (*REASONING_TYPES, "all") and spec.configs_for(None) == ("all",)
    assert spec.group_column == "reasoning_type"


QUESTION = {
    "question": "How many times?",
    "options": ["1", "2", "3"],
    "answer": 1,
    "key": "0001-00",
    "video_source_url": "",
    "motion_type": "count",
    "variation": {"counterfactual": 0, "composite": 0, "zoom": 0, "first_person": 0},
    "demonstration_type": "human",
    "note": "",
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"answer": 3}, r"count.json, row 0: field 'answer' is 3, not an index of the 3 options"),
        (
            {"options": ["1"], "answer": 0},
            r"count.json, row 0: field 'options' lists 1 option\(s\)",
        ),
        ({"options": ["1", ""]}, r"row 0: field 'options\[1\]' is empty"),
        (
            {"demonstration_type": "robot"},
            r"row 0: field 'demonstration_type' is 'robot', not one of",
        ),
        ({"key": "../0001-00"}, r"row 0: field 'key' is '../0001-00': a video must be a relative"),
        (
            {"variation": {"counterfactual": 2}},
            r"row 0: field 'variation.counterfactual' is 2, not 0 or 1",
        ),
        ({"question": None}, r"row 0: field 'question' is not a text"),
    ],
)
def test_bad_annotations_name_file_row_and_field(tmp_path: Path, change: dict, message: str):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "count.json").write_text(json.dumps({"0": QUESTION | change}))
    with pytest.raises(AnnotationError, match=message):
        _rows(tmp_path, "count")
