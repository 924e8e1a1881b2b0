"""Does a rewrite keep the order of its caption's events? Compared from the parse, not the words.

RTime's captions tell events in an order ("opens the door and then walks in", "takes off his
shoes before entering"); a rewrite that tells them in the other order describes the reversed
video, the benchmark's hard negative. Words alone cannot see this: "A, then B" rewritten as
"B and A" keeps every word of the caption, and swapping "before" for "after" keeps every class
of :mod:`~foilkit.generation.rtime.temporal_words`. So each text is parsed (spaCy's dependency
parse) into *events* -- its clause verbs, by lemma and particle ("take_off") -- and the
relation "a happens before b" read from the structure that says it:

* coordinated verbs and consecutive sentences happen in the order told ("A, B and then C"),
  and so do the clauses of a sentence's main line (coordinated or juxtaposed up to its root);
  a verb with "then" / "finally" / "after that" happens after the main-line events told before
  it, one with "before which" before them;
* a verb with a "before" / "until" / "till" / "prior to" clause or gerund happens before it,
  one with an "after" / "once" / "as soon as" / "following" / "upon" one after it ("After
  opening the door, he enters": open before enter, whatever the surface order); where the
  parser hangs the clause on a purpose clause or complement ("turns the button *to adjust* the
  sound before pressing ..."), the verbs above it up to the main line are ordered too;
* "A, followed by B": A before B ("followed by him doing B" too); "A, preceded by B": B
  before A;
* a perfect participle happens before the verb it hangs on ("Having done A, B"; "B, having
  earlier done A"); a negated "until" orders its clause first ("did not leave until A");
* a verb with "earlier" / "previously" / "beforehand" happens before the main-line events told
  before it ("B; earlier, he had done A"); a past perfect ("had done", "had been doing", and a
  present perfect with "already") happens before the text's other events ("By the time B, he
  had already done A"), except those it does itself ("had turned it off *to raise* ...");
* an aspectual verb's complement happens when the verb does ("began to sing", "starts
  typing"), and a purpose told after its verb after what comes before the verb ("once A, it
  pulls out *to show* B").

What these words state outweighs the order the events are told in, where the two disagree.

Other clauses (purpose "to", participles, "while", relative clauses) set no order by their
structure. But a text with no word that can tell a later event first (:data:`INVERTING_WORDS`:
"after", "before", "once", "when", "as soon as", "by the time", "had done", "having done", a
"first" on an event other than the first told; :func:`told_in_order`) tells its events in the
order they happen, so its events are ordered as told, in each of its *sequences*: the main
line, and apart from it each clause told aside -- "as" / "while" / "by doing" clauses, a
participle, a relative clause, a purpose told first ("To protect the mast, he ties ...") -- so
"A, then B" told as "B and A" is caught wherever the parser hung "A". A relative clause that
goes on with the story ("locked by a cyclist, *who then rides up*") is a main-line event, "A,
followed by doing B" orders A before B, a finite verb the parser took for a subject ("A car
*drives* along the walls, then meets ...") is told before its head, and a verb told twice by
two subjects and no object is told apart by its subject ("a roll of paper unfolds, then a
drawing paper unfolds"). Where the
small parser errs in known ways, the structure is read past it: a "then" / "later" orders the
first event told after it, whichever verb the parser hung it on ("swaying, then smiling"); a
past-tense verb parsed as a modifier inside the main verb's subject ("A man wearing sunglasses
smiled at the camera, then lifted his head") is told before the main verb; a plural "noun"
heading a clausal complement or coordinated with a verb is a verb ("First a girl switches on
the TV; later ..."; "puts on the glasses, and the camera first *shifts* ..."); the verb of a
"by the time" clause (parsed as a relative clause of "time") is an event; and an
event told with the caption's verb but without its particle ("wrote" / "wrote down") is the
caption's event. The relation
is closed transitively. A rewrite *reverses* its caption when some pair of events the two share
is ordered one way in the caption and only the other way in the rewrite. Events are shared by
key (each key once in each text), else by verb where one text tells a verb twice ("locked it
and locked the suitcase") and the other once, and one verb told twice with objects of one
noun is told apart by the noun's adjectives ("put the *white* book ..., then put the *yellow*
book"); and -- given a sentence embedder
(the ``event_match`` of :class:`~foilkit.generation.rtime.rewrites.RewriteFilter`) -- an event the
rewrite tells with another verb is matched to the caption's by the cosine of their phrases
("removed his dark sunglasses" / "took off his black sunglasses"; :func:`matched`). A
reversal whose events match none of the caption's is not judged here: the lexicon's opposite
classes and, where known, the opposite caption are the checks for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Token

#: Markers whose clause or gerund happens *after* the verb they attach to ("A before B").
BEFORE_MARKERS = frozenset({"before", "until", "till", "prior"})
#: Markers whose clause or gerund happens *before* the verb they attach to ("A after B").
AFTER_MARKERS = frozenset({"after", "once", "following", "upon"})
_CLAUSE_DEPS = frozenset({"ROOT", "conj", "advcl", "pcomp", "xcomp", "ccomp", "dep", "parataxis"})
#: Main-line clauses: told in order (not subordinate, not a complement of another verb).
_MAIN_LINE_DEPS = frozenset({"ROOT", "conj", "ccomp", "dep", "parataxis"})
#: Adverbs that put their verb after the main-line events told before it ("A, then B").
LATER_ADVERBS = frozenset(
    {
        "then",
        "afterwards",
        "afterward",
        "later",
        "subsequently",
        "finally",
        "eventually",
        "lastly",
        "next",
        "thereafter",
    }
)
#: Adverbs that put their verb before the main-line events told before it ("A; earlier, B";
#: "A, having earlier done B"; "B, which she had done previously").
EARLIER_ADVERBS = frozenset({"earlier", "previously", "beforehand"})
#: Verbs whose complement happens when they do ("began to sing", "starts typing").
ASPECTUAL_VERBS = frozenset(
    {"begin", "start", "continue", "keep", "stop", "finish", "resume", "proceed", "try"}
)
_OBJECT_DEPS = ("dobj", "nsubjpass", "attr", "nsubj", "pobj")
_ANAPHORS = frozenset({"that", "this", "which", "it"})  # "after that", "before which"
#: Clauses that complete their head verb (purpose "to", a complement): what is ordered
#: against them is ordered against their head too.
_COMPLEMENT_DEPS = frozenset({"xcomp", "advcl", "ccomp"})
_UNORDERED_MARKERS = frozenset({"while", "whilst", "as", "when", "whereas", "because", "if"})


@dataclass(frozen=True)
class EventOrder:
    """The events of one text (keys, in the order told) and which happens before which."""

    events: tuple[str, ...]
    before: frozenset[tuple[str, str]]
    #: Per event, what it does in words (lemma, particle, object and place: "lay sheet of
    #: white paper on table"), to match an event the other text tells with another verb.
    phrases: tuple[str, ...] = ()

    def renamed(self, names: Mapping[str, str]) -> EventOrder:
        """The same order with some events called by other keys (``names``: old -> new)."""
        events = tuple(names.get(key, key) for key in self.events)
        before = frozenset((names.get(a, a), names.get(b, b)) for a, b in self.before)
        return replace(self, events=events, before=before)

    def reversals(self, rewrite: EventOrder) -> list[tuple[str, str]]:
        """The pairs ``(a, b)``, a before b here, that ``rewrite`` orders only b before a.

        Events are matched by key ("put:box"), else by verb alone where one text tells a verb
        twice and the other once ("locked it and locked the suitcase" / "locked the
        suitcase"): there, a before b when every telling of a comes before every b."""
        rewrite = rewrite.renamed(_same_lemma(self, rewrite))
        found = _reversed(self.events, self.before, rewrite.events, rewrite.before)
        by_verb = _reversed(*_by_verb(self), *_by_verb(rewrite))
        return sorted(set(found) | {pair for pair in by_verb if pair not in found})


def _reversed(
    events: Iterable[str],
    before: frozenset[tuple[str, str]],
    other_events: Iterable[str],
    other_before: frozenset[tuple[str, str]],
) -> list[tuple[str, str]]:
    shared = set(events) & set(other_events)
    return [
        (a, b)
        for a, b in before
        if a in shared and b in shared and (b, a) in other_before and (a, b) not in other_before
    ]


def _verb(key: str) -> str:
    return key.partition(":")[0]


def _lemma(key: str) -> str:
    """A key's verb without its particle ("write_down:paper" -> "write")."""
    return _verb(key).partition("_")[0]


def _same_lemma(caption: EventOrder, rewrite: EventOrder) -> dict[str, str]:
    """The rewrite's events told with the caption's verb but another particle or none ("wrote
    on paper" / "wrote down on paper"), named as the caption's: only where each text tells
    that verb once and neither tells the other's event."""
    caption_left, rewrite_left = unmatched(caption, rewrite)
    lemmas = [_lemma(key) for key in caption.events]
    other = [_lemma(key) for key in rewrite.events]
    names = {}
    for i in rewrite_left:
        lemma = other[i]
        matches = [j for j in caption_left if lemmas[j] == lemma]
        if len(matches) == 1 and lemmas.count(lemma) == 1 and other.count(lemma) == 1:
            names[rewrite.events[i]] = caption.events[matches[0]]
    return names


def _by_verb(order: EventOrder) -> tuple[tuple[str, ...], frozenset[tuple[str, str]]]:
    """An order's events by verb alone ("lock:it", "lock:suitcase" -> "lock") and the pairs
    of verbs whose every telling is ordered one way and none the other."""
    events = tuple(dict.fromkeys(_verb(key) for key in order.events))
    one_way = {(_verb(a), _verb(b)) for a, b in order.before if _verb(a) != _verb(b)}
    return events, frozenset(pair for pair in one_way if pair[::-1] not in one_way)


EventParser = Callable[[Sequence[str]], list[EventOrder]]


def _key(verb: Token) -> str:
    particles = [c.lemma_.lower() for c in verb.children if c.dep_ == "prt"]
    return "_".join([verb.lemma_.lower(), *particles])


def _object(verb: Token, *, modifiers: bool = False) -> str:
    """The lemma of a verb's object (or passive subject, or else its subject), to tell apart
    two events of one verb ("puts the box in ..., then puts the airbag in"; "a roll of paper
    unfolds, and then a drawing paper unfolds"); with ``modifiers``, after the object's
    adjectives and compounds ("put the white book" / "put the yellow book": "white_book")."""
    for dep in _OBJECT_DEPS:
        for child in verb.children:
            if child.dep_ == dep:
                return _named(child, modifiers)
            if dep == "pobj" and child.dep_ == "prep":
                for grandchild in child.children:
                    if grandchild.dep_ == "pobj":
                        return _named(grandchild, modifiers)
    return ""


def _named(noun: Token, modifiers: bool) -> str:
    words = [c.lower_ for c in noun.children if modifiers and c.dep_ in ("amod", "compound")]
    return "_".join([*words, noun.lemma_.lower()])


#: Dependents of a verb that say what it does to what, where (its phrase); not its subject,
#: auxiliaries, markers, adverbs or other clauses.
_PHRASE_DEPS = frozenset(
    {"prt", "dobj", "nsubjpass", "attr", "prep", "dative", "acomp", "oprd", "compound"}
)
_PHRASE_WORDS = 12


def _phrase(event: Token) -> str:
    """What an event does in words: its lemma, then the words of its object, particle and
    place phrases, without determiners ("take off black sunglass")."""
    if event.pos_ == "NOUN":
        return event.lemma_.lower()
    words = [event.lemma_.lower()]
    for child in event.children:
        if child.dep_ in _PHRASE_DEPS:
            words += [t.lower_ for t in child.subtree if t.pos_ not in ("DET", "PUNCT")]
    return " ".join(words[:_PHRASE_WORDS])


def _is_event(token: Token) -> bool:
    """A clause's verb, or a sentence's root whatever its part of speech ("is excited"), or a
    verb the tagger took for a plural noun heading a clause ("First a girl *switches* on the
    TV; later she walks over": a noun is never a clausal complement)."""
    return (
        token.dep_ == "ROOT"
        or (token.pos_ == "VERB" and token.dep_ in _CLAUSE_DEPS)
        or (
            token.tag_ == "NNS"
            and (token.dep_ == "ccomp" or (token.dep_ == "conj" and token.head.pos_ == "VERB"))
        )
        or _told_in_subject(token)
        or _continuative(token)
        or _by_the_time(token)
        or _finite_subject(token)
    )


def _by_the_time(token: Token) -> bool:
    """The verb of a "by the time" clause, which the parser hangs on "time" as a relative
    clause ("By the time he *turned* it on, he had already ...")."""
    time = token.head
    return token.dep_ == "relcl" and time.lower_ == "time" and time.head.lower_ == "by"


def _finite_subject(token: Token) -> bool:
    """A finite verb the parser took for the subject of the verb after it ("A car *drives*
    along the walls, then meets ..."; "A man with short hair *cuts* vegetables then picks
    up ..."): an event of the main line, told before it."""
    return (
        token.pos_ == "VERB"
        and token.tag_ in ("VBZ", "VBD", "VBP")
        and token.dep_ in ("nsubj", "csubj")
        and token.head.i > token.i
    )


def _continuative(token: Token) -> bool:
    """A relative clause that goes on with the story ("locked by a cyclist, *who then rides*
    up to it"; "turns off the tap, *which subsequently opens*"): an event told after the
    main line before it, as a "then" clause is."""
    return (
        token.pos_ == "VERB"
        and token.dep_ == "relcl"
        and any(c.dep_ == "advmod" and c.lower_ in LATER_ADVERBS for c in token.children)
    )


def _told_in_subject(token: Token) -> bool:
    """A past-tense verb the parser hung inside the main verb's subject as a modifier ("A man
    wearing sunglasses *smiled* at the camera, then lifted his head"; "a man *put* on his
    glasses and took off his hat, took out his pen"): an event told before the main verb. A
    true past participle there ("a man seated on a bench waves") is then an event too, which
    orders nothing a rewrite tells differently; an "-ing" participle ("wearing") is not."""
    if token.pos_ != "VERB" or token.tag_ not in ("VBD", "VBN"):
        return False
    if token.dep_ == "conj":
        return _told_in_subject(token.head)
    if token.dep_ not in ("acl", "relcl") or any(
        c.dep_ in ("nsubj", "mark") for c in token.children
    ):
        return False
    head = token.head
    while head.dep_ != "ROOT" and head.head.i != head.i:
        if head.dep_ in ("nsubj", "nsubjpass"):
            return head.head.i > token.i
        head = head.head
    return False


def _anaphoric(verb: Token) -> str | None:
    """ "after that" / "after which" (later than what was told before) or "before which"
    (earlier): a temporal preposition on the verb whose object points back."""
    for prep in verb.children:
        if prep.dep_ == "prep" and any(
            c.dep_ == "pobj" and c.lower_ in _ANAPHORS for c in prep.children
        ):
            if prep.lower_ in AFTER_MARKERS:
                return "later"
            if prep.lower_ in BEFORE_MARKERS:
                return "earlier"
    return None


def _adverb_events(doc: Doc, events: Sequence[Token], adverbs: frozenset[str]) -> set[int]:
    """The events an adverb of ``adverbs`` orders against what was told before them ("then" /
    "later" / "finally": after it; "earlier" / "previously": before it): the first event after
    the adverb in its sentence, wherever the parser hung it ("lying on a chair, swaying, then
    smiling": "then" is often parsed as a modifier of "swaying"), else the verb it modifies
    ("having pressed the button earlier")."""
    found = set()
    for adverb in doc:
        if adverb.dep_ != "advmod" or adverb.lower_ not in adverbs:
            continue
        after = [e for e in events if adverb.i < e.i < adverb.sent.end]
        found.add(after[0].i if after else adverb.head.i)
    return found


def _marker(verb: Token) -> str | None:
    """The temporal marker introducing ``verb``'s clause or gerund, if any ("as soon as" is
    read as "once"; a perfect participle, "Having done A, B", as "after")."""
    if verb.tag_ == "VBN" and any(c.dep_ == "aux" and c.lower_ == "having" for c in verb.children):
        return "after"
    for child in verb.children:
        if child.dep_ == "mark":
            before = child.doc[max(child.i - 2, 0) : child.i]
            if child.lower_ == "as" and [t.lower_ for t in before] == ["as", "soon"]:
                return "once"
            return child.lemma_.lower()
    if verb.dep_ == "pcomp" and verb.head.dep_ == "prep":
        prep = verb.head
        if prep.lower_ == "to" and prep.head.lower_ == "prior":  # "prior to leaving"
            return "prior"
        if any(c.dep_ == "pobj" and c.lower_ in _ANAPHORS for c in prep.children):
            return None
        return prep.lower_
    return None


def _main_line(token: Token) -> bool:
    """Whether a token's path to its sentence's root runs through coordinated or juxtaposed
    clauses only: an event of the story's main line, told in order."""
    while token.dep_ != "ROOT":
        if _told_in_subject(token) or _finite_subject(token):
            return True
        if token.dep_ not in _MAIN_LINE_DEPS:
            return False
        token = token.head
    return True


def _governor(verb: Token) -> Token | None:
    """The event a marked clause or gerund is ordered against (its head's verb)."""
    head = verb.head
    if verb.dep_ == "pcomp":
        head = head.head  # gerund -> preposition -> the verb it modifies
        if head.lower_ == "prior":  # "prior to" -> the verb "prior" modifies
            head = head.head
    while not _is_event(head) and head.head.i != head.i:
        head = head.head
    return head if _is_event(head) else None


def _governors(verb: Token) -> list[Token]:
    """The events a marked clause is ordered against: its governor and, where that is a
    purpose clause or other complement ("turns the button *to adjust* the sound before
    pressing ..."), the verbs above it up to the main line, where the parser's attachment
    of the marked clause is a guess."""
    governor = _governor(verb)
    found = []
    while governor is not None:
        found.append(governor)
        if (
            _main_line(governor)
            or governor.dep_ not in _COMPLEMENT_DEPS
            or any(c.dep_ == "mark" for c in governor.children)
        ):
            break
        governor = governor.head if _is_event(governor.head) else None
    return found


_NEGATIVE_SUBJECTS = frozenset({"none", "nobody", "nothing", "neither"})


def _negated(verb: Token) -> bool:
    """Whether a verb is negated: "not" / "never", or a negative subject ("None of them
    opens ...", "no one ...")."""
    for child in verb.children:
        if child.dep_ == "neg" or (child.dep_ == "advmod" and child.lower_ == "never"):
            return True
        if child.dep_ in ("nsubj", "nsubjpass") and (
            child.lower_ in _NEGATIVE_SUBJECTS
            or any(d.dep_ == "det" and d.lower_ == "no" for d in child.children)
        ):
            return True
    return False


def _perfect(verb: Token) -> bool:
    """Whether an event is told as done before the others: a past perfect ("he had turned it
    off", "had been burning"), a present perfect with "already" ("its flames have already
    grown"), or a verb coordinated with one ("had turned it off and pressed ...")."""
    if verb.pos_ != "VERB":
        return False
    aux = {c.lower_ for c in verb.children if c.dep_ in ("aux", "auxpass")}
    if aux:
        already = any(c.dep_ == "advmod" and c.lower_ == "already" for c in verb.children)
        return verb.tag_ in ("VBN", "VBG") and ("had" in aux or (already and aux & {"has", "have"}))
    return verb.dep_ == "conj" and verb.tag_ in ("VBN", "VBD") and _perfect(verb.head)


def _aspectual_edges(events: Sequence[Token], edges: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """The order of an aspectual verb's complement, which happens when it does ("began to
    sing", "starts typing"): every pair ordering the verb, with its complement in its place."""
    inner = {
        event.i: event.head.i
        for event in events
        if event.dep_ == "xcomp" and event.head.lemma_.lower() in ASPECTUAL_VERBS
    }
    more = set()
    for complement, verb in inner.items():
        more |= {(complement, b) for a, b in edges if a == verb and b != complement}
        more |= {(a, complement) for a, b in edges if b == verb and a != complement}
    # a purpose told after its verb happens after what happens before the verb ("As soon as
    # it has focused on X, it pulls out *to show* Y": focus before show)
    for event in events:
        if event.i not in inner and _purpose(event) and event.i > event.head.i:
            more |= {(a, event.i) for a, b in edges if b == event.head.i and a != event.i}
    return more


def _purpose(event: Token) -> bool:
    """A "to" clause completing its verb ("pulls out *to show* the map")."""
    return event.dep_ in ("xcomp", "advcl") and any(
        c.dep_ == "aux" and c.lower_ == "to" for c in event.children
    )


def _nominal_events(doc: Doc) -> list[tuple[Token, Token, str]]:
    """(noun, the event it is ordered against, marker) for "after a workout", "before dinner":
    a temporal preposition's noun object is an event too."""
    found = []
    for prep in doc:
        marker = prep.lower_
        if prep.dep_ != "prep" or marker not in BEFORE_MARKERS | AFTER_MARKERS:
            continue
        nouns = [
            c
            for c in prep.children
            if c.dep_ == "pobj"
            and c.pos_ == "NOUN"
            and not any(d.dep_ == "det" and d.lower_ in _ANAPHORS for d in c.children)
        ]  # "after that ..." misparsed as a noun phrase is "then"
        head = prep.head
        while not _is_event(head) and head.head.i != head.i:
            head = head.head
        if nouns and _is_event(head):
            found.append((nouns[0], head, marker))
    return found


def event_order(doc: Doc) -> EventOrder:
    """The events of a parsed text and their order (see the module docstring)."""
    events = [token for token in doc if _is_event(token)]
    main_line = [token for token in events if _main_line(token)]
    stated = _stated_edges(doc, events, main_line)  # may add nominal events
    told = _told_edges(doc, events, main_line)
    # what a word states ("earlier", "had done", "until", "followed by") outweighs the order told
    edges = {pair for pair in told if pair[::-1] not in stated} | stated
    edges |= _aspectual_edges(events, edges)
    return _keyed_order(events, edges)


def _told_edges(
    doc: Doc, events: Sequence[Token], main_line: Sequence[Token]
) -> set[tuple[int, int]]:
    """Token index pairs (a before b) from the order events are told in: sentences, the main
    line, coordination, "then" / "later", and the sequences of a text told in order."""
    edges: set[tuple[int, int]] = set()
    roots = [sent.root for sent in doc.sents]
    edges.update((a.i, b.i) for a, b in zip(roots, roots[1:]))
    later = _adverb_events(doc, events, LATER_ADVERBS)
    for sentence in doc.sents:
        told = [t for t in main_line if sentence.start <= t.i < sentence.end]
        edges.update((a.i, b.i) for a, b in zip(told, told[1:]))
    for verb in events:
        conjuncts = [c for c in verb.children if c.dep_ == "conj" and _is_event(c)]
        chain = [verb, *sorted(conjuncts, key=lambda token: token.i)]
        if not any(_marker(c) in _UNORDERED_MARKERS for c in conjuncts):
            edges.update((a.i, b.i) for a, b in zip(chain, chain[1:]))
        anaphoric = _anaphoric(verb) if verb.dep_ in _MAIN_LINE_DEPS | {"relcl"} else None
        if verb.i in later or anaphoric == "later":
            edges.update((earlier.i, verb.i) for earlier in _told_before(verb, main_line))
    if told_in_order(doc, events):
        sequences: dict[int, list[Token]] = {}
        for event in sorted(events, key=lambda token: token.i):
            sequences.setdefault(_sequence(event), []).append(event)
        for told in sequences.values():
            edges.update((a.i, b.i) for a, b in zip(told, told[1:]))
    return edges


def _told_before(verb: Token, main_line: Sequence[Token]) -> list[Token]:
    """The events an anaphoric "after that" / "before which" / "then" / "earlier" orders
    ``verb`` against: the main-line events told before it (and the head of a relative
    clause: "A, after which B")."""
    told_before = [t for t in main_line if t.i < verb.i]
    if verb.dep_ == "relcl" and _is_event(verb.head):
        told_before = [verb.head, *told_before]
    return told_before


def _stated_edges(
    doc: Doc, events: list[Token], main_line: Sequence[Token]
) -> set[tuple[int, int]]:
    """Token index pairs (a before b) that words state: "before" / "after" / "until" clauses,
    "earlier" / "before which", "followed by", a perfect ("had done"), a temporal
    preposition's noun ("after dinner", added to ``events``)."""
    edges: set[tuple[int, int]] = set()
    told_earlier = _adverb_events(doc, events, EARLIER_ADVERBS)
    for verb in list(events):
        anaphoric = _anaphoric(verb) if verb.dep_ in _MAIN_LINE_DEPS | {"relcl"} else None
        if verb.i in told_earlier or anaphoric == "earlier":
            edges.update((verb.i, earlier.i) for earlier in _told_before(verb, main_line))
        marker = _marker(verb)
        governors = _governors(verb) if verb.dep_ in ("advcl", "pcomp") else []
        if marker in ("until", "till") and governors and _negated(governors[0]):
            marker = "after"  # "did not leave until B": B, then the leaving
        for governor in governors:
            if marker in BEFORE_MARKERS:
                edges.add((governor.i, verb.i))
            elif marker in AFTER_MARKERS:
                edges.add((verb.i, governor.i))
    for verb in doc:
        if verb.lemma_.lower() in ("follow", "precede") and verb.dep_ in ("advcl", "acl"):
            edges |= _followed(verb, events)
    perfect = [event for event in events if _perfect(event)]
    done_before = {event.i for event in perfect}
    for done in perfect:
        edges.update(
            (done.i, e.i) for e in events if e.i not in done_before and not _within(e, done)
        )
    for noun, governor, marker in _nominal_events(doc):
        if marker in ("until", "till") and _negated(governor):
            marker = "after"
        events.append(noun)
        edges.add((governor.i, noun.i) if marker in BEFORE_MARKERS else (noun.i, governor.i))
    return edges


def _followed(verb: Token, events: list[Token]) -> set[tuple[int, int]]:
    """The pair "A, followed by B" (A before B) or "A, preceded by B" (B before A) states;
    B is a gerund ("followed by him tightening ...", "followed by pulling ...") or a noun
    ("followed by a white lock", added to ``events``)."""
    main = _governor(verb)
    if main is None or (verb.dep_ == "acl" and verb.head.pos_ != "VERB"):
        return set()
    agent = [c for c in verb.children if c.dep_ == "agent" or c.lower_ == "by"]
    told = [g for a in agent for g in a.children if g.dep_ in ("pobj", "pcomp")]
    gerunds = [c for c in verb.children if c.dep_ == "advcl" and c.tag_ == "VBG"]
    objects = [*gerunds, *told] if agent else []
    if not objects:
        return set()
    if objects[0] not in events:
        events.append(objects[0])
    pair = (main.i, objects[0].i)
    return {pair if verb.lemma_.lower() == "follow" else pair[::-1]}


def _within(event: Token, done: Token) -> bool:
    """Whether ``event`` is what ``done`` itself does: reached from it through complements and
    coordination only ("had turned it off *to raise* ...", "had turned it off and *pressed*")."""
    token = event
    while token.i != done.i:
        if token.dep_ not in ("xcomp", "ccomp", "conj", "acl") or token.head.i == token.i:
            return False
        token = token.head
    return True


def _keyed_order(events: Sequence[Token], edges: set[tuple[int, int]]) -> EventOrder:
    """The order of ``events`` (token index pairs ``edges``, a before b) by event keys."""
    keys = [_key(token) if token.pos_ != "NOUN" else token.lemma_.lower() for token in events]
    keys = [
        f"{key}:{_object(token)}" if keys.count(key) > 1 else key
        for key, token in zip(keys, events)
    ]
    keys = [  # "put the *white* book ..., put the *yellow* book": told apart by the modifier
        f"{_verb(key)}:{_object(token, modifiers=True)}" if keys.count(key) > 1 else key
        for key, token in zip(keys, events)
    ]
    repeated = {key for key in keys if keys.count(key) > 1}
    key_of = {token.i: key for token, key in zip(events, keys)}
    before = {
        (key_of[a], key_of[b])
        for a, b in edges
        if key_of[a] != key_of[b] and key_of[a] not in repeated and key_of[b] not in repeated
    }
    phrases: dict[str, str] = {}
    for key, token in zip(keys, events):
        phrases.setdefault(key, _phrase(token))  # the first telling's
    unique = tuple(dict.fromkeys(keys))
    return EventOrder(unique, frozenset(_closure(before)), tuple(phrases[key] for key in unique))


#: Words that can tell a later event first ("B after A", "Before B, A", "B once A", "B, having
#: done A", "B; he had done A", "B, but first A"): a text with none tells its events in order.
INVERTING_WORDS = frozenset(
    {
        *BEFORE_MARKERS - {"until", "till"},
        *AFTER_MARKERS,
        "when",
        "whenever",
        "since",
        "preceded",
        "previously",
        "earlier",
        "formerly",
        "beforehand",
    }
)
_FIRST_WORDS = frozenset({"first", "firstly", "initially", "originally"})
#: "one after another", "after a while", "before long": no order of events.
_IDIOM_OBJECTS = frozenset({"another", "while", "long", "all"})


def told_in_order(doc: Doc, events: Sequence[Token] = ()) -> bool:
    """Whether a text tells its events in the order they happen: it has no word that can tell
    a later event first (:data:`INVERTING_WORDS`, "as soon as", "by the time", a perfect "had
    done" / "having done", and a "first" on an event other than the first told). "after
    that" / "after which" tell in order, as "then" does."""
    events = list(events) or [token for token in doc if _is_event(token)]
    first_told = min((e.i for e in events), default=-1)
    for token in doc:
        word = token.lower_
        if word in INVERTING_WORDS:
            objects = [c.lower_ for c in token.children if c.dep_ == "pobj"]
            if not objects or not set(objects) <= _ANAPHORS | _IDIOM_OBJECTS:
                return False
        elif word == "soon" and token.i and token.nbor(-1).lower_ == "as":
            return False
        elif word == "time" and [t.lower_ for t in doc[max(token.i - 2, 0) : token.i]] == [
            "by",
            "the",
        ]:
            return False
        elif word in ("had", "having") and token.dep_ == "aux" and token.head.tag_ == "VBN":
            return False  # "had done", "having done" (the lemmatizer keeps "having")
        elif word in _FIRST_WORDS and token.head.i != first_told:
            return False
    return True


_MEANS_MARKERS = frozenset({"by", "with", "without", "in"})  # "by pressing", "without looking"


def _aside(token: Token) -> bool:
    """Whether a clause is told aside from the sequence it sits in: a clause that sets no
    order ("while ...", "as ...", "by pressing ..."), a participle ("*smiling*, he waves"), a
    relative clause or other modifier of a noun, or a purpose told first ("To protect the
    mast, a man ties ...")."""
    if token.dep_ == "acl" or (token.dep_ == "relcl" and not _continuative(token)):
        return True
    if _purpose(token) and token.i < token.head.i:
        return True
    if token.dep_ in ("advcl", "pcomp"):
        marker = _marker(token)
        return marker in _UNORDERED_MARKERS | _MEANS_MARKERS or (
            marker is None and token.tag_ == "VBG"
        )
    return False


def _sequence(event: Token) -> int:
    """The sequence an event is told in (a text telling its events in order): the index of
    the nearest clause told aside that holds it ("as she *continues* to browse and *swipes*
    the tablet": both in the "as" clause's), or -1 for the story's main sequence."""
    token = event
    while token.dep_ != "ROOT" and token.head.i != token.i:
        if _aside(token):
            return token.i
        token = token.head
    return -1


#: Texts -> their rows of cosines: ``cosines(a, b)[i][j]`` is the cosine of a[i] and b[j].
Cosines = Callable[[Sequence[str], Sequence[str]], Sequence[Sequence[float]]]


def unmatched(caption: EventOrder, rewrite: EventOrder) -> tuple[list[int], list[int]]:
    """The indices of the events of ``caption`` and of ``rewrite`` that the other text does
    not tell by the same key or verb (the events to match by their phrases)."""
    keys = set(caption.events) | {_verb(key) for key in caption.events}
    other = set(rewrite.events) | {_verb(key) for key in rewrite.events}
    return (
        [i for i, key in enumerate(caption.events) if key not in other and _verb(key) not in other],
        [i for i, key in enumerate(rewrite.events) if key not in keys and _verb(key) not in keys],
    )


def matched(
    caption: EventOrder, rewrite: EventOrder, cosines: Cosines, threshold: float
) -> EventOrder:
    """``rewrite`` with each event it tells by another verb ("removed his sunglasses" for
    "took off his sunglasses") called by the caption's key, where the two phrases are each
    other's nearest among the events left unmatched and their cosine reaches ``threshold``."""
    caption_left, rewrite_left = unmatched(caption, rewrite)
    if not caption_left or not rewrite_left or not rewrite.phrases or not caption.phrases:
        return rewrite
    table = cosines(
        [rewrite.phrases[i] for i in rewrite_left], [caption.phrases[i] for i in caption_left]
    )
    names = {}
    for row, i in enumerate(table):
        best = max(range(len(i)), key=lambda column: i[column])
        best_row = max(range(len(table)), key=lambda r: table[r][best])
        if best_row == row and i[best] >= threshold:
            names[rewrite.events[rewrite_left[row]]] = caption.events[caption_left[best]]
    return rewrite.renamed(names) if names else rewrite


def _closure(pairs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    closed = set(pairs)
    while True:
        more = {(a, d) for a, b in closed for c, d in closed if b == c and a != d} - closed
        if not more:
            return closed
        closed |= more


def spacy_event_parser(nlp: Language, *, batch_size: int = 256) -> EventParser:
    """Texts -> :class:`EventOrder` through a spaCy pipeline with a tagger, parser and
    lemmatizer (named entities are not needed and are skipped)."""
    disable = [name for name in ("ner",) if name in nlp.pipe_names]

    def parse(texts: Sequence[str]) -> list[EventOrder]:
        return [
            event_order(doc)
            for doc in nlp.pipe(list(texts), batch_size=batch_size, disable=disable)
        ]

    return parse
