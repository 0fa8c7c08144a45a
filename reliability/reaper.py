"""Processes of the crash section: become the subreaper of what a killed child leaves behind, and reap it."""

from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path


def become_subreaper() -> bool:
    """Orphans of our children come to us, so a kill can show what the child left running."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0   # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _children_of(pid: int) -> list[tuple[int, str]]:
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        rest = stat.rsplit(")", 1)[1].split()
        if int(rest[1]) == pid:
            out.append((int(d), rest[0]))
    return out


def reap_orphans(grace: float) -> int:
    """Children still alive ``grace`` seconds after their parent was killed: killed, reaped, counted."""
    deadline = time.monotonic() + grace
    while True:
        kids = _children_of(os.getpid())
        for pid, state in kids:
            if state == "Z":
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass
        alive = [pid for pid, state in kids if state != "Z"]
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
    return len(alive)
