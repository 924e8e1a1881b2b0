"""The word each ViLMA test's proficiency foils masked, found by the role foilkit uses for that
test: measured on the published caption/foil pairs."""

from __future__ import annotations

import difflib
import json
import re

import pytest

from foilkit.generation.vilma.masked_lm import PROFICIENCY_ROLES, mask_targets

# The published files of each test (their proficiency caption and first proficiency foil).
TEST_FILES = {
    "change_of_state": ["change-state-action.json"],
    "spatial_relations": ["relations.json"],
    "situation_awareness": ["SRL_Action_Replacement_Top_1000.json"],
    "actor_swap": ["SRL_Actor_Swapping.json"],
    "rare_actions": ["rare-actions-noun-foils.json", "rare-actions-verb-foils.json"],
}


def changed_words(caption: str, foil: str) -> list[str]:
    """The caption's words the foil replaced (the masked word, as published)."""
    a, b = (re.findall(r"[\w'-]+", text.lower()) for text in (caption, foil))
    matcher = difflib.SequenceMatcher(a=a, b=b)
    return [w for op, i1, i2, _, _ in matcher.get_opcodes() if op != "equal" for w in a[i1:i2]]


def test_changed_words():
    assert changed_words("pulling keys out of a lock", "pulling keys out of a drawer") == ["lock"]


@pytest.mark.parametrize("test", sorted(TEST_FILES))
def test_the_masked_word_is_vilmas(nlp, shared_data, test):
    pairs = []
    for name in TEST_FILES[test]:
        path = shared_data / "vilma" / name
        if not path.exists():
            pytest.skip(f"{path} is not present")
        for item in json.loads(path.read_text()).values():
            proficiency = item["proficiency"]
            pairs.append((proficiency["caption"], proficiency["foils"][0]))
    role = PROFICIENCY_ROLES[test]
    matched = 0
    for caption, foil in pairs:
        targets = mask_targets(nlp(caption), role)
        matched += bool(targets) and targets[0].lower_ in changed_words(caption, foil)
    share = matched / len(pairs)
    print(f"{test}: role {role!r} masks ViLMA's word in {matched}/{len(pairs)} ({share:.1%})")
    assert share >= 0.9
