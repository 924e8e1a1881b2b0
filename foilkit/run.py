"""A run of ``foilkit evaluate``: its folder (:class:`RunFolder`), results (:class:`RunResults`).

This module owns a run. :mod:`foilkit.evaluation` writes one through it; every reader (the
markdown and HTML reports, ``foilkit compare``, ``foilkit push-results``, the leaderboard)
reads one through it, and none of them re-derives what a run did from file names or function
signatures. A run folder::

    <run_dir>/results.json                  RunResults: metrics with CIs, coverage, tie policies,
                                            the resolved protocol, the scorers' run records
    <run_dir>/report.md, report.html        the reports (foilkit.report, foilkit.html_report)
    <run_dir>/accuracy.png, recall.png      plots (foilkit.folders.RUN_PLOTS)
    <run_dir>/scores/<config>.parquet       per-sample scores (one row per dataset row)
    <run_dir>/scores/<config>-matrix.npy    retrieval pools: views x texts scores
    <run_dir>/scores/<config>-matrix.json   ... and their ids and texts
    <run_dir>/scoring/<config>/             the scorer's own folder (run.json, resumable shards);
    <run_dir>/scoring/<config>-matrix/      a retrieval pool's

``results.json`` is format 1 (:data:`RESULTS_FORMAT`). Files written before tie policies were
recorded (``ties`` of each metric) load with the policy their benchmark's spec gives; files
written before coverage was recorded load with ``coverage`` ``None``; files written before
invocations and units were recorded load with ``invocation`` and ``units`` ``None``; every run
:func:`foilkit.evaluate` writes states them (:data:`UNITS`).
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foilkit.files import atomic_write, naming_full_disk
from foilkit.folders import RUN_PLOTS, ScoresFolder
from foilkit.scorers.protocols import ResolvedProtocol
from foilkit.scorers.record import ScoringRun, protocol_from_record
from foilkit.selection import RowSelection

if TYPE_CHECKING:
    import datasets
    import numpy as np
    import pandas as pd

    from foilkit.builders.spec import Benchmark, MetricSpec

RESULTS_FILE = "results.json"
#: The format of ``results.json`` this module writes; it reads the formats in ``READABLE_FORMATS``.
RESULTS_FORMAT = 1
READABLE_FORMATS = (1,)

#: The share of a config's rows that must be scored for a run to count as a result (``score`` and
#: ``evaluate`` ``--min-coverage``, the leaderboard's and the reports' marks).
DEFAULT_MIN_COVERAGE = 0.9

#: What the numbers of ``results.json`` are in (written as its ``units``): metrics and their
#: CIs are fractions; the reports and tables show them in percent.
UNITS = {
    "metrics": "fraction from 0 to 1, as are their [low, high] CIs (reports show percent)",
    "counts": "n and n_* of a metric, num_rows, coverage: rows",
    "wall_seconds": "seconds",
}

#: One metric function's flat result: each reported key ``k`` with ``k_ci`` = ``[low, high]``,
#: the item count ``n`` and the tie counts (JSON values only).
Result = dict[str, Any]


# --- the folder -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SavedMatrix:
    """A retrieval pool's scores as a run folder keeps them: row ``i`` is the view of item
    ``ids[i]``, column ``j`` the text ``texts[j]`` (NaN rows: the view could not be scored)."""

    scores: np.ndarray
    ids: list[str]
    texts: list[str]
    score_kind: str


@dataclass(frozen=True)
class RunFolder:
    """Where each file of a run folder lives (see the module docstring)."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))

    @property
    def results(self) -> Path:
        return self.root / RESULTS_FILE

    @property
    def report(self) -> Path:
        return self.root / "report.md"

    @property
    def html(self) -> Path:
        return self.root / "report.html"

    def plot(self, name: str) -> Path:
        """The plot ``<name>.png``, one of a run's plots (:data:`foilkit.folders.RUN_PLOTS`)."""
        path = self.root / f"{name}.png"
        if path.name not in RUN_PLOTS:
            raise ValueError(f"{path.name} is not a run's plot: add it to {RUN_PLOTS} (folders.py)")
        return path

    def plots(self) -> list[Path]:
        """The run's plots in the folder, by name; never a user's ``.png`` put beside them."""
        return sorted(path for name in RUN_PLOTS if (path := self.root / name).is_file())

    @property
    def scores_dir(self) -> Path:
        return self.root / "scores"

    def scores(self, config: str) -> Path:
        """``config``'s per-sample scores."""
        return self.scores_dir / f"{config}.parquet"

    def matrix(self, config: str) -> Path:
        """``config``'s views x texts scores (a retrieval pool)."""
        return self.scores_dir / f"{config}-matrix.npy"

    def matrix_index(self, config: str) -> Path:
        """The ids, texts and score kind of ``config``'s matrix."""
        return self.scores_dir / f"{config}-matrix.json"

    def score_files(self) -> list[Path]:
        """Every file under ``scores/``, by name."""
        return sorted(p for p in self.scores_dir.glob("*") if p.is_file())

    def scoring(self, config: str, *, matrix: bool = False) -> Path:
        """The scorer's folder of ``config`` (its retrieval pool's with ``matrix``)."""
        return self.root / "scoring" / (f"{config}-matrix" if matrix else config)

    def scoring_record(self, config: str, *, matrix: bool = False) -> Path:
        """The scorer's ``run.json`` of ``config``."""
        return ScoresFolder(self.scoring(config, matrix=matrix)).record

    def relative(self, path: Path) -> str:
        """``path`` relative to the folder, with ``/`` (as it sits in an uploaded repo)."""
        return path.relative_to(self.root).as_posix()

    def is_run(self) -> bool:
        """Whether the folder holds an evaluation (its ``results.json``)."""
        return self.results.is_file()

    def load_scores(self, config: str) -> datasets.Dataset | None:
        """``config``'s per-sample scores, in memory (``None``: a retrieval pool, which has a
        matrix instead)."""
        import datasets
        import pyarrow.parquet as pq

        path = self.scores(config)
        if not path.is_file():
            return None
        return datasets.Dataset(pq.read_table(path))

    def load_matrix(self, config: str) -> SavedMatrix | None:
        """``config``'s views x texts matrix (``None``: the config has per-sample scores)."""
        import numpy as np

        if not self.matrix(config).is_file():
            return None
        index = json.loads(self.matrix_index(config).read_text())
        return SavedMatrix(
            np.load(self.matrix(config)), index["ids"], index["texts"], index["score_kind"]
        )

    def write_scores(self, config: str, rows: datasets.Dataset) -> Path:
        self.scores_dir.mkdir(parents=True, exist_ok=True)
        with naming_full_disk(self.scores(config)):
            rows.to_parquet(self.scores(config))
        return self.scores(config)

    def write_matrix(self, config: str, matrix: SavedMatrix) -> Path:
        import numpy as np

        self.scores_dir.mkdir(parents=True, exist_ok=True)
        with naming_full_disk(self.matrix(config)):
            np.save(self.matrix(config), matrix.scores)
        atomic_write(
            self.matrix_index(config),
            json.dumps({"ids": matrix.ids, "texts": matrix.texts, "score_kind": matrix.score_kind}),
        )
        return self.matrix(config)


def find_runs(paths: Iterable[str | os.PathLike]) -> list[RunFolder]:
    """The run folders named, and every run folder at any depth below a named folder that is
    not one itself (``runs/``: ``runs/clip``, ``runs/tasks/vitatecs``, ``runs/demo/runs/xclip``),
    each folder's in name order. A run folder's own subfolders are not searched (they hold its
    scores, never another run), nor are hidden folders (``.git``, ``.cache``)."""
    found = []
    for name in paths:
        folder = RunFolder(Path(name))
        if folder.is_run():
            found.append(folder)
            continue
        below = []
        for root, folders, _files in os.walk(folder.root):
            folders.sort()
            kept = []
            for child in folders:
                run = RunFolder(Path(root) / child)
                if run.is_run():
                    below.append(run)
                elif not child.startswith("."):
                    kept.append(child)
            folders[:] = kept
        found += sorted(below, key=lambda run: run.root.parts)
    return found


# --- the results ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Coverage:
    """What became of a config's rows: the rows selected (every row, or those ``--limit``
    selected), of which some were dropped at build for a missing video, some failed to score
    (video missing, corrupt or out of range, a bad score) and the rest were scored; how many
    failed for each cause (``causes``, most frequent first); and the rows ``--limit`` left out.

    Coverage is one number everywhere (results.json, the reports, the leaderboard, push-results,
    the exit status): rows scored / rows selected (:attr:`total`). Rows ``--limit`` did not
    select are not in it; they are counted apart (``not_selected``) and shown beside it.

    ``benchmark_rows``: the config's rows in the benchmark (with ``--limit``: before it selected
    some), ``None`` for a run of an exported dataset, whose build the run did not see;
    ``dropped_missing_video``: of the rows selected, those ``--on-missing skip`` dropped at build
    (``None``: an exported dataset's); ``causes``: ``None`` in runs written before causes were
    recorded; ``not_selected``: ``None`` when ``--limit`` cut nothing."""

    benchmark_rows: int | None
    dropped_missing_video: int | None
    failed: int
    scored: int
    causes: dict[str, int] | None = None
    not_selected: int | None = None

    @classmethod
    def of(
        cls,
        num_rows: int,
        dropped_missing: int | None,
        failed: int,
        causes: Mapping[str, int] | None = None,
        limited_from: int | None = None,
    ) -> Coverage:
        """The coverage of ``num_rows`` loaded rows, ``failed`` of which were not scored;
        ``limited_from``: the config's rows before ``--limit`` selected these and the
        ``dropped_missing`` ones (``None``: every row was selected)."""
        selected = num_rows + (dropped_missing or 0)
        benchmark_rows = None
        if dropped_missing is not None:  # built by this run: it saw every row of the config
            benchmark_rows = selected if limited_from is None else limited_from
        return cls(
            benchmark_rows,
            dropped_missing,
            failed,
            num_rows - failed,
            None if causes is None else dict(causes),
            None if limited_from is None else limited_from - selected,
        )

    @property
    def total(self) -> int:
        """The rows the scores should cover: the rows selected (every row of the config, or
        those ``--limit`` selected), those dropped at build among them."""
        return self.scored + self.failed + (self.dropped_missing_video or 0)

    @property
    def fraction(self) -> float:
        """``scored / total`` (1.0 for an empty benchmark)."""
        return self.scored / self.total if self.total else 1.0

    @property
    def label(self) -> str:
        """``scored / total``, e.g. ``2 / 20``."""
        return f"{self.scored} / {self.total}"

    def below(self, minimum: float) -> bool:
        """Whether fewer rows were scored than ``minimum`` asks (none scored always is)."""
        return self.scored == 0 or self.fraction < minimum

    def why(self) -> str:
        """The rows selected but not scored, by cause: ``18 video missing, 2 dropped at build``
        (empty when every row selected was scored)."""
        parts = [f"{n} {cause}" for cause, n in (self.causes or {}).items()]
        if self.causes is None and self.failed:
            parts.append(f"{self.failed} failed to score")
        if self.dropped_missing_video:
            parts.append(f"{self.dropped_missing_video} dropped at build (video missing)")
        return ", ".join(parts)

    def left_out(self) -> str:
        """The rows ``--limit`` did not select, apart from the coverage: ``3780 of 3800 rows not
        selected (--limit)`` (empty when it cut nothing)."""
        if self.not_selected is None:
            return ""
        return (
            f"{self.not_selected} of {self.total + self.not_selected} rows not selected (--limit)"
        )

    def to_record(self) -> dict[str, Any]:
        """Every field; ``causes`` and ``not_selected`` only when set (a run from before causes
        were recorded stays as it was; only a run ``--limit`` cut has ``not_selected``)."""
        optional = {f.name for f in fields(self) if f.default is None}
        return {
            key: value
            for key, value in asdict(self).items()
            if value is not None or key not in optional
        }

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> Coverage:
        return cls(*(data.get(f.name) if f.default is None else data[f.name] for f in fields(cls)))


@dataclass(frozen=True)
class MetricResult:
    """One metric of one config: its function's result over every scored item (``overall``)
    and, for a per-group metric, over each group's items; the rows left out because they could
    not be scored; and the tie policy the function ran with (``None``: it has none)."""

    overall: Result
    errors: int
    groups: dict[str, Result] | None = None
    ties: str | None = None
    #: generate mode with several sampled answers per question: each reported quantity
    #: computed on each sample's answers alone (:class:`SampleSpread`), by result key
    samples: dict[str, SampleSpread] | None = None

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"overall": self.overall, "errors": self.errors}
        if self.groups is not None:
            out["groups"] = self.groups
        out["ties"] = self.ties
        if self.samples is not None:
            out["samples"] = {key: spread.to_record() for key, spread in self.samples.items()}
        return out

    @classmethod
    def from_record(cls, data: Mapping[str, Any], *, ties: str | None = None) -> MetricResult:
        """``ties``: the policy of a result written before policies were recorded."""
        samples = data.get("samples")
        return cls(
            dict(data["overall"]),
            data["errors"],
            None if data.get("groups") is None else {g: dict(r) for g, r in data["groups"].items()},
            data.get("ties", ties),
            None
            if samples is None
            else {key: SampleSpread(list(value["values"])) for key, value in samples.items()},
        )


@dataclass(frozen=True)
class SampleSpread:
    """A quantity computed on each sampled answer set alone (sample ``s``: every question's
    ``s``-th answer): the values, their mean (the accuracy averaged over samples) and their
    standard deviation (population, over the samples)."""

    values: list[float]

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values)

    @property
    def std(self) -> float:
        mean = self.mean
        return (sum((v - mean) ** 2 for v in self.values) / len(self.values)) ** 0.5

    def to_record(self) -> dict[str, Any]:
        return {"values": list(self.values), "mean": self.mean, "std": self.std}


@dataclass(frozen=True)
class ConfigResults:
    """One config of a run: its rows, their coverage (``None``: a run written before coverage
    was recorded), every metric, and the run records of its scoring (``score``: per-sample
    rows; ``score_matrix``: a retrieval pool's matrix); ``limited_from``: the config's rows
    before ``--limit`` selected some (``None``: every row was evaluated); ``num_rows``: the rows
    scoring was given (those selected, less those dropped at build)."""

    num_rows: int
    metrics: dict[str, MetricResult]
    coverage: Coverage | None = None
    score: ScoringRun | None = None
    score_matrix: ScoringRun | None = None
    limited_from: int | None = None

    @property
    def record(self) -> ScoringRun | None:
        """The config's scoring record: its per-sample scoring's, else its matrix's."""
        return self.score or self.score_matrix

    def records(self) -> list[ScoringRun]:
        return [record for record in (self.score, self.score_matrix) if record is not None]

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"num_rows": self.num_rows}
        if self.limited_from is not None:
            out["limited_from"] = self.limited_from
        if self.coverage is not None:
            out["coverage"] = self.coverage.to_record()
        out["metrics"] = {name: metric.to_record() for name, metric in self.metrics.items()}
        run = {"score": self.score, "score_matrix": self.score_matrix}
        out["run"] = {
            kind: record.to_record() for kind, record in run.items() if record is not None
        }
        return out

    @classmethod
    def from_record(
        cls, data: Mapping[str, Any], *, ties: Mapping[str, str | None] | None = None
    ) -> ConfigResults:
        """``ties``: metric -> policy, for results written before policies were recorded."""
        run = {
            kind: None if record is None else ScoringRun.from_record(record)
            for kind in ("score", "score_matrix")
            for record in [(data.get("run") or {}).get(kind)]
        }
        return cls(
            data["num_rows"],
            {
                name: MetricResult.from_record(metric, ties=(ties or {}).get(name))
                for name, metric in data["metrics"].items()
            },
            None if data.get("coverage") is None else Coverage.from_record(data["coverage"]),
            limited_from=data.get("limited_from"),
            **run,
        )


@dataclass(frozen=True)
class Bootstrap:
    """The bootstrap of a run's confidence intervals."""

    n_resamples: int
    seed: int


@dataclass(frozen=True)
class Invocation:
    """How a run was made: the command line (``foilkit evaluate ...``, or the Python process's
    ``sys.argv`` for an API call), foilkit's version and git commit (``None``: not run from a
    checkout; ``git_dirty``: the checkout had uncommitted changes), when it started and ended
    with its wall time in seconds (loading, scoring, metrics; not the reports), and the resolved
    configuration that replays it (``config``, as the run folder's ``config.yaml``; ``None``:
    a run from before it was recorded)."""

    argv: list[str]
    foilkit_version: str
    git_commit: str | None
    git_dirty: bool | None
    started_at: str
    finished_at: str
    wall_seconds: float
    config: dict[str, Any] | None = None

    def to_record(self) -> dict[str, Any]:
        return {
            "argv": list(self.argv),
            "config": self.config,
            "foilkit_version": self.foilkit_version,
            "git_commit": self.git_commit,
            "git_dirty": self.git_dirty,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "wall_seconds": self.wall_seconds,
        }

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> Invocation:
        return cls(
            list(data["argv"]),
            data["foilkit_version"],
            data.get("git_commit"),
            data.get("git_dirty"),
            data["started_at"],
            data["finished_at"],
            data["wall_seconds"],
            data.get("config"),
        )


@dataclass(frozen=True)
class RunResults:
    """A run's ``results.json``: what was evaluated, how, and every number.

    Attributes:
        benchmark, title, paper_table: the benchmark (:mod:`foilkit.builders.spec` (each
        benchmark's spec beside its builder)) and its paper's table.
        model, label: the model as given (Hub id or path) and its name in reports.
        control: the temporal control the frames were put under (``None``: none).
        protocol: the scoring protocol the run resolved to (``None``: none was recorded).
        dataset: the exported folder or Hub id scored (``None``: built from the annotations).
        split, bootstrap: the split scored and the bootstrap of the intervals.
        configs: per config, its coverage, metrics (with their tie policies) and run records.
        limit, limit_seed: ``--limit`` and ``--limit-seed``: only some rows of each config were
            evaluated (:class:`foilkit.selection.RowSelection`; ``None``: all of them); see
            :meth:`partial`.
        invocation: the command line, foilkit version and commit, and wall time (``None``: a
            run written before they were recorded).
        units: what its numbers are in (:data:`UNITS`, which every run states now; ``None``: a
            file written before, whose numbers are in the same units).
    """

    benchmark: str
    title: str
    paper_table: str
    model: str
    label: str
    control: str | None
    protocol: ResolvedProtocol | None
    dataset: str | None
    split: str
    bootstrap: Bootstrap
    configs: dict[str, ConfigResults] = field(default_factory=dict)
    limit: int | float | None = None
    limit_seed: int | None = None
    invocation: Invocation | None = None
    units: Mapping[str, str] | None = None

    def coverages(self) -> dict[str, Coverage]:
        """Each config's recorded coverage (runs from before coverage was recorded have none)."""
        return {
            name: entry.coverage
            for name, entry in self.configs.items()
            if entry.coverage is not None
        }

    def partial(self) -> str | None:
        """``None`` for a run of every item; for a run cut by ``--limit``, what it selected in
        words (every report and the Hub notes show it): ``partial run (--limit 5): the first 5
        rows of each config were evaluated, not the benchmark; direction 5 of 16 rows``."""
        cut = [
            f"{name} {selected} of {entry.limited_from} rows"
            for name, entry in self.configs.items()
            if entry.limited_from is not None
            for selected in [entry.limited_from - _not_selected(entry)]
        ]
        if self.limit is None or not cut:  # a limit no config reached left out nothing
            return None
        selection = RowSelection(self.limit, self.limit_seed)
        return (
            f"partial run ({selection.flags()}): {selection.describe()} of each config were "
            f"evaluated, not the benchmark; {', '.join(cut)}"
        )

    @property
    def spec(self) -> Benchmark:
        """The benchmark's :class:`foilkit.builders.spec.Benchmark`."""
        from foilkit.builders import get_benchmark

        return get_benchmark(self.benchmark)

    def records(self) -> Iterator[ScoringRun]:
        """Every scoring record of the run, config by config (per-sample scoring first)."""
        for config in self.configs.values():
            yield from config.records()

    def tie_policies(self) -> dict[str, str]:
        """Metric name -> the tie policy it ran with, for the metrics that have one."""
        return {
            name: metric.ties
            for config in self.configs.values()
            for name, metric in config.metrics.items()
            if metric.ties is not None
        }

    def to_pandas(self) -> pd.DataFrame:
        """Every number of the run as a long table, one row per config, group, metric and
        measure: ``group`` is ``None`` for a metric over all the config's items; ``measure`` is
        one of the metric's reported numbers (``accuracy``, ``macro_accuracy``, ...) and
        ``value`` that number, a fraction (see :data:`UNITS`), with ``ci_low``/``ci_high``
        (``NaN``: no CI) and ``n``, the items it was computed over."""
        import pandas as pd

        rows = []
        for config, entry in self.configs.items():
            for metric, result in entry.metrics.items():
                parts = [(None, result.overall), *(result.groups or {}).items()]
                for group, numbers in parts:
                    for key, value in numbers.items():
                        counted = key == "n" or key.startswith("n_") or key.endswith("_ci")
                        if counted or isinstance(value, bool) or not isinstance(value, int | float):
                            continue
                        low, high = numbers.get(f"{key}_ci") or (None, None)
                        rows.append(
                            {
                                "config": config,
                                "group": group,
                                "metric": metric,
                                "measure": key,
                                "value": value,
                                "ci_low": low,
                                "ci_high": high,
                                "n": numbers.get("n"),
                            }
                        )
        columns = ["config", "group", "metric", "measure", "value", "ci_low", "ci_high", "n"]
        table = pd.DataFrame(rows, columns=columns)
        return table.astype({"value": float, "ci_low": float, "ci_high": float})

    def to_record(self) -> dict[str, Any]:
        limit = {} if self.limit is None else {"limit": self.limit}  # only a run --limit cut
        if self.limit_seed is not None:
            limit["limit_seed"] = self.limit_seed
        return {
            "format": RESULTS_FORMAT,
            "benchmark": self.benchmark,
            "title": self.title,
            "paper_table": self.paper_table,
            "model": self.model,
            "label": self.label,
            "control": self.control,
            "protocol": None if self.protocol is None else self.protocol.to_record(),
            "dataset": self.dataset,
            "split": self.split,
            "bootstrap": {"n_resamples": self.bootstrap.n_resamples, "seed": self.bootstrap.seed},
            **limit,
            **({} if self.invocation is None else {"invocation": self.invocation.to_record()}),
            **({} if self.units is None else {"units": dict(self.units)}),
            "configs": {name: config.to_record() for name, config in self.configs.items()},
        }

    @classmethod
    def from_record(cls, data: Mapping[str, Any]) -> RunResults:
        """Results of any readable format (``ValueError`` for another format)."""
        version = data.get("format")
        if version not in READABLE_FORMATS:
            raise ValueError(
                f"results format {version!r}; this foilkit reads format "
                + ", ".join(map(str, READABLE_FORMATS))
                + " (a newer foilkit wrote it?)"
            )
        benchmark = data["benchmark"]
        configs = {}
        for name, config in data["configs"].items():
            legacy = any("ties" not in metric for metric in config["metrics"].values())
            configs[name] = ConfigResults.from_record(
                config, ties=_spec_tie_policies(benchmark, name) if legacy else None
            )
        return cls(
            benchmark=benchmark,
            title=data["title"],
            paper_table=data.get("paper_table", ""),
            model=data["model"],
            label=data["label"],
            control=data.get("control"),
            protocol=None if not data.get("protocol") else protocol_from_record(data["protocol"]),
            dataset=data.get("dataset"),
            split=data["split"],
            bootstrap=Bootstrap(data["bootstrap"]["n_resamples"], data["bootstrap"]["seed"]),
            configs=configs,
            limit=data.get("limit"),
            limit_seed=data.get("limit_seed"),
            invocation=None
            if data.get("invocation") is None
            else Invocation.from_record(data["invocation"]),
            units=data.get("units"),
        )

    #: The name :meth:`from_record` had before one serialisation verb (the API page showed it).
    from_json = from_record

    @classmethod
    def load(cls, run_dir: str | os.PathLike | RunFolder) -> RunResults:
        """The results of a run folder; ``FileNotFoundError`` when it holds none, ``ValueError``
        naming the file when it is not a foilkit results file this version reads."""
        folder = run_dir if isinstance(run_dir, RunFolder) else RunFolder(Path(run_dir))
        path = folder.results
        if not path.is_file():
            raise FileNotFoundError(
                f"{folder.root} is not a foilkit evaluation run folder: {path} is missing"
            )
        try:
            return cls.from_record(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            detail = f"no {error}" if isinstance(error, KeyError) else str(error)
            raise ValueError(
                f"{path} is not a foilkit results file this version reads: {detail}"
            ) from error

    def save(self, run_dir: str | os.PathLike | RunFolder) -> Path:
        """Write ``results.json`` into the run folder; returns its path."""
        folder = run_dir if isinstance(run_dir, RunFolder) else RunFolder(Path(run_dir))
        folder.root.mkdir(parents=True, exist_ok=True)
        atomic_write(folder.results, json.dumps(self.to_record(), indent=2, default=_json_default))
        return folder.results


def _not_selected(entry: ConfigResults) -> int:
    """The rows of a config ``--limit`` did not select (a run written before they were
    recorded: those beyond the rows scoring was given)."""
    coverage = entry.coverage
    if coverage is not None and coverage.not_selected is not None:
        return coverage.not_selected
    return (entry.limited_from or entry.num_rows) - entry.num_rows


def tie_policy(metric: MetricSpec) -> str | None:
    """The tie policy ``metric`` runs with: its option in the benchmark's spec, else its
    function's default (``None``: the function takes none)."""
    from foilkit.metrics import metric_function

    if "ties" in metric.options:
        return metric.options["ties"]
    parameter = inspect.signature(metric_function(metric.metric)).parameters.get("ties")
    return None if parameter is None else parameter.default


def _spec_tie_policies(benchmark: str, config: str) -> dict[str, str | None]:
    """The tie policies the benchmark's spec gives ``config``'s metrics (for results written
    before the policies were recorded)."""
    from foilkit.builders import get_benchmark

    return {
        metric.metric: tie_policy(metric) for metric in get_benchmark(benchmark).metrics(config)
    }


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def plain_json(value: Any) -> Any:
    """``value`` as ``results.json`` stores it (numpy values as lists and numbers, tuples as
    lists): what a run holds in memory equals what loading its folder gives."""
    return json.loads(json.dumps(value, default=_json_default))
