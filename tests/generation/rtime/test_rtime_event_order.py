"""The event-order check: order reversals rejected without the opposite caption (issue 36)."""

from __future__ import annotations

import pytest

from foilkit.generation.rtime.event_order import spacy_event_parser
from foilkit.generation.rtime.rewrites import ORDER_REASON, RewriteFilter
from foilkit.generation.rtime.temporal_words import TemporalLexicon

# Real RTime test captions (shared/data/rtime/test.json) and the issue's two reversals of them:
# "before"/"after" swapped, and "A, then B" told as "B and A"; beside each, a rewrite that
# restructures the sentence and keeps the order (which the check must keep).
BEFORE = (
    "A man with a long beard sits in the car and shows the car keys to the camera before "
    "turning his head to move the visor."
)
AFTER = (
    "A maintenance engineer sits at a white workbench and takes off the auxiliary equipment on "
    "his hands after finishing his work."
)
THEN = "The woman untied the brown ball of thread and then wrapped it back around."
CASES = [
    (BEFORE, BEFORE.replace(" before ", " after "), False),
    (
        BEFORE,
        "Before turning his head to move the visor, a man with a long beard sits in the car and "
        "shows the car keys to the camera.",
        True,
    ),
    (AFTER, AFTER.replace(" after ", " before "), False),
    (
        AFTER,
        "After finishing his work, a maintenance engineer sits at a white workbench and takes "
        "off the auxiliary equipment on his hands.",
        True,
    ),
    (THEN, "The woman wrapped it back around and untied the brown ball of thread.", False),
    (
        THEN,
        "The woman untied the brown ball of thread, and after that wrapped it back around.",
        True,
    ),
    (
        "A man opens the door and then walks into the room.",
        "A man walks into the room after he opens the door.",
        True,
    ),
    (
        "A man opens the door and then walks into the room.",
        "A man walks into the room before he opens the door.",
        False,
    ),
]


@pytest.fixture(scope="module")
def order_filter(sentence_embedder, nlp) -> RewriteFilter:
    from foilkit.generation.rtime.temporal_words import spacy_tokenizer

    return RewriteFilter(
        sentence_embedder,
        lexicon=TemporalLexicon.load(),
        tokenize=spacy_tokenizer(nlp),
        order_parser=spacy_event_parser(nlp),
    )


def assert_order_check(order_filter, caption: str, rewrite: str, keeps: bool) -> None:
    """The event-order check rejects ``rewrite`` of ``caption`` unless it ``keeps`` the order."""
    (verdict,) = order_filter.judge([(caption, [rewrite])])[0]
    by_order = [r for r in verdict.reasons if r.startswith(ORDER_REASON)]
    assert bool(by_order) is not keeps, verdict.reasons


def test_order_reversals_are_rejected_without_the_opposite_caption(order_filter) -> None:
    judged = order_filter.judge([(caption, [rewrite]) for caption, rewrite, _ in CASES])
    for (caption, rewrite, keeps), (verdict,) in zip(CASES, judged):
        by_order = [r for r in verdict.reasons if r.startswith(ORDER_REASON)]
        assert bool(by_order) is not keeps, (caption, rewrite, verdict.reasons)
        assert verdict.accepted is keeps, (caption, rewrite, verdict.reasons)
    (swapped,) = judged[0]
    assert f"{ORDER_REASON} (caption: show before turn)" in swapped.reasons
    # Without the event-order check, the swap passes every other check (the issue's finding).
    from dataclasses import replace

    (without,) = replace(order_filter, order_parser=None).judge([(BEFORE, [CASES[0][1]])])
    assert without[0].accepted


def test_the_order_is_read_from_the_structure(nlp) -> None:
    parse = spacy_event_parser(nlp)
    door, fronted, nominal, repeated = parse(
        [
            "A man opens the door and then walks into the room.",
            "After opening the door, a man walks into the room.",
            "An athlete gasps after a barbell workout.",
            "The woman puts the gift box in the carton first, and then puts the protective "
            "material (the airbag) in as well.",
        ]
    )
    assert door.before == fronted.before == {("open", "walk")}
    assert nominal.before == {("workout", "gasp")}
    assert repeated.before == {("put:box", "put:material")}  # one verb, two events
    assert door.reversals(parse(["A man walks into the room and opens the door."])[0]) == [
        ("open", "walk")
    ]


# issue 46: reversals in constructions the first rules did not read, on the tuning videos'
# captions (shared/data/rtime/test.json, videos 1-300), each beside a rewrite keeping the order.
SUNGLASSES = "A bald white man was singing and then took off his black sunglasses at a night club."
CLOUD = "A grey-black cloud obscures the view, and then a blue sky appears."
MEDIA = (
    "The man presses the button on the black panel to turn on the car media, then turns the "
    "button to adjust the sound."
)
SUITCASE = (
    "A man zipped the suitcase up, then locked it and locked the suitcase with a combination lock."
)
ISSUE_46 = [
    # "as soon as" orders its clause first, as "once" does
    (CLOUD, "As soon as the blue sky appears, a grey-black cloud obscures the view.", False),
    (CLOUD, "As soon as the grey-black cloud has obscured the view, a blue sky appears.", True),
    # a "before" clause the parser hangs on a purpose clause orders the verb above it too
    (
        MEDIA,
        "The man turns the button to adjust the sound before pressing the button on the black "
        "panel to turn on the car media.",
        False,
    ),
    # one verb told twice in the caption, once in the rewrite: matched by the verb
    (SUITCASE, "A man locked the suitcase with a combination lock, then zipped it up.", False),
    (SUITCASE, "A man zipped up the suitcase and then locked it with a combination lock.", True),
    # other verbs for the same events ("removed" for "took off"), and "began to sing" as "sing"
    (
        SUNGLASSES,
        "At a nightclub, a bald white man removed his dark sunglasses and afterwards began "
        "to sing.",
        False,
    ),
    (
        SUNGLASSES,
        "At a nightclub, a bald white man sang and afterwards removed his dark sunglasses.",
        True,
    ),
]


# issue 46, second pass (tuning videos again): what the small parser gets wrong. "then" hung on
# the verb before it; a past-tense verb parsed as a modifier inside the subject; a particle
# dropped in the rewrite ("wrote" for "wrote down").
LOUNGE = (
    "A woman in white clothes was lying on a lounge chair, swaying, then smiling at the camera."
)
HOODIE = (
    "A black man wearing sunglasses lifted his head took off his hoodie hat, and then smiled at "
    "the camera."
)
OFFICE = (
    "In a neat office, a man took off his hat, put on his glasses, took out his pen, and wrote "
    "down on paper under the yellow light."
)
ISSUE_46 += [
    (LOUNGE, "A woman in white clothes smiled at the camera, then lay on a lounge chair.", False),
    (LOUNGE, "A woman in white clothes lay on a lounge chair and then smiled at the camera.", True),
    (
        HOODIE,
        "A black man wearing sunglasses smiled at the camera, then lifted his head and took off "
        "his hoodie hat.",
        False,
    ),
    (
        HOODIE,
        "A black man wearing sunglasses took off his hoodie hat and then smiled at the camera.",
        True,
    ),
    (
        OFFICE,
        "In a neat office, notes were written on paper by a man before his hat was taken off.",
        False,
    ),
    (OFFICE, "In a neat office, a man took his hat off and then wrote on paper.", True),
]


@pytest.mark.parametrize(("caption", "rewrite", "keeps"), ISSUE_46)
def test_reversals_in_other_constructions_and_words(order_filter, caption, rewrite, keeps):
    assert_order_check(order_filter, caption, rewrite, keeps)


def test_other_verbs_are_matched_only_by_the_embedder(order_filter) -> None:
    """Without ``event_match`` a reversal told with other verbs shares no event and passes."""
    from dataclasses import replace

    rewrite = ISSUE_46[5][1]
    (verdict,) = replace(order_filter, event_match=None).judge([(SUNGLASSES, [rewrite])])[0]
    assert not [r for r in verdict.reasons if r.startswith(ORDER_REASON)]


# issue 46, third pass (tuning videos; the rewrites written before the rules): a text with no
# word that can tell a later event first is read in the order it tells its events, in each of
# its sequences (the main line; each clause told aside, "as ...", a participle, a purpose told
# first, apart); "having done" is such a word (a fronted "Having done B, A" keeps its order;
# its reversal is not caught: no rule orders a perfect participle); "followed by" a gerund, a
# relative clause that goes on with the story ("who then rides up"), a finite verb the parser
# took for a subject ("A car *drives* along ...") and a verb told twice by two subjects are
# read too.
FRIDGE = (
    "A lady put all kinds of fridge magnets on the door of a fridge, and then she opened the "
    "fridge's door."
)
TAP = "A tap is opening ,then a hand with a watch comes and turns it off."
CYCLIST = "A male cyclist rides up to the white railing, locks the bicycle on it and leaves."
GLOVES = (
    "A man in a white tank top pulls a pair of boxing gloves from his school bag, then stands "
    "up and walks to the side of the ring to put them on."
)
SLEEVES = (
    "A man in a white shirt rolls up the sleeves of both hands, then picks up a fountain pen, "
    "takes his trigonometry board to the other side, and taps the paper on the table."
)
BASKETBALL = (
    "A white woman inflates a basketball in her hands with the tube of a 12v car tire "
    "inflator, then dribbles to check if the inflation is successful."
)
CAR = (
    "A car drives along the walls of some houses, then meets a pink building after going a "
    "crossroad."
)
MAST = "A man in black is tying a blue canvas onto a sailing yacht mast to protect the mast."
THIRD_PASS = [
    (
        FRIDGE,
        "A lady opened the door of the fridge, followed by putting all kinds of magnets on it.",
        False,
    ),
    (
        FRIDGE,
        "Having put all kinds of fridge magnets on the door of a fridge, a lady opened it.",
        True,
    ),
    (TAP, "A hand wearing a watch turns off the tap, which subsequently opens.", False),
    (
        CYCLIST,
        "The bicycle is locked to the white railing by a male cyclist, who then rides up to it "
        "and leaves.",
        False,
    ),
    (
        GLOVES,
        "A man in a white tank top stands up and walks to the side of the ring to put them on "
        "and pulls a pair of boxing gloves from his school bag.",
        False,
    ),
    (
        SLEEVES,
        "A man in a white shirt picks up a fountain pen, takes his trigonometry board to the "
        "other side, and taps the paper on the table and rolls up the sleeves of both hands.",
        False,
    ),
    (
        BASKETBALL,
        "A white woman dribbles to check if the inflation is successful and inflates a "
        "basketball in her hands with the tube of a 12v car tire inflator.",
        False,
    ),
    (
        CAR,
        "A car drives along the walls of some houses and then, after going through a "
        "crossroad, meets a pink building.",
        True,
    ),
    (
        MAST,
        "To safeguard the mast, a man dressed in black is securing a blue canvas to it on a "
        "sailing yacht.",
        True,
    ),
]


@pytest.mark.parametrize(("caption", "rewrite", "keeps"), THIRD_PASS)
def test_reversals_read_in_told_order(order_filter, caption, rewrite, keeps):
    assert_order_check(order_filter, caption, rewrite, keeps)


@pytest.mark.parametrize(
    ("text", "in_order"),
    [
        ("A man opens the door and then walks into the room.", True),
        ("A man opens the door, after which he walks into the room.", True),  # "then"
        ("The numbers flash one after another.", True),  # no order of events
        ("A man walks into the room after he opens the door.", False),
        ("Before walking into the room, a man opens the door.", False),
        ("As soon as the door opens, a man walks in.", False),
        ("By the time he walks in, the man has opened the door.", False),
        ("A man walks into the room, having opened the door.", False),
        ("A man walked into the room; he had opened the door.", False),
        ("A man walks into the room, but first he opens the door.", False),
        ("First a man opens the door; later he walks into the room.", True),
    ],
)
def test_a_text_tells_its_events_in_order_without_an_inverting_word(nlp, text, in_order):
    from foilkit.generation.rtime.event_order import told_in_order

    assert told_in_order(nlp(text)) is in_order


# issue 46, fourth pass: what words state outweighs the order told -- a perfect ("had done",
# "Having done"), "earlier", "by the time", a negated "until", "followed by him doing" -- and
# three misreadings (a verb tagged as a noun beside a verb, a purpose clause, one verb with two
# objects told apart by their adjectives). Captions of the tuning videos and of the second
# held-out file, which the fourth pass was tuned on.
GAME = (
    "A man inserted the game disc into the drive of the game console and pressed the exit button."
)
STOVE = (
    "A man turned on the kitchen's electric stove, pressing the button to rise the temperature, "
    "and then he turned it off."
)
TORTILLAS = "Three tortillas are placed on a white patterned plate, and then one of them is opened."
DOOR = "A man opens the door and then walks into the room."
GLASSES = (
    "The camera first shifts from the girl's face to the simulated glasses placed on her lap, "
    "and then the girl puts on the simulated eyes."
)
MAP = "The camera shows a blue map of the world and gradually focuses on North America."
BOOKS = "The boy in pink first put the white book into the bag, then put the yellow book into it."
FOURTH_PASS = [
    (GAME, "Having pressed the exit button, a man inserted the game disc into the drive.", False),
    (GAME, "Having inserted the game disc into the drive, a man pressed the exit button.", True),
    (GAME, "A man inserted the game disc, having pressed the exit button earlier.", False),
    (STOVE, "A man turned on the kitchen's electric stove; earlier, he had turned it off.", False),
    (STOVE, "A man turned off the kitchen's electric stove; earlier, he had turned it on.", True),
    (
        STOVE,
        "By the time the man turned on the kitchen's electric stove, he had already turned it off.",
        False,
    ),
    (
        TORTILLAS,
        "Three tortillas are not placed on the white patterned plate until one of them has been "
        "opened.",
        False,
    ),
    (
        TORTILLAS,
        "None of the tortillas is opened until all three have been placed on the plate.",
        True,
    ),
    (DOOR, "A man walks into the room, followed by him opening the door.", False),
    (DOOR, "A man opens the door, followed by him walking into the room.", True),
    (
        GLASSES,
        "The girl puts on the simulated eyes, and the camera first shifts from the girl's face to "
        "the simulated glasses placed on her lap.",
        False,
    ),
    (
        MAP,
        "As soon as the camera has focused on North America, it gradually pulls out to show a blue "
        "map of the world.",
        False,
    ),
    (
        BOOKS,
        "The boy in pink put the yellow book into the bag and then put the white book into it.",
        False,
    ),
    (
        BOOKS,
        "The boy in pink put the white book into the bag and then put the yellow book into it.",
        True,
    ),
]


@pytest.mark.parametrize(("caption", "rewrite", "keeps"), FOURTH_PASS)
def test_what_words_state_outweighs_the_order_told(order_filter, caption, rewrite, keeps):
    assert_order_check(order_filter, caption, rewrite, keeps)


@pytest.mark.parametrize(
    ("text", "before"),
    [
        ("A man walked in; earlier, he had opened the door.", {("open", "walk")}),
        ("By the time he walked in, he had opened the door.", {("open", "walk_in")}),
        ("He does not walk in until he has opened the door.", {("open", "walk")}),
        ("He waits until the door opens.", {("wait", "open")}),
        ("She did not smile until the end of the song.", {("end", "smile")}),
    ],
)
def test_stated_order(nlp, text, before):
    (order,) = spacy_event_parser(nlp)([text])
    assert order.before == before
