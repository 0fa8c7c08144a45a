"""Waiting for a file watcher: watchdog reports a change on its own threads, a moment (~1 ms)
after it happened, so a search right after a hand edit may not see it yet (tree/index/watch.py)."""

from __future__ import annotations

import os
import time
from typing import Callable

LIMIT = 10.0   # seconds: events arrive within milliseconds; this only stops a test that would hang


def eventually(check: Callable[[], bool], limit: float = LIMIT) -> bool:
    """``check()`` became true within ``limit`` seconds (polled)."""
    deadline = time.monotonic() + limit
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def at_once(check: Callable[[], bool]) -> bool:
    """``check()`` is true now (a process without a watcher scans before it answers)."""
    return check()


def inotify_instances() -> int:
    """inotify instances this process holds (Linux: its descriptors that are one)."""
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            n += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:inotify"
        except OSError:
            pass
    return n
