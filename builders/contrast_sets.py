"""MSR-VTT contrast sets (Park et al.): 5-way multiple choice with a verb-based hard negative.

Upstream: ``msrvtt/msrvtt_lm_contrast_set.tsv`` (the verb foil made by a language model) and
``msrvtt/msrvtt_human_contrast_set.tsv`` (made by people), columns ``clip, ending0..ending4,
label``: one of the four negatives is the contrast-set foil, the others are random captions of
other videos. ``options`` keeps the endings in published order, ``label`` indexes the true one,
``caption = options[label]`` and ``foils`` are the other options in published order.

The paper's ``gender`` and ``random`` MC are built from the MSR-VTT multiple-choice test file of
Yu et al. (2018), which this repository does not hold: the user supplies it, and the gender foils
come from the contrast-set generator (``foilkit.generation.contrast``). Until that generator
provides Gender/Random MC items, these configs raise :class:`ContrastSetUnavailableError`
instead of producing rows.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets

from foilkit.builders.annotations import AnnotationError, AnnotationFile, GitHubSource, fetch, read_tsv
from foilkit.builders.base import FoilkitBuilder, FoilkitConfig
from foilkit.builders.schema import TEXT, TEXTS, canonical_features

ENDINGS = tuple(f"ending{index}" for index in range(5))
PUBLISHED = {"verb_lm": "msrvtt_lm_contrast_set.tsv", "verb_human": "msrvtt_human_contrast_set.tsv"}
FROM_MULTIPLE_CHOICE_FILE = ("gender", "random")

SOURCE = GitHubSource(
    repo="jamespark3922/video-lang-contrast-set",
    commit="26e101db1d700a5961261cc152a927c9bcef0c74",
    licence="unknown",
    licence_note="No licence is stated in the contrast-set repository; the captions derive from MSR-VTT.",
)

FEATURES = canonical_features(
    clip=TEXT,
    options=TEXTS,
    label=datasets.Value("int32"),
    foil_type=TEXT,
)

_CITATION = """\
@inproceedings{park2022exposing,
  title     = {Exposing the Limits of Video-Text Models through Contrast Sets},
  author    = {Park, Jae Sung and Shen, Sheng and Farhadi, Ali and Darrell, Trevor and Choi, Yejin and Rohrbach, Anna},
  booktitle = {Proceedings of the 2022 Conference of the North American Chapter of the Association for Computational Linguistics: Human Language Technologies},
  year      = {2022}
}"""


class ContrastSetUnavailableError(RuntimeError):
    """A contrast-set config needs inputs or a generator this installation does not have."""


@dataclass
class ContrastSetConfig(FoilkitConfig):
    """One multiple-choice contrast set.

    Attributes:
        foil_type: ``"verb_lm"``, ``"verb_human"`` (published TSVs), ``"gender"`` or ``"random"``
            (built from ``multiple_choice_file``).
        multiple_choice_file: the MSR-VTT multiple-choice test file (Yu et al., 2018) the user
            supplies for ``gender``/``random``.
    """

    foil_type: str = "verb_lm"
    multiple_choice_file: str | None = None

    def validate(self) -> None:
        super().validate()
        if self.foil_type not in (*PUBLISHED, *FROM_MULTIPLE_CHOICE_FILE):
            raise ValueError(f"foil_type must be one of {(*PUBLISHED, *FROM_MULTIPLE_CHOICE_FILE)}, got {self.foil_type!r}")


class ContrastSets(FoilkitBuilder):
    """MSR-VTT contrast sets: ``verb_lm``, ``verb_human`` (and ``gender``/``random``); a ``test`` split."""

    BUILDER_CONFIG_CLASS = ContrastSetConfig
    BUILDER_CONFIGS = [
        ContrastSetConfig(name="verb_lm", foil_type="verb_lm", description="Verb-LM MC: verb foils by a language model"),
        ContrastSetConfig(name="verb_human", foil_type="verb_human", description="Verb-H MC: verb foils by people"),
        ContrastSetConfig(name="gender", foil_type="gender", description="Gender MC: one negative is a gender swap"),
        ContrastSetConfig(name="random", foil_type="random", description="Random MC: four random negatives"),
    ]
    DEFAULT_CONFIG_NAME = "verb_lm"
    SOURCE = SOURCE
    FEATURES = FEATURES
    PRETTY_NAME = "MSR-VTT contrast sets"
    DESCRIPTION = (
        "Contrast sets for MSR-VTT multiple choice: each video has five candidate captions, one true; one "
        "negative is a hard contrast-set foil (a verb phrase changed by a language model or by people)."
    )
    CITATION = _CITATION
    VIDEO_LAYOUT = "`<video_root>/<clip>.mp4`, the MSR-VTT video named by its clip id (e.g. `video9770.mp4`)."

    @classmethod
    def export_configs(cls) -> list[str]:
        """The published sets; ``gender``/``random`` need the user's multiple-choice file."""
        return list(PUBLISHED)

    def _split_generators(self, dl_manager: datasets.DownloadManager) -> list[datasets.SplitGenerator]:
        foil_type = self.config.foil_type
        if foil_type in FROM_MULTIPLE_CHOICE_FILE:
            raise ContrastSetUnavailableError(
                f"The {foil_type!r} contrast set is not published as a file: it is built from the MSR-VTT "
                "multiple-choice test file of Yu et al. (2018; 2,990 videos, five options each), which you must "
                "supply as multiple_choice_file=..., "
                + (
                    "with one negative replaced by a gender-swapped caption from foilkit.generation.contrast. "
                    if foil_type == "gender"
                    else "read by foilkit.generation.contrast. "
                )
                + "That generator does not provide multiple-choice items in this installation yet, so no "
                "rows can be built. Use the published 'verb_lm' or 'verb_human' configs."
            )
        file = PUBLISHED[foil_type]
        paths = fetch(SOURCE, {"tsv": AnnotationFile(f"msrvtt/{file}", file)}, dl_manager, self.config.annotations)
        return [datasets.SplitGenerator(name=datasets.Split.TEST, gen_kwargs={"split": "test", "path": paths["tsv"]})]

    def _rows(self, path: Path) -> Iterator[dict[str, Any]]:
        for number, record in read_tsv(path, ("clip", *ENDINGS, "label")):
            yield multiple_choice_row(
                record["clip"], [record[ending] for ending in ENDINGS], record["label"],
                self.config.foil_type, file=path, row=number,
            )  # fmt: skip


def multiple_choice_row(
    clip: str, options: list[str], label: Any, foil_type: str, *, file: str | Path, row: int | str
) -> dict[str, Any]:
    """A canonical row from one multiple-choice item (options in published order, ``label`` the true one)."""
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
        "video_path": f"{clip}.mp4",
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
