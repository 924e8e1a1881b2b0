"""ContrastSets's ``datasets`` builder: configs, features, rows (its spec: ``__init__.py``)."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import datasets

from foilkit.builders.annotations import (
    AnnotationError,
    AnnotationFile,
    GitHubSource,
    fetch,
    read_tsv,
    relative_path,
)
from foilkit.builders.base import FoilkitBuilder, FoilkitConfig, configs_per, one_test_split
from foilkit.builders.contrast_sets import BENCHMARK, FROM_MULTIPLE_CHOICE_FILE, PUBLISHED
from foilkit.builders.contrast_sets.multiple_choice import (
    MultipleChoiceRecord,
    gender_mc,
    read_multiple_choice_file,
)
from foilkit.builders.schema import TEXT, TEXTS, canonical_features
from foilkit.builders.spacy_pipeline import load_spacy
from foilkit.errors import UserError
from foilkit.metrics import CITATIONS

ENDINGS = tuple(f"ending{index}" for index in range(5))

SOURCE = GitHubSource(
    repo="jamespark3922/video-lang-contrast-set",
    commit="26e101db1d700a5961261cc152a927c9bcef0c74",
    licence="unknown",
    licence_note="No licence is stated in the contrast-set repository; the captions derive from "
    "MSR-VTT.",
)

FEATURES = canonical_features(
    clip=TEXT,
    options=TEXTS,
    label=datasets.Value("int32"),
    foil_type=TEXT,
)


class ContrastSetUnavailableError(UserError):
    """A contrast-set config needs an input the user has not given."""


@dataclass
class ContrastSetConfig(FoilkitConfig):
    """One multiple-choice contrast set.

    Attributes:
        foil_type: ``"verb_lm"``, ``"verb_human"`` (published TSVs), ``"gender"`` or ``"random"``
            (built from ``multiple_choice_file``).
        multiple_choice_file: the MSR-VTT multiple-choice test file (Yu et al., 2018) the user
            supplies for ``gender``/``random``.
        seed: seeds the gender MC draws (which target noun, which negative is replaced).
        spacy_pipeline: a spaCy pipeline (package name or path) that tells possessive from object
            "her" in gender swaps; ``None`` uses the generator's rule (see ``gender_swap``).
    """

    foil_type: str = "verb_lm"
    multiple_choice_file: str | None = None
    seed: int = 0
    spacy_pipeline: str | None = None
    CHOICES = {"foil_type": (*PUBLISHED, *FROM_MULTIPLE_CHOICE_FILE)}


class ContrastSets(FoilkitBuilder):
    """MSR-VTT contrast sets: ``verb_lm``, ``verb_human`` (and ``gender``/``random``); a ``test``
    split."""

    BUILDER_CONFIG_CLASS = ContrastSetConfig
    BUILDER_CONFIGS: ClassVar[list[ContrastSetConfig]] = configs_per(
        ContrastSetConfig,
        "foil_type",
        {
            "verb_lm": "Verb-LM MC: verb foils by a language model",
            "verb_human": "Verb-H MC: verb foils by people",
            "gender": "Gender MC: one negative is a gender swap",
            "random": "Random MC: four random negatives",
        },
    )
    DEFAULT_CONFIG_NAME = "verb_lm"
    SOURCE = SOURCE
    FEATURES = FEATURES
    PRETTY_NAME = "MSR-VTT contrast sets"
    DESCRIPTION = (
        "Contrast sets for MSR-VTT multiple choice: each video has five candidate captions, one "
        "true; one negative is a hard contrast-set foil (a verb phrase changed by a language "
        "model or by people)."
    )
    CITATION = CITATIONS["contrast_sets"]
    VIDEO_LAYOUT = BENCHMARK.video_layout

    @classmethod
    def export_configs(cls) -> list[str]:
        """The published sets; ``gender``/``random`` need the user's multiple-choice file."""
        return list(PUBLISHED)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: (items in the multiple-choice file, items with a contrast foil) of the last gender build
        self.generated: tuple[int, int] | None = None

    def _split_generators(
        self, dl_manager: datasets.DownloadManager
    ) -> list[datasets.SplitGenerator]:
        foil_type = self.config.foil_type
        if foil_type in FROM_MULTIPLE_CHOICE_FILE:
            path = self._multiple_choice_file()
        else:
            file = PUBLISHED[foil_type]
            path = fetch(
                SOURCE,
                {"tsv": AnnotationFile(f"msrvtt/{file}", file)},
                dl_manager,
                self.config.annotations,
            )["tsv"]
        return one_test_split(path=path)

    def _multiple_choice_file(self) -> Path:
        if self.config.multiple_choice_file is None:
            raise ContrastSetUnavailableError(
                f"The {self.config.foil_type!r} contrast set is not published as a file: it is "
                "built from the MSR-VTT multiple-choice test file of Yu et al. (2018; 2,990 "
                "clips, five options each), which you must supply as multiple_choice_file=<path> "
                "(columns clip, ending0..ending4, label). No rows are built without it; the "
                "published sets are the 'verb_lm' and 'verb_human' configs."
            )
        path = Path(self.config.multiple_choice_file).expanduser()
        if not path.is_file():
            raise FileNotFoundError(f"multiple_choice_file {path} does not exist")
        return path

    def _rows(self, path: Path) -> Iterator[dict[str, Any]]:
        # (clip, options, label, row as errors name it) of each item, from either file format
        items: Iterator[tuple[str, list[str], Any, Any]]
        if self.config.foil_type in FROM_MULTIPLE_CHOICE_FILE:
            items = (
                (clip, list(options), label, clip)
                for clip, options, label, _ in self._multiple_choice_items(path)
            )
        else:
            items = (
                (record["clip"], [record[ending] for ending in ENDINGS], record["label"], number)
                for number, record in read_tsv(path, ("clip", *ENDINGS, "label"))
            )
        for clip, options, label, row in items:
            yield multiple_choice_row(
                clip, options, label, self.config.foil_type, file=path, row=row
            )

    def _multiple_choice_items(self, path: Path) -> list[MultipleChoiceRecord]:
        """Random MC items of the user's file; for ``gender``, with one negative gender-swapped."""
        try:
            items = read_multiple_choice_file(path)
        except ValueError as error:
            raise AnnotationError(path, None, str(error)) from None
        if self.config.foil_type == "random":
            return items
        nlp = None if self.config.spacy_pipeline is None else load_spacy(self.config.spacy_pipeline)
        gender = gender_mc(items, rng=random.Random(self.config.seed), nlp=nlp)
        self.generated = (len(items), len(gender))
        return gender

    def build_summary(self) -> list[str]:
        lines = super().build_summary()
        if self.generated is not None:
            total, kept = self.generated
            lines.insert(
                0,
                f"gender MC: {kept} of {total} clips of {self.config.multiple_choice_file} have a "
                f"gender word and got a gender-swapped negative (seed {self.config.seed}); the "
                f"other {total - kept} are dropped.",
            )
        return lines

    @classmethod
    def card_notes(cls, builders: Sequence[FoilkitBuilder]) -> str:
        generated = [
            builder for builder in builders if builder.config.foil_type in FROM_MULTIPLE_CHOICE_FILE
        ]
        if not generated:
            return ""
        return (
            "### Gender and Random MC\n\n"
            "Built from the user's MSR-VTT multiple-choice file (Yu et al., 2018), not "
            "redistributed with the published contrast sets: `random` is that file as it is; "
            "`gender` replaces one random negative of each item with the gender swap of its true "
            "caption (paper Table 6, `foilkit.generation.contrast.gender_swap`), keeping `label`, "
            "and drops clips without a gender word.\n"
        )


def multiple_choice_row(
    clip: str, options: list[str], label: Any, foil_type: str, *, file: str | Path, row: int | str
) -> dict[str, Any]:
    """A canonical row from one multiple-choice item (options in published order, ``label`` the
    true one)."""
    try:
        index = int(label)
    except (TypeError, ValueError):
        raise AnnotationError(file, row, f"field 'label' is not an integer: {label!r}") from None
    if not 0 <= index < len(options):
        raise AnnotationError(file, row, f"field 'label' is {index}, outside 0..{len(options) - 1}")
    if not clip:
        raise AnnotationError(file, row, "field 'clip' is empty")
    empty = [position for position, option in enumerate(options) if not option.strip()]
    if empty:
        raise AnnotationError(file, row, f"field 'ending{empty[0]}' is empty")
    return {
        "id": clip,
        "video_path": f"{relative_path(clip, file=file, row=row, field='clip')}.mp4",
        "caption": options[index],
        "foils": [option for position, option in enumerate(options) if position != index],
        "start": None,
        "end": None,
        "reversed": False,
        "clip": clip,
        "options": list(options),
        "label": index,
        "foil_type": foil_type,
    }
