"""The Foil record and its conversion to canonical rows."""

from __future__ import annotations

import json

import pytest

from foilkit.generation.foil import (
    PROVENANCE_COLUMN,
    Foil,
    caption_rows,
    foil_row,
    foils_dataset,
    row_foils,
    unique_foils,
)


def _foil(text: str = "A man is pushing his stroller", foil_type: str = "gender") -> Foil:
    return Foil(text, foil_type, "contrast.gender_swap", parameters={"seed": 0})


def test_passed_records_score_model_and_namespaced_parameters():
    foil = _foil().passed("nli", 0.12, model_id="nli-model", policy="vilma")
    foil = foil.passed("grammaticality", 0.91, model_id="cola-model", threshold=0.8)
    assert dict(foil.filter_scores) == {"nli": 0.12, "grammaticality": 0.91}
    assert list(foil.filter_scores) == ["nli", "grammaticality"]
    assert dict(foil.model_ids) == {"nli": "nli-model", "grammaticality": "cola-model"}
    assert foil.parameters["grammaticality.threshold"] == 0.8
    assert foil.parameters["nli.policy"] == "vilma"
    assert foil.parameters["seed"] == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"text": " ", "foil_type": "gender", "rule": "r"}, "non-empty"),
        ({"text": "x", "foil_type": "", "rule": "r"}, "foil_type"),
        ({"text": "x", "foil_type": "gender", "rule": ""}, "rule"),
    ],
)
def test_invalid_foils_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Foil(**kwargs)


def test_a_filter_cannot_pass_twice_or_with_nan():
    foil = _foil().passed("nli", 0.1)
    with pytest.raises(ValueError, match="already passed"):
        foil.passed("nli", 0.2)
    with pytest.raises(ValueError, match="NaN"):
        _foil().passed("nli", float("nan"))


def test_foil_is_immutable_and_round_trips():
    foil = _foil().passed("nli", 0.5, model_id="m")
    with pytest.raises(TypeError):
        foil.parameters["seed"] = 1  # type: ignore[index]
    assert Foil.from_record(json.loads(json.dumps(foil.to_record()))) == foil


def test_foil_row_is_canonical_and_keeps_provenance_aligned():
    foils = [_foil("A man is pushing his stroller"), _foil("A boy is pushing his stroller")]
    row = foil_row("msrvtt-1", "A woman is pushing her stroller", foils, video="v.mp4", clip="c1")
    assert row["caption"] == "A woman is pushing her stroller"
    assert row["foils"] == [f.text for f in foils]
    assert (row["start"], row["end"], row["reversed"]) == (None, None, False)
    assert row["foil_type"] == "gender" and row["clip"] == "c1"
    assert [json.loads(r)["text"] for r in row[PROVENANCE_COLUMN]] == row["foils"]
    assert row_foils(row) == foils


def test_foil_row_needs_explicit_type_for_mixed_foils():
    foils = [_foil(foil_type="gender"), _foil("A woman is pulling her stroller", "verb")]
    with pytest.raises(ValueError, match="several types"):
        foil_row("x", "A woman is pushing her stroller", foils)
    assert foil_row("x", "c", foils, foil_type="mixed")["foil_type"] == "mixed"
    with pytest.raises(ValueError, match="no foils"):
        foil_row("x", "c", [])


@pytest.mark.parametrize(
    ("record", "foils", "expected"),
    [
        ({"id": 7, "caption": "A man runs", "video": "v.mp4"}, [_foil("A woman runs")], "7"),
        ({"id": "a", "caption": "A man runs"}, [_foil("A woman runs"), _foil("A girl runs")], "a"),
        ({"id": "b", "caption": "A man runs"}, [], None),
    ],
)
def test_caption_rows_are_foil_rows_of_the_input_rows_with_foils(record, foils, expected):
    rows = caption_rows([(record, foils)])
    if expected is None:
        assert rows == []
        return
    video = record.get("video")
    assert rows == [foil_row(expected, record["caption"], foils, video_path=video)]


def test_unique_foils_drops_duplicates_and_the_caption():
    foils = [_foil("A man ran"), _foil("a man ran "), _foil("A woman ran"), _foil("A boy ran")]
    kept = unique_foils(foils, caption="A woman ran")
    assert [f.text for f in kept] == ["A man ran", "A boy ran"]


def test_rows_make_a_dataset_with_the_canonical_features():
    import datasets

    from foilkit.builders.schema import CANONICAL_COLUMNS

    rows = [
        foil_row("a", "A woman runs", [_foil("A man runs")], video_path="a.mp4", clip="a"),
        foil_row("b", "A girl sings", [_foil("A boy sings"), _foil("A guy sings")], clip="b"),
    ]
    dataset = foils_dataset(rows, clip=datasets.Value("string"))
    assert dataset.column_names[: len(CANONICAL_COLUMNS)] == list(CANONICAL_COLUMNS)
    assert dataset[1]["foils"] == ["A boy sings", "A guy sings"]
    assert row_foils(dataset[1]) == [_foil("A boy sings"), _foil("A guy sings")]
    assert dataset[0]["video_path"] == "a.mp4" and dataset[0]["video"] is None


def test_no_rows_give_an_empty_dataset_of_the_schema():
    from foilkit.generation.foil import foils_dataset

    empty = foils_dataset([])
    assert empty.num_rows == 0
    assert {"caption", "foils", "foil_type", "foil_provenance"} <= set(empty.column_names)
