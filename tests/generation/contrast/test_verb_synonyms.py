"""The contrast-set verb filter's WordNet synonym check: the shipped table, the rule, the filter."""

from __future__ import annotations

import json

import pytest

from foilkit.generation.calibration.wordnet_verb_senses import (
    TABLE_NAME,
    verb_senses_table,
    write_verb_senses,
)
from foilkit.generation.contrast.lexicon import (
    BUILTIN_VERB_ANTONYMS,
    WORDNET_VERB_SENSES_FILE,
    BuiltinVerbLexicon,
    WordNetVerbSenses,
    read_wordnet_verb_index,
    shared_synsets,
)
from foilkit.generation.contrast.verb_phrases import (
    VerbFoilModels,
    VerbFoilSettings,
    inconsistent_foils,
)
from foilkit.generation.foil import Foil
from foilkit.generation.vitatecs.synonyms import BUILTIN_SYNONYM_GROUPS, BuiltinSynonyms


@pytest.fixture(scope="module")
def senses() -> WordNetVerbSenses:
    return WordNetVerbSenses.load()


def test_the_shipped_table_is_wordnet_31_with_its_licence(senses):
    table = json.loads(WORDNET_VERB_SENSES_FILE.read_text(encoding="utf-8"))
    assert table["name"] == TABLE_NAME == senses.name and "WordNet 3.1" in table["source"]
    assert len(senses) > 11_000  # every WordNet 3.1 verb lemma, multi-word ones included
    assert all(ids and len(set(ids)) == len(ids) for ids in table["verbs"].values())
    assert WORDNET_VERB_SENSES_FILE.stat().st_size < 400 * 1024
    licence = (WORDNET_VERB_SENSES_FILE.parent / "LICENSE-WORDNET").read_text(encoding="utf-8")
    assert "WordNet 3.1 Copyright 2011 by Princeton University" in licence


@pytest.mark.parametrize(
    ("original", "candidate", "synonyms"),
    [
        ("cook", "prepare", True),  # share "cook, fix, ready, make, prepare"
        ("fix", "repair", True),
        ("talk", "speak", True),
        ("pass", "die", True),  # "pass away" is the first sense of "die"
        ("ride", "ride", True),  # the same verb
        ("fall down", "fall", True),
        ("push", "pull", False),  # antonyms are no synonyms
        ("talk", "sing", False),  # only their fifth senses are shared ("spill the beans")
        ("play", "run", False),  # only late senses
        ("walk", "stroll", False),  # a troponym, not a synonym: left to the cosines
        ("dance", "groove", False),  # not in WordNet's senses of "dance"
        ("pick up", "pick out", False),  # phrasal verbs are looked up whole
        ("walk slowly", "walk", True),  # a phrase WordNet lacks falls back to its head verb
        ("frobnicate", "walk", False),  # unknown lemmas share nothing
    ],
)
def test_shared_synsets(senses, original, candidate, synonyms):
    shared = shared_synsets(senses, original, candidate, VerbFoilSettings().synonym_senses)
    assert (shared > 0) is synonyms
    assert shared == shared_synsets(senses, candidate, original, VerbFoilSettings().synonym_senses)


def test_more_senses_make_more_synonyms(senses):
    assert shared_synsets(senses, "talk", "sing", 4) == 0
    assert shared_synsets(senses, "talk", "sing", 5) == 1


# Real WordNet 3.1 lines of index.verb (without their two trailing spaces): the licence
# header's first line, then three lemmas.
INDEX_VERB = """\
  1 This software and database is being provided to you, the LICENSEE, by
cook v 5 7 @ ~ * ^ $ + ; 5 3 01669533 01668067 00323648 02583006 00324178
prepare v 8 5 @ ~ $ + ; 8 6 00407168 01668067 01758079 01654986 02392176 00604693 02184359 00604200
pick_out v 2 3 @ ~ * 2 2 00676526 02197640
"""


def test_the_table_written_from_a_wordnet_dict_folder(tmp_path):
    (tmp_path / "index.verb").write_text(INDEX_VERB, encoding="utf-8")
    index = read_wordnet_verb_index(tmp_path)
    assert list(index) == ["cook", "prepare", "pick out"]
    assert index["cook"][:2] == [1669533, 1668067]
    table = verb_senses_table(tmp_path)
    write_verb_senses(table, tmp_path / "senses.json")
    written = WordNetVerbSenses.load(tmp_path / "senses.json")
    assert written.name == TABLE_NAME and len(written) == 3
    assert (
        len({i for lemma in ("cook", "prepare", "pick out") for i in written.senses(lemma)}) == 14
    )
    assert shared_synsets(written, "cook", "prepare", 2) == 1
    assert shared_synsets(written, "cook", "pick out", 2) == 0


@pytest.fixture(scope="module")
def models(nlp, t5, text_lm, sentence_embedder):
    return VerbFoilModels(nlp, t5[0], t5[1], text_lm, sentence_embedder)


@pytest.mark.parametrize(
    ("caption", "candidate", "original", "new", "synonyms"),
    [
        ("a man is fixing a bike", "a man is repairing a bike", "fix", "repair", True),
        ("a woman is cooking dinner", "a woman is preparing dinner", "cook", "prepare", True),
        ("a boy talks to the judges", "a boy sings to the judges", "talk", "sing", False),
        ("a man is walking in a park", "a man is strolling in a park", "walk", "stroll", False),
    ],
)
def test_the_filter_rejects_wordnet_synonyms(
    models, caption, candidate, original, new, synonyms, nlp
):
    """With cosine thresholds that keep everything, the check alone decides; the lemmas are
    those spaCy gives the real sentences."""
    from foilkit.generation.contrast.verb_phrases import verb_lemmas

    assert verb_lemmas(nlp(caption)) == [original] and verb_lemmas(nlp(candidate)) == [new]
    foil = Foil(candidate, "verb", "test")
    loose = {"word_cosine_max": 2.0, "sentence_cosine_max": 2.0}
    checked = inconsistent_foils(
        caption, [(foil, original, new)], models, VerbFoilSettings(**loose)
    )
    unchecked = inconsistent_foils(
        caption, [(foil, original, new)], models, VerbFoilSettings(synonym_check=False, **loose)
    )
    assert len(unchecked) == 1 and "synonym" not in unchecked[0].filter_scores
    if synonyms:
        assert checked == []
    else:
        assert len(checked) == 1 and checked[0].filter_scores["synonym"] == 0


@pytest.mark.parametrize(
    ("lemma", "antonyms"),
    [
        ("open", {"close"}),
        ("close", {"open"}),
        ("turn on", {"turn off"}),
        ("descend", {"climb", "ascend"}),
        ("remove", {"add", "insert"}),
    ],
)
def test_the_builtin_antonyms_are_lemma_pairs_both_ways(lemma, antonyms):
    assert all(len(pair) == 2 and all(pair) for pair in BUILTIN_VERB_ANTONYMS)
    assert BuiltinVerbLexicon().antonyms(lemma) == antonyms


@pytest.mark.parametrize(
    ("word", "synonyms"),
    [("near", ["close to"]), ("man", ["guy", "gentleman"]), ("large", ["big", "huge"])],
)
def test_the_builtin_synonym_groups_map_each_word_to_the_others(word, synonyms):
    assert all(len(group) >= 2 and all(group) for group in BUILTIN_SYNONYM_GROUPS)
    assert BuiltinSynonyms().synonyms(word) == synonyms
