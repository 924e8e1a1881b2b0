"""One run per output folder: a live run's lock refuses a second run; a dead run's is taken over
with resume."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from foilkit.scorers.api import score
from foilkit.scorers.lock import LOCK_FILE, RunLockedError


def _dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def _write_lock(out_dir, pid: int, host: str | None = None) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    lock = {"pid": pid, "host": host or socket.gethostname(), "started_at": "earlier"}
    (out_dir / LOCK_FILE).write_text(json.dumps(lock))


@pytest.fixture
def run(tiny_model, benchmark):
    def run(out_dir, **options):
        return score(
            tiny_model("gpt2"),
            benchmark,
            out_dir=str(out_dir),
            num_workers=0,
            progress=False,
            **options,
        )

    return run


def test_a_finished_run_leaves_no_lock(run, tmp_path):
    run(tmp_path / "run")
    assert not (tmp_path / "run" / LOCK_FILE).exists()


def test_a_live_run_refuses_a_second_one_even_with_resume(run, tmp_path):
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        _write_lock(tmp_path / "run", live.pid)
        for resume in (False, True):
            with pytest.raises(
                RunLockedError, match=f"in use by another foilkit run \\(pid {live.pid}"
            ):
                run(tmp_path / "run", resume=resume)
        assert not (tmp_path / "run" / "scores.jsonl").exists()
    finally:
        live.kill()
        live.wait()


def test_a_lock_from_another_host_is_never_taken_over(run, tmp_path):
    _write_lock(tmp_path / "run", _dead_pid(), host="another-host")
    with pytest.raises(RunLockedError, match="on another-host"):
        run(tmp_path / "run", resume=True)


def test_a_dead_runs_lock_needs_resume_then_is_taken_over(run, tmp_path):
    run(tmp_path / "run")  # its rows are there to continue (issue 40: only then is it kept)
    _write_lock(tmp_path / "run", _dead_pid())
    with pytest.raises(RunLockedError, match="interrupted .* pass resume=True"):
        run(tmp_path / "run")
    result = run(tmp_path / "run", resume=True)
    assert result.num_rows == 9 and not (tmp_path / "run" / LOCK_FILE).exists()


def test_a_dead_runs_lock_that_scored_no_row_blocks_nothing(run, tmp_path):
    """A run killed before its first batch left its lock and nothing to continue (issue 40):
    the same command, without resume, takes the folder."""
    _write_lock(tmp_path / "run", _dead_pid())
    result = run(tmp_path / "run")
    assert result.num_rows == 9 and not (tmp_path / "run" / LOCK_FILE).exists()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_a_zombie_holder_counts_as_dead(run, tmp_path):
    """A worker killed with its launcher stays a zombie until reaped: its lock is taken over."""
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 10
        while Path(f"/proc/{zombie.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline
        _write_lock(tmp_path / "run", zombie.pid)
        assert run(tmp_path / "run", resume=True).num_rows == 9
    finally:
        zombie.wait()
