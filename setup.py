"""Derives foilkit's package list from ``package-dir`` in pyproject.toml.

The repository's top-level folders (``builders/``, ``scorers/``, ...) are sub-packages of the
one import name ``foilkit``. setuptools' static ``packages.find`` cannot discover packages
whose import names differ from their folder names, so each mapped folder is searched here
(namespace folders included, so every ``metrics/<name>/`` evaluate module ships in the wheel).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import find_namespace_packages, setup

HERE = Path(__file__).parent
PACKAGE_DIR: dict[str, str] = tomllib.loads((HERE / "pyproject.toml").read_text())["tool"][
    "setuptools"
]["package-dir"]


def _packages() -> list[str]:
    packages = []
    for name, folder in PACKAGE_DIR.items():
        packages.append(name)
        found = find_namespace_packages(where=str(HERE / folder), exclude=["*__pycache__*"])
        packages += [f"{name}.{sub}" for sub in found if f"{name}.{sub}" not in PACKAGE_DIR]
    return sorted(set(packages))


setup(packages=_packages())
