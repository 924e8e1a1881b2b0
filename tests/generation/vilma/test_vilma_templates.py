"""ViLMA's template tests regenerated: change of state, counting, actor swap (golden cases)."""

from __future__ import annotations

import json
import random

import pytest

from foilkit.generation.vilma.actor_swap import actor_swap
from foilkit.generation.vilma.change_of_state import (
    SUBTESTS,
    ChangeOfState,
    change_of_state_pair,
    change_of_state_pairs,
)
from foilkit.generation.vilma.counting import (
    MAX_COUNT,
    SMALL_MAX,
    counting_pair,
    counting_subtest,
    fill_count_template,
    foil_count_weights,
    foil_counts,
    window_counts,
)
from foilkit.generation.vilma.english import third_person

# The paper's 4-tuple (appendix C.4): <"open", "to close", "closed", "to open">.
CLOSE = ChangeOfState(pre_state="open", verb="close", post_state="closed", reverse_verb="open")


def test_change_of_state_paper_example_gives_the_four_subtests():
    pairs = {
        s: (caption, foil.text)
        for s, (caption, foil) in change_of_state_pairs(CLOSE, "the door").items()
    }
    assert pairs == {
        "action": ("Someone closes the door.", "Someone opens the door."),
        "prestate": ("Initially, the door is open.", "Initially, the door is closed."),
        "poststate": ("At the end, the door is closed.", "At the end, the door is open."),
        "inverse": (
            "Initially, the door is open. Then, someone closes the door. "
            "At the end, the door is closed.",
            "Initially, the door is closed. Then, someone opens the door. "
            "At the end, the door is open.",
        ),
    }


@pytest.mark.parametrize(
    ("change", "argument", "caption", "foil"),
    [
        (
            ChangeOfState(
                "in a lower position", "jump", "in a higher position", "descend", transitive=False
            ),
            "the athlete",
            "The athlete jumps.",
            "The athlete descends.",
        ),
        (
            ChangeOfState("dirty", "tidy up", "clean", "stain"),
            "the closet",
            "Someone tidies the closet up.",
            "Someone stains the closet.",
        ),
        (
            ChangeOfState("outside", "put in", "inside", "pull out"),
            "the purses",
            "Someone puts the purses in.",
            "Someone pulls the purses out.",
        ),
    ],
)
def test_change_of_state_action_template(change, argument, caption, foil):
    got_caption, got_foil = change_of_state_pair(change, argument, "action")
    assert (got_caption, got_foil.text) == (caption, foil)
    assert got_foil.parameters["subtest"] == "action" and got_foil.foil_type == "change_of_state"


def test_change_of_state_regenerates_the_published_subtests(shared_data):
    files = {
        s: json.loads((shared_data / "vilma" / f"change-state-{s}.json").read_text())
        for s in SUBTESTS
    }
    checked = 0
    for subtest, items in files.items():
        for key, item in items.items():
            sibling = key.replace(subtest, "{}")
            transitive = files["action"][sibling.format("action")]["caption"].startswith("Someone")
            # The published agreement (is/are) is not always right: take it from the file.
            plural = " are " in files["prestate"][sibling.format("prestate")]["caption"]
            c = item["change_of_state"]
            change = ChangeOfState(
                c["pre-state"], c["verb"], c["post-state"], c["state-inverse"], transitive
            )
            caption, foil = change_of_state_pair(change, c["object"], subtest, plural=plural)
            assert (caption, [foil.text]) == (item["caption"], item["foils"]), key
            checked += 1
    assert checked == 4 * 624


@pytest.mark.parametrize(
    ("verb", "inflected"),
    [
        ("close", "closes"),
        ("tidy up", "tidies up"),
        ("mix", "mixes"),
        ("play", "plays"),
        ("do", "does"),
        ("wash", "washes"),
    ],
)
def test_third_person(verb, inflected):
    assert third_person(verb) == inflected


@pytest.mark.parametrize(
    ("count", "subtest", "foil_range"),
    [
        (1, "easy", range(4, 11)),
        (3, "easy", range(4, 11)),
        (4, "difficult", range(1, 4)),
        (10, "difficult", range(1, 4)),
    ],
)
def test_counting_number_choice(count, subtest, foil_range):
    assert counting_subtest(count) == subtest
    assert foil_counts(count) == list(foil_range)
    weights = foil_count_weights(window_counts([12, 20]), subtest)  # every count has windows
    drawn = {
        counting_pair(
            "a man skips rope exactly <number> times.",
            count,
            rng=random.Random(s),
            foil_weights=weights,
        )[1].source["foil_count"]
        for s in range(100)
    }
    assert drawn == set(foil_range)  # every allowed number, none other


def test_counting_golden_and_threshold():
    weights = foil_count_weights(window_counts([5]), "easy")  # windows of 4 and 5 only
    caption, foil = counting_pair(
        "a man skips rope exactly <number> times.", 3, rng=random.Random(0), foil_weights=weights
    )
    assert caption == "a man skips rope exactly three times."
    assert foil.text in (
        "a man skips rope exactly four times.",
        "a man skips rope exactly five times.",
    )
    assert foil.parameters == {
        "subtest": "easy",
        "small_max": SMALL_MAX,
        "max_count": MAX_COUNT,
        "spelled": True,
        "foil_count_weights": {"4": 2 / 3, "5": 1 / 3},
    }
    too_many = counting_pair(
        "x exactly <number> times", MAX_COUNT + 1, rng=random.Random(0), foil_weights=weights
    )
    assert too_many is None
    assert (
        fill_count_template("a girl jumps exactly <number> times.", 1)
        == "a girl jumps exactly one time."
    )
    assert (
        fill_count_template("does exactly <number> pull-ups", 1, spelled=False)
        == "does exactly 1 pull-up"
    )
    small_five = foil_count_weights(window_counts([8]), "easy", small_max=5)
    assert set(small_five) == {6, 7, 8}
    _, foil = counting_pair(
        "x exactly <number> times", 5, rng=random.Random(0), small_max=5, foil_weights=small_five
    )
    assert foil.parameters["subtest"] == "easy" and foil.source["foil_count"] in small_five


def test_counting_draws_the_foil_count_by_its_weights():
    template = "x exactly <number> times"
    rng = random.Random(0)
    drawn = [
        counting_pair(template, 2, rng=rng, foil_weights={4: 3, 10: 1})[1].source["foil_count"]
        for _ in range(4000)
    ]
    assert set(drawn) == {4, 10}  # counts without weight are never drawn
    assert abs(drawn.count(4) / len(drawn) - 0.75) < 4 * (0.75 * 0.25 / len(drawn)) ** 0.5
    with pytest.raises(ValueError, match=r"counts \[2\] outside the foil range"):
        counting_pair(template, 3, rng=rng, foil_weights={2: 1.0, 5: 1.0})  # its own subtest
    with pytest.raises(ValueError, match="positive sum"):
        counting_pair(template, 3, rng=rng, foil_weights={5: 0.0})
    with pytest.raises(ValueError, match="positive sum"):
        counting_pair(template, 3, rng=rng, foil_weights={})


@pytest.mark.parametrize(
    "name", ["counting-easy-spelled-pts", "counting-hard-spelled-sec", "counting-easy-digits"]
)
def test_counting_regenerates_the_published_subtests(shared_data, name):
    processed = json.loads((shared_data / "vilma" / "quva-templates-processed.json").read_text())
    singular = {
        (video["id"], template): single
        for video in processed.values()
        for template, single in zip(video["templates"], video["singular_templates"])
    }
    items = json.loads((shared_data / "vilma" / f"{name}.json").read_text())
    for key, item in items.items():
        fill = {
            "spelled": item["digits_or_spelling"] == "spelling",
            "singular_template": singular[(item["dataset_idx"], item["template"])],
        }
        assert fill_count_template(item["template"], item["class"], **fill) == item["caption"], key
        assert (
            fill_count_template(item["template"], item["classes_foil"][0], **fill)
            == item["foils"][0]
        ), key
        assert counting_subtest(item["class"]) == ("easy" if "easy" in name else "difficult")
        assert item["classes_foil"][0] in foil_counts(item["class"]), key


@pytest.mark.parametrize(
    ("caption", "foil"),
    [  # published Actor Swapping items (SRL_Actor_Swapping.json)
        (
            "The gentleman in a grey coat points ahead to a man in a blue shirt.",
            "A man in a blue shirt points ahead to the gentleman in a grey coat.",
        ),
        (
            "The man in a tan coat clasps the woman with blonde hair outside.",
            "The woman with blonde hair clasps the man in a tan coat outside.",
        ),
        (
            "A child with chestnut locks is speaking angrily to a man with black hair.",
            "A man with black hair is speaking angrily to a child with chestnut locks.",
        ),
        ("A boy pushes the girl.", "The girl pushes a boy."),
    ],
)
def test_actor_swap(nlp, caption, foil):
    (swapped,) = actor_swap(caption, nlp=nlp)
    assert swapped.text == foil and swapped.foil_type == "actor_swap"
    assert actor_swap("A man sleeps.", nlp=nlp) == []
