"""Rare Actions (ViLMA §3.5 and appendix C.5): captions, foils, filters and proficiency items.

A Rare Actions item is a RareAct (verb, object) class pair shown in a video; its caption is the
verb-object phrase :func:`action_caption` writes ("cutting a keyboard", "peeling some corns",
ViLMA's ``make_active_voice_sentence``), and its proficiency item, :func:`existence_pair`, asks
whether the object is there at all ("there is at least one keyboard") against another RareAct
object not detected in the video. Foils, as ViLMA's ``tasks/actions`` scripts make them:

* **action replacement** (:func:`action_foils`): the models fill the verb of "a person can ___
  <object>." (T5 in the paper, which writes multi-word actions: "type on");
* **object replacement** (:func:`object_foils`): an ensemble of fill-mask models (BERT,
  RoBERTa, ALBERT in the paper) fills the object of "a person can <verb> a/an/some ___.".

Two filters are specific to this test:

* :class:`ActionExclusionFilter` drops action foils whose verb is a general action ("use",
  "have") or implies touching ("hold", "reach"), which could be true of any video;
* :class:`DetectedObjectFilter` drops object foils naming an object an object detector finds in
  the video's sampled frames (DETR, ``facebook/detr-resnet-101``, in the paper): such a foil
  might be true. :func:`detect_objects` runs any transformers object-detection model.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from foilkit.generation.foil import Foil
from foilkit.generation.vilma.english import present_participle

if TYPE_CHECKING:
    import torch
    from spacy.language import Language

    from foilkit.generation.vilma.masked_lm import MaskedLM

ACTION_RULE = "vilma.rare_actions.action"
OBJECT_RULE = "vilma.rare_actions.object"
EXISTENCE_RULE = "vilma.rare_actions.existence"
SUBTESTS = {"action": "action_replacement", "object": "object_replacement"}
#: ViLMA's candidate prompt (tasks/actions/t5.py, mlm.py): the models fill the verb or the object.
CANDIDATE_PROMPT = "a person can {action} {object}."
DETERMINERS = ("a", "an", "some")
#: Longest action a filler may name ("squeeze out of"); longer T5 spans are not one action.
MAX_ACTION_WORDS = 3
#: The paper's models: T5 for actions, an ensemble of three MLMs for objects (C.5).
PAPER_ACTION_MODELS = ("t5:t5-large",)
PAPER_OBJECT_MODELS = (
    "fill-mask:bert-large-uncased",
    "fill-mask:albert-large-v2",
    "fill-mask:roberta-large",
)
# ViLMA's vl_bench/actions.py: RareAct nouns it writes in the plural ("peeling some corns"),
# words that take "some" ("some hair", "some eggs"), verbs whose object it pluralises ("washing
# some apples") and verbs written with their preposition ("drilling into a wall").
PLURALISED_NOUNS = ("clothe", "corn", "cucumber", "flower", "pepper", "spoon")
SOME_NOUNS = tuple("carrots clothes corn cucumbers eggs flowers hair peppers shoes spoons".split())
PLURALISING_VERBS = ("wash",)
VERB_PHRASES = {"drill": "drill into"}

PAPER_DETECTOR = "facebook/detr-resnet-101"
# The paper's confidence threshold is missing from its text; 0.9 is DETR's customary cut-off.
DETECTION_THRESHOLD = 0.9
GENERAL_ACTIONS = ("use", "have", "do", "make", "get")
TOUCH_ACTIONS = ("hold", "reach", "touch", "grab", "grasp", "handle")
EXCLUDED_ACTIONS = GENERAL_ACTIONS + TOUCH_ACTIONS


class ActionExclusionFilter:
    """Drops foils whose replacement verb's lemma is in ``excluded``."""

    name = "action_exclusion"

    def __init__(self, nlp: Language, excluded: Iterable[str] = EXCLUDED_ACTIONS) -> None:
        self.nlp, self.excluded = nlp, frozenset(word.lower() for word in excluded)

    def __call__(self, caption: str, foils: Sequence[Foil]) -> list[Foil]:
        """The foils whose replacement words, lemmatised in the foil's context, are allowed."""
        del caption
        kept = []
        for foil, doc in zip(foils, self.nlp.pipe(f.text for f in foils)):
            replaced = set(str(foil.source["replacement"]).lower().split())
            lemmas = {t.lemma_.lower() for t in doc if t.text.lower() in replaced}
            if not lemmas & self.excluded:
                kept.append(foil.passed(self.name, 1.0, excluded=sorted(self.excluded)))
        return kept


def detect_objects(
    model: Any,
    processor: Any,
    frames: torch.Tensor,
    *,
    threshold: float = DETECTION_THRESHOLD,
) -> dict[str, float]:
    """Label -> highest confidence over ``frames`` (uint8 ``T x C x H x W``) of every object a
    transformers object-detection model finds with confidence above ``threshold``."""
    import torch

    if frames.ndim != 4 or frames.dtype != torch.uint8:
        raise ValueError(
            f"frames must be a uint8 T x C x H x W tensor, got {tuple(frames.shape)} {frames.dtype}"
        )
    inputs = processor(images=list(frames), return_tensors="pt").to(model.device)
    with torch.inference_mode():
        outputs = model(**inputs)
    sizes = [tuple(frames.shape[-2:])] * len(frames)
    detections = processor.post_process_object_detection(
        outputs, threshold=threshold, target_sizes=sizes
    )
    found: dict[str, float] = {}
    for detection in detections:
        for label, score in zip(detection["labels"].tolist(), detection["scores"].tolist()):
            name = str(model.config.id2label[label]).lower()
            found[name] = max(found.get(name, 0.0), float(score))
    return found


def _singular(word: str) -> str:
    word = word.lower()
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


class DetectedObjectFilter:
    """Drops foils whose replacement object was detected in the video (``detected``: label ->
    confidence, from :func:`detect_objects` on that video's frames)."""

    name = "object_detector"

    def __init__(self, detected: Mapping[str, float], *, model_id: str = PAPER_DETECTOR) -> None:
        self.detected = {_singular(label): score for label, score in detected.items()}
        self.model_id = model_id

    def __call__(self, caption: str, foils: Sequence[Foil]) -> list[Foil]:
        del caption
        return [
            foil.passed(self.name, 0.0, model_id=self.model_id)
            for foil in foils
            if _singular(str(foil.source["replacement"])) not in self.detected
        ]


# -- captions and proficiency items -------------------------------------------------------------


def object_phrase(noun: str, *, verb: str | None = None) -> tuple[str, bool]:
    """The object as ViLMA writes it after a verb, and whether it is plural: ``a keyboard``,
    ``an orange`` (``an`` before a, e, i, o, as ViLMA), ``some corns``, ``some hair``."""
    plural = noun in PLURALISED_NOUNS or verb in PLURALISING_VERBS
    word = f"{noun}s" if plural and not noun.endswith("s") else noun
    if plural or word in SOME_NOUNS:
        return f"some {word}", True
    return f"{'an' if word[:1] in ('a', 'e', 'i', 'o') else 'a'} {word}", False


def action_caption(verb: str, noun: str) -> str:
    """The verb-object caption of a RareAct (verb, noun) pair: ``cutting a keyboard``,
    ``typing on a laptop``, ``drilling into a wall``, ``washing some apples``."""
    phrase, _ = object_phrase(noun, verb=verb)
    return f"{present_participle(VERB_PHRASES.get(verb, verb))} {phrase}"


def existence_caption(noun: str) -> str:
    """The proficiency sentence of an object: ``there is at least one keyboard``,
    ``there are some corns``."""
    phrase, plural = object_phrase(noun)
    return f"there are {phrase}" if plural else f"there is at least one {noun}"


def existence_pair(
    noun: str, nouns: Iterable[str], *, rng: random.Random, detected: Iterable[str] = ()
) -> tuple[str, Foil]:
    """The proficiency caption of ``noun`` and its foil: the same sentence of another of
    ``nouns`` (the test's objects), drawn uniformly among those not ``detected`` in the video."""
    seen = {_singular(label) for label in detected}
    others = sorted({n for n in nouns if n != noun and _singular(n) not in seen})
    if not others:
        raise ValueError(f"no other object than {noun!r} to make its proficiency foil from")
    other = others[rng.randrange(len(others))]
    foil = Foil(
        existence_caption(other),
        "proficiency",
        EXISTENCE_RULE,
        parameters={"objects": len(others)},
        source={"span": noun, "replacement": other},
    )
    return existence_caption(noun), foil


# -- foils --------------------------------------------------------------------------------------


def _foil(
    text: str, subtest: str, rule: str, models: Sequence[MaskedLM], top_k: int, **source: Any
) -> Foil:
    return Foil(
        text,
        SUBTESTS[subtest],
        rule,
        parameters={"prompt": CANDIDATE_PROMPT, "top_k": top_k},
        model_ids={f"mlm{i}": lm.id for i, lm in enumerate(models)},
        source=source,
    )


def action_foils(
    verb: str, noun: str, models: Sequence[MaskedLM], *, top_k: int = 32
) -> list[Foil]:
    """Action replacement candidates: the action each filler of "a person can ___ <object>."
    names, written as the caption is (``buying a shirt`` for ``throwing a shirt``); fillers of
    more than :data:`MAX_ACTION_WORDS` words are not an action (ViLMA removed them by hand)."""
    from foilkit.generation.vilma.masked_lm import ensemble_fillers

    caption, (phrase, _) = action_caption(verb, noun), object_phrase(noun)
    ranked = ensemble_fillers(
        models,
        lambda lm: CANDIDATE_PROMPT.format(action=lm.mask, object=phrase),
        top_k=top_k,
        exclude=(verb, VERB_PHRASES.get(verb, verb)),
    )
    foils = []
    for action, votes, mean in ranked:
        action = " ".join(action.strip(" .,;:!?").split())
        if not action or len(action.split()) > MAX_ACTION_WORDS:
            continue
        text = action_caption(action, noun)
        if text != caption:
            foils.append(
                _foil(
                    text,
                    "action",
                    ACTION_RULE,
                    models,
                    top_k,
                    span=present_participle(verb),
                    replacement=present_participle(action),
                    action=action,
                    votes=votes,
                    ensemble_score=votes + mean,
                )
            )
    return _unique(foils, caption)


def object_foils(
    verb: str, noun: str, models: Sequence[MaskedLM], *, top_k: int = 32
) -> list[Foil]:
    """Object replacement candidates: each filler of "a person can <verb> a/an/some ___." with
    its determiner (``peeling a lemon`` for ``peeling some corns``); a filler whose determiner
    does not fit it (``a apple``) is dropped."""
    from foilkit.generation.vilma.masked_lm import ensemble_fillers

    caption = action_caption(verb, noun)
    action = VERB_PHRASES.get(verb, verb)
    proposals = []
    for determiner in DETERMINERS:
        ranked = ensemble_fillers(
            models,
            lambda lm, d=determiner: CANDIDATE_PROMPT.format(
                action=action, object=f"{d} {lm.mask}"
            ),
            top_k=top_k,
            exclude=(noun, f"{noun}s"),
        )
        for word, votes, mean in ranked:
            word = word.strip(" .,;:!?")
            if word.isalpha() and (determiner == "some" or (determiner == "an") == _vowel(word)):
                proposals.append((votes + mean, determiner, word, votes))
    proposals.sort(key=lambda p: -p[0])
    foils = [
        _foil(
            f"{present_participle(action)} {determiner} {word}",
            "object",
            OBJECT_RULE,
            models,
            top_k,
            span=noun,
            replacement=word,
            determiner=determiner,
            votes=votes,
            ensemble_score=score,
        )
        for score, determiner, word, votes in proposals
    ]
    return _unique(foils, caption)


def _vowel(word: str) -> bool:
    return word[:1].lower() in ("a", "e", "i", "o")


def _unique(foils: Sequence[Foil], caption: str) -> list[Foil]:
    from foilkit.generation.foil import unique_foils

    return unique_foils(foils, caption=caption)
