"""LM-generated verb-phrase contrast foils (paper 001, §3.2 and appendix A.3).

For each verb phrase of the caption (spaCy POS patterns *verb* and *verb + preposition/particle*),
the phrase is replaced by T5's ``<extra_id_0>`` sentinel and T5 proposes ``num_candidates``
fillers by beam search (beam 50, K = 50). A candidate sentence is kept when it passes, in order:

1. ``verb``: the new span contains a verb (``require_verb``);
2. ``verb_frequency``: each lemmatised verb of the new span occurs at least
   ``min_verb_frequency`` times among the training captions' verbs (paper: "more than 30 times");
3. ``perplexity``: GPT-2 perplexities ``ppl_o`` (caption) and ``ppl_m`` (candidate), relative
   increase ``ppl_diff = (ppl_m - ppl_o) / ppl_o``; kept if ``ppl_diff < ppl_diff_max`` (0.6) or
   (``ppl_diff < ppl_diff_relaxed_max`` (1.4) and ``ppl_m < ppl_m_max`` (750)). The paper prints
   ``(ppl_o - ppl_m) / ppl_o``, which would keep *every* candidate less plausible than the caption,
   the opposite of its stated aim ("remove a candidate that is less plausible than the
   original"); the sign is flipped here so the rule does what the paper says it does;
4. semantic inconsistency: the new verb is an ``antonym`` of the original verb (lexicon), or
   it is not a WordNet ``synonym`` of it (no shared synset among the first ``synonym_senses``
   senses of either verb) and both the ``word_cosine`` of the two verb lemmas is below
   ``word_cosine_max`` and the ``sentence_cosine`` of the two sentences below
   ``sentence_cosine_max``.

Each kept foil records every filter's score. The paper's word vectors are counter-fitted
embeddings (Mrkšić et al., 2016), trained to pull synonyms together and push antonyms apart,
which no package ships; its thresholds 0.4 / 0.8 (:data:`PAPER_COSINE_MAX`) were set for them.
foilkit's ``word_embedder`` is any sentence-transformers-style encoder
(``encode(list[str]) -> array``), by default the sentence embedder applied to the lemma, and the
synonym check (the shipped WordNet 3.1 verb senses) does the counter-fitting's job of telling
synonyms apart; the default cosine thresholds are those
``generation/calibration/contrast_verb_thresholds.py`` chose for all-MiniLM-L6-v2 with the check
on (``synonym_check=False`` and ``PAPER_COSINE_MAX`` give the paper's rule).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from foilkit.builders.spacy_pipeline import pipeline_id
from foilkit.generation.contrast.lexicon import (
    BuiltinVerbLexicon,
    VerbLexicon,
    VerbSenses,
    WordNetVerbSenses,
    is_antonym,
    shared_synsets,
)
from foilkit.generation.foil import Foil, unique_foils
from foilkit.generation.infill import NUM_BEAMS, NUM_CANDIDATES, T5_MASK, t5_span_fillers
from foilkit.generation.perplexity import perplexities
from foilkit.generation.similarity import pairwise_cosines

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc

    from foilkit.scorers.adapters.text_lm import TextLMAdapter

RULE = "contrast.verb_phrase"
FOIL_TYPE = "verb"

_PARTICLES = {"ADP", "PART"}

#: Appendix A.3's (word, sentence) cosine thresholds, set for counter-fitted word vectors + SBERT.
PAPER_COSINE_MAX = (0.4, 0.8)
#: all-MiniLM-L6-v2's (word, sentence) thresholds with the synonym check on, chosen on the
#: published contrast sets by ``generation/calibration/contrast_verb_thresholds.py``.
WORD_COSINE_MAX, SENTENCE_COSINE_MAX = 0.51, 0.94


@dataclass(frozen=True)
class VerbFoilSettings:
    """Every parameter and threshold of appendix A.3: the paper's values, except the cosine
    thresholds, recalibrated for all-MiniLM-L6-v2 together with the WordNet synonym check
    (``synonym_check``, ``synonym_senses``) that stands in for counter-fitted word vectors."""

    num_beams: int = NUM_BEAMS
    num_candidates: int = NUM_CANDIDATES
    max_new_tokens: int = 8
    require_verb: bool = True
    min_verb_frequency: int = 30
    ppl_diff_max: float = 0.6
    ppl_diff_relaxed_max: float = 1.4
    ppl_m_max: float = 750.0
    synonym_check: bool = True
    synonym_senses: int = 2
    word_cosine_max: float = WORD_COSINE_MAX
    sentence_cosine_max: float = SENTENCE_COSINE_MAX

    def to_record(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


#: The name :class:`VerbFoilSettings` had before settings took one suffix (kept: documented).
VerbFoilConfig = VerbFoilSettings


@dataclass
class VerbFoilModels:
    """The models the verb-phrase step runs with; loaded by the caller (see ``cli.py``)."""

    nlp: Language
    infill_model: Any
    infill_tokenizer: Any
    lm: TextLMAdapter
    sentence_embedder: Any
    word_embedder: Any = None
    lexicon: VerbLexicon = field(default_factory=BuiltinVerbLexicon)
    synonyms: VerbSenses = field(default_factory=WordNetVerbSenses.load)
    model_ids: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.word_embedder is None:
            self.word_embedder = self.sentence_embedder
        self.model_ids = {
            "tagger": pipeline_id(self.nlp),
            "infill": str(self.infill_model.config.name_or_path),
            "perplexity": str(self.lm.model_id),
            **dict(self.model_ids),
        }


@dataclass(frozen=True)
class VerbPhrase:
    """A verb phrase of a caption: character span, text and the verb's lemma."""

    start: int
    end: int
    text: str
    lemma: str


def verb_phrases(doc: Doc) -> list[VerbPhrase]:
    """Spans matching *verb* or *verb + preposition/particle* (appendix A.3's patterns)."""
    phrases = []
    for token in doc:
        if token.pos_ != "VERB":
            continue
        last = token
        following = token.nbor(1) if token.i + 1 < len(doc) else None
        if following is not None and following.pos_ in _PARTICLES and following.head == token:
            last = following
        lemma = " ".join(
            [verb_lemma(token)] + [t.lemma_.lower() for t in doc[token.i + 1 : last.i + 1]]
        )
        phrases.append(
            VerbPhrase(
                token.idx, last.idx + len(last), doc.text[token.idx : last.idx + len(last)], lemma
            )
        )
    return phrases


def verb_lemmas(doc: Doc, start: int = 0, end: int | None = None) -> list[str]:
    """Lemmas of the verbs whose characters lie in ``[start, end)``."""
    end = len(doc.text) if end is None else end
    return [verb_lemma(t) for t in doc if t.pos_ == "VERB" and start <= t.idx < end]


_VOWELS = frozenset("aeiou")


def is_closed_monosyllable(word: str) -> bool:
    """One vowel, ending consonant-vowel-consonant ("rid", "hop"): its -ing/-ed double the final
    consonant ("ridding"), so "riding" cannot be "rid" + "ing"."""
    return (
        len(word) >= 3
        and sum(1 for a, b in zip(" " + word, word) if b in _VOWELS and a not in _VOWELS) == 1
        and word[-1] not in _VOWELS | set("wxyzs")
        and word[-2] in _VOWELS
        and word[-3] not in _VOWELS
    )


def verb_lemma(token: Any) -> str:
    """spaCy's lower-cased lemma of a verb, repaired where its rules strip a silent "e": the
    rule lemmatizer reads "riding" / "rides" as "rid" and "hoping" as "hop" because those are
    words too; a closed monosyllable would double its consonant ("ridding", "hopping") or take
    "-s" ("rids"), so the lemma is "ride" / "hope"."""
    lemma, text = token.lemma_.lower(), token.text.lower()
    if is_closed_monosyllable(lemma) and text in (lemma + "ing", lemma + "ed", lemma + "es"):
        return lemma + "e"
    return lemma


def count_verb_lemmas(
    nlp: Language, captions: Iterable[str], *, batch_size: int = 256
) -> Counter[str]:
    """How often each verb lemma occurs in ``captions`` (the training descriptions)."""
    counts: Counter[str] = Counter()
    for doc in nlp.pipe(captions, batch_size=batch_size):
        counts.update(verb_lemmas(doc))
    return counts


def perplexity_rule(ppl_o: float, ppl_m: float, config: VerbFoilSettings) -> tuple[bool, float]:
    """Appendix A.3's fluency rule: (kept, ppl_diff) with ``ppl_diff = (ppl_m - ppl_o) / ppl_o``."""
    ppl_diff = (ppl_m - ppl_o) / ppl_o
    kept = ppl_diff < config.ppl_diff_max or (
        ppl_diff < config.ppl_diff_relaxed_max and ppl_m < config.ppl_m_max
    )
    return kept, ppl_diff


def verb_phrase_foils(
    caption: str,
    models: VerbFoilModels,
    *,
    config: VerbFoilSettings = VerbFoilSettings(),
    verb_counts: Mapping[str, int] | None = None,
) -> list[Foil]:
    """All candidate foils of ``caption`` that pass the filters, in T5 beam order per phrase.

    ``verb_counts`` are the training captions' verb-lemma counts (:func:`count_verb_lemmas`);
    without them the frequency filter cannot run, which the foils' parameters record.
    """
    doc = models.nlp(caption)
    phrases = verb_phrases(doc)
    if not phrases:
        return []
    masked = [caption[: p.start] + T5_MASK + caption[p.end :] for p in phrases]
    fillers = t5_span_fillers(
        models.infill_model,
        models.infill_tokenizer,
        masked,
        num_beams=config.num_beams,
        num_candidates=config.num_candidates,
        max_new_tokens=config.max_new_tokens,
        model_id=models.model_ids["infill"],
    )
    parameters = {
        **config.to_record(),
        "verb_counts": verb_counts is not None,
        "lexicon": models.lexicon.name,
        "synonyms": models.synonyms.name,
    }
    candidates: list[tuple[Foil, VerbPhrase, list[str]]] = []
    texts = [
        caption[: p.start] + f.text + caption[p.end :]
        for p, fs in zip(phrases, fillers)
        for f in fs
    ]
    docs = iter(models.nlp.pipe(texts))
    for phrase, phrase_fillers in zip(phrases, fillers, strict=True):
        for filler in phrase_fillers:
            candidate_doc = next(docs)
            new_verbs = verb_lemmas(candidate_doc, phrase.start, phrase.start + len(filler.text))
            foil = Foil(
                candidate_doc.text,
                FOIL_TYPE,
                RULE,
                parameters=parameters,
                model_ids=models.model_ids,
                source={
                    "span": phrase.text,
                    "replacement": filler.text,
                    "infill_score": filler.score,
                    "verb_lemma": phrase.lemma,
                },
            )
            if config.require_verb:
                if not new_verbs:
                    continue
                foil = foil.passed("verb", len(new_verbs))
            if verb_counts is not None:
                rarest = min((verb_counts.get(v, 0) for v in new_verbs), default=0)
                if rarest < config.min_verb_frequency:
                    continue
                foil = foil.passed("verb_frequency", rarest)
            candidates.append((foil, phrase, new_verbs))
    candidates = [c for c in candidates if c[0].text.strip().lower() != caption.strip().lower()]
    if not candidates:
        return []

    ppl_o, *ppl_ms = perplexities(models.lm, [caption] + [foil.text for foil, _, _ in candidates])
    fluent = []
    for (foil, phrase, new_verbs), ppl_m in zip(candidates, ppl_ms, strict=True):
        kept, ppl_diff = perplexity_rule(ppl_o, ppl_m, config)
        if kept:
            fluent.append(
                (foil.passed("perplexity", ppl_diff, ppl_o=ppl_o, ppl_m=ppl_m), phrase, new_verbs)
            )
    if not fluent:
        return []

    kept = inconsistent_foils(
        caption,
        [
            (foil, phrase.lemma, " ".join(new_verbs) or replacement_of(foil))
            for foil, phrase, new_verbs in fluent
        ],
        models,
        config,
    )
    return unique_foils(kept, caption=caption)


def inconsistent_foils(
    caption: str,
    candidates: Sequence[tuple[Foil, str, str]],
    models: VerbFoilModels,
    config: VerbFoilSettings = VerbFoilSettings(),
) -> list[Foil]:
    """The semantic-inconsistency filter: of ``(foil, original verb lemma, new verb lemma)``
    triples, keep antonyms, and otherwise foils whose new verb is no WordNet synonym of the
    original (``synonym``: the shared synsets, 0; when ``config.synonym_check``) and whose
    verb-lemma ``word_cosine`` and sentence ``sentence_cosine`` to the original are both below
    their thresholds."""
    if not candidates:
        return []
    originals = [original for _, original, _ in candidates]
    news = [new for _, _, new in candidates]
    word_cos = pairwise_cosines(models.word_embedder, list(zip(originals, news, strict=True)))
    sentence_cos = pairwise_cosines(
        models.sentence_embedder, [(caption, f.text) for f, _, _ in candidates]
    )
    kept = []
    for (foil, original, new), w, s in zip(candidates, word_cos, sentence_cos, strict=True):
        if is_antonym(models.lexicon, original, new):
            kept.append(foil.passed("antonym", 1.0))
            continue
        if config.synonym_check:
            shared = shared_synsets(models.synonyms, original, new, config.synonym_senses)
            if shared:
                continue
            foil = foil.passed("synonym", shared)
        if w < config.word_cosine_max and s < config.sentence_cosine_max:
            kept.append(foil.passed("word_cosine", w).passed("sentence_cosine", s))
    return kept


def replacement_of(foil: Foil) -> str:
    """The text a verb foil put in place of the caption's verb phrase."""
    return str(foil.source["replacement"])
