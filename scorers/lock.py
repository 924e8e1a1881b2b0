"""One run per output folder: a lock file names the process that writes there.

Two runs on one ``out_dir`` would both do all the work and interleave their shards. The first
takes ``<out_dir>/.foilkit.lock`` (created atomically, holding its pid, host and start time);
a second run refuses while that process is alive, and takes the folder over with ``resume``
once it is gone (a killed run leaves its lock behind).

The same file-claim is offered for work shared between processes (:func:`take_claim`): the
served reply cache lets one process send a request while the others wait for its reply.
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from foilkit.scorers.record import now

LOCK_FILE = ".foilkit.lock"


class RunLockedError(RuntimeError):
    """Another live process is writing to the output folder."""


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie, dead but not yet reaped, is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    try:  # Linux: a killed worker whose parent died stays a zombie until someone reaps it
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def _owner(path: Path) -> dict | None:
    """The lock's content, or ``None`` when it is unreadable (a writer died mid-write)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _create(path: Path) -> bool:
    """Create ``path`` atomically, holding this process's pid, host and start time; ``False``
    when it exists already (held by another process, or left by a dead one)."""
    mine = {"pid": os.getpid(), "host": socket.gethostname(), "started_at": now()}
    try:
        with open(path, "x") as handle:
            json.dump(mine, handle)
    except FileExistsError:
        return False
    return True


@contextmanager
def run_lock(out_dir: Path, *, resume: bool) -> Iterator[None]:
    """Hold ``out_dir``'s lock for the duration of the block.

    Raises:
        RunLockedError: a live process on this host holds it, or a dead one left it and
            ``resume`` is off (its work is there to continue).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / LOCK_FILE
    for _ in range(2):
        if _create(path):
            break
        owner = _owner(path) or {}
        other_host = owner.get("host") not in (None, socket.gethostname())
        if other_host or (isinstance(owner.get("pid"), int) and _alive(owner["pid"])):
            raise RunLockedError(
                f"{out_dir} is in use by another foilkit run (pid {owner.get('pid')} on "
                f"{owner.get('host')}, started {owner.get('started_at')}); wait for it to "
                f"finish or choose another output folder (if that run is gone, delete {path})"
            )
        if not resume:
            raise RunLockedError(
                f"{out_dir} holds a run that was interrupted (pid {owner.get('pid')} is gone); "
                "pass resume=True (--resume) to continue it, or choose another output folder"
            )
        path.unlink(missing_ok=True)  # the dead run's lock: take over
    else:
        raise RunLockedError(f"could not take the lock {path}: another run took it first")
    try:
        yield
    finally:
        release_claim(path)


def take_claim(path: Path, *, max_age_s: float) -> bool:
    """Claim ``path`` for this process: create it atomically (holding this process's pid and
    host) and return ``True``, or ``False`` while another holder's claim stands. A claim whose
    holder is gone (a dead pid on this host), is unreadable, or is older than ``max_age_s``
    (a holder on another host that stopped) is taken over. Used where processes share work
    through files (the served reply cache: one process sends a request, the others wait for its
    reply); release it with :func:`release_claim`."""
    for _ in range(2):
        if _create(path):
            return True
        if claim_holder_alive(path, max_age_s=max_age_s):
            return False
        path.unlink(missing_ok=True)  # the gone holder's claim: take it over
    return False  # another process took the stale claim over first: it stands


def claim_holder_alive(path: Path, *, max_age_s: float) -> bool:
    """Whether ``path``'s claim stands: its holder alive (on this host: its pid runs; on
    another: the claim is younger than ``max_age_s``). A missing claim does not stand."""
    try:
        age = time.time() - path.stat().st_mtime
    except FileNotFoundError:
        return False
    owner = _owner(path)
    if owner is None:  # being written, or its writer died mid-write
        return age < 1.0
    if owner.get("host") == socket.gethostname() and isinstance(owner.get("pid"), int):
        return _alive(owner["pid"])
    return age < max_age_s


def release_claim(path: Path) -> None:
    """Remove ``path`` if this process holds it."""
    if (_owner(path) or {}).get("pid") == os.getpid():
        path.unlink(missing_ok=True)
