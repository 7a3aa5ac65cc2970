"""Whether a test's process has ended, without Qt (the GUI tests and the worker-isolation and
command-line tests share it)."""

from __future__ import annotations

import os
import time
from pathlib import Path


def process_started(pid: int) -> str | None:
    """The process's start time (``/proc/<pid>/stat``, field 22), to tell it from a later
    process given the same id; None where there is no /proc or no such process."""
    stat = _stat(pid)
    return stat[19] if stat else None


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name, or None."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def process_gone(pid: int, started: str | None = None) -> bool:
    """The process has ended: no such id, a zombie nobody has reaped yet (it runs nothing), or
    the id now names a later process (``started`` is the one seen by ``process_started``: a
    test suite that starts thousands of processes can wrap the container's id space)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = _stat(pid)
    if not stat:
        return False
    return stat[0] == "Z" or (started is not None and stat[19] != started)


def wait_until_gone(pid: int, started: str | None = None, limit_s: float = 30.0) -> bool:
    """``process_gone`` within ``limit_s`` (a wide margin: a busy 2-core machine may take a
    moment to finish a killed process)."""
    deadline = time.monotonic() + limit_s
    while not process_gone(pid, started):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
