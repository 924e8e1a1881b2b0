"""A run's configuration as a YAML file: ``config.yaml`` in every run folder ``foilkit
evaluate`` and ``foilkit score`` write, which ``--config-file`` reads back to replay the run.

The layout is the command's flags by their names with underscores: its own at the top
(``model``, ``configs``, ``limit``, ...), the scoring options in one section per part of
:class:`foilkit.scorers.options.ScoreOptions` (``frames: {num_frames: 8}``). The command line
reads it (:func:`foilkit.cli.options.config_file_values`); a flag given there overrides the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from foilkit.errors import UserError
from foilkit.files import atomic_write

#: The file in a run folder (``evaluate``'s, ``score``'s) holding the run's configuration.
CONFIG_FILE = "config.yaml"


def write_config(
    folder: str | os.PathLike, command: str, config: Mapping[str, Any], note: str | None = None
) -> Path:
    """Write ``config`` (the command's flags, :mod:`foilkit.config_file`'s layout) as
    ``folder/config.yaml``, headed by how to replay it (and ``note``, what the replay needs
    besides); its path."""
    import yaml

    path = Path(folder) / CONFIG_FILE
    header = (
        f"# The configuration of this foilkit {command} run. Replay it with\n"
        f"#   foilkit {command} --config-file {CONFIG_FILE} --out NEW_FOLDER\n"
        "# (a flag given on the command line overrides its value here).\n"
        + ("" if note is None else f"# Note: {note}.\n")
    )
    atomic_write(path, header + yaml.safe_dump(dict(config), sort_keys=False))
    return path


def read_config(path: str | os.PathLike) -> dict[str, Any]:
    """The mapping a config file holds; a missing file, bad YAML or anything but a mapping of
    names is a :class:`UserError` naming the file."""
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise UserError(f"cannot read the config file {path}: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise UserError(f"{path} is not valid YAML: {' '.join(str(error).split())}") from None
    if data is None:
        return {}
    if not isinstance(data, Mapping) or not all(isinstance(key, str) for key in data):
        raise UserError(f"{path} must hold a mapping of flag names to values (model: ..., ...)")
    return dict(data)
