"""The exemplar sets of VITATECS' loop (§3.3): positive per aspect, negative, and N/A.

* positive, X+: (caption, counterfactual) pairs that differ only in one aspect;
* negative, X-: pairs that violate one of the criteria (a)-(d);
* N/A, X^NA: captions that do not describe a given aspect.

They serve twice: as in-context demonstrations (positive and N/A, sampled per query) and as the
training data of the 7-way filter model (positive and negative). They are a versioned file the
user edits (``data/exemplars.yaml`` seeds it); human labels from the revision stage are merged
in by :meth:`ExemplarSets.with_labels`, which returns the next version.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foilkit.builders.vitatecs import ASPECTS
from foilkit.generation.vitatecs.data_files import package_data, read_data, write_data
from foilkit.generation.vitatecs.prompt import Demonstration

EXEMPLARS_FORMAT = "foilkit.vitatecs.exemplars/1"
INVALID = "invalid"
#: The filter model's classes: category 0 is a disqualified pair, 1-6 the aspects (§3.3).
FILTER_CLASSES: tuple[str, ...] = (INVALID, *ASPECTS)
NA = "na"


def pair_id(caption: str, counterfactual: str) -> str:
    """A stable id of a (caption, counterfactual) pair: the same pair is the same exemplar."""
    key = f"{caption.strip().lower()}\t{counterfactual.strip().lower()}"
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class PairExemplar:
    """A labelled sentence pair: ``label`` is an aspect (positive) or ``"invalid"`` (negative).

    ``aspect`` is the aspect the pair was written or generated for (for negatives, the aspect
    it failed); ``reason`` says what is wrong with a negative; ``source`` where it came from.
    """

    caption: str
    counterfactual: str
    label: str
    aspect: str | None = None
    reason: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        if self.label not in FILTER_CLASSES:
            raise ValueError(f"label {self.label!r} is not one of {FILTER_CLASSES}")
        if not self.caption.strip() or not self.counterfactual.strip():
            raise ValueError(f"empty caption or counterfactual in {self!r}")

    @property
    def id(self) -> str:
        return pair_id(self.caption, self.counterfactual)


@dataclass(frozen=True)
class NAExemplar:
    """A caption that does not describe ``aspect``: its demonstrated answer is ``NA``."""

    caption: str
    aspect: str
    source: str = ""


@dataclass(frozen=True)
class ExemplarSets:
    """X+ (per aspect), X- and X^NA (per aspect), with a version bumped by every label import."""

    positive: Mapping[str, tuple[PairExemplar, ...]]
    negative: tuple[PairExemplar, ...]
    na: Mapping[str, tuple[NAExemplar, ...]]
    version: int = 1

    # -- files ---------------------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> ExemplarSets:
        """The sets in ``path`` (YAML or JSON), or the seed sets shipped with foilkit."""
        path = Path(path or package_data("exemplars.yaml"))
        data = read_data(path, format=EXEMPLARS_FORMAT)

        def where(section: str, index: int | None = None, aspect: str | None = None) -> str:
            at = f"{section}" + (f".{aspect}" if aspect else "")
            return f"{path}: {at}" + (f"[{index}]" if index is not None else "")

        def entries(section: str, aspect: str | None = None) -> list[Mapping[str, Any]]:
            value = data.get(section) or ({} if aspect else [])
            if aspect is not None:
                if not isinstance(value, Mapping):
                    raise ValueError(f"{where(section)} must map aspects to lists")
                unknown = sorted(set(value) - set(ASPECTS))
                if unknown:
                    raise ValueError(f"{where(section)}: unknown aspect(s) {unknown}")
                value = value.get(aspect) or []
            if not isinstance(value, list):
                raise ValueError(f"{where(section, aspect=aspect)} must be a list")
            for index, entry in enumerate(value):
                if not isinstance(entry, Mapping):
                    raise ValueError(f"{where(section, index, aspect)} must be a mapping")
            return value

        def text(entry: Mapping[str, Any], name: str, at: str) -> str:
            value = entry.get(name)
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{at}: field {name!r} must be a non-empty text, got {value!r}")
            return value.strip()

        positive = {}
        na = {}
        for aspect in ASPECTS:
            positive[aspect] = tuple(
                PairExemplar(
                    caption=text(entry, "caption", where("positive", i, aspect)),
                    counterfactual=text(entry, "counterfactual", where("positive", i, aspect)),
                    label=aspect,
                    aspect=aspect,
                    source=str(entry.get("source", "")),
                )
                for i, entry in enumerate(entries("positive", aspect))
            )
            na[aspect] = tuple(
                NAExemplar(
                    caption=text(entry, "caption", where("na", i, aspect)),
                    aspect=aspect,
                    source=str(entry.get("source", "")),
                )
                for i, entry in enumerate(entries("na", aspect))
            )
        negative = []
        for i, entry in enumerate(entries("negative")):
            aspect = entry.get("aspect")
            if aspect is not None and aspect not in ASPECTS:
                raise ValueError(f"{where('negative', i)}: aspect {aspect!r} not in {ASPECTS}")
            negative.append(
                PairExemplar(
                    caption=text(entry, "caption", where("negative", i)),
                    counterfactual=text(entry, "counterfactual", where("negative", i)),
                    label=INVALID,
                    aspect=aspect,
                    reason=str(entry.get("reason", "")),
                    source=str(entry.get("source", "")),
                )
            )
        version = data.get("version", 1)
        if not isinstance(version, int) or version < 1:
            raise ValueError(f"{path}: 'version' must be a positive integer, got {version!r}")
        return cls(positive=positive, negative=tuple(negative), na=na, version=version)

    def to_data(self) -> dict[str, Any]:
        """The sets as the mapping :meth:`save` writes (the layout of ``data/exemplars.yaml``)."""

        def pair(exemplar: PairExemplar, negative: bool) -> dict[str, Any]:
            entry: dict[str, Any] = {
                "caption": exemplar.caption,
                "counterfactual": exemplar.counterfactual,
            }
            if negative:
                entry.update(aspect=exemplar.aspect, reason=exemplar.reason)
            entry["source"] = exemplar.source
            return entry

        return {
            "format": EXEMPLARS_FORMAT,
            "version": self.version,
            "positive": {
                aspect: [pair(e, False) for e in self.positive.get(aspect, ())]
                for aspect in ASPECTS
            },
            "negative": [pair(e, True) for e in self.negative],
            "na": {
                aspect: [
                    {"caption": e.caption, "source": e.source} for e in self.na.get(aspect, ())
                ]
                for aspect in ASPECTS
            },
        }

    def save(self, path: str | os.PathLike) -> Path:
        return write_data(path, self.to_data())

    # -- views ---------------------------------------------------------------------------------

    def pairs(self) -> list[PairExemplar]:
        """Every labelled pair: positives of every aspect, then negatives."""
        return [e for aspect in ASPECTS for e in self.positive.get(aspect, ())] + list(
            self.negative
        )

    def counts(self) -> dict[str, int]:
        """Sizes of the sets; ``total`` is the "exemplar size" row of Tab. 12."""
        positive = sum(len(v) for v in self.positive.values())
        na = sum(len(v) for v in self.na.values())
        negative = len(self.negative)
        return {
            "positive": positive,
            "negative": negative,
            "na": na,
            "total": positive + negative + na,
            **{f"positive.{aspect}": len(self.positive.get(aspect, ())) for aspect in ASPECTS},
        }

    def demonstrations(
        self, aspect: str, rng: random.Random, *, positives: int = 6, na: int = 2
    ) -> list[Demonstration]:
        """In-context demonstrations for one query: ``positives`` pairs and ``na`` N/A captions
        of ``aspect`` drawn without replacement (all of them when a set is smaller), shuffled.

        Appendix E draws six positive and two N/A exemplars per query.
        """
        pool = self.positive.get(aspect, ())
        if not pool:
            raise ValueError(f"no positive exemplars for aspect {aspect!r}: add some first")
        drawn = [
            Demonstration(e.caption, e.counterfactual)
            for e in rng.sample(list(pool), min(positives, len(pool)))
        ]
        na_pool = self.na.get(aspect, ())
        drawn += [
            Demonstration(e.caption, None) for e in rng.sample(list(na_pool), min(na, len(na_pool)))
        ]
        rng.shuffle(drawn)
        return drawn

    # -- growth --------------------------------------------------------------------------------

    def with_labels(self, labelled: Iterable[LabelledPair]) -> tuple[ExemplarSets, dict[str, int]]:
        """The next version with human-labelled pairs merged in, and how many went where.

        A pair labelled with an aspect joins X+ of that aspect, ``"invalid"`` joins X-,
        ``"na"`` adds its caption to X^NA of the aspect it was generated for. A pair already in
        the sets under another label moves (the newer human judgement wins). A pair already in
        the sets with the same label (or an N/A caption already known) is ``unchanged``: it adds
        nothing. ``valid`` counts the pairs that became positive here (new or moved), the
        "valid samples" of Tab. 12.
        """
        positive = {aspect: list(self.positive.get(aspect, ())) for aspect in ASPECTS}
        negative = list(self.negative)
        na = {aspect: list(self.na.get(aspect, ())) for aspect in ASPECTS}
        added = {"positive": 0, "negative": 0, "na": 0, "moved": 0, "unchanged": 0, "valid": 0}
        for item in labelled:
            if item.label == NA:
                captions = {e.caption.strip().lower() for e in na[item.aspect]}
                if item.caption.strip().lower() in captions:
                    added["unchanged"] += 1
                else:
                    na[item.aspect].append(NAExemplar(item.caption, item.aspect, item.source))
                    added["na"] += 1
                continue
            exemplar = PairExemplar(
                caption=item.caption,
                counterfactual=item.counterfactual,
                label=item.label,
                aspect=item.aspect,
                reason=item.reason,
                source=item.source,
            )
            lists = [*positive.values(), negative]
            existing = [(lst, e) for lst in lists for e in lst if e.id == exemplar.id]
            if existing and all(e.label == exemplar.label for _, e in existing):
                added["unchanged"] += 1
                continue
            if existing:
                for lst, old in existing:
                    lst.remove(old)
                added["moved"] += 1
            else:
                added["positive" if exemplar.label != INVALID else "negative"] += 1
            added["valid"] += exemplar.label != INVALID
            if exemplar.label == INVALID:
                negative.append(exemplar)
            else:
                positive[exemplar.label].append(dataclasses.replace(exemplar, aspect=item.label))
        updated = ExemplarSets(
            positive={a: tuple(v) for a, v in positive.items()},
            negative=tuple(negative),
            na={a: tuple(v) for a, v in na.items()},
            version=self.version + 1,
        )
        return updated, added


@dataclass(frozen=True)
class LabelledPair:
    """A candidate pair with an annotator's label: an aspect, ``"invalid"`` or ``"na"``."""

    caption: str
    counterfactual: str
    label: str
    aspect: str
    reason: str = ""
    source: str = ""

    def __post_init__(self) -> None:
        if self.label not in (*FILTER_CLASSES, NA):
            raise ValueError(f"label {self.label!r} is not one of {(*FILTER_CLASSES, NA)}")
        if self.aspect not in ASPECTS:
            raise ValueError(f"aspect {self.aspect!r} is not one of {ASPECTS}")


#: The paper's held-out set: 100 independently annotated pairs per filter class (appendix E).
PAPER_HELDOUT_PER_CLASS = 100


def _pair_hash(exemplar: PairExemplar) -> int:
    return int(hashlib.sha256(exemplar.id.encode()).hexdigest()[:8], 16)


def split_heldout(
    pairs: Sequence[PairExemplar],
    *,
    per_class: int = PAPER_HELDOUT_PER_CLASS,
    max_share: float = 0.5,
    keep: Iterable[str] = (),
) -> tuple[list[PairExemplar], list[PairExemplar]]:
    """(train, held-out): per filter class (aspect or ``invalid``) up to ``per_class`` pairs held
    out, as the paper's 100 per class, but never more than ``max_share`` of the class, so the
    filter keeps pairs to learn from while the sets are small.

    Pairs whose id is in ``keep`` (the previous iteration's held-out set) are held out first, the
    rest by a hash of the pair, so a held-out pair stays held out as the sets grow and F1 is
    compared across iterations on a set that only grows.
    """
    if per_class < 0:
        raise ValueError(f"held-out pairs per class must be >= 0, got {per_class}")
    if not 0.0 <= max_share < 1.0:
        raise ValueError(f"held-out share of a class must be in [0, 1), got {max_share}")
    kept = set(keep)
    by_class: dict[str, list[PairExemplar]] = {}
    for exemplar in pairs:
        by_class.setdefault(exemplar.label, []).append(exemplar)
    held: set[str] = set()
    for members in by_class.values():
        size = min(per_class, int(len(members) * max_share))
        ordered = sorted(members, key=lambda e: (e.id not in kept, _pair_hash(e)))
        held |= {e.id for e in ordered[:size]}
    train = [e for e in pairs if e.id not in held]
    heldout = [e for e in pairs if e.id in held]
    return train, heldout
