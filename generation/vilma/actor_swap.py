"""Actor-swapping foils (ViLMA §3.3, Situation Awareness): the actors change roles.

"The man in a tank top kicks towards a ninja on the left." ->
"A ninja on the left kicks towards the man in a tank top." ViLMA swapped its published items by
hand; foilkit swaps the subject, which must be a person, with the next person the caption
names (:mod:`.people`), each with the words that describe it, and keeps the rest in place:

* the subject is everything before the main verb ("The man in the car looked ...", "The man
  who stabbed the girl stares ..."); a relative clause's verb is not the main verb;
* another actor keeps its determiner and adjectives, what it is "in" when that is worn ("in a
  tank top", "in red"), "with" and "without" phrases ("with a bucket on his head"), participles
  ("wearing black", "lying on the ground"), its relative clause (", who is lying ..."), the
  people coordinated with it ("the man and woman"), an "on" phrase the parser attaches to it
  ("a ninja on the left") and the place phrases the parser attaches to its description ("the
  individual dressed in white in the kitchen");
* what stays in place: a place phrase on the person's noun alone or on the verb ("talks to a man
  in the yard", "lifted a person on a stretcher"), where an action lands on the body ("kisses a
  woman on the neck"), how it is done ("with concern"), a bare participle ("gazing at people
  *fighting*") and a phrase that refers to the subject by a pronoun ("a man attacking her", "a
  bicycle in front of him");
* "another" and "the other" stay in the later place when both phrases name the same noun: they
  mark a second mention ("A woman in a dress turns around another woman." -> "A woman turns
  around another woman in a dress."); a swap that changes nothing is no foil;
* the verb agrees with the new subject ("The men in leather wrap the man" -> "The man ...
  wraps the men in leather"), and so does the other actor's own verb ("... while a man and a
  woman are present" -> "... while a baby is present"); moved pronouns take the case of their
  new place, a common noun leaving the sentence start its lower case, and a pronoun outside the
  two phrases that refers to one actor takes the gender and number of the actor now in that
  actor's place ("A guy aims his gun at a woman" -> "A woman aims her gun at a guy"; "...
  plunged his head towards the people" -> "The people plunged their head ..."); when the new
  occupant's gender is unknown ("person") the pronoun is kept.

spaCy's small English pipeline often tags a verb after a noun as a plural noun ("A man in a
grey suit *stares* ahead"); the main verb is then recognised by the lemmatizer's verb list and
what follows it. No NLI or grammaticality filter is applied, as in the paper.

Two swaps are never made, since they give no foil (issue 36, measured on held-out VITATECS
captions by ``foilkit generate quality actor-swap``): the viewer ("how *you* can use a pen",
"shows *you* how to fry food") is no actor in the video, so first and second person pronouns
are never swapped; and a *reciprocal* predicate ("fights with", "is talking with", "shakes hands
with": :data:`RECIPROCAL_VERBS`) says the same of both actors, so swapping them keeps the
meaning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from foilkit.builders.spacy_pipeline import pipeline_id
from foilkit.generation.foil import Foil
from foilkit.generation.vilma.english import third_person
from foilkit.generation.vilma.people import (
    is_body_part,
    is_clothing,
    is_garment,
    is_person_token,
    person_gender,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from spacy.language import Language
    from spacy.tokens import Doc, Token

RULE = "vilma.actor_swap"
FOIL_TYPE = "actor_swap"
_DETERMINERS = {"the", "a", "an", "some", "this", "that", "these", "those", "another"}
_NOUN_PHRASE_POS = {"DET", "ADJ", "NUM", "NOUN", "PROPN"}
#: Prepositions whose phrase describes the person before them.
_PREPOSITIONS = {"with", "without"}
#: Prepositions of place: their phrase goes with a person when the parser attaches it to the
#: person's description ("the individual dressed in white in the kitchen"); attached to the
#: person alone it says where the action happens ("talks to a man in the yard"), except for
#: "on" ("a ninja on the left", "the man on the horse").
_PLACES = frozenset("in on at near inside beside behind by under above around".split())
_RELATIVE_PRONOUNS = {"who", "whom", "whose", "that"}
_PARTICIPLES = frozenset(
    "wearing dressed attired clad holding carrying lying standing sitting seated covered "
    "armed donning sporting".split()
)
#: Heads of "with" phrases that say how something is done, not who the person is.
_MANNERS = frozenset(
    "expression concern suspicion interest fear anger anxiety joy surprise care ease "
    "force strength difficulty determination caution curiosity smile".split()
)
#: Words that end a "with" phrase ("with her hair *up*", "with the chest piece *on*").
_PARTICLES = {"up", "down", "on", "off", "out", "open"}
_QUANTITIES = {"group", "couple", "pair", "crowd", "team", "bunch", "few", "number", "lot"}
#: Determiners of a second mention: they stay in the later place.
_SECOND_MENTIONS = ("another ", "the other ")
#: Pronouns that refer back to an actor: never the other actor themselves.
_ANAPHORS = {"he", "him", "she", "her", "they", "them", "himself", "herself", "themselves"}
#: The viewer and the speaker: not actors in the video ("shows you how to fry food").
_VIEWER = {"you", "your", "yourself", "yourselves", "i", "me", "we", "us", "myself", "ourselves"}
#: Verbs whose "with" object and subject do the same thing to each other ("fights with", "is
#: talking with"): a swap keeps the meaning. Verbs with a direct object ("hugs", "embraces") are
#: not here: who holds whom shows in the video, and ViLMA publishes those swaps as foils.
RECIPROCAL_VERBS = frozenset(
    "fight argue chat talk converse dance wrestle shake quarrel spar compete flirt speak "
    "collide struggle box scuffle brawl joke agree disagree".split()
)
_PLURAL_PRONOUNS = {"they", "them", "we", "us", "you"}
_NOMINATIVE = {"him": "he", "her": "she", "them": "they", "me": "I", "us": "we"}
_ACCUSATIVE = {"he": "him", "she": "her", "they": "them", "i": "me", "we": "us"}
_SINGULAR_TO_PLURAL = {"is": "are", "was": "were", "has": "have", "does": "do"}
_PLURAL_TO_SINGULAR = {plural: singular for singular, plural in _SINGULAR_TO_PLURAL.items()}
#: Third-person pronouns by (gender or "plural", grammatical form).
_PRONOUNS = {
    kind: dict(zip(("subject", "object", "determiner", "possessive", "reflexive"), forms.split()))
    for kind, forms in (
        ("male", "he him his his himself"),
        ("female", "she her her hers herself"),
        ("plural", "they them their theirs themselves"),
    )
}
_PRONOUN_FEATURES = {word: kind for kind, forms in _PRONOUNS.items() for word in forms.values()}
#: What may follow a main verb the tagger took for a noun ("stares *ahead*", "smiles *at*").
_AFTER_VERB_POS = {"ADV", "ADP", "DET", "SCONJ", "PRON", "PUNCT", "PART", "NUM"}
_FINITE_TAGS = ("VBZ", "VBP", "VBD", "MD")


@dataclass(frozen=True)
class _Actor:
    """One of the two people being swapped: its phrase's token span, and what a pronoun that
    refers to it agrees with."""

    span: tuple[int, int]
    gender: str | None
    plural: bool

    @property
    def kind(self) -> str | None:
        """``"plural"``, ``"male"``, ``"female"``, or ``None`` (one person, gender unknown)."""
        return "plural" if self.plural else self.gender


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
    if following is None or before.pos_ == "DET" or before.tag_ == "IN":
        return False
    if following.pos_ in _AFTER_VERB_POS or following.tag_ in ("VBN", "VBG"):
        return True
    # "a boy in a tan shirt *squirts* water": a person or what they wear, then the verb
    return token.tag_ == "NNS" and (is_clothing(before) or is_person_token(before))


def _is_finite(token: Token) -> bool:
    return token.tag_ in _FINITE_TAGS or (
        token.pos_ == "AUX" and token.lower_ in ("is", "are", "was", "were")
    )


def _main_verb(doc: Doc, after: int, verbs: frozenset[str]) -> int | None:
    """The main verb after token ``after``: the first finite verb (or the sentence's root in
    its base form, "The people in coats *throw*"), or a verb the tagger took for a noun before
    it. A relative pronoun ("The man *who* stabbed the girl stares") claims the next verb."""
    relative_clauses = 0
    for token in doc[after + 1 :]:
        if token.lower_ in _PARTICIPLES and token.nbor(-1).pos_ in ("NOUN", "PROPN", "PUNCT"):
            continue  # "the woman dressed in black", "a man, wearing ..."
        if token.lower_ in _RELATIVE_PRONOUNS and token.tag_ in ("WP", "WDT", "WP$"):
            relative_clauses += 1
            continue
        if _is_finite(token) or _looks_like_verb(token, verbs):
            if relative_clauses:
                relative_clauses -= 1
                continue
            return token.i
        if token.dep_ == "ROOT" and token.tag_ in ("VB", "VBN") and not relative_clauses:
            return token.i  # "The people in coats *throw*", "The lady *smiled* and laughed"
    return None


def _noun_phrase_end(doc: Doc, i: int, stop: int, verbs: frozenset[str]) -> int:
    """The end of the noun phrase starting at token ``i`` ("a white and yellow jersey",
    "long, braided hair"); a coordinated noun phrase with its own determiner ("... and a woman")
    is not part of it, nor a verb the tagger took for a noun."""
    end = i
    while end < stop:
        token = doc[end]
        following = doc[end + 1] if end + 1 < stop else None
        if end > i and following is not None and _looks_like_verb(token, verbs):
            before = doc[end - 1]
            if following.pos_ in ("ADP", "ADV", "PART") or (
                is_garment(before) or (before.pos_ == "NOUN" and is_person_token(before))
            ):
                break  # "a woman with a white sweater *clings* to him", "a vest *watches*"
        if (
            token.pos_ in _NOUN_PHRASE_POS
            or token.tag_ == "PRP$"
            or token.text == "-"
            or (token.tag_ in ("VBN", "VBG") and token.dep_ == "amod")
            or (token.tag_ in ("VBN", "VBG") and end > i and doc[end - 1].text == "-")
            or token.pos_ == "CCONJ"
            and end > i
            and following is not None
            and following.pos_ in _NOUN_PHRASE_POS
            and not _names_person(doc, end + 1, stop)
            or token.pos_ == "ADV"
            and following is not None
            and (following.pos_ == "ADJ" or following.dep_ == "amod")
        ):
            end += 1
        elif (
            token.text == ","
            and i < end
            and following is not None
            and doc[end - 1].pos_ == "ADJ"
            and following.pos_ == "ADJ"
        ):
            end += 1  # "short, dark hair"
        else:
            break
    return end


def _names_person(doc: Doc, start: int, stop: int) -> bool:
    """Whether the noun phrase at token ``start`` is headed by a person ("... and *a woman*")."""
    for token in doc[start:stop]:
        if token.pos_ not in _NOUN_PHRASE_POS or token.text == "-":
            return False
        if token.pos_ in ("NOUN", "PROPN") and (
            token.i + 1 == stop or doc[token.i + 1].pos_ not in ("NOUN", "PROPN")
        ):
            return is_person_token(token)
    return False


def _object_end(doc: Doc, i: int, stop: int, verbs: frozenset[str]) -> int:
    """The end of the noun phrase at token ``i`` with its "of" phrases ("the side of the
    road")."""
    end = _noun_phrase_end(doc, i, stop, verbs)
    while end > i and end + 1 < stop and doc[end].lower_ == "of":
        if doc[end + 1].pos_ == "PRON":  # "in front of him"
            return end + 2
        after = _noun_phrase_end(doc, end + 1, stop, verbs)
        if after == end + 1:
            break
        end = after
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
        or (
            doc[start - 1].text == ","
            and start > 1
            and doc[start - 2].pos_ == "ADJ"
            and (doc[start].pos_ == "ADJ" or doc[start].dep_ == "amod")
        )  # "a short, balding man"
    ):
        start -= 1
    if start > 1 and doc[start - 1].lower_ == "of" and doc[start - 2].lower_ in _QUANTITIES:
        start = _phrase_start(doc[start - 2])  # "a group of men"
    return start


def _features(token: Token, span: tuple[int, int]) -> tuple[str | None, bool]:
    """The gender and number of the actor headed by ``token`` with its phrase ``span``."""
    if _coordinated(token.doc, span):
        return None, True
    if token.pos_ == "PRON":
        kind = _PRONOUN_FEATURES.get(token.lower_)
        if kind == "plural" or token.lower_ in _PLURAL_PRONOUNS:
            return None, True
        return kind, False
    plural = token.tag_ in ("NNS", "NNPS") or token.lower_ in ("people", "police", "crew")
    return person_gender(token), plural


def _coordinated(doc: Doc, span: tuple[int, int]) -> bool:
    """Whether the phrase names more than one person ("a man and a woman", "the woman and
    child"; not "a man in a plaid shirt and brown vest")."""
    for j in range(span[0], span[1]):
        if doc[j].lower_ != "and":
            continue
        noun = next((t for t in doc[j + 1 : span[1]] if t.pos_ in ("NOUN", "PROPN")), None)
        if noun is not None and is_person_token(noun):
            return True
    return False


def _refers_to(pronoun: Token, actor: _Actor) -> bool:
    """Whether a third-person ``pronoun`` can refer to ``actor`` (a person of unknown gender
    can be "he" or "she", not singular "they")."""
    kind = _PRONOUN_FEATURES.get(pronoun.lower_)
    if kind is None:
        return False
    if kind == "plural":
        return actor.plural
    return not actor.plural and actor.gender in (None, kind)


def _mentions(doc: Doc, start: int, end: int, actor: _Actor) -> bool:
    """Whether tokens ``start:end`` hold a pronoun that refers to ``actor``."""
    return any(t.pos_ == "PRON" and _refers_to(t, actor) for t in doc[start:end])


def _phrase_span(
    token: Token, stop: int, verbs: frozenset[str], subject: _Actor | None = None
) -> tuple[int, int]:
    """Token span of the person phrase headed by ``token`` (see the module docstring), not
    reaching past token ``stop``; a description that refers to ``subject`` by a pronoun stays
    outside it."""
    doc = token.doc
    start = _phrase_start(token)
    end = token.i + 1

    def refers_to_subject(a: int, b: int) -> bool:
        return subject is not None and _mentions(doc, a, b, subject)

    while end < stop:
        word = doc[end]
        lower = word.lower_
        if word.text == "," and end + 1 < stop:
            following = doc[end + 1]
            if following.lower_ in _RELATIVE_PRONOUNS - {"that"} or (
                following.lower_ in _PARTICIPLES
            ):
                end += 1  # "a man in a gray jacket, who is lying ..."
                continue
            break
        if word.pos_ == "ADP" and (
            lower in _PREPOSITIONS or (lower in _PLACES and _describes(word, token, end))
        ):
            after = _object_end(doc, end + 1, stop, verbs)
            head = _head_of(doc, end + 1, after)
            if head is None or is_person_token(head):
                break
            if lower not in _PREPOSITIONS and is_body_part(head):
                break  # "kisses a woman *on the neck*": where the action lands
            if head.lemma_.lower() in _MANNERS or refers_to_subject(end, after):
                break  # "looks at her *with concern*", "throws him *with all her strength*"
            if lower in _PREPOSITIONS:
                after = _with_phrase_end(doc, after, stop, verbs, refers_to_subject)
            end = after
        elif lower == "in":  # what is worn, wherever the parser attached it
            after = _object_end(doc, end + 1, stop, verbs)
            worn = [t for t in doc[end + 1 : after] if t.pos_ in ("NOUN", "ADJ", "PROPN")]
            head = _head_of(doc, end + 1, after)
            if not any(is_clothing(t) for t in worn) or head is None or is_person_token(head):
                break
            end = after
        elif lower in _PARTICIPLES:
            preposition = (
                doc[end + 1].lower_ if end + 1 < stop and doc[end + 1].pos_ == "ADP" else ""
            )
            after = end + 1 + bool(preposition)
            object_end = _object_end(doc, after, stop, verbs)
            if object_end == after or refers_to_subject(end, object_end):
                break  # "the woman standing near him" stays: a relation to the subject
            if is_person_token(doc[object_end - 1]) and preposition != "as":
                break  # "holding a man"; but "dressed as a woman" describes
            end = object_end
        elif (
            word.tag_ in ("VBG", "VBN")
            and word.dep_ in ("acl", "advcl", "ROOT")
            and (word.left_edge.i >= end or word.i == end)
        ):  # a participle clause, also where the parser hung it on the verb
            clause_end = _clause_end(word, stop)
            if clause_end == word.i + 1 and not (
                word.head.pos_ == "NOUN" and word.head.i != token.i
            ):
                break  # "at people *fighting*": what they are seen doing
            if any(
                c.dep_ == "dobj" and c.pos_ == "PRON" and refers_to_subject(c.i, c.i + 1)
                for c in word.children
            ):
                break  # "a man *attacking her*": a relation to the subject
            end = _first_mention(word, clause_end, refers_to_subject)
            if end == word.i:
                break
        elif word.dep_ == "relcl" and word.head.i == token.i and word.left_edge.i >= end:
            end = min(word.right_edge.i + 1, stop)
        elif lower in _RELATIVE_PRONOUNS and word.head.dep_ == "relcl":
            end = min(word.head.right_edge.i + 1, stop)
        else:
            break
    end = _trim(doc, token.i, end)
    if end < stop and doc[end].lower_ == "and":
        after = _noun_phrase_end(doc, end + 1, stop, verbs)
        head = _head_of(doc, end + 1, after)
        if head is not None and is_person_token(head) and head.i == after - 1:
            conjunct_end = _phrase_span(head, stop, verbs, subject)[1]  # "the man and woman"
            following = doc[conjunct_end] if conjunct_end < stop else None
            if following is None or not _singular_verb(following, verbs):
                end = conjunct_end  # not "... and this girl *is* showing": a new clause
    return start, end


def _singular_verb(token: Token, verbs: frozenset[str]) -> bool:
    """Whether ``token`` is a verb in the third person singular ("is", "walks")."""
    return token.lower_ in ("is", "was", "has", "does") or (
        token.tag_ == "VBZ" or (token.tag_ == "NNS" and _looks_like_verb(token, verbs))
    )


def _describes(preposition: Token, person: Token, end: int) -> bool:
    """Whether the parser attaches ``preposition`` to a word of the description of ``person``
    that ends at token ``end`` (to the person's own noun only for "on")."""
    first = person.i if preposition.lower_ == "on" else person.i + 1
    return first <= preposition.head.i < end


def _head_of(doc: Doc, start: int, end: int) -> Token | None:
    """The head of the noun phrase ``start:end``: its last noun, pronoun or adjective ("in
    red") before any "of"."""
    head = None
    for t in doc[start:end]:
        if t.lower_ == "of":
            break
        if t.pos_ in ("NOUN", "PROPN", "PRON", "ADJ") and t.tag_ != "PRP$":
            head = t
    return head


def _with_phrase_end(
    doc: Doc,
    end: int,
    stop: int,
    verbs: frozenset[str],
    refers_to_subject: Callable[[int, int], bool],
) -> int:
    """The end of a "with" phrase that goes on past its noun: "with a bucket *on his head*",
    "with her mouth *agape*", "with the chest piece *on*"."""
    if end >= stop:
        return end
    word = doc[end]
    following = doc[end + 1] if end + 1 < stop else None
    if (
        word.lower_ in _PLACES
        and following is not None
        and following.tag_ == "PRP$"
        and not refers_to_subject(end + 1, end + 2)
    ):
        return _object_end(doc, end + 1, stop, verbs)
    closing = following is None or following.pos_ in ("PUNCT", "CCONJ")
    if closing and (word.lower_ in _PARTICLES or word.pos_ == "ADJ"):
        return end + 1
    return end


def _clause_end(verb: Token, stop: int) -> int:
    """The end of a participle clause without the adverbial clauses hung on it ("sporting a
    white nightgown *as she stands by the bookshelf*")."""
    end = verb.i + 1
    for child in verb.children:
        if child.i > verb.i and child.dep_ not in ("advcl", "punct", "cc", "conj"):
            end = max(end, child.right_edge.i + 1)
    return min(end, stop)


def _first_mention(verb: Token, end: int, refers_to_subject: Callable[[int, int], bool]) -> int:
    """``end``, or the start of the first phrase on ``verb`` that refers to the subject by a
    pronoun ("riding a bicycle *in front of him*")."""
    for child in verb.children:
        if child.i > verb.i and child.right_edge.i < end:
            if refers_to_subject(child.left_edge.i, child.right_edge.i + 1):
                return min(end, child.left_edge.i)
    return end


def _trim(doc: Doc, start: int, end: int) -> int:
    """``end`` moved left past trailing punctuation and adverbs ("the boy *affectionately*")."""
    while end > start + 1 and doc[end - 1].pos_ in ("PUNCT", "ADV"):
        end -= 1
    return end


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
        if word.endswith(("shes", "ches", "sses", "xes", "zzes", "oes")):
            return word[:-2]
        return word[:-1]
    if not plural and verb.tag_ in ("VBP", "VB"):
        return third_person(word)
    return word


def _verbs_of(doc: Doc, verb: int) -> list[Token]:
    """The main verb and the verbs coordinated with it that share its subject ("brushes down
    a dirt path *and sees* a man")."""
    main = doc[verb]
    return [main] + [
        c
        for c in main.children
        if c.dep_ == "conj"
        and c.tag_ in ("VBZ", "VBP", "VB")
        and not any(g.dep_ in ("nsubj", "nsubjpass") for g in c.children)
    ]


def _moved(phrase: str, head: Token, *, to_subject: bool) -> str:
    """A phrase as it reads in its new place: a pronoun in the case of that place."""
    if head.pos_ != "PRON":
        return phrase
    table = _NOMINATIVE if to_subject else _ACCUSATIVE
    replaced = table.get(head.lower_)
    return phrase if replaced is None else phrase.replace(head.text, replaced, 1)


def _form(pronoun: Token) -> str:
    """The grammatical form of a third-person pronoun (``her``: object or determiner)."""
    word = pronoun.lower_
    if word in ("he", "she", "they"):
        return "subject"
    if word in ("himself", "herself", "themselves"):
        return "reflexive"
    if word in ("hers", "theirs"):
        return "possessive"
    doc = pronoun.doc
    following = doc[pronoun.i + 1] if pronoun.i + 1 < len(doc) else None
    determiner = pronoun.tag_ == "PRP$" or (
        following is not None
        and (following.pos_ in ("NOUN", "ADJ") or following.lower_ in ("left", "right"))
    )
    if word in ("his", "her", "their"):
        return "determiner" if determiner or word == "their" else "object"
    return "object"


def _follow_pronouns(doc: Doc, actors: tuple[_Actor, _Actor]) -> list[tuple[int, int, str]]:
    """Each pronoun outside the two phrases that refers to one actor only, in the gender and
    number of the other actor, who now stands in its place (with its verb when it is a
    subject: "as he walks" -> "as they walk")."""
    edits = []
    spans = [actor.span for actor in actors]
    for token in doc:
        if token.pos_ != "PRON" or any(start <= token.i < end for start, end in spans):
            continue
        referents = [i for i, actor in enumerate(actors) if _refers_to(token, actor)]
        if len(referents) != 1:
            continue
        kind = actors[1 - referents[0]].kind
        if kind is None:
            continue
        new = _PRONOUNS[kind][_form(token)]
        if new == token.lower_:
            continue
        if token.text[:1].isupper():
            new = new.capitalize()
        edits.append((token.idx, token.idx + len(token.text), new))
        if token.dep_ in ("nsubj", "nsubjpass") and token.head.i > token.i:
            edits.extend(_agreement(token.head, kind == "plural"))
    return edits


def _second_mention(first: str, second: str, *, same_noun: bool) -> tuple[str, str]:
    """The phrases for the earlier and the later place: when the later phrase is a second
    mention of the earlier one's noun ("a woman ... another woman"), the determiners stay and
    the rest moves."""
    lower = second.lower()
    marker = next((m for m in _SECOND_MENTIONS if lower.startswith(m)), None)
    determiner, _, rest = first.partition(" ")
    if not same_noun or marker is None or determiner.lower() not in ("a", "an", "the"):
        return second, first
    second_rest = second[len(marker) :]
    if determiner.lower() in ("a", "an"):
        determiner = "an" if second_rest[:1].lower() in "aeiou" else "a"
    return f"{determiner} {second_rest}", second[: len(marker)] + rest


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
        and t.lower_ not in _VIEWER
        and is_person_token(t)
    ]


def is_reciprocal(other: Token) -> bool:
    """Whether ``other`` is the partner of a reciprocal predicate ("fights *with* a man",
    "shakes hands with a man"): swapping it with the subject says the same thing."""
    head = other.head
    if other.dep_ != "pobj" or head.dep_ != "prep" or head.lower_ != "with":
        return False
    verb = head.head
    return verb.lemma_.lower() in RECIPROCAL_VERBS or (
        verb.dep_ == "dobj" and verb.lower_ == "hands"
    )


def actor_swap(caption: str, *, nlp: Language) -> list[Foil]:
    """The actor-swapped foil of ``caption``, or ``[]`` when its subject is not a person or it
    names no second person (see the module docstring)."""
    verbs = _verb_lemmas_of(nlp)
    doc = nlp(caption)
    people = person_heads(doc, verbs)
    if not people:
        return []
    head = people[0]
    verb = _main_verb(doc, head.i, verbs)
    if verb is None:
        return []
    first = (_phrase_start(head), _trim(doc, head.i, verb))
    subject = _Actor(first, *_features(head, first))
    other_head = next(
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
    if other_head is None or is_reciprocal(other_head):
        return []
    start, end = _phrase_span(other_head, len(doc), verbs, subject)
    second = (max(start, verb + 1), end)
    other = _Actor(second, *_features(other_head, second))
    span_a, span_b = doc[first[0] : first[1]], doc[second[0] : second[1]]
    leaving = span_a.text  # "Firefighters lifted" -> "lifted firefighters"
    if first[0] == 0 and doc[0].pos_ != "PROPN" and doc[0].text != "I":
        leaving = leaving[:1].lower() + leaving[1:]
    into_first, into_second = _second_mention(
        leaving,
        _moved(span_b.text, other_head, to_subject=True),
        same_noun=head.lemma_.lower() == other_head.lemma_.lower(),
    )
    edits = [
        (span_a.start_char, span_a.end_char, into_first),
        (span_b.start_char, span_b.end_char, _moved(into_second, head, to_subject=False)),
        *_follow_pronouns(doc, (subject, other)),
    ]
    for word in _verbs_of(doc, verb):
        edits.extend(_agreement(word, other.plural))
    if second[1] < len(doc) and (
        _is_finite(doc[second[1]]) or _looks_like_verb(doc[second[1]], verbs)
    ):  # "... while a man and a woman *are* present": the other actor's own verb
        for word in _verbs_of(doc, second[1]):
            edits.extend(_agreement(word, subject.plural))
    text = _apply(caption, edits)
    if text.lower() == caption.lower():  # "a boy ... and another boy ...": nothing changed
        return []
    return [
        Foil(
            text,
            FOIL_TYPE,
            RULE,
            model_ids={"parser": pipeline_id(nlp)},
            source={"subject": span_a.text, "participant": span_b.text, "verb": doc[verb].text},
        )
    ]


def _agreement(verb: Token, plural: bool) -> list[tuple[int, int, str]]:
    """The edit that makes ``verb`` agree with a subject of that number (none if it does)."""
    agreed = _agree(verb, plural)
    if agreed == verb.text:
        return []
    return [(verb.idx, verb.idx + len(verb.text), agreed)]


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
