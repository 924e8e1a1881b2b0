"""Defect 3: a pushed metric Space launches. Its gradio 3.19.1 needs fastapi/starlette/pydantic
of its time; left free, pip picked versions it cannot run and ``app.py`` crashed on launch."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml
from launch import free_port

from foilkit.metrics import METRICS, metric_dir

#: The web stack gradio 3.19.1 runs on, pinned exactly in every metric's requirements.txt.
WEB_STACK = {"fastapi": "0.95.2", "starlette": "0.27.0", "pydantic": "1.10.26"}


def _requirements(name: str) -> dict[str, str]:
    lines = (metric_dir(name) / "requirements.txt").read_text().splitlines()
    pins = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line:
            distribution, spec = re.match(r"^([A-Za-z0-9_.-]+)(.*)$", line).groups()
            pins[distribution.lower()] = spec
    return pins


def _sdk_version(name: str) -> str:
    card = (metric_dir(name) / "README.md").read_text().split("---")[1]
    return str(yaml.safe_load(card)["sdk_version"])


@pytest.mark.parametrize("name", METRICS)
def test_the_web_stack_is_pinned_for_the_spaces_gradio(name: str):
    pins = _requirements(name)
    assert _sdk_version(name) == "3.19.1"
    for distribution, version in WEB_STACK.items():
        assert pins.get(distribution) == f"=={version}", (name, distribution, pins)
    assert pins == _requirements(METRICS[0])  # every Space installs the same set


def test_the_pins_are_mutually_consistent():
    """fastapi 0.95.2 requires starlette >=0.27,<0.28 and pydantic 1 (>=1.6.2, <2); gradio
    3.19.1 cannot run on pydantic 2 or a newer starlette."""
    starlette, pydantic = WEB_STACK["starlette"], WEB_STACK["pydantic"]
    assert starlette.startswith("0.27.") and pydantic.startswith("1.10.")
    assert tuple(map(int, WEB_STACK["fastapi"].split("."))) < (0, 100)


#: The Space's stack, as ``./dev.sh`` installs it (``ensure_metric_space``), never a test.
SPACE_VENV = Path(
    os.environ.get(
        "FOILKIT_SPACE_VENV", Path(sys.prefix) / "share" / "foilkit-references" / "metric-space"
    )
)


@pytest.mark.slow
def test_app_launches_and_answers_200(tmp_path: Path):
    """Launch ``app.py`` from a Space-like folder on gradio==<sdk_version> and the metric's
    requirements.txt (the virtualenv ``./dev.sh test`` makes, or ``$FOILKIT_SPACE_VENV``), and
    GET ``/``."""
    name = "pairwise_foil_accuracy"
    python = SPACE_VENV / "bin" / "python"
    if not python.exists():
        pytest.skip(f"{SPACE_VENV} (the Space's stack, made by ./dev.sh test) is not present")
    report = "import fastapi, gradio, pydantic, starlette as s; print(gradio.__version__, "
    report += "fastapi.__version__, s.__version__, pydantic.VERSION)"
    run = subprocess.run([str(python), "-c", report], check=True, capture_output=True, text=True)
    versions = run.stdout.split()
    assert versions == [_sdk_version(name), *WEB_STACK.values()]
    space = tmp_path / "space"
    shutil.copytree(
        metric_dir(name), space, symlinks=False, ignore=shutil.ignore_patterns("__pycache__")
    )
    port = free_port()
    env = {
        **os.environ,
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
    }
    app = subprocess.Popen(
        [str(python), "app.py"],
        cwd=space,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        status, deadline = None, time.monotonic() + 120
        while status != 200 and time.monotonic() < deadline and app.poll() is None:
            time.sleep(1)
            try:
                status = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).status
            except OSError:
                continue
        assert status == 200, app.stdout.read() if app.poll() is not None else "no answer in 120 s"
    finally:
        app.terminate()
        app.wait(timeout=30)
