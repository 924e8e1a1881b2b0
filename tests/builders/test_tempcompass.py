"""TempCompass: rows from the published questions, and the metric against a port of the official
rating and statistics (``tests/port_tempcompass.py``) on the same predictions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from foilkit.builders import get_benchmark, load_builder
from foilkit.builders.annotations import AnnotationError
from foilkit.builders.tempcompass.builder import ANSWER_PROMPTS, DIMENSIONS, TASK_FILES
from foilkit.metrics import metric_function
from tests import port_tempcompass as port

#: Questions per task type in the published files (7,540 in all, as the paper counts).
PUBLISHED = {"multi_choice": 1580, "yes_no": 2453, "caption_matching": 1503, "captioning": 2004}


def _rows(annotations: Path, config: str) -> list[dict]:
    builder = load_builder("tempcompass", config, annotations=annotations)
    (generator,) = builder._split_generators(None)
    kwargs = {k: v for k, v in generator.gen_kwargs.items() if k != "split"}
    return list(builder._rows(**kwargs))


@pytest.fixture(scope="module")
def rows(shared_data: Path) -> dict[str, list[dict]]:
    return {config: _rows(shared_data / "tempcompass", config) for config in TASK_FILES}


def test_every_published_question_is_a_row(rows, shared_data: Path):
    for config, stem in TASK_FILES.items():
        published = json.loads(
            (shared_data / "tempcompass" / "questions" / f"{stem}.json").read_text()
        )
        expected = [
            (video, aspect, item["question"], item["answer"])
            for video, by_aspect in published.items()
            for aspect, items in by_aspect.items()
            for item in items
        ]
        got = [(r["video_id"], r["aspect"], r["question"], r["answer"]) for r in rows[config]]
        assert got == expected and len(got) == PUBLISHED[config], config
        assert len({r["id"] for r in rows[config]}) == len(got)
        assert {r["video_path"] for r in rows[config]} == {f"{v}.mp4" for v in published}
        assert {r["dimension"] for r in rows[config]} == set(DIMENSIONS.values())


def test_rows_keep_the_options_in_published_order(rows):
    for config in ("multi_choice", "yes_no", "caption_matching", "captioning"):
        for row in rows[config]:
            options, label = row["options"], row["label"]
            assert row["caption"] == options[label]
            assert row["foils"] == options[:label] + options[label + 1 :]
            assert row["caption_answer"] == row["option_labels"][label]
            assert row["prompt"] == row["question"] + ANSWER_PROMPTS[config]
            assert row["needs_question"] == (config == "yes_no")
    first = rows["multi_choice"][0]
    assert first["id"] == "1034419625-action-0" and first["answer"] == "A. dunking a basketball"
    assert first["option_labels"] == ["A", "B", "C"] and first["caption"] == "dunking a basketball"
    assert first["prompt"].endswith(
        "C. passing a basketball\nPlease directly give the best option:"
    )
    # one of the two published option lines without the usual "X. " spacing
    odd = next(r for r in rows["multi_choice"] if r["id"] == "1022115337-order-1")
    assert "Both events happen at the same time" in odd["options"]
    matching = rows["caption_matching"][0]
    assert matching["option_labels"] == ["Option 1", "Option 2"] and matching["label"] == 1
    assert {r["option_labels"][0] for r in rows["caption_matching"]} == {
        "Caption A",
        "Sentence A",
        "Option 1",
    }


def _prediction(row: dict, choice: int, form: int) -> str:
    """An answer naming option ``choice`` in one of the forms the official rules accept."""
    name, text = row["option_labels"][choice], row["options"][choice]
    if row["task_type"] == "yes_no":
        return ("yes", "Yes.", "no", "No, it is not.")[form % 2 + 2 * (name == "no")]
    if row["task_type"] == "multi_choice":
        return (name, f"{name}. {text}", f"{name}) {text}")[form % 3]
    short = name.split()[-1]
    return (name, f"{name}: {text}", text, short)[form % 4]


@pytest.mark.parametrize("config", ["multi_choice", "yes_no", "caption_matching"])
def test_metric_equals_the_official_statistics(rows, shared_data: Path, config: str):
    """Random option scores, every 9th item tied at the top: the prediction is the top option's
    label (a tie gives none, which the official scripts rate 0 as an unanswered question); the
    official ratings and print_result equal foilkit's accuracy per aspect and dimension."""
    items = rows[config]
    rng = np.random.default_rng(7)
    scores, predictions = [], {}
    for index, row in enumerate(items):
        option_scores = rng.random(len(row["options"])).round(2).tolist()
        if index % 9 == 0:  # a tie at the top, with the true option or between foils
            top = int(np.argmax(option_scores))
            partner = row["label"] if index % 2 and row["label"] != top else top - 1
            option_scores[partner] = option_scores[top]
        scores.append(option_scores)
        best = np.flatnonzero(np.array(option_scores) == max(option_scores))
        prediction = _prediction(row, int(best[0]), index) if len(best) == 1 else None
        predictions.setdefault(row["video_id"], {}).setdefault(row["aspect"], []).append(
            {"question": row["question"], "answer": row["answer"], "prediction": prediction}
        )
    official = port.statistics(
        port.evaluate(config, predictions), shared_data / "tempcompass" / "meta_info.json"
    )
    assert official["match_rate"] < 100  # the ties went unanswered
    spec = get_benchmark("tempcompass").metrics(config)[0]
    columns = {
        "caption_score": [s[r["label"]] for s, r in zip(scores, items)],
        "foil_scores": [s[: r["label"]] + s[r["label"] + 1 :] for s, r in zip(scores, items)],
        **{name: [r[name] for r in items] for name in ("label", "aspect", "dimension")},
    }
    ours = metric_function(spec.metric)(
        **spec.inputs(columns), **spec.options, score_kind="probability", n_resamples=0
    )
    assert ours["n_tied"] > 0
    names = {"avg": "accuracy"} | {
        name: f"accuracy_{DIMENSIONS.get(name, name)}"
        for name in official["exact"]
        if name != "avg"
    }
    for name, key in names.items():
        assert ours[key] == pytest.approx(official["exact"][name], abs=1e-12), name
        assert round(ours[key] * 100, 1) == official["rounded"][name], name


def test_captioning_is_scored_only_with_a_judge_and_its_message_names_the_flags():
    spec = get_benchmark("tempcompass")
    assert "captioning" in spec.configs and spec.configs_for("all") == (
        "multi_choice",
        "yes_no",
        "caption_matching",
    )
    with pytest.raises(ValueError, match="captioning' needs an LLM judge: .*--judge-model"):
        spec.configs_for("captioning")
    assert spec.configs_for("captioning", judge=True) == ("captioning",)
    assert spec.configs_for("all", judge=True) == spec.configs_for("all")  # judge-free three


def _write(folder: Path, questions: dict, meta: dict) -> Path:
    (folder / "questions").mkdir(parents=True)
    (folder / "questions" / "multi-choice.json").write_text(json.dumps(questions))
    (folder / "meta_info.json").write_text(json.dumps(meta))
    return folder


META = {"v1": {"eval_dim": {"speed": {"type": "absolute speed"}}}}
QUESTION = "How fast?\nA. slowly\nB. quickly"


@pytest.mark.parametrize(
    ("questions", "meta", "message"),
    [
        (
            {"v1": {"speed": [{"question": QUESTION, "answer": "C. fast"}]}},
            META,
            r"multi-choice.json, row v1.speed\[0\]: field 'answer' 'C. fast' names none",
        ),
        (
            {"v1": {"speed": [{"question": "How fast?\nslowly\nquickly", "answer": "A. slowly"}]}},
            META,
            r"row v1.speed\[0\]: field 'question' has an option line 'slowly' of no known form",
        ),
        (
            {"v1": {"speed": [{"question": "How fast?\nA. slowly", "answer": "A. slowly"}]}},
            META,
            r"row v1.speed\[0\]: field 'question' lists 1 option\(s\)",
        ),
        (
            {"v1": {"pace": [{"question": QUESTION, "answer": "A. slowly"}]}},
            META,
            r"row v1: unknown aspect 'pace'",
        ),
        (
            {"v1": {"speed": [{"question": QUESTION, "answer": "A. slowly"}]}},
            {"v1": {"eval_dim": {"speed": {"type": "velocity"}}}},
            r"meta_info.json, row v1: field 'eval_dim.speed.type' is 'velocity'",
        ),
    ],
)
def test_bad_annotations_name_file_row_and_field(tmp_path: Path, questions, meta, message):
    folder = _write(tmp_path / "annotations", questions, meta)
    with pytest.raises(AnnotationError, match=message):
        _rows(folder, "multi_choice")


def test_two_models_compare_on_the_benchmarks_inputs(rows):
    """``foilkit compare`` and the leaderboard pair models on the spec's inputs, dimensions
    included (item descriptions, not scores)."""
    from foilkit.metrics import paired_comparison

    items = rows["caption_matching"][:40]
    spec = get_benchmark("tempcompass").metrics("caption_matching")[0]

    def inputs(flip: bool) -> dict:
        return spec.inputs(
            {
                "caption_score": [0.2 if flip and i % 2 else 0.8 for i in range(len(items))],
                "foil_scores": [[0.5] for _ in items],
                **{name: [r[name] for r in items] for name in ("label", "aspect", "dimension")},
            }
        )

    result = paired_comparison(spec.metric, inputs(False), inputs(True), n_resamples=0)
    assert result["mcnemar"]["a_only"] == 20 and result["mcnemar"]["b_only"] == 0
