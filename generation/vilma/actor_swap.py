"""Actor-swapping foils (ViLMA §3.3, Situation Awareness): the actors change roles.

"The man in a tank top kicks towards a ninja on the left." ->
"A ninja on the left kicks towards the man in a tank top." ViLMA swapped its published items by
hand; foilkit swaps the subject, which must be a person, with the next person the caption
names (:mod:`.people`), each with the words that describe it, and keeps the rest in place:

* the subject is everything before the main verb ("The man in the car looked ...");
* another actor keeps its determiner and adjectives, what it is "in" when that is worn ("in a
  tank top", "in red"; not "in the kitchen"), "with", "without" and "on" phrases, participles
  ("wearing black", "dressed in white", "lying on the ground") and its relative clause;
* the verb agrees with the new subject ("The men in leather wrap the man" -> "The man ...
  wraps the men in leather"), moved pronouns take the case of their new place, and when the two
  actors differ in gender the pronouns that refer to them follow ("A guy aims his gun at a
  woman" -> "A woman aims her gun at a guy").

spaCy's small English pipeline often tags a verb after a noun as a plural noun ("A man in a
grey suit *stares* ahead"); the main verb is then recognised by the lemmatizer's verb list and
what follows it. No NLI or grammaticality filter is applied, as in the paper.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from foilkit.generation.foil import Foil
from foilkit.generation.spacy_pipeline import pipeline_id
from foilkit.generation.vilma.english import third_person
from foilkit.generation.vilma.people import is_clothing, is_person_token, person_gender

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Token

RULE = "vilma.actor_swap"
FOIL_TYPE = "actor_swap"
_DETERMINERS = {"the", "a", "an", "some", "this", "that", "these", "those"}
_NOUN_PHRASE_POS = {"DET", "ADJ", "NUM", "NOUN", "PROPN"}
#: Prepositions whose phrase describes the person before them ("in" only for what is worn).
_PREPOSITIONS = {"with", "without", "on"}
_PARTICIPLES = {
    "wearing",
    "dressed",
    "attired",
    "clad",
    "holding",
    "carrying",
    "lying",
    "standing",
    "sitting",
    "seated",
    "covered",
    "armed",
    "donning",
}
#: Heads of "with" phrases that say how something is done, not who the person is.
_MANNERS = {
    "expression",
    "concern",
    "suspicion",
    "interest",
    "fear",
    "anger",
    "joy",
    "surprise",
    "care",
    "ease",
    "force",
    "difficulty",
    "determination",
    "caution",
    "curiosity",
    "smile",
}
_QUANTITIES = {"group", "couple", "pair", "crowd", "team", "bunch", "few", "number", "lot"}
#: Pronouns that refer back to an actor: never the other actor themselves.
_ANAPHORS = {"he", "him", "she", "her", "they", "them", "himself", "herself", "themselves"}
_PLURAL_PRONOUNS = {"they", "them", "we", "us", "you"}
_NOMINATIVE = {"him": "he", "her": "she", "them": "they", "me": "I", "us": "we"}
_ACCUSATIVE = {"he": "him", "she": "her", "they": "them", "i": "me", "we": "us"}
_SINGULAR_TO_PLURAL = {"is": "are", "was": "were", "has": "have", "does": "do"}
_PLURAL_TO_SINGULAR = {plural: singular for singular, plural in _SINGULAR_TO_PLURAL.items()}
_FLIP = {
    "his": "her",
    "him": "her",
    "he": "she",
    "himself": "herself",
    "she": "he",
    "herself": "himself",
    "hers": "his",
}
#: What may follow a main verb the tagger took for a noun ("stares *ahead*", "smiles *at*").
_AFTER_VERB_POS = {"ADV", "ADP", "DET", "SCONJ", "PRON", "PUNCT", "PART", "NUM"}


def swap_spans(text: str, first: tuple[int, int], second: tuple[int, int]) -> str:
    """``text`` with the character spans ``first`` and ``second`` exchanged.

    A determiner that moves away from or into the sentence start has its case adjusted.
    """
    (a0, a1), (b0, b1) = sorted([first, second])
    if a1 > b0:
        raise ValueError(f"spans {first} and {second} of {text!r} overlap")
    left, right = text[a0:a1], text[b0:b1]
    return _apply(text, [(a0, a1, right), (b0, b1, left)])


def _sentence_initial(phrase: str) -> str:
    return phrase[:1].upper() + phrase[1:]


def _mid_sentence(phrase: str) -> str:
    first, _, rest = phrase.partition(" ")
    return (
        (first.lower() + (" " + rest if rest else "")) if first.lower() in _DETERMINERS else phrase
    )


def _looks_like_verb(token: Token, verbs: frozenset[str]) -> bool:
    """A word the tagger called a noun that is a verb here: "stares", "smiles" + ahead/at."""
    word = token.lower_
    forms = {word, word[:-1], word[:-2]} if word.endswith("s") else {word}
    if word.endswith("ies"):
        forms.add(word[:-3] + "y")  # "hurries"
    if word.endswith("ed"):
        forms |= {word[:-1], word[:-2]}
    if not forms & verbs or token.tag_ not in ("NNS", "VBN", "VBD") or token.i == 0:
        return False
    if is_clothing(token):  # "blue shirts", "white pants": worn, not done
        return False
    following = token.nbor(1) if token.i + 1 < len(token.doc) else None
    before = token.nbor(-1)
    if following is None or before.pos_ in ("DET", "ADP"):
        return False
    if following.pos_ in _AFTER_VERB_POS or following.tag_ in ("VBN", "VBG"):
        return True
    # "a boy in a tan shirt *squirts* water": a person or what they wear, then the verb
    return token.tag_ == "NNS" and (is_clothing(before) or is_person_token(before))


def _main_verb(doc: Doc, after: int, verbs: frozenset[str]) -> int | None:
    """The main verb after token ``after``: the first finite verb, or a verb the tagger took
    for a noun before it."""
    for token in doc[after + 1 :]:
        if token.lower_ in _PARTICIPLES and token.nbor(-1).pos_ in ("NOUN", "PROPN", "PUNCT"):
            continue  # "the woman dressed in black", "a man, wearing ..."
        if token.tag_ in ("VBZ", "VBP", "VBD", "MD") or (
            token.pos_ == "AUX" and token.lower_ in ("is", "are", "was", "were")
        ):
            return token.i
        if _looks_like_verb(token, verbs):
            return token.i
    return None


def _noun_phrase_end(doc: Doc, i: int, stop: int) -> int:
    """The end of the noun phrase starting at token ``i`` ("a white and yellow jersey")."""
    end = i
    while end < stop:
        token = doc[end]
        if (
            token.pos_ in _NOUN_PHRASE_POS
            or token.text == "-"
            or (token.tag_ in ("VBN", "VBG") and end > i and doc[end - 1].text == "-")
            or token.pos_ == "CCONJ"
            and i < end < stop - 1
            and doc[end + 1].pos_ in _NOUN_PHRASE_POS
            or token.pos_ == "ADV"
            and end < stop - 1
            and doc[end + 1].pos_ == "ADJ"
        ):
            end += 1
        elif (
            token.text == ","
            and i < end < stop - 1
            and doc[end - 1].pos_ == "ADJ" == doc[end + 1].pos_
        ):
            end += 1  # "short, dark hair"
        else:
            break
    return end


def _phrase_start(token: Token) -> int:
    doc = token.doc
    start = token.i
    while start > 0 and (
        doc[start - 1].pos_ in _NOUN_PHRASE_POS
        or doc[start - 1].text == "-"
        or (doc[start - 1].tag_ in ("VBN", "VBG") and doc[start - 1].dep_ == "amod")
        or (doc[start - 1].pos_ == "ADV" and doc[start].pos_ in ("ADJ", "VERB"))
        or (start > 1 and doc[start - 2].text == "-" and doc[start - 1].tag_ in ("VBN", "VBG"))
    ):
        start -= 1
    if start > 1 and doc[start - 1].lower_ == "of" and doc[start - 2].lower_ in _QUANTITIES:
        start = _phrase_start(doc[start - 2])  # "a group of men"
    return start


def _phrase_span(token: Token, stop: int) -> tuple[int, int]:
    """Token span of the person phrase headed by ``token`` (see the module docstring), not
    reaching past token ``stop``."""
    doc = token.doc
    end = token.i + 1
    while end < stop:
        word = doc[end]
        if word.lower_ == "in" or word.lower_ in _PREPOSITIONS:
            after = _noun_phrase_end(doc, end + 1, stop)
            last = doc[after - 1]
            if after == end + 1 or is_person_token(last):
                break
            if word.lower_ == "in" and not is_clothing(last):
                break
            if last.lemma_.lower() in _MANNERS:  # "looks at her *with concern*"
                break
            end = after
        elif word.lower_ in _PARTICIPLES:
            after = end + 1
            if after < stop and doc[after].pos_ == "ADP":
                after += 1
            after = _noun_phrase_end(doc, after, stop)
            if after == end + 1 or is_person_token(doc[after - 1]):
                break
            end = after
        elif word.tag_ == "VBG" and word.dep_ == "acl" and word.left_edge.i >= end:
            end = min(word.right_edge.i + 1, stop)  # "people coming down the stairs"
        elif word.dep_ == "relcl" and word.head.i == token.i and word.left_edge.i >= end:
            end = min(word.right_edge.i + 1, stop)
        elif word.lower_ in ("who", "that") and word.head.dep_ == "relcl":
            end = min(word.head.right_edge.i + 1, stop)
        else:
            break
    return _phrase_start(token), end


def _trim(doc: Doc, start: int, end: int) -> int:
    """``end`` moved left past trailing punctuation and adverbs ("the boy *affectionately*")."""
    while end > start + 1 and doc[end - 1].pos_ in ("PUNCT", "ADV"):
        end -= 1
    return end


def _is_plural(token: Token, span: tuple[int, int]) -> bool:
    if token.pos_ == "PRON":
        return token.lower_ in _PLURAL_PRONOUNS
    coordinated = any(t.lower_ == "and" for t in token.doc[span[0] : token.i])
    return token.tag_ in ("NNS", "NNPS") or token.lower_ == "people" or coordinated


def _agree(verb: Token, plural: bool) -> str:
    """``verb`` in the number of its new subject (present tense, and was/were)."""
    word = verb.text
    table = _SINGULAR_TO_PLURAL if plural else _PLURAL_TO_SINGULAR
    if word.lower() in table:
        return table[word.lower()]
    singular = verb.tag_ == "VBZ" or (verb.tag_ == "NNS" and word.endswith("s"))
    if plural and singular:  # "stares" -> "stare", "carries" -> "carry", "pushes" -> "push"
        if word.endswith("ies"):
            return word[:-3] + "y"
        if word.endswith(("shes", "ches", "sses", "xes", "zes", "oes")):
            return word[:-2]
        return word[:-1]
    if not plural and verb.tag_ == "VBP":
        return third_person(word)
    return word


def _moved(phrase: str, head: Token, *, to_subject: bool) -> str:
    """A phrase as it reads in its new place: a pronoun in the case of that place."""
    if head.pos_ != "PRON":
        return phrase
    table = _NOMINATIVE if to_subject else _ACCUSATIVE
    replaced = table.get(head.lower_)
    return phrase if replaced is None else phrase.replace(head.text, replaced, 1)


def _flip_pronouns(doc: Doc, subject: Token, other: Token, spans) -> list[tuple[int, int, str]]:
    """When the actors differ in gender, the pronouns outside their phrases follow them."""
    genders = person_gender(subject), person_gender(other)
    if None in genders or genders[0] == genders[1]:
        return []
    edits = []
    for token in doc:
        if any(start <= token.i < end for start, end in spans):
            continue
        word = token.lower_
        if word == "her":
            following = doc[token.i + 1] if token.i + 1 < len(doc) else None
            possessive = token.tag_ == "PRP$" or (
                following is not None
                and (following.pos_ in ("NOUN", "ADJ") or following.lower_ in ("left", "right"))
            )
            new = "his" if possessive else "him"
        elif word in _FLIP:
            new = _FLIP[word]
        else:
            continue
        if token.text[:1].isupper():
            new = new.capitalize()
        edits.append((token.idx, token.idx + len(token.text), new))
    return edits


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    """``text`` with each (start, end, replacement) applied; a phrase that moves into or out of
    the sentence start has its first word's case adjusted."""
    for start, end, replacement in sorted(edits, reverse=True):
        if start == 0:
            replacement = _sentence_initial(replacement)
        else:
            replacement = _mid_sentence(replacement)
        text = text[:start] + replacement + text[end:]
    return text


def _verb_follows(token: Token, verbs: frozenset[str]) -> bool:
    """Whether the word after ``token`` is a verb the tagger took for a noun ("man stares")."""
    doc = token.doc
    return token.i + 1 < len(doc) and _looks_like_verb(doc[token.i + 1], verbs)


def person_heads(doc: Doc, verbs: frozenset[str] = frozenset()) -> list[Token]:
    """Heads of the phrases that name people (a possessive pronoun or a part of a compound
    is not one, unless the tagger made the verb after it a noun: ``verbs``)."""
    return [
        t
        for t in doc
        if t.pos_ in ("NOUN", "PROPN", "PRON")
        and (
            t.dep_ not in ("compound", "conj")
            or _verb_follows(t, verbs)
            or (t.dep_ == "conj" and not is_person_token(t.head))  # "the screen and the man"
        )
        and not (t.dep_ == "poss" and t.pos_ == "PRON")
        and is_person_token(t)
    ]


def actor_swap(caption: str, *, nlp: Language) -> list[Foil]:
    """The actor-swapped foil of ``caption``, or ``[]`` when its subject is not a person or it
    names no second person (see the module docstring)."""
    verbs = _verb_lemmas_of(nlp)
    doc = nlp(caption)
    people = person_heads(doc, verbs)
    if not people:
        return []
    subject = people[0]
    verb = _main_verb(doc, subject.i, verbs)
    if verb is None:
        return []
    first = (_phrase_start(subject), _trim(doc, subject.i, verb))
    other = next(
        (
            t
            for t in people
            if t.i > verb
            and t.lower_ not in _ANAPHORS
            # "his mother": a relation of the subject, who cannot trade places with them
            and not any(c.dep_ == "poss" and c.pos_ == "PRON" for c in t.children)
        ),
        None,
    )
    if other is None:
        return []
    second = _phrase_span(other, len(doc))
    second = (max(second[0], verb + 1), _trim(doc, second[0], second[1]))
    span_a, span_b = doc[first[0] : first[1]], doc[second[0] : second[1]]
    edits = [
        (span_a.start_char, span_a.end_char, _moved(span_b.text, other, to_subject=True)),
        (span_b.start_char, span_b.end_char, _moved(span_a.text, subject, to_subject=False)),
        *_flip_pronouns(doc, subject, other, (first, second)),
    ]
    agreed = _agree(doc[verb], _is_plural(other, second))
    if agreed != doc[verb].text:
        edits.append((doc[verb].idx, doc[verb].idx + len(doc[verb].text), agreed))
    return [
        Foil(
            _apply(caption, edits),
            FOIL_TYPE,
            RULE,
            model_ids={"parser": pipeline_id(nlp)},
            source={"subject": span_a.text, "participant": span_b.text, "verb": doc[verb].text},
        )
    ]


def _verb_lemmas_of(nlp: Language) -> frozenset[str]:
    """The verb lemmas of the pipeline's rule lemmatizer (empty when it has none)."""
    cached = getattr(nlp, "_foilkit_verb_lemmas", None)
    if cached is not None:
        return cached
    verbs: frozenset[str] = frozenset()
    if "lemmatizer" in nlp.pipe_names:
        lookups = nlp.get_pipe("lemmatizer").lookups
        if lookups.has_table("lemma_index"):
            verbs = frozenset(lookups.get_table("lemma_index").get("verb", ()))
    try:
        nlp._foilkit_verb_lemmas = verbs
    except AttributeError:
        pass
    return verbs
