"""Gender and Random MC built from a user's MSR-VTT multiple-choice file with the contrast-set
generator."""

from __future__ import annotations

import datasets
import pytest

from foilkit.builders import export, load_builder, prepare

# A Random MC file in the published layout: clip, five endings, label (index of the true one).
RANDOM_MC = [
    (
        "video1",
        [
            "a dog runs",
            "a woman is pushing her stroller",
            "a car drives",
            "a cat sleeps",
            "it rains",
        ],
        1,
    ),
    ("video2", ["a man plays guitar", "birds fly", "a boat sails", "a chef cooks", "kids jump"], 0),
    (
        "video3",
        ["a train passes", "leaves fall", "people are dancing", "a plane lands", "snow falls"],
        2,
    ),
]


@pytest.fixture
def mc_file(tmp_path):
    path = tmp_path / "msrvtt_mc_test.tsv"
    lines = ["clip\tending0\tending1\tending2\tending3\tending4\tlabel"]
    lines += ["\t".join([clip, *options, str(label)]) for clip, options, label in RANDOM_MC]
    path.write_text("\n".join(lines) + "\n")
    return path


def _build(config, mc_file, tmp_path, **options):
    builder = load_builder(
        "contrast_sets",
        config,
        multiple_choice_file=str(mc_file),
        on_missing="keep",
        cache_dir=str(tmp_path / "cache"),
        **options,
    )
    return builder, prepare(builder)["test"]


def test_random_mc_is_the_file_as_it_is(mc_file, tmp_path):
    _, test = _build("random", mc_file, tmp_path)
    assert test["clip"] == ["video1", "video2", "video3"]
    assert [row["options"] for row in test] == [options for _, options, _ in RANDOM_MC]
    assert test["caption"] == [options[label] for _, options, label in RANDOM_MC]
    assert set(test["foil_type"]) == {"random"}


def test_gender_mc_swaps_one_negative_for_the_gender_foil(mc_file, tmp_path):
    builder, test = _build("gender", mc_file, tmp_path, seed=3)
    # video3's caption has no gender word: dropped, as in the paper.
    assert test["clip"] == ["video1", "video2"]
    assert builder.generated == (3, 2)
    assert "2 of 3 clips" in builder.info.description
    for row, (_, options, label) in zip(test, RANDOM_MC, strict=False):
        assert row["label"] == label and row["caption"] == options[label]
        changed = [index for index, option in enumerate(row["options"]) if option != options[index]]
        assert len(changed) == 1 and changed[0] != label
    assert _new_options(test[0], RANDOM_MC[0][1]) == ["a man is pushing his stroller"]
    assert _new_options(test[1], RANDOM_MC[1][1]) == ["a woman plays guitar"]
    assert set(test["foil_type"]) == {"gender"}


def _new_options(row: dict, published: list[str]) -> list[str]:
    return [option for option in row["options"] if option not in published]


def test_gender_mc_is_reproducible_per_seed(mc_file, tmp_path):
    layouts = {
        seed: _build("gender", mc_file, tmp_path / str(seed), seed=seed)[1]["options"]
        for seed in range(4)
    }
    assert _build("gender", mc_file, tmp_path / "again", seed=0)[1]["options"] == layouts[0]
    assert (
        len({str(options) for options in layouts.values()}) > 1
    )  # the seed decides which negative is replaced


def test_gender_mc_end_to_end(mc_file, tmp_path, write_videos):
    write_videos(tmp_path / "videos", ["video1.mp4", "video2.mp4"])
    out = export(
        "contrast_sets",
        tmp_path / "out",
        ["gender"],
        video_root=tmp_path / "videos",
        multiple_choice_file=str(mc_file),
        cache_dir=str(tmp_path / "cache"),
    )
    card = (out / "README.md").read_text()
    assert "### Gender and Random MC" in card and "2 of 3 clips" in card
    reloaded = datasets.load_dataset(str(out), "gender", cache_dir=str(tmp_path / "load"))["test"]
    assert reloaded["video_path"] == ["video1.mp4", "video2.mp4"]
