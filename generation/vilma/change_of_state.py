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

from dataclasses import dataclass

from foilkit.generation.foil import Foil
from foilkit.generation.vilma.english import capitalise, is_plural, place_object, third_person

RULE = "vilma.change_of_state"
FOIL_TYPE = "change_of_state"
SUBTESTS = ("action", "prestate", "poststate", "inverse")
SUBJECT = "someone"


@dataclass(frozen=True)
class ChangeOfState:
    """The 4-tuple of a change-of-state verb; ``transitive`` picks the action template."""

    pre_state: str
    verb: str
    post_state: str
    reverse_verb: str
    transitive: bool = True

    def to_record(self) -> dict[str, object]:
        return {
            "pre_state": self.pre_state,
            "verb": self.verb,
            "post_state": self.post_state,
            "reverse_verb": self.reverse_verb,
            "transitive": self.transitive,
        }


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
