"""Actor swapping measured on ViLMA's published swaps and on VITATECS captions: only people
trade places, and how many published foils come back from their captions."""

from __future__ import annotations

import json
import re

import pytest

from foilkit.generation.vilma.actor_swap import _verb_lemmas_of, actor_swap, person_heads
from foilkit.generation.vilma.people import is_person_token


def _words(text: str, *, articles: bool = True) -> list[str]:
    words = re.sub(r"[^a-z ]", " ", text.lower()).split()
    return words if articles else [w for w in words if w not in ("a", "an", "the")]


@pytest.fixture(scope="module")
def published_swaps(shared_data):
    path = shared_data / "vilma" / "SRL_Actor_Swapping.json"
    if not path.exists():
        pytest.skip(f"{path} is not present")
    return [(item["caption"], item["foils"][0]) for item in json.loads(path.read_text()).values()]


@pytest.mark.parametrize(
    ("caption", "foil"),
    [
        (
            "The men in leather gently wrap the man dressed in white.",
            "The man dressed in white gently wraps the men in leather.",
        ),
        (
            "A guy in a black outfit aims his gun at a woman in a black hat.",
            "A woman in a black hat aims her gun at a guy in a black outfit.",
        ),
        (
            "The man in the car looked over his shoulder at two men dressed in black.",
            "Two men dressed in black looked over his shoulder at the man in the car.",
        ),
        (
            "A man in a grey suit stares ahead at men working on a switchboard.",
            "Men working on a switchboard stare ahead at a man in a grey suit.",
        ),
        (
            "The blond man runs away from the policeman in the hallway.",
            "The policeman runs away from the blond man in the hallway.",
        ),
    ],
)
def test_the_actors_trade_places_with_what_describes_them(nlp, caption, foil):
    (swapped,) = actor_swap(caption, nlp=nlp)
    assert swapped.text == foil


@pytest.mark.parametrize(
    "caption",
    [
        "The man plunged his head into the water.",  # not "His head plunged the man"
        "The man entered the cooking area.",  # not "The cooking area entered the man"
        "A woman is sitting on a chair.",  # not "A chair is sitting on a woman"
        "People are gathering in the square.",
        "A man is cooking while his mother watches.",  # a relation of the subject
    ],
)
def test_only_people_are_swapped(nlp, caption):
    assert actor_swap(caption, nlp=nlp) == []


def test_the_person_check_finds_both_actors_of_the_published_swaps(nlp, published_swaps):
    verbs = _verb_lemmas_of(nlp)
    found = sum(len(person_heads(nlp(caption), verbs)) >= 2 for caption, _ in published_swaps)
    share = found / len(published_swaps)
    print(f"published actor swaps whose caption shows two people: {found}/{len(published_swaps)}")
    assert share >= 0.95


def test_published_actor_swaps_are_reproduced_from_their_captions(nlp, published_swaps):
    exact = without_articles = 0
    for caption, published in published_swaps:
        foils = actor_swap(caption, nlp=nlp)
        if not foils:
            continue
        exact += _words(foils[0].text) == _words(published)
        without_articles += _words(foils[0].text, articles=False) == _words(
            published, articles=False
        )
    n = len(published_swaps)
    print(
        f"published actor-swap foils reproduced: {exact}/{n} ({exact / n:.1%}) word for word, "
        f"{without_articles}/{n} ({without_articles / n:.1%}) up to articles"
    )
    # Measured 71.9% / 74.1% (the target is 80%); this guards against regressions.
    assert exact / n >= 0.71 and without_articles / n >= 0.74


def test_swaps_of_vitatecs_captions_swap_people(nlp, shared_data):
    folder = shared_data / "vitatecs"
    if not folder.is_dir():
        pytest.skip(f"{folder} is not present")
    lines = [line for path in folder.glob("*.jsonl") for line in path.read_text().splitlines()]
    captions = sorted({json.loads(line)["caption"] for line in lines if line.strip()})[:600]
    foils = [foil for caption in captions for foil in actor_swap(caption, nlp=nlp)]
    both_people = sum(
        any(is_person_token(t) for t in nlp(foil.source["subject"]))
        and any(is_person_token(t) for t in nlp(foil.source["participant"]))
        for foil in foils
    )
    print(f"VITATECS captions: {len(foils)} swaps of {len(captions)}; two people: {both_people}")
    assert foils and both_people / len(foils) >= 0.9
