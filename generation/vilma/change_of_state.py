"""Change-of-state captions and foils (ViLMA §3.4 and appendix C.4).

A change of state is a 4-tuple (pre-state, CoS verb, post-state, reverse verb), e.g.
("open", "close", "closed", "open"). With the argument it applies to (the object of a transitive
verb, the subject of an intransitive one), four templates give the four subtests' captions, and
each foil replaces the targeted sub-phase with its opposite:

=========  =================================================  ===================================
subtest    caption template                                    foil
=========  =================================================  ===================================
action     "Someone <verb> the <object>." /                    verb -> reverse verb
           "The <subject> <verb>."
prestate   "Initially, the <argument> is <pre-state>."         pre-state -> post-state
poststate  "At the end, the <argument> is <post-state>."       post-state -> pre-state
inverse    "Initially, ... is <pre>. Then, <action clause>.    pre/post swapped, verb -> reverse
           At the end, ... is <post>."                         (the paper's Reverse subtest)
=========  =================================================  ===================================

Subtest names follow the published files (``change-state-{action,prestate,poststate,inverse}``);
the wording (comma after "Then", particle after the object, "are" for plural arguments) is the
published data's, which the golden tests regenerate.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from foilkit.generation.foil import Foil
from foilkit.generation.vilma.english import capitalise, is_plural, place_object, third_person

RULE = "vilma.change_of_state"
FOIL_TYPE = "change_of_state"
SUBTESTS = ("action", "prestate", "poststate", "inverse")
SUBJECT = "someone"


def _data_file(name: str) -> Path:
    return Path(str(resources.files("foilkit.generation.vilma") / "data" / name))


@cache
def intransitive_verbs() -> frozenset[str]:
    """The verbs ViLMA's templates treat as intransitive (``data/intransitive_verbs.txt``: the
    list of its ``tasks/change-state/intransitive_verbs.py``)."""
    lines = _data_file("intransitive_verbs.txt").read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def is_transitive(verb: str) -> bool:
    """Whether the action template of ``verb`` has an object ("Someone closes the door.") or
    not ("The athlete jumps."). As in ViLMA, the whole verb is looked up: a phrasal verb
    ("sit down") is not in the list, so it takes the transitive template."""
    return verb.strip().lower() not in intransitive_verbs()


@dataclass(frozen=True)
class ChangeOfState:
    """The 4-tuple of a change-of-state verb; ``transitive`` picks the action template (by
    default from :func:`is_transitive`)."""

    pre_state: str
    verb: str
    post_state: str
    reverse_verb: str
    transitive: bool | None = field(default=None)

    def __post_init__(self) -> None:
        if self.transitive is None:
            object.__setattr__(self, "transitive", is_transitive(self.verb))

    def to_record(self) -> dict[str, object]:
        return asdict(self)


def _action_clause(verb: str, argument: str, transitive: bool, plural: bool) -> str:
    if transitive:
        return f"{SUBJECT} {place_object(third_person(verb), argument)}"
    return f"{argument} {verb if plural else third_person(verb)}"


def _state(argument: str, state: str, plural: bool) -> str:
    return f"{argument} {'are' if plural else 'is'} {state}"


def _render(
    subtest: str, verb: str, pre: str, post: str, argument: str, transitive: bool, plural: bool
) -> str:
    if subtest == "action":
        return capitalise(_action_clause(verb, argument, transitive, plural)) + "."
    if subtest == "prestate":
        return f"Initially, {_state(argument, pre, plural)}."
    if subtest == "poststate":
        return f"At the end, {_state(argument, post, plural)}."
    return (
        f"Initially, {_state(argument, pre, plural)}. "
        f"Then, {_action_clause(verb, argument, transitive, plural)}. "
        f"At the end, {_state(argument, post, plural)}."
    )


def change_of_state_verbs() -> list[ChangeOfState]:
    """The change-of-state verbs that ship with foilkit (``data/change_of_state_verbs.jsonl``:
    the 4-tuples of ViLMA's published Change of State items), transitivity from
    :func:`is_transitive`."""
    changes = []
    path = _data_file("change_of_state_verbs.jsonl")
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = json.loads(line)
        try:
            changes.append(
                ChangeOfState(
                    pre_state=record["pre_state"],
                    verb=record["verb"],
                    post_state=record["post_state"],
                    reverse_verb=record["reverse_verb"],
                )
            )
        except KeyError as error:
            raise ValueError(f"{path}:{number}: missing field {error}") from None
    return changes


def change_of_state_pair(
    change: ChangeOfState, argument: str, subtest: str, *, plural: bool | None = None
) -> tuple[str, Foil]:
    """The caption and foil of ``subtest`` for ``change`` applied to ``argument``.

    ``argument`` is the object (transitive) or subject (intransitive) noun phrase, as written
    ("the jar"); ``plural`` defaults to a guess from its last word.
    """
    if subtest not in SUBTESTS:
        raise ValueError(f"unknown change-of-state subtest {subtest!r}; choose one of {SUBTESTS}")
    if not argument.strip():
        raise ValueError(f"empty argument for change of state {change}")
    plural = is_plural(argument) if plural is None else plural
    c = change
    caption = _render(subtest, c.verb, c.pre_state, c.post_state, argument, c.transitive, plural)
    foil_parts = {
        "action": (c.reverse_verb, c.pre_state, c.post_state),
        "prestate": (c.verb, c.post_state, c.post_state),
        "poststate": (c.verb, c.pre_state, c.pre_state),
        "inverse": (c.reverse_verb, c.post_state, c.pre_state),
    }[subtest]
    foil_text = _render(subtest, *foil_parts, argument, c.transitive, plural)
    foil = Foil(
        foil_text,
        FOIL_TYPE,
        RULE,
        parameters={"subtest": subtest, "plural": plural, **change.to_record()},
        source={"argument": argument},
    )
    return caption, foil


def change_of_state_pairs(
    change: ChangeOfState, argument: str, *, plural: bool | None = None
) -> dict[str, tuple[str, Foil]]:
    """The (caption, foil) of every subtest, keyed by subtest name."""
    return {s: change_of_state_pair(change, argument, s, plural=plural) for s in SUBTESTS}
