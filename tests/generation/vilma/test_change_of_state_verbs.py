"""Change-of-state transitivity and the shipped verb list, measured on ViLMA's published
Change of State items."""

from __future__ import annotations

import json

import pytest

from foilkit.generation.vilma.change_of_state import (
    SUBTESTS,
    ChangeOfState,
    change_of_state_pair,
    change_of_state_verbs,
    is_transitive,
)


def test_transitivity_is_known_per_verb():
    assert not is_transitive("jump") and not is_transitive("descend")
    assert is_transitive("close") and is_transitive("sit down")  # ViLMA looks up the whole verb
    jump = ChangeOfState("in a lower position", "jump", "in a higher position", "descend")
    caption, foil = change_of_state_pair(jump, "the athlete", "action")
    assert (caption, foil.text) == ("The athlete jumps.", "The athlete descends.")
    forced = ChangeOfState("open", "close", "closed", "open", transitive=False)
    assert change_of_state_pair(forced, "the door", "action")[0] == "The door closes."


def test_the_shipped_verbs_are_4_tuples():
    verbs = change_of_state_verbs()
    assert len(verbs) >= 90
    assert len(set(verbs)) == len(verbs)
    assert all(c.verb and c.pre_state and c.post_state and c.reverse_verb for c in verbs)
    assert {c.verb for c in verbs if not c.transitive} >= {"jump", "ski"}


@pytest.mark.parametrize("subtest", SUBTESTS)
def test_published_change_of_state_items_are_regenerated(shared_data, subtest):
    path = shared_data / "vilma" / f"change-state-{subtest}.json"
    if not path.exists():
        pytest.skip(f"{path} is not present")
    items = list(json.loads(path.read_text()).values())
    shipped = {(c.verb, c.pre_state, c.post_state, c.reverse_verb) for c in change_of_state_verbs()}
    same = covered = 0
    for item in items:
        tuple_ = item["change_of_state"]
        key = (tuple_["verb"], tuple_["pre-state"], tuple_["post-state"], tuple_["state-inverse"])
        covered += key in shipped
        change = ChangeOfState(key[1], key[0], key[2], key[3])  # transitivity from the list
        caption, foil = change_of_state_pair(change, tuple_["object"], subtest)
        same += (caption.lower(), foil.text.lower()) == (
            item["caption"].lower(),
            item["foils"][0].lower(),
        )
    print(f"{subtest}: {same}/{len(items)} regenerated word for word; verbs shipped {covered}")
    assert covered == len(items)
    # ViLMA's own "is"/"are" misses ("the sand paper are whole") are the rest of prestate,
    # poststate and inverse; the action template (where transitivity matters) is exact.
    assert same / len(items) >= (1.0 if subtest == "action" else 0.97)
