"""A database file created where its last one was deleted: the ``-wal`` and ``-shm`` files of the
deleted one may still be there (someone removed ``catalog.db`` alone, as ``rm`` of one file does,
while a process held it open). SQLite takes them for the new file's own: its first read fails with
``SQLITE_IOERR_SHORT_READ`` (which reads as a disk that takes no writes) or replays another file's
pages. So whoever creates the file removes them first.

Creators take an exclusive ``flock`` on the folder around the check and the creation, so no creator
removes the WAL of a file another one has just created: the one that finds the file absent under the
lock creates it before letting go, and the next finds it there. A holder of the lock keeps it for one
``sqlite3.connect``; the wait is bounded all the same."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Iterator

try:
    import fcntl
except ImportError:   # Windows: no flock; the removal alone, best effort
    fcntl = None  # type: ignore[assignment]

SIDE_FILES = ("-wal", "-shm", "-journal")


@contextlib.contextmanager
def creating(file: Path, timeout: float) -> Iterator[None]:
    """Around the ``sqlite3.connect`` that may create ``file``: if there is no such file, none of
    its side files stay either (and no other creator runs meanwhile)."""
    if file.exists():
        yield
        return
    with _folder_lock(file.parent, timeout):
        if not file.exists():
            for suffix in SIDE_FILES:
                with contextlib.suppress(OSError):   # none there, or a folder that takes no writes
                    os.unlink(f"{file}{suffix}")
        yield


@contextlib.contextmanager
def _folder_lock(folder: Path, timeout: float) -> Iterator[None]:
    if fcntl is None:
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:   # an unreadable folder: sqlite3.connect will say what is wrong
        yield
        return
    try:
        deadline, delay = time.monotonic() + timeout, 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:   # a creator stopped amid its connect: go on alone
                    break
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        try:
            yield
        finally:
            # unlocked explicitly: a child forked meanwhile shares this open file, and would keep it
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
