"""How the tests run foilkit: the ``foilkit score`` command line, a process of its own, a fresh
interpreter, and several CPU processes through ``accelerate launch`` as a user would type it.

``accelerate launch --cpu`` runs ONE process (it leaves more to mpirun); ``--multi_gpu`` starts
a torchrun group, which foilkit runs over gloo when there is no accelerator.
"""

from __future__ import annotations

import collections
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: One thread per process: scores are bit-identical only with the same thread count, and the
#: processes of a test share the machine.
ONE_THREAD = {"OMP_NUM_THREADS": "1"}


def score_argv(model: str, dataset: Path | str, out: Path, *extra: str) -> list[str]:
    """``foilkit score`` of ``model`` on the saved ``dataset`` into ``out``, then ``extra``."""
    return ["score", "--model", model, "--dataset", str(dataset), "--out", str(out), *extra]


def evaluate_argv(
    dataset: Path | str,
    model: Path | str,
    *extra: str,
    config: str = "order",
    n_resamples: int = 20,
    progress: bool = False,
) -> list[str]:
    """``foilkit evaluate`` of ``model`` on ``config`` of the demo's synthetic benchmark saved in
    ``dataset``, then ``extra`` (``--out``): ``n_resamples`` bootstrap resamples, no decoding
    workers, no cache (every run scores anew), and no progress bars unless ``progress``."""
    return [
        *("evaluate", "--benchmark", "synthetic", "--config", config, "--dataset", str(dataset)),
        *("--model", str(model), "--n-resamples", str(n_resamples), "--num-workers", "0"),
        *("--no-cache", *(() if progress else ("--no-progress",))),
        *extra,
    ]


def launched_score(
    model: str, dataset: Path, out: Path, batch_size: int, num_workers: int, *extra: str
) -> list[str]:
    """``-m foilkit score`` arguments for a process of its own: batches of ``batch_size`` rows,
    ``num_workers`` decoding workers, no cache (every run scores anew), no progress bars."""
    options = ["--batch-size", str(batch_size), "--num-workers", str(num_workers)]
    quiet = ["--no-cache", "--no-progress"]
    return ["-m", "foilkit", *score_argv(model, dataset, out, *options, *quiet, *extra)]


def run_to_success(
    command: Sequence[str], env: Mapping[str, str] = ONE_THREAD, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``command`` run to its end with ``env`` added to this environment; it must succeed (the
    end of its stderr is the failure message)."""
    done = subprocess.run(
        list(command),
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def assert_imports_none(code: str, modules: Sequence[str]) -> None:
    """Run ``code`` in a fresh interpreter and check it imported none of ``modules``."""
    check = (
        f"import sys\n{code}\n"
        f"heavy = [m for m in {tuple(modules)!r} if m in sys.modules]\n"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", check], check=True, capture_output=True)


def count_calls(monkeypatch: Any, wrapped: Sequence[tuple[str, Any, str]]) -> collections.Counter:
    """How often each ``(name, owner, attribute)`` of ``wrapped`` is called, counted under its
    name: each attribute (a function or method of ``owner``) wrapped to count its calls, then
    run as before, for the test (``monkeypatch`` undoes it)."""
    counted: collections.Counter = collections.Counter()

    def counting(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counted[name] += 1
            return function(*args, **kwargs)

        return wrapper

    for name, owner, attribute in wrapped:
        monkeypatch.setattr(owner, attribute, counting(name, getattr(owner, attribute)))
    return counted


def free_port() -> int:
    """A TCP port nothing listens on now: the launches of tests that run at once (pytest-xdist's
    workers) each get their own rendezvous port instead of torchrun's one default, 29500."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def accelerate_launch(num_processes: int = 2) -> list[str]:
    """The ``accelerate launch`` command line for ``num_processes`` local CPU processes, on a
    rendezvous port of their own."""
    return [
        str(Path(sys.executable).with_name("accelerate")),
        "launch",
        "--multi_gpu",
        "--num_processes",
        str(num_processes),
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(free_port()),
    ]
