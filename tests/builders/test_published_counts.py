"""Built from the published annotation files, the builders reproduce the papers' counts."""

from __future__ import annotations

import json

import pytest

from foilkit.builders import load_builder, prepare
from foilkit.builders.vilma import SUBTESTS, TESTS
from foilkit.builders.vilma.builder import PTS_FPS, Vilma
from foilkit.builders.vitatecs import ASPECTS

pytestmark = pytest.mark.integration

# VITATECS paper, Table 2: samples and videos per aspect.
VITATECS_TABLE_2 = {
    "direction": (3800, 2646),
    "intensity": (779, 692),
    "sequence": (151, 150),
    "localization": (1053, 915),
    "compositionality": (1450, 1110),
    "type": (6605, 4287),
}


@pytest.mark.parametrize("aspect", ASPECTS)
def test_vitatecs_rows_and_videos_per_aspect(build_shared, aspect):
    test = build_shared("vitatecs", aspect)["test"]
    rows, videos = VITATECS_TABLE_2[aspect]
    assert test.num_rows == rows
    assert len(set(test["video_path"])) == videos
    assert set(test["aspect"]) == {aspect}
    assert all(len(foils) == 1 for foils in test["foils"])


def test_vitatecs_all_is_the_six_aspects(build_shared):
    test = build_shared("vitatecs", "all")["test"]
    assert test.num_rows == sum(rows for rows, _ in VITATECS_TABLE_2.values())
    assert (
        test[0]["video_path"] == "MSRVTT/video9770.mp4"
    )  # the README's example video, first row of Direction


def test_vitatecs_opt_version_reads_the_opt_files(build_shared, shared_data):
    test = build_shared("vitatecs", "sequence", annotation_version="opt")["test"]
    lines = (shared_data / "vitatecs" / "opt" / "Sequence.jsonl").read_text().splitlines()
    assert test.num_rows == len(lines) != VITATECS_TABLE_2["sequence"][0]
    assert test[0]["caption"] == json.loads(lines[0])["caption"]


@pytest.mark.parametrize("subtest", SUBTESTS)
@pytest.mark.parametrize("validity_filter", [True, False])
def test_vilma_subtest_counts_before_and_after_the_validity_filter(
    build_shared, subtest, validity_filter
):
    # Paper Table 5: #Inst. before, #Both Valid. after the filter.
    test = build_shared("vilma", subtest, validity_filter=validity_filter)["test"]
    paper = SUBTESTS[subtest]
    assert test.num_rows == (paper.paper_valid if validity_filter else paper.paper_instances)
    assert sum(test["valid"]) == paper.paper_valid
    assert set(test["subtest"]) == {subtest}


@pytest.mark.parametrize("test_name", TESTS)
def test_vilma_test_configs_group_their_subtests(build_shared, test_name):
    test = build_shared("vilma", test_name)["test"]
    members = {name for name, subtest in SUBTESTS.items() if subtest.test == test_name}
    assert set(test["subtest"]) == members
    assert test.num_rows == sum(SUBTESTS[name].paper_valid for name in members)


def test_vilma_card_compares_with_table_5(cache_dir, shared_data):
    builder = load_builder(
        "vilma",
        "rare_actions",
        annotations=shared_data / "vilma",
        on_missing="keep",
        cache_dir=cache_dir,
    )
    prepare(builder)
    notes = Vilma.card_notes([builder])
    assert "| Rare Actions / Action Replacement | 978 | 751 | 978 | 751 | 227 |" in notes
    assert "match Table 5" in notes


def test_vilma_counting_easy_pts_are_frames_at_30_fps(build_shared, shared_data):
    """The "pts" window is a frame index: the -sec sibling holds the same ids with start/30."""
    easy = build_shared("vilma", "action_counting_easy", validity_filter=False)["test"]
    seconds = json.loads((shared_data / "vilma" / "counting-easy-spelled-sec.json").read_text())
    frames = json.loads((shared_data / "vilma" / "counting-easy-spelled-pts.json").read_text())
    assert set(easy["id"]) == set(seconds) == set(frames)
    assert set(easy["time_unit"]) == {"pts"}
    for row in easy:
        assert row["start"] == frames[row["id"]]["start_time"] / PTS_FPS
        assert row["start"] == pytest.approx(seconds[row["id"]]["start_time"], abs=1e-4)
        assert row["end"] == pytest.approx(seconds[row["id"]]["end_time"], abs=1e-4)


def test_vilma_action_replacement_keeps_every_foil(build_shared, shared_data):
    test = build_shared("vilma", "situation_awareness_action_replacement", validity_filter=False)[
        "test"
    ]
    published = json.loads(
        (shared_data / "vilma" / "SRL_Action_Replacement_Top_1000.json").read_text()
    )
    assert {row["id"]: row["foils"] for row in test} == {
        key: item["foils"] for key, item in published.items()
    }
    assert max(len(foils) for foils in test["foils"]) == 2


@pytest.mark.parametrize(
    ("config", "test_rows", "validation_rows"),
    [("origin", 1000, 500), ("hard", 2000, 1000), ("binary", 2000, 1000)],
)
def test_rtime_views_per_split(build_shared, config, test_rows, validation_rows):
    splits = build_shared("rtime", config)
    assert {split: data.num_rows for split, data in splits.items()} == {
        "test": test_rows,
        "validation": validation_rows,
    }
    assert len(set(splits["test"]["source_id"])) == 1000
    assert len(set(splits["validation"]["source_id"])) == 500


def test_rtime_reversed_view_is_the_same_file_with_the_reverse_caption(build_shared, shared_data):
    test = build_shared("rtime", "hard")["test"]
    forward, backward = test[0], test[1]
    published = json.loads((shared_data / "rtime" / "test.json").read_text())[forward["source_id"]]
    assert (
        forward["direction"],
        forward["reversed"],
        backward["direction"],
        backward["reversed"],
    ) == (
        "forward",
        False,
        "reverse",
        True,
    )
    assert forward["video_path"] == backward["video_path"] == f"{forward['source_id']}.mp4"
    assert forward["caption"] == backward["foils"][0] == published["forward_captions"][0]
    assert backward["caption"] == forward["foils"][0] == published["reverse_captions"][0]
    assert (
        backward["rewrites"] == published["reverse_rewrites"] and forward["url"] == published["url"]
    )


@pytest.mark.parametrize("config", ["verb_lm", "verb_human"])
def test_contrast_sets_items_keep_the_published_order(build_shared, config):
    test = build_shared("contrast_sets", config)["test"]
    assert test.num_rows == 2554
    for row in test.select(range(50)):
        assert len(row["options"]) == 5
        assert row["caption"] == row["options"][row["label"]]
        assert row["foils"] == [
            option for index, option in enumerate(row["options"]) if index != row["label"]
        ]
