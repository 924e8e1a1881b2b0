"""Actor-swapping foils (ViLMA §3.3, Situation Awareness): the participants change roles.

"The man in a tank top kicks towards a ninja on the left." ->
"A ninja on the left kicks towards the man in a tank top." The subject noun phrase and the
main verb's other participant (its direct object, or the object of its first preposition) are
found with spaCy's dependency parse and exchanged; no NLI or grammaticality filter is applied,
as in the paper (the published subtest was swapped by hand, so parsed swaps need review).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from foilkit.generation.foil import Foil
from foilkit.generation.spacy_pipeline import pipeline_id

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Span, Token

RULE = "vilma.actor_swap"
FOIL_TYPE = "actor_swap"
_SUBJECTS = ("nsubj", "nsubjpass")
_OBJECTS = ("dobj", "obj", "dative")
_DETERMINERS = {"the", "a", "an", "some", "this", "that", "these", "those"}


def swap_spans(text: str, first: tuple[int, int], second: tuple[int, int]) -> str:
    """``text`` with the character spans ``first`` and ``second`` exchanged.

    A determiner that moves away from or into the sentence start has its case adjusted.
    """
    (a0, a1), (b0, b1) = sorted([first, second])
    if a1 > b0:
        raise ValueError(f"spans {first} and {second} of {text!r} overlap")
    left, right = text[a0:a1], text[b0:b1]
    if a0 == 0:
        right, left = _sentence_initial(right), _mid_sentence(left)
    return text[:a0] + right + text[a1:b0] + left + text[b1:]


def _sentence_initial(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:]


def _mid_sentence(phrase: str) -> str:
    first, _, rest = phrase.partition(" ")
    return (
        (first.lower() + (" " + rest if rest else "")) if first.lower() in _DETERMINERS else phrase
    )


def _phrase(token: Token) -> Span:
    """The noun phrase headed by ``token``: its whole (contiguous) subtree."""
    return token.doc[token.left_edge.i : token.right_edge.i + 1]


def _second_participant(verb: Token) -> Token | None:
    for child in verb.children:
        if child.dep_ in _OBJECTS:
            return child
    for child in verb.children:
        if child.dep_ in ("prep", "agent"):
            for grandchild in child.children:
                if grandchild.dep_ == "pobj":
                    return grandchild
    return None


def actor_swap(caption: str, *, nlp: Language) -> list[Foil]:
    """The actor-swapped foil of ``caption``, or ``[]`` when it lacks two participants."""
    doc = nlp(caption)
    for verb in (t for t in doc if t.dep_ == "ROOT"):
        subject = next((c for c in verb.children if c.dep_ in _SUBJECTS), None)
        other = _second_participant(verb)
        if subject is None or other is None:
            continue
        first, second = _phrase(subject), _phrase(other)
        if first.end > second.start and second.end > first.start:
            continue
        text = swap_spans(
            caption,
            (first.start_char, first.end_char),
            (second.start_char, second.end_char),
        )
        return [
            Foil(
                text,
                FOIL_TYPE,
                RULE,
                model_ids={"parser": pipeline_id(nlp)},
                source={"subject": first.text, "participant": second.text, "verb": verb.text},
            )
        ]
    return []
