"""What every foilkit builder shares: the config options, video resolution, reports for the card.

A benchmark module subclasses :class:`FoilkitBuilder`, declares its source, features and texts
for the dataset card, and implements ``_split_generators`` plus :meth:`FoilkitBuilder._rows`,
which yields canonical rows *without* ``video``. :meth:`FoilkitBuilder._generate_examples`
resolves the videos of a whole split at once (so ``on_missing="error"`` can report every missing
video in one message), checks that ids are unique, and records what the policy did.
"""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar, TypeVar

import datasets

from foilkit.builders.annotations import GitHubSource, HubSource
from foilkit.builders.build_key import build_key
from foilkit.builders.videos import VideoReport, check_policy, resolve_videos
from foilkit.selection import RowSelection


@dataclass
class FoilkitConfig(datasets.BuilderConfig):
    """Options every foilkit builder takes.

    Attributes:
        video_root: folder holding the benchmark's videos in the layout its dataset card gives;
            ``None`` when there are no videos (then ``on_missing="keep"`` gives text-only rows).
        on_missing: ``"error"`` (default), ``"skip"`` or ``"keep"``; see
        :mod:`foilkit.builders.videos`.
        annotations: a local folder with the annotation files; ``None`` downloads them from the
            upstream repository at the pinned commit.
        splits: build only these splits (``None``: all): evaluating RTime's ``test`` split needs
            neither its validation annotations nor its validation videos.
        limit, limit_seed: build only the rows a partial run selects of each split
            (:class:`foilkit.selection.RowSelection`: the first ``limit`` rows, or that share,
            or a sample drawn with ``limit_seed``), selected before any video is looked for:
            only their videos are needed (``None``: every row).
    """

    video_root: str | None = None
    on_missing: str = "error"
    annotations: str | None = None
    splits: tuple[str, ...] | None = None
    limit: int | float | None = None
    limit_seed: int | None = None
    #: A builder's own options that take one of a few values: option -> those values, checked
    #: by :meth:`validate` (an option whose default is ``None`` may also be ``None``: all of them).
    CHOICES: ClassVar[Mapping[str, Collection[str]]] = {}

    def __post_init__(self) -> None:
        super().__post_init__()
        self.validate()

    def validate(self) -> None:
        """Raise ``ValueError`` on an invalid option. Run again by the builder, because ``datasets``
        sets the options passed to a builder on a copy of the config without ``__post_init__``."""
        check_policy(self.on_missing)
        RowSelection.of(self.limit, self.limit_seed)
        for field, choices in self.CHOICES.items():
            optional = self.__dataclass_fields__[field].default is None
            self.check_choice(field, choices, optional=optional)

    def check_choice(self, field: str, choices: Collection[str], *, optional: bool = False) -> None:
        """Raise ``ValueError`` unless the option ``field`` is one of ``choices`` (or ``None``,
        which stands for all of them, where ``optional``)."""
        value = getattr(self, field)
        if value in choices or (optional and value is None):
            return
        or_none = " or None" if optional else ""
        raise ValueError(f"{field} must be one of {tuple(choices)}{or_none}, got {value!r}")


ConfigT = TypeVar("ConfigT", bound=FoilkitConfig)


def configs_per(
    config: type[ConfigT],
    field: str,
    descriptions: Mapping[str, str],
    *,
    all_description: str | None = None,
) -> list[ConfigT]:
    """A builder's configs, one per value of the option ``field``: each named as its value and
    described by ``descriptions`` (value -> description, in the order the configs list), then,
    where ``all_description`` describes it, the config ``all`` (``field=None``: every value)."""
    configs = [
        config(name=value, description=description, **{field: value})
        for value, description in descriptions.items()
    ]
    if all_description is not None:
        configs.append(config(name="all", description=all_description, **{field: None}))
    return configs


def one_test_split(**gen_kwargs: Any) -> list[datasets.SplitGenerator]:
    """The one ``test`` split of a benchmark that has no other, its rows read by
    ``_rows(**gen_kwargs)``."""
    return [
        datasets.SplitGenerator(
            name=datasets.Split.TEST, gen_kwargs={"split": "test", **gen_kwargs}
        )
    ]


class DuplicateIdError(ValueError):
    """Two rows of a split share an id (a key or id repeated in an annotation file); raised as
    itself by :func:`foilkit.builders.prepare`, not wrapped in ``DatasetGenerationError``."""


class FoilkitBuilder(datasets.GeneratorBasedBuilder):
    """A benchmark as a ``datasets`` builder with a ``Video`` column (see module docstring)."""

    BUILDER_CONFIG_CLASS = FoilkitConfig
    SOURCE: ClassVar[GitHubSource | HubSource]
    FEATURES: ClassVar[datasets.Features]
    PRETTY_NAME: ClassVar[str]
    DESCRIPTION: ClassVar[str]
    CITATION: ClassVar[str]
    #: Markdown for the card: where each row's video must be under the video root.
    VIDEO_LAYOUT: ClassVar[str]
    #: Benchmark-specific markdown for the card, where it does not depend on the build.
    CARD_NOTES: ClassVar[str] = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.config.validate()
        self.video_reports: dict[str, VideoReport] = {}
        #: the rows of each split the config's ``limit`` cut, before it selected some (a split
        #: it did not cut is not here)
        self.selected_from: dict[str, int] = {}

    @cached_property
    def build_key(self) -> str:
        """What this build reads, as a key (:func:`foilkit.builders.build_key.build_key`)."""
        return build_key(type(self), self.config)

    def _relative_data_dir(self, with_version: bool = True, with_hash: bool = True) -> str:
        """The build's folder in ``datasets``' cache, one level deeper: :attr:`build_key`, so a
        build of other inputs (videos that arrived, changed annotations, other builder code) is
        prepared in a folder of its own, not checked against an older build's split sizes."""
        folder = super()._relative_data_dir(with_version, with_hash)
        return posixpath.join(folder, self.build_key) if with_version and with_hash else folder

    def wanted_splits(self, splits: dict[str, Any]) -> dict[str, Any]:
        """``splits`` (split name -> anything) cut to the config's ``splits``; a split asked for
        that the benchmark lacks is an error naming those it has."""
        wanted = self.config.splits
        if wanted is None:
            return splits
        unknown = [name for name in wanted if name not in splits]
        if unknown:
            raise ValueError(
                f"{self.name} ({self.config.name}) has no split {unknown[0]!r}; it has "
                f"{', '.join(splits)}: pass one of them (--split NAME; split= in Python)"
            )
        return {name: value for name, value in splits.items() if name in wanted}

    @classmethod
    def export_configs(cls) -> list[str]:
        """The configs an export without an explicit list builds: every config, by default."""
        return [config.name for config in cls.BUILDER_CONFIGS]

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(
            description=self.DESCRIPTION,
            features=self.FEATURES,
            homepage=self.SOURCE.homepage,
            license=self.SOURCE.licence,
            citation=self.CITATION,
        )

    def _rows(self, **gen_kwargs: Any) -> Iterator[dict[str, Any]]:
        """Canonical rows of one split, without ``video`` (``video_path`` set)."""
        raise NotImplementedError

    def count_rows(self) -> dict[str, int]:
        """Rows of each split as the annotation files give them, before any video is looked for
        (what a build keeps with ``on_missing="keep"``): for ``foilkit benchmarks``. Reads the
        local copy the config's ``annotations`` names; ``ValueError`` without one (nothing is
        downloaded)."""
        if self.config.annotations is None:
            raise ValueError(
                f"{self.name}/{self.config.name}: counting rows needs a local copy of the "
                "annotation files (annotations=<folder>)"
            )
        counts = {}
        for generator in self._split_generators(None):  # a local copy: no download manager
            kwargs = {k: v for k, v in generator.gen_kwargs.items() if k != "split"}
            counts[str(generator.name)] = sum(1 for _ in self._rows(**kwargs))
        return counts

    def build_summary(self) -> list[str]:
        """Sentences on what the last build did (videos found, rows dropped); for the info and
        card."""
        return [report.summary() for report in self.video_reports.values()]

    @classmethod
    def card_notes(cls, builders: Sequence[FoilkitBuilder]) -> str:
        """Benchmark-specific markdown for the card of an export of ``builders`` (built configs):
        :attr:`CARD_NOTES`, unless the builds change it."""
        return cls.CARD_NOTES

    def _selected(self, split: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rows of ``split`` the config's ``limit`` selects (all of them without one), noting
        in :attr:`selected_from` how many there were when it cut some."""
        selection = RowSelection.of(self.config.limit, self.config.limit_seed)
        if selection is None or selection.count(len(rows)) == len(rows):
            return rows
        self.selected_from[split] = len(rows)
        return [rows[index] for index in selection.indices(len(rows))]

    def _generate_examples(
        self, split: str, **gen_kwargs: Any
    ) -> Iterator[tuple[str, dict[str, Any]]]:
        rows = list(self._rows(**gen_kwargs))
        seen: dict[str, int] = {}
        for index, row in enumerate(rows):
            if row["id"] in seen:
                raise DuplicateIdError(
                    f"split {split!r}: id {row['id']!r} of row {index} repeats row "
                    f"{seen[row['id']]} (rows counted from 0 in the order the annotation files "
                    "give them): an id names one row; remove or rename one of them"
                )
            seen[row["id"]] = index
        rows = self._selected(split, rows)  # before any video is looked for
        pairs = "foil_video" in self.FEATURES  # the pair shape: each row has two videos
        resolution = resolve_videos(
            [row["video_path"] for row in rows],
            self.config.video_root,
            self.config.on_missing,
            split=split,
            ids=[row["id"] for row in rows],
            foil_video_paths=[row["foil_video_path"] for row in rows] if pairs else None,
            selected_from=self.selected_from.get(split),
        )
        self.video_reports[split] = resolution.report
        self.info.description = "\n".join([self.DESCRIPTION, *self.build_summary()])
        for index in resolution.kept:
            row = rows[index]
            row["video"] = resolution.videos[index]
            if pairs:
                row["foil_video"] = resolution.foil_videos[index]
            yield row["id"], row
