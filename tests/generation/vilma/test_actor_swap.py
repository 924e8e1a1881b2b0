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


#: Published ViLMA actor swaps (SRL_Actor_Swapping.json: caption, foil), one or more per rule
#: of :mod:`foilkit.generation.vilma.actor_swap`; each is reproduced letter for letter.
PUBLISHED_SWAPS = {
    "the actors trade places with what describes them": [
        (
            "The men in leather gently wrap the man dressed in white.",
            "The man dressed in white gently wraps the men in leather.",
        ),
        (
            "A guy in a black outfit aims his gun at a woman in a black hat.",
            "A woman in a black hat aims her gun at a guy in a black outfit.",
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
    "a relative clause's verb is not the main verb": [
        (
            "The man who stabbed the girl stares downward at the girl in the white shirt.",
            "The girl in the white shirt stares downward at the man who stabbed the girl.",
        ),
    ],
    "the root verb in its base or past participle form is the main verb": [
        (
            "The people in coats throw quickly at the man in the blue suit.",
            "The man in the blue suit throws quickly at the people in coats.",
        ),
        (
            "The lady in a white dress smiled and laughed while the person sipped from their bowl.",
            "The person smiled and laughed while the lady in a white dress sipped from their bowl.",
        ),
    ],
    "coordinated people move together and the verb agrees": [
        ("The baby stares up at the man and woman.", "The man and woman stare up at the baby."),
        (
            "The man in a brown shirt speaks quietly, telling the woman and child to get down.",
            "The woman and child speak quietly, telling the man in a brown shirt to get down.",
        ),
        (
            "The kid with the red undershirt looked downwards at the guy with the chest piece on"
            " and the kid with the blue shirt.",
            "The guy with the chest piece on and the kid with the blue shirt looked downwards at"
            " the kid with the red undershirt.",
        ),
    ],
    "the other actor's own verb agrees with the subject that takes its place": [
        (
            "A baby dressed in a white dress stares ahead while a man in a black vest and a woman"
            " in a floral dress are present.",
            "A man in a black vest and a woman in a floral dress stare ahead while a baby dressed"
            " in a white dress is present.",
        ),
        (
            "A guy with a bald head struggles as a woman with a white sweater clings to him"
            " through a cage.",
            "A woman with a white sweater struggles as a guy with a bald head clings to her"
            " through a cage.",
        ),
    ],
    "a relative clause after a comma moves with its person": [
        (
            "A lady in a gray outfit stares down at a man in a gray jacket, who is lying with his"
            " back to the corner.",
            "A man in a gray jacket, who is lying with his back to the corner stares down at a"
            " lady in a gray outfit.",
        ),
    ],
    "a place phrase on the person's description moves, one on the verb stays": [
        (
            "The gentleman dressed in a suit speaks to the individual dressed in white in the"
            " kitchen.",
            "The individual dressed in white in the kitchen speaks to the gentleman dressed in a"
            " suit.",
        ),
        (
            "A man with a black jacket taps on the person lying on the ground in a home office.",
            "The person lying on the ground in a home office taps on a man with a black jacket.",
        ),
        (
            "The woman in a red shirt rubs her neck while talking to the man in a gray shirt on"
            " the side of the road.",
            "The man in a gray shirt on the side of the road rubs his neck while talking to the"
            " woman in a red shirt.",
        ),
        (
            "The woman in a pink dress stares above at a girl with a purple overall hanging on a"
            " steel pipe on the roof.",
            "A girl with a purple overall hanging on a steel pipe on the roof stares above at the"
            " woman in a pink dress.",
        ),
        (
            "Firefighters lifted a person on a stretcher.",
            "A person lifted firefighters on a stretcher.",
        ),
    ],
    "where an action lands on the body stays": [
        (
            "A man with short hair kisses a woman on the neck.",
            "A woman kisses a man with short hair on the neck.",
        ),
    ],
    "a bare participle stays": [
        (
            "Two men are gazing forward at people fighting.",
            "People are gazing forward at two men fighting.",
        ),
    ],
    "a description that refers to the subject by a pronoun stays": [
        (
            "A woman kicks a man attacking her in the chest.",
            "A man kicks a woman attacking him in the chest.",
        ),
        (
            "The man driving the red automobile noticed a police officer riding a bicycle in"
            " front of him.",
            "A police officer riding a bicycle noticed the man driving the red automobile in"
            " front of him.",
        ),
        (
            "The woman with blonde hair throws the man in the tank top with all her strength.",
            "The man in the tank top throws the woman with blonde hair with all his strength.",
        ),
    ],
    "a second mention of the same noun keeps its place": [
        (
            "A woman in a dress turns around another woman.",
            "A woman turns around another woman in a dress.",
        ),
        (
            "The woman wearing a striped shirt grabbed the other woman by the wrist.",
            "The woman grabbed the other woman wearing a striped shirt by the wrist.",
        ),
    ],
    "pronouns take the number of the actor now in their referent's place": [
        (
            "The man in red and black tights plunged his head through the ice towards the people"
            " in hockey gear.",
            "The people in hockey gear plunged their head through the ice towards the man in red"
            " and black tights.",
        ),
        (
            "A black man surveys the people around him.",
            "The people survey a black man around them.",
        ),
    ],
    "a with phrase keeps what it holds on the body": [
        (
            "Men attired in white pants fire a rifle at a man with a bucket on his head.",
            "A man with a bucket on his head fires a rifle at men attired in white pants.",
        ),
    ],
    "a participle clause moves without its adverbial clause": [
        (
            "The man attired in a brown suit takes notice of the young lady sporting a white"
            " nightgown as she stands by the bookshelf.",
            "The young lady sporting a white nightgown takes notice of the man attired in a brown"
            " suit as he stands by the bookshelf.",
        ),
    ],
    "what is worn and coordinated descriptions move whole": [
        (
            "The woman is hit in the face by the man in the turban.",
            "The man in the turban is hit in the face by the woman.",
        ),
        (
            "The woman with blonde hair brushes down a dirt path and sees a man in a green outfit"
            " and dark hair.",
            "A man in a green outfit and dark hair brushes down a dirt path and sees the woman"
            " with blonde hair.",
        ),
    ],
    "a verb the tagger took for a noun ends a garment's noun phrase": [
        (
            "The group of men on horses leave outside as the man in a white shirt and vest"
            " watches.",
            "The man in a white shirt and vest leaves outside as the group of men on horses watch.",
        ),
    ],
    "a verb in -zes loses only its -s": [
        (
            "The man in uniform gazes ahead at the men in white.",
            "The men in white gaze ahead at the man in uniform.",
        ),
    ],
}
_CASES = [
    pytest.param(caption, foil, id=f"{rule}: {caption[:40]}")
    for rule, pairs in PUBLISHED_SWAPS.items()
    for caption, foil in pairs
]


@pytest.mark.parametrize(("caption", "foil"), _CASES)
def test_published_swaps_rule_by_rule(nlp, caption, foil):
    (swapped,) = actor_swap(caption, nlp=nlp)
    assert swapped.text == foil


def test_the_rule_cases_are_published_items(published_swaps):
    published = set(published_swaps)
    missing = [
        pair for pairs in PUBLISHED_SWAPS.values() for pair in pairs if pair not in published
    ]
    assert not missing


def test_a_swap_that_changes_nothing_is_no_foil(nlp, published_swaps):
    # ViLMA published this caption with itself as its foil: two identical descriptions.
    caption = (
        "A gentleman wearing sunglasses turns to the left, and another gentleman wearing"
        " sunglasses follows suit."
    )
    assert (caption, caption) in published_swaps
    assert actor_swap(caption, nlp=nlp) == []


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
    # Measured 81.4% word for word, 83.4% up to articles (82.5% / 84.5% before the reciprocal
    # rule of issue 36); the target is 80%.
    assert exact / n >= 0.80


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
