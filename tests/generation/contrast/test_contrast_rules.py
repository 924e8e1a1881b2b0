"""Gender and person-ID swaps (paper 001, appendix A.1-A.2): golden cases with fixed seeds."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from foilkit.generation.contrast.gender_swap import GENDER_NOUN_MAP, gender_swap
from foilkit.generation.contrast.person_id import person_id_swap


@pytest.mark.parametrize("use_spacy", [False, True])
@pytest.mark.parametrize(
    ("caption", "foil"),
    [
        # §3.1 and Table 1 of the paper
        ("A woman is pushing her stroller", "A man is pushing his stroller"),
        ("Two men are doing wrestling.", "Two women are doing wrestling."),
        (
            "A man in black shirt is talking with his two friends.",
            "A woman in black shirt is talking with her two friends.",
        ),
        # object "her" -> "him", possessive "her" -> "his"; capitals kept
        ("A woman hugs her dog and the dog licks her", "A man hugs his dog and the dog licks him"),
        ("He watches as a boy jumps", "She watches as a girl jumps"),
        # only the first gendered noun is swapped
        ("a man and a woman walk together", "a woman and a woman walk together"),
    ],
)
def test_gender_swap_golden(caption, foil, use_spacy, request):
    nlp = request.getfixturevalue("nlp") if use_spacy else None
    (swapped,) = gender_swap(caption, rng=random.Random(0), nlp=nlp)
    assert swapped.text == foil
    assert swapped.foil_type == "gender" and swapped.rule == "contrast.gender_swap"
    assert ("tagger" in swapped.model_ids) is (use_spacy and " her" in caption.lower())


@pytest.mark.parametrize("noun", sorted(GENDER_NOUN_MAP))
def test_every_target_of_table6_is_drawn_with_the_number_kept(noun):
    targets = Counter(
        gender_swap(f"the {noun} dance", rng=random.Random(seed))[0].source["replacement"]
        for seed in range(200)
    )
    assert set(targets) == set(GENDER_NOUN_MAP[noun])
    assert all(t.endswith(("s", "men")) == noun.endswith(("s", "men")) for t in targets)
    assert min(targets.values()) > 200 / len(targets) / 2  # roughly uniform


def test_gender_swap_is_seeded_and_skips_captions_without_gender():
    draws = [gender_swap("some guys surf", rng=random.Random(7))[0].text for _ in range(3)]
    assert len(set(draws)) == 1
    assert gender_swap("a dog runs after a ball", rng=random.Random(0)) == []


CAST = {"Jenko": "M", "Schmidt": "M", "Zach": "M", "Molly": "F", "Eric": "M"}


def test_person_id_swap_same_gender_and_movie():
    (foil,) = person_id_swap("His gaze steely, Jenko lowers his gun.", CAST, rng=random.Random(0))
    new = foil.source["swaps"]["Jenko"]
    assert CAST[new] == "M" and new != "Jenko"
    assert foil.text == f"His gaze steely, {new} lowers his gun."
    assert person_id_swap("Molly smiles.", CAST, rng=random.Random(0)) == []  # no other woman
    assert person_id_swap("Nobody is here.", CAST, rng=random.Random(0)) == []


@pytest.mark.parametrize(("probability", "second_swapped"), [(0.0, False), (1.0, True)])
def test_person_id_later_ids_are_swapped_with_the_given_probability(probability, second_swapped):
    caption = "Jenko and Schmidt sit in the rear pew."
    (foil,) = person_id_swap(caption, CAST, rng=random.Random(3), swap_probability=probability)
    assert "Jenko" in foil.source["swaps"]
    assert ("Schmidt" in foil.source["swaps"]) is second_swapped
    assert foil.text.count(" and ") == 1 and foil.text != caption
