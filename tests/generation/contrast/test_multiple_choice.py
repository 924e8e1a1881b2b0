"""Gender / Verb MC items from a Random MC file (paper 001, appendix D)."""

from __future__ import annotations

import random

import pytest

from foilkit.generation.contrast.gender_swap import gender_swap
from foilkit.generation.contrast.multiple_choice import (
    MultipleChoiceItem,
    build_contrast_mc,
    item_row,
    read_multiple_choice,
    write_multiple_choice,
)

RANDOM_MC = (
    "clip\tending0\tending1\tending2\tending3\tending4\tlabel\n"
    "video1\ta dog runs\ta woman is pushing her stroller\tcars race\ta man sings\tkids play\t1\n"
    "video2\ta cat sleeps\tbirds fly\ta car drives\tpeople cook\ta boat sails\t0\n"
    "video3\ta woman sings\ta man sings\tfish swim\ttrees sway\tsnow falls\t0\n"
)


@pytest.fixture
def random_mc(tmp_path):
    path = tmp_path / "random_mc.tsv"
    path.write_text(RANDOM_MC)
    return read_multiple_choice(path)


def test_gender_mc_replaces_one_negative(random_mc, tmp_path):
    rng = random.Random(0)
    items = build_contrast_mc(
        random_mc, lambda c: gender_swap(c, rng=rng), rng=rng, foil_type="gender"
    )
    # video2 has no gendered noun; video3's foil ("a man sings") is already an option.
    assert [item.clip for item in items] == ["video1"]
    (item,) = items
    original = random_mc[0]
    assert item.label == original.label and item.caption == original.caption
    changed = [i for i, (a, b) in enumerate(zip(original.options, item.options)) if a != b]
    assert len(changed) == 1 and changed[0] != item.label
    assert item.options[changed[0]] == "a man is pushing his stroller"
    assert item.foil_type == "gender" and item.contrast_foil.rule == "contrast.gender_swap"

    path = tmp_path / "gender_mc.tsv"
    write_multiple_choice(items, path)
    assert read_multiple_choice(path) == items


def test_an_item_row_is_the_builders_row_with_provenance(random_mc):
    from foilkit.builders.contrast_sets.builder import multiple_choice_row
    from foilkit.generation.foil import row_foils

    rng = random.Random(0)
    (item,) = build_contrast_mc(
        random_mc, lambda c: gender_swap(c, rng=rng), rng=rng, foil_type="gender"
    )
    row = item_row(item)
    built = multiple_choice_row(
        item.clip, list(item.options), item.label, "gender", file="f", row=1
    )
    assert {k: row[k] for k in built} == built
    foils = row_foils(row)
    assert [f.rule for f in foils].count("contrast.gender_swap") == 1
    randoms = [f for f in foils if f.rule == "contrast.random_negative"]
    assert len(randoms) == 3 and {f.foil_type for f in randoms} == {"random"}
    assert [item.options[f.source["ending"]] for f in randoms] == [f.text for f in randoms]


def test_replaced_slot_is_seeded_and_uniform(random_mc):
    slots = set()
    for seed in range(40):
        (item,) = build_contrast_mc(
            random_mc[:1],
            lambda c: gender_swap(c, rng=random.Random(0)),
            rng=random.Random(seed),
            foil_type="gender",
        )
        slots.add(next(i for i, o in enumerate(item.options) if o != random_mc[0].options[i]))
    assert slots == {0, 2, 3, 4}


def test_reads_the_published_contrast_set(shared_data):
    items = read_multiple_choice(shared_data / "contrast_sets" / "msrvtt_lm_contrast_set.tsv")
    assert len(items) == 2554
    assert items[0].clip == "video9770" and items[0].label == 1 and len(items[0].options) == 5


def test_bad_files_name_the_problem(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("clip\tending0\tending1\tlabel\nv1\ta\tb\tx\n")
    with pytest.raises(ValueError, match=r"bad.tsv:2: label 'x'"):
        read_multiple_choice(bad)
    bad.write_text("video\ta1\ta2\tanswer\n")
    with pytest.raises(ValueError, match="expected columns"):
        read_multiple_choice(bad)
    with pytest.raises(ValueError, match="label 5"):
        MultipleChoiceItem("v", ("a", "b"), 5)


@pytest.mark.parametrize("seed", range(4))
def test_the_builders_gender_mc_is_the_generators(tmp_path, seed):
    """The contrast-set builder's ``gender`` config (its own data prep, no generation code) and
    ``foilkit generate contrast gender-mc`` draw the same swaps and slots for one seed."""
    from foilkit.builders.contrast_sets.multiple_choice import gender_mc, read_multiple_choice_file

    path = tmp_path / "random_mc.tsv"
    path.write_text(RANDOM_MC)
    rng = random.Random(seed)
    generated = build_contrast_mc(
        read_multiple_choice(path), lambda c: gender_swap(c, rng=rng), rng=rng, foil_type="gender"
    )
    built = gender_mc(read_multiple_choice_file(path), rng=random.Random(seed))
    assert [(clip, options, label) for clip, options, label, _ in built] == [
        (item.clip, item.options, item.label) for item in generated
    ]
    assert [item.clip for item in generated] == ["video1"]
