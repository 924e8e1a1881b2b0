"""The human-in-the-loop iterations on disk, and ``status``: the table of Tab. 12.

A loop lives in one folder::

    <loop>/config.yaml            the resolved PipelineSettings (seed included)
    <loop>/exemplars.yaml         the current exemplar sets (the user may edit them)
    <loop>/state.json             one record per iteration, and the captions already used
    <loop>/llm-cache/             every LLM request and reply
    <loop>/iterations/<k>/        candidates.jsonl, filtered.jsonl, revision.{csv,jsonl},
                                  exemplars.yaml (snapshot), filter-model/, filter.json

Iteration 0 is the filter fine-tuned on the initial exemplars. Iteration k >= 1 generates with
the exemplars and the filter of iteration k-1, has people revise the result, merges their labels
(the "valid samples" of Tab. 12 are the pairs they labelled with an aspect), and fine-tunes a new
filter on the grown sets. The loop has converged when the held-out F1 stops improving.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from foilkit.files import atomic_open
from foilkit.generation.vitatecs.config import PipelineSettings
from foilkit.generation.vitatecs.data_files import read_data, write_data
from foilkit.generation.vitatecs.exemplars import ExemplarSets
from foilkit.generation.vitatecs.generate import Candidate

STATE_FORMAT = "foilkit.vitatecs.loop/1"


@dataclass
class IterationRecord:
    """What one iteration did: the columns of Tab. 12 and where its files are.

    ``filter`` holds the held-out metrics (``precision``, ``recall``, ``f1``) and the training
    facts of the filter fine-tuned on this iteration's exemplars; ``valid_samples`` and
    ``human_labels`` come from the human revision that produced these exemplars (``None`` for
    iteration 0); ``generated`` the status counts and LLM usage of the candidates it revised.
    """

    iteration: int
    exemplar_version: int
    exemplar_size: int
    exemplar_counts: dict[str, int]
    valid_samples: int | None = None
    human_labels: int | None = None
    filter: dict[str, Any] | None = None
    generated: dict[str, Any] | None = None
    created: float = field(default_factory=time.time)


@dataclass
class LoopState:
    iterations: list[IterationRecord]
    used_captions: dict[str, list[str]] = field(default_factory=dict)

    @property
    def current(self) -> IterationRecord:
        return self.iterations[-1]

    def to_data(self) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT,
            "iterations": [dataclasses.asdict(record) for record in self.iterations],
            "used_captions": self.used_captions,
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> LoopState:
        return cls(
            iterations=[IterationRecord(**record) for record in data["iterations"]],
            used_captions={k: list(v) for k, v in data.get("used_captions", {}).items()},
        )


class Loop:
    """A loop folder (see the module docstring) and its files."""

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)
        if not (self.root / "state.json").exists():
            raise FileNotFoundError(
                f"{self.root} is not a VITATECS generation loop (no state.json); "
                "create one with `foilkit generate vitatecs init`"
            )
        self.config = PipelineSettings.load(self.config_path)

    @classmethod
    def create(cls, root: str | os.PathLike, config: PipelineSettings) -> Loop:
        """A new loop in ``root`` (which must be empty or absent), seeded with the configured
        exemplar sets; iteration 0 is recorded (its filter is not trained yet)."""
        root = Path(root)
        if root.exists() and any(root.iterdir()):
            raise FileExistsError(f"{root} is not empty; choose a new folder for the loop")
        root.mkdir(parents=True, exist_ok=True)
        write_data(root / "config.yaml", config.to_data())
        exemplars = ExemplarSets.load(config.exemplars)
        exemplars.save(root / "exemplars.yaml")
        exemplars.save(root / "iterations" / "0" / "exemplars.yaml")
        state = LoopState(iterations=[_record(0, exemplars)])
        write_data(root / "state.json", state.to_data())
        return cls(root)

    # -- paths and files -----------------------------------------------------------------------

    @property
    def config_path(self) -> Path:
        return self.root / "config.yaml"

    @property
    def exemplars_path(self) -> Path:
        return self.root / "exemplars.yaml"

    def iteration_dir(self, iteration: int) -> Path:
        return self.root / "iterations" / str(iteration)

    def filter_dir(self, iteration: int) -> Path:
        return self.iteration_dir(iteration) / "filter-model"

    @property
    def llm_cache(self) -> Path:
        return self.root / "llm-cache"

    def load_state(self) -> LoopState:
        return LoopState.from_data(read_data(self.root / "state.json", format=STATE_FORMAT))

    def save_state(self, state: LoopState) -> None:
        write_data(self.root / "state.json", state.to_data())

    def exemplars(self) -> ExemplarSets:
        return ExemplarSets.load(self.exemplars_path)

    def latest_filter(self, state: LoopState | None = None) -> tuple[int, Path]:
        """The newest iteration with a fine-tuned filter, and the filter's folder."""
        state = state or self.load_state()
        for record in reversed(state.iterations):
            if record.filter is not None:
                return record.iteration, self.filter_dir(record.iteration)
        raise RuntimeError(
            f"{self.root}: no filter model yet; run `foilkit generate vitatecs train-filter`"
        )

    def next_iteration(self, state: LoopState | None = None) -> int:
        """The iteration whose candidates are being generated, filtered and revised."""
        return (state or self.load_state()).current.iteration + 1


def _record(iteration: int, exemplars: ExemplarSets, **values: Any) -> IterationRecord:
    counts = exemplars.counts()
    return IterationRecord(
        iteration=iteration,
        exemplar_version=exemplars.version,
        exemplar_size=counts["total"],
        exemplar_counts=counts,
        **values,
    )


def new_iteration(state: LoopState, exemplars: ExemplarSets, **values: Any) -> IterationRecord:
    """Append the record of the iteration the revised ``exemplars`` start."""
    record = _record(state.current.iteration + 1, exemplars, **values)
    state.iterations.append(record)
    return record


def write_candidates(candidates: Sequence[Candidate], path: str | os.PathLike) -> Path:
    """Write ``candidates`` as JSONL to ``path`` (a temporary file renamed over the old one)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_open(path) as handle:
        handle.writelines(
            json.dumps(candidate.to_record(), ensure_ascii=False) + "\n" for candidate in candidates
        )
    return path


def read_candidates(path: str | os.PathLike) -> list[Candidate]:
    from foilkit.generation.cli_io import read_jsonl

    candidates = []
    for number, record in enumerate(read_jsonl(path, required=("query", "status")), start=1):
        try:
            candidates.append(Candidate.from_record(record))
        except (TypeError, ValueError) as error:
            raise ValueError(f"{path}:{number}: not a candidate record ({error})") from None
    return candidates


def _cell(value: Any) -> str:
    if value is None:
        return ""
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def status_table(state: LoopState) -> str:
    """The iterations as Tab. 12 lays them out: one column per iteration."""
    rows = [
        ("Precision", lambda r: r.filter and r.filter.get("precision")),
        ("Recall", lambda r: r.filter and r.filter.get("recall")),
        ("F1-score", lambda r: r.filter and r.filter.get("f1")),
        ("Valid samples", lambda r: r.valid_samples),
        ("Human labels", lambda r: r.human_labels),
        ("Exemplar size", lambda r: r.exemplar_size),
    ]
    header = ["", *(f"Iter. {r.iteration}" for r in state.iterations)]
    table = [header] + [[name, *(_cell(get(r)) for r in state.iterations)] for name, get in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) for row in table]
    return "\n".join(line.rstrip() for line in lines)


# What the loop's next step is, by the newest file of the iteration under way.
_NEXT_STEP_BY_FILE = (
    ("revision.csv", "label {path}, then `import` it"),
    ("filtered.jsonl", "export"),
    ("candidates.jsonl", "filter"),
)


def status_report(loop: Loop) -> str:
    """The iterations table, the convergence verdict and the next step to run."""
    state = loop.load_state()
    gain = loop.config.loop.min_f1_gain
    verdict = converged(state, gain)
    lines = [status_table(state), ""]
    if verdict is not None:
        scores = _f1_scores(state)
        if verdict:
            lines.append(
                f"converged: held-out F1 gained less than {gain} in the last iteration "
                f"({scores[-2]:.3f} -> {scores[-1]:.3f}); run `finalize`"
            )
        elif scores[-1] < scores[-2]:
            lines.append(
                f"not converged: held-out F1 fell ({scores[-2]:.3f} -> {scores[-1]:.3f}); "
                "check the new labels and the held-out set before another iteration"
            )
        else:
            lines.append(f"not converged: held-out F1 still gains >= {gain}")
    folder = loop.iteration_dir(state.current.iteration + 1)
    step = "generate (or finalize)"
    if state.current.filter is None:
        step = "train-filter"
    else:
        for name, text in _NEXT_STEP_BY_FILE:
            if (folder / name).exists():
                step = text.format(path=folder / name)
                break
    return "\n".join([*lines, f"next: {step}"])


def _f1_scores(state: LoopState) -> list[float]:
    return [r.filter["f1"] for r in state.iterations if r.filter and r.filter.get("f1") is not None]


def converged(state: LoopState, min_gain: float) -> bool | None:
    """Whether the last filter's held-out F1 did not fall and improved on the one before by less
    than ``min_gain`` (``None`` while fewer than two filters have been evaluated). A falling F1
    is never convergence: the filter got worse, something is wrong with the labels or the set."""
    scores = _f1_scores(state)
    if len(scores) < 2:
        return None
    gain = scores[-1] - scores[-2]
    return 0.0 <= gain < min_gain
