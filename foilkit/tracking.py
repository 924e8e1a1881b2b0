"""Experiment trackers through accelerate's ``log_with``: TensorBoard, W&B, trackio, ...

``foilkit evaluate --log-with NAME`` logs a run's metrics (with CI bounds and coverage) and its
settings; ``foilkit finetune --log-with NAME`` logs the training loss per step (its Accelerator
is made with ``log_with``). Any tracker accelerate supports is accepted by name; one whose
package is not installed is refused before any work, naming the package to install.
Trackers that write locally (TensorBoard) write under ``--tracking-dir`` (default: the run
folder's ``tracking/``); W&B and trackio go where their own settings say.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foilkit.errors import UserError

if TYPE_CHECKING:
    from foilkit.run import RunResults

#: The tracking folder inside a run folder, when ``--tracking-dir`` is not given.
TRACKING_DIR = "tracking"

#: The package each tracker needs, where its name is not the tracker's own.
_PACKAGES = {"comet_ml": "comet-ml"}


def check_trackers(names: Sequence[str] | None) -> list[str]:
    """``names`` checked against accelerate's trackers (``[]`` for none): an unknown name or
    one whose package is missing is a :class:`UserError` that says what to do."""
    if not names:
        return []
    from accelerate.tracking import LOGGER_TYPE_TO_CLASS, get_available_trackers

    available = {str(tracker) for tracker in get_available_trackers()}
    for name in names:
        if name not in LOGGER_TYPE_TO_CLASS:
            raise UserError(
                f"--log-with {name}: not a tracker accelerate knows; choose from "
                f"{', '.join(sorted(LOGGER_TYPE_TO_CLASS))}"
            )
        if name not in available:
            raise UserError(
                f"--log-with {name}: its package is not installed; pip install "
                f"{_PACKAGES.get(name, name)} (or leave --log-with {name} out)"
            )
    return list(dict.fromkeys(names))


def tracking_dir(run_dir: str | os.PathLike, given: str | os.PathLike | None) -> Path:
    """Where local trackers write: ``given``, else ``<run_dir>/tracking``."""
    return Path(given) if given is not None else Path(run_dir) / TRACKING_DIR


def metric_scalars(results: RunResults) -> dict[str, float]:
    """The run's numbers as tracker scalars: ``<config>/<metric>/<measure>`` (over all items),
    ``<config>/<group>/<metric>/<measure>`` (one group), each with ``_ci_low``/``_ci_high``,
    and ``<config>/coverage`` (the share of rows scored); fractions (see
    :data:`foilkit.run.UNITS`)."""
    scalars: dict[str, float] = {}
    for row in results.to_pandas().itertuples(index=False):
        parts = [row.config, *([] if row.group is None or row.group != row.group else [row.group])]
        key = "/".join([*parts, row.metric, row.measure])
        scalars[key] = row.value
        if row.ci_low == row.ci_low:  # not NaN: the metric has a CI
            scalars[f"{key}_ci_low"], scalars[f"{key}_ci_high"] = row.ci_low, row.ci_high
    for name, entry in results.configs.items():
        if entry.coverage is not None:
            scalars[f"{name}/coverage"] = entry.coverage.fraction
    return scalars


def run_settings(results: RunResults) -> dict[str, Any]:
    """What a tracker shows as the run's configuration (plain values only)."""
    invocation = results.invocation
    return {
        "benchmark": results.benchmark,
        "model": results.model,
        "label": results.label,
        "control": results.control or "none",
        "split": results.split,
        "configs": ",".join(results.configs),
        "limit": results.limit or 0,
        "n_resamples": results.bootstrap.n_resamples,
        "bootstrap_seed": results.bootstrap.seed,
        "command": " ".join(invocation.argv) if invocation else "",
        "git_commit": (invocation.git_commit if invocation else None) or "",
        "wall_seconds": invocation.wall_seconds if invocation else 0.0,
    }


def tracker_config(options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` as a tracker's run configuration: TensorBoard's hparams take numbers,
    strings and booleans only, so lists become comma-joined strings and ``None`` ``"none"``."""
    plain: dict[str, Any] = {}
    for key, value in options.items():
        if value is None:
            value = "none"
        elif isinstance(value, list | tuple):
            value = ",".join(map(str, value))
        elif not isinstance(value, bool | int | float | str):
            value = str(value)
        plain[key] = value
    return plain


def log_evaluation(
    results: RunResults, names: Sequence[str], directory: str | os.PathLike, project: str
) -> None:
    """Log an evaluation's settings (:func:`run_settings`, the run's configuration) and numbers
    (:func:`metric_scalars`) to the trackers ``names`` through an accelerate
    ``Accelerator(log_with=names)``, as one step (0)."""
    if not names:
        return
    from accelerate import Accelerator

    accelerator = Accelerator(log_with=list(names), project_dir=os.fspath(directory))
    accelerator.init_trackers(project, config=tracker_config(run_settings(results)))
    accelerator.log(metric_scalars(results), step=0)
    accelerator.end_training()
