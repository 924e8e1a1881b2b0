"""Measuring the verb-foil semantic filter on the published contrast sets (paper 001, A.3).

The published MSR-VTT contrast sets hold, per clip, the true caption and one verb foil (Verb-LM:
T5 + the paper's filters; Verb-Human: written by people). :func:`load_pairs` recovers each
(caption, foil) pair and the verbs swapped, adds *synonym swaps* (the caption's verb replaced by
a WordNet synonym, which a good filter rejects) and *near-synonym swaps* (hand-written, in the
style of the issue's audit: "walk" -> "stroll", :data:`NEAR_SYNONYM_SWAPS`) and scores all of
them with the filter's two cosines and its WordNet synonym check; :func:`filter_rates` and
:func:`calibrate` turn those into the numbers the thresholds are chosen by
(``generation/calibration/contrast_verb_thresholds.py``).

The synonym swaps come from WordNet, as the check does: with ``synonym_senses`` >=
:data:`SYNONYM_SYNSETS` the check rejects every one of them by construction. What the
measurement says about the check is therefore what it costs (published foils it rejects) and,
about the cosines, how many synonym and near-synonym swaps they reject on their own.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from foilkit.generation.contrast.lexicon import (
    BuiltinVerbLexicon,
    VerbLexicon,
    VerbSenses,
    WordNetVerbSenses,
    is_antonym,
    read_wordnet_verb_index,
    shared_synsets,
)
from foilkit.generation.contrast.multiple_choice import read_multiple_choice
from foilkit.generation.contrast.verb_phrases import (
    VerbFoilSettings,
    is_closed_monosyllable,
    verb_lemma,
)
from foilkit.generation.similarity import pairwise_cosines

if TYPE_CHECKING:
    from spacy.language import Language

SYNONYMS_FILE = Path(__file__).parent / "data" / "wordnet_verb_synonyms.json"
CONTRAST_FILES = {"lm": "msrvtt_lm_contrast_set.tsv", "human": "msrvtt_human_contrast_set.tsv"}
SYNONYM_SYNSETS = 2  # synonyms: the lemmas of a verb's first two WordNet verb synsets

#: Swaps a reader calls the same action, in the style of the issue's audit ("dance" -> "groove",
#: "cook" -> "prepare", "walk" -> "stroll"): hand-written, not read from WordNet, so that they
#: measure the filter on synonyms the WordNet check was not built from. Applied to the Verb-LM
#: captions whose swapped verb is a key, as :func:`synonym_swaps` applies WordNet's.
NEAR_SYNONYM_SWAPS: Mapping[str, tuple[str, ...]] = {
    "walk": ("stroll", "wander"),
    "dance": ("groove",),
    "cook": ("prepare",),
    "talk": ("chat", "converse"),
    "speak": ("talk",),
    "run": ("jog", "sprint"),
    "cut": ("slice", "chop"),
    "fix": ("repair",),
    "shout": ("yell",),
    "jump": ("leap",),
    "put": ("place",),
    "throw": ("toss",),
    "laugh": ("giggle", "chuckle"),
    "cry": ("weep", "sob"),
    "smile": ("grin",),
    "show": ("display", "demonstrate"),
    "explain": ("describe",),
    "hold": ("grip", "grasp"),
    "mix": ("blend", "stir"),
    "fight": ("brawl",),
    "sing": ("croon",),
    "look": ("gaze",),
}


@dataclass(frozen=True)
class VerbSwap:
    """A caption, a candidate with one verb span changed, and the two verb lemmas."""

    kind: str  # "lm", "human" (published foils), "synonym", "near_synonym" (swaps to reject)
    clip: str
    caption: str
    candidate: str
    original: str
    new: str


@dataclass
class VerbFilterPairs:
    """Swaps with their word and sentence cosines, whether the lexicon calls them antonyms and
    whether the WordNet check calls them synonyms."""

    swaps: list[VerbSwap]
    word_cosine: np.ndarray
    sentence_cosine: np.ndarray
    antonym: np.ndarray
    synonym: np.ndarray

    def subset(self, mask: np.ndarray) -> VerbFilterPairs:
        index = np.flatnonzero(mask)
        return VerbFilterPairs(
            [self.swaps[i] for i in index],
            self.word_cosine[index],
            self.sentence_cosine[index],
            self.antonym[index],
            self.synonym[index],
        )

    def kinds(self) -> dict[str, np.ndarray]:
        """Swap kind -> which swaps are of that kind."""
        kinds = np.array([s.kind for s in self.swaps])
        return {kind: kinds == kind for kind in np.unique(kinds)}

    def split(self) -> tuple[VerbFilterPairs, VerbFilterPairs]:
        """(calibration, held-out) halves by a stable hash of the clip id."""
        half = np.array([is_heldout_clip(s.clip) for s in self.swaps], dtype=bool)
        return self.subset(~half), self.subset(half)


def is_heldout_clip(clip: str) -> bool:
    """Whether a clip is in the held-out half (a stable hash of its id), on which the verb
    filter's thresholds were not chosen."""
    return bool(zlib.crc32(clip.encode()) % 2)


def _differing_span(caption: Sequence[str], foil: Sequence[str]) -> tuple[int, int, int]:
    """(common prefix, caption end, foil end) in words: the span the foil replaced."""
    prefix = 0
    while prefix < min(len(caption), len(foil)) and caption[prefix] == foil[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < min(len(caption), len(foil)) - prefix and caption[-1 - suffix] == foil[-1 - suffix]
    ):
        suffix += 1
    return prefix, len(caption) - suffix, len(foil) - suffix


def contrast_foil(caption: str, options: Sequence[str]) -> tuple[str, int, int, int] | None:
    """The option that is the caption with one word span changed (the contrast foil), with
    ``_differing_span``; ``None`` when no option shares words at both or either end."""
    words = caption.split()
    best = None
    for option in options:
        other = option.split()
        if other == words:
            continue
        prefix, end, other_end = _differing_span(words, other)
        shared = prefix + len(words) - end
        if shared and (best is None or shared > best[0]):
            best = (shared, option, prefix, end, other_end)
    if best is None or best[0] < len(words) / 2:
        return None
    return best[1:]


def _char_span(words: Sequence[str], start: int, end: int) -> tuple[int, int]:
    begin = sum(len(w) + 1 for w in words[:start])
    return begin, begin + max(len(" ".join(words[start:end])), 0)


def _span_verbs(doc: Any, start: int, end: int) -> list[Any]:
    return [t for t in doc if t.pos_ == "VERB" and start <= t.idx < end]


def published_swaps(
    data_dir: str | os.PathLike,
    nlp: Language,
    *,
    limit: int | None = None,
    clips: Collection[str] | None = None,
) -> list[VerbSwap]:
    """The (caption, foil) pairs of the published Verb-LM and Verb-Human contrast sets (the
    first ``limit`` items of each file, or all; only those of ``clips`` where given)."""
    rows = []
    for kind, name in CONTRAST_FILES.items():
        for item in read_multiple_choice(Path(data_dir) / name)[:limit]:
            if clips is not None and item.clip not in clips:
                continue
            found = contrast_foil(
                item.caption, [o for i, o in enumerate(item.options) if i != item.label]
            )
            if found is not None:
                rows.append((kind, item.clip, item.caption, *found))
    docs = nlp.pipe([t for row in rows for t in (row[2], row[3])], batch_size=256)
    swaps = []
    for kind, clip, caption, foil, prefix, end, foil_end in rows:
        caption_doc, foil_doc = next(docs), next(docs)
        old = _span_verbs(caption_doc, *_char_span(caption.split(), prefix, end))
        new = _span_verbs(foil_doc, *_char_span(foil.split(), prefix, foil_end))
        old_text = " ".join(caption.split()[prefix:end])
        new_text = " ".join(foil.split()[prefix:foil_end])
        swaps.append(
            VerbSwap(
                kind,
                clip,
                caption,
                foil,
                " ".join(verb_lemma(t) for t in old) or old_text,
                " ".join(verb_lemma(t) for t in new) or new_text,
            )
        )
    return swaps


def inflect(lemma: str, tag: str) -> str:
    """``lemma`` (first word of a multi-word verb) in the form of Penn tag ``tag``."""
    head, *rest = lemma.split() or [""]
    if tag == "VBG":
        if head.endswith("ie"):
            head = head[:-2] + "ying"
        elif head.endswith("e") and not head.endswith(("ee", "ye", "oe")):
            head = head[:-1] + "ing"
        else:
            head = head + (head[-1] if is_closed_monosyllable(head) else "") + "ing"
    elif tag == "VBZ":
        if head.endswith(("s", "x", "z", "ch", "sh", "o")):
            head += "es"
        elif head.endswith("y") and head[-2:-1] not in "aeiou":
            head = head[:-1] + "ies"
        else:
            head += "s"
    elif tag in ("VBD", "VBN"):
        if head.endswith("e"):
            head += "d"
        elif head.endswith("y") and head[-2:-1] not in "aeiou":
            head = head[:-1] + "ied"
        else:
            head = head + (head[-1] if is_closed_monosyllable(head) else "") + "ed"
    return " ".join([head, *rest])


def synonym_swaps(
    swaps: Sequence[VerbSwap],
    nlp: Language,
    synonyms: Mapping[str, Sequence[str]],
    *,
    kind: str = "synonym",
) -> list[VerbSwap]:
    """Each Verb-LM caption's swapped verb replaced by each of its ``synonyms``, inflected."""
    made = []
    captions = list(dict.fromkeys((s.clip, s.caption, s.original) for s in swaps if s.kind == "lm"))
    for (clip, caption, original), doc in zip(
        captions, nlp.pipe([c for _, c, _ in captions], batch_size=256)
    ):
        verb = next(
            (t for t in doc if t.pos_ == "VERB" and verb_lemma(t) == original.split()[0]), None
        )
        if verb is None:
            continue
        for synonym in synonyms.get(verb_lemma(verb), ()):
            text = (
                caption[: verb.idx]
                + inflect(synonym, verb.tag_)
                + caption[verb.idx + len(verb.text) :]
            )
            made.append(VerbSwap(kind, clip, caption, text, verb_lemma(verb), synonym))
    return made


def wordnet_verb_synonyms(
    data_dir: str | os.PathLike, nlp: Language, *, dict_dir: str | os.PathLike | None = None
) -> dict[str, list[str]]:
    """verb lemma -> its WordNet synonyms, for the verbs the published Verb-LM foils swap."""
    verbs = sorted(
        {s.original.split()[0] for s in published_swaps(data_dir, nlp) if s.kind == "lm"}
    )
    lookup = _dict_synonyms(Path(dict_dir)) if dict_dir else _nltk_synonyms()
    table = {}
    for verb in verbs:
        found = [w for w in dict.fromkeys(lookup(verb)) if w != verb]
        if found:
            table[verb] = found
    return table


def _nltk_synonyms():
    from foilkit.generation.wordnet import load_wordnet

    wordnet = load_wordnet("wordnet_verb_synonyms", "--wordnet-dict DIR")

    def lookup(verb: str) -> list[str]:
        synsets = wordnet.synsets(verb, pos=wordnet.VERB)[:SYNONYM_SYNSETS]
        return [lemma.name().replace("_", " ").lower() for s in synsets for lemma in s.lemmas()]

    return lookup


def _dict_synonyms(dict_dir: Path):
    """Synonym lookup over a WordNet ``dict/`` folder's ``index.verb`` and ``data.verb``."""
    offsets = read_wordnet_verb_index(dict_dir)
    data = (dict_dir / "data.verb").read_bytes()

    def lookup(verb: str) -> list[str]:
        found = []
        for offset in offsets.get(verb, [])[:SYNONYM_SYNSETS]:
            fields = data[offset : data.index(b"\n", offset)].decode().split()
            count = int(fields[3], 16)
            found += [fields[4 + 2 * i].replace("_", " ").lower() for i in range(count)]
        return found

    return lookup


def load_pairs(
    data_dir: str | os.PathLike,
    nlp: Language,
    embedder: Any,
    *,
    synonyms: Mapping[str, Sequence[str]] | None = None,
    near_synonyms: Mapping[str, Sequence[str]] = NEAR_SYNONYM_SWAPS,
    lexicon: VerbLexicon | None = None,
    senses: VerbSenses | None = None,
    synonym_senses: int = VerbFoilSettings.synonym_senses,
    limit: int | None = None,
    clips: Collection[str] | None = None,
) -> VerbFilterPairs:
    """Published foils, synonym swaps (``synonyms``: default the shipped WordNet table) and
    near-synonym swaps, scored with ``embedder`` and ``senses`` (default the shipped WordNet
    verb senses) as :func:`~foilkit.generation.contrast.verb_phrases.inconsistent_foils`
    scores them."""
    if synonyms is None:
        synonyms = json.loads(SYNONYMS_FILE.read_text(encoding="utf-8"))
    lexicon = lexicon or BuiltinVerbLexicon()
    senses = senses or WordNetVerbSenses.load()
    swaps = published_swaps(data_dir, nlp, limit=limit, clips=clips)
    swaps += synonym_swaps(swaps, nlp, synonyms) + synonym_swaps(
        swaps, nlp, near_synonyms, kind="near_synonym"
    )
    word = pairwise_cosines(embedder, [(s.original, s.new) for s in swaps])
    sentence = pairwise_cosines(embedder, [(s.caption, s.candidate) for s in swaps])
    antonym = np.array([is_antonym(lexicon, s.original, s.new) for s in swaps], dtype=bool)
    synonym = np.array(
        [shared_synsets(senses, s.original, s.new, synonym_senses) > 0 for s in swaps], dtype=bool
    )
    return VerbFilterPairs(swaps, word, sentence, antonym, synonym)


def kept_mask(
    pairs: VerbFilterPairs,
    word_cosine_max: float,
    sentence_cosine_max: float,
    *,
    synonym_check: bool = True,
) -> np.ndarray:
    """Which swaps the filter keeps: antonyms, or (when ``synonym_check``) no WordNet synonym
    with both cosines below their thresholds."""
    below = (pairs.word_cosine < word_cosine_max) & (pairs.sentence_cosine < sentence_cosine_max)
    if synonym_check:
        below &= ~pairs.synonym
    return pairs.antonym | below


#: The swap kinds :func:`filter_rates` reports, with the name of the rate.
RATES = {
    "lm": "keep_lm",
    "human": "keep_human",
    "synonym": "reject_synonyms",
    "near_synonym": "reject_near_synonyms",
}


def rates_of(kinds: Mapping[str, np.ndarray], kept: np.ndarray) -> dict[str, float]:
    """:data:`RATES` of a kept mask (``kinds``: :meth:`VerbFilterPairs.kinds`): the share kept
    of published foils, rejected of swaps (NaN where a kind is absent)."""
    rates = {}
    for kind, name in RATES.items():
        of_kind = kept[kinds[kind]] if kind in kinds else kept[:0]
        share = float(of_kind.mean()) if of_kind.size else float("nan")
        rates[name] = share if name.startswith("keep") else 1.0 - share
    return rates


def filter_rates(
    pairs: VerbFilterPairs,
    word_cosine_max: float,
    sentence_cosine_max: float,
    *,
    synonym_check: bool = True,
) -> dict[str, float]:
    """``keep_lm``, ``keep_human``, ``reject_synonyms`` and ``reject_near_synonyms``."""
    kept = kept_mask(pairs, word_cosine_max, sentence_cosine_max, synonym_check=synonym_check)
    return rates_of(pairs.kinds(), kept)


#: :func:`calibrate`'s floors: issue 19's targets (90% / 85% / 90%) with a margin.
CALIBRATION_FLOORS = {"min_keep_lm": 0.92, "min_keep_human": 0.87, "min_reject": 0.95}


def calibrate(
    pairs: VerbFilterPairs,
    *,
    synonym_check: bool = True,
    min_keep_lm: float = CALIBRATION_FLOORS["min_keep_lm"],
    min_keep_human: float = CALIBRATION_FLOORS["min_keep_human"],
    min_reject: float = CALIBRATION_FLOORS["min_reject"],
) -> tuple[float, float]:
    """The (word, sentence) cosine thresholds, on a 0.01 grid, that reject the most synonym
    swaps *by the cosines alone* among those keeping ``min_keep_lm`` of the Verb-LM and
    ``min_keep_human`` of the Verb-Human foils and rejecting ``min_reject`` of the synonym swaps
    with the whole filter (``synonym_check`` as given); ties go to the pair keeping more foils.

    The cosines-alone criterion makes the thresholds as strict as the published foils allow,
    for the synonyms the WordNet check misses; the floors carry a margin over issue 19's
    targets (0.90, 0.85, 0.90) for the held-out half."""
    kinds = pairs.kinds()
    best = None
    for word_max in np.round(np.arange(0.0, 1.001, 0.01), 2):
        for sentence_max in np.round(np.arange(0.5, 1.001, 0.01), 2):
            alone = kept_mask(pairs, word_max, sentence_max, synonym_check=False)
            kept = kept_mask(pairs, word_max, sentence_max, synonym_check=synonym_check)
            rates = rates_of(kinds, kept)
            if (
                rates["keep_lm"] < min_keep_lm
                or rates["keep_human"] < min_keep_human
                or rates["reject_synonyms"] < min_reject
            ):
                continue
            score = (
                rates_of(kinds, alone)["reject_synonyms"],
                rates["keep_lm"] + rates["keep_human"],
            )
            if best is None or score > best[0]:
                best = (score, float(word_max), float(sentence_max))
    if best is None:
        raise ValueError(
            f"no cosine thresholds keep {min_keep_lm:.0%} of the Verb-LM and {min_keep_human:.0%} "
            f"of the Verb-Human foils while rejecting {min_reject:.0%} of the synonym swaps "
            f"(synonym_check={synonym_check})"
        )
    return best[1], best[2]
