"""Packaging: one import name, sub-packages mapped from the repository folders, a working wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MAPPED = {
    "builders": "foilkit/builders",
    "scorers": "foilkit/scorers",
    "generation": "foilkit/generation",
    "metrics": "foilkit/metrics",
    "foilkit": "foilkit",
}


def test_editable_install_maps_folders_onto_foilkit() -> None:
    import foilkit.builders
    import foilkit.generation
    import foilkit.metrics
    import foilkit.scorers

    for module, folder in [
        (foilkit.builders, "builders"),
        (foilkit.scorers, "scorers"),
        (foilkit.generation, "generation"),
        (foilkit.metrics, "metrics"),
    ]:
        assert Path(module.__file__).parent == REPO / folder


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(REPO),
        ],
        check=True,
        capture_output=True,
    )
    (path,) = out.glob("foilkit-*.whl")
    return path


def test_wheel_holds_one_top_level_package_and_every_source_file(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {
        name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")
    }
    assert top_level == {"foilkit"}, top_level
    for folder, installed in MAPPED.items():
        for source in (REPO / folder).rglob("*"):
            if (
                source.suffix in {".py", ".md", ".txt", ".json", ".yaml", ".jsonl", ".js", ".css"}
                and "__pycache__" not in source.parts
            ):
                assert f"{installed}/{source.relative_to(REPO / folder).as_posix()}" in names, (
                    source
                )


def test_installed_wheel_imports_without_the_checkout(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    code = (
        "import foilkit, foilkit.scorers.video, foilkit.builders, foilkit.metrics\n"
        "import foilkit.generation\n"
        f"assert foilkit.__file__.startswith({str(target)!r}), foilkit.__file__\n"
        "from foilkit.cli import main\n"
        "assert main(['doctor', '--skip-decode']) == 0\n"
        "import os, foilkit.metrics as metrics\n"
        "for name in metrics.METRICS:\n"
        "    shared = metrics.metric_dir(name) / '_common.py'\n"
        "    assert shared.is_file() and not os.path.islink(shared), shared\n"
        "metric = metrics.load('pairwise_foil_accuracy')\n"
        "result = metric.compute(caption_scores=[1.0], foil_scores=[[0.0]], n_resamples=0)\n"
        "assert result['accuracy'] == 1.0\n"
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
