"""Rare-actions filters (ViLMA §3.5 and appendix C.5).

Rare Actions captions are verb-object pairs ("cutting a keyboard"). Action foils replace the
verb with T5 fillers, object foils replace the object with an ensemble of MLMs (BERT, RoBERTa,
ALBERT) -- both are :func:`foilkit.generation.vilma.masked_lm.masked_lm_foils` with role
``"verb"`` / ``"noun"``. Two filters are specific to this test:

* :class:`ActionExclusionFilter` drops action foils whose verb is a general action ("use",
  "have") or implies touching ("hold", "reach"), which could be true of any video;
* :class:`DetectedObjectFilter` drops object foils naming an object an object detector finds in
  the video's sampled frames (DETR, ``facebook/detr-resnet-101``, in the paper): such a foil
  might be true. :func:`detect_objects` runs any transformers object-detection model.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from foilkit.generation.foil import Foil

if TYPE_CHECKING:
    import torch
    from spacy.language import Language

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
