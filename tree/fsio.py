"""Atomic file writes and the tree's single-writer lock.

Writes go to a unique temp file in the target folder, are fsynced and then
``os.replace``d over the target, so a crash at any instant leaves the old or
the new file, never a torn one. The writer lock is an ``flock`` on
``.memgrove/write.lock``: the kernel drops it when its holder dies, so a lock
"left behind" by a killed process never blocks anyone; the pid written into
the file only names the holder in error messages.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import LockTimeout

TEMP_PREFIX = ".mg-"


def atomic_write(path: Path, data: str | bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically (temp file + fsync + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if durable:
        fsync_dir(path.parent)


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def append_line(path: Path, line: str, *, durable: bool = True) -> None:
    """Append one line with a single write(2) so concurrent readers never see half of it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line.rstrip("\n") + "\n").encode("utf-8"))
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class WriterLock:
    """Inter-process exclusive lock, re-entrant within one thread."""

    def __init__(self, path: Path, timeout: float = 30.0):
        self.path = path
        self.timeout = timeout
        self._local = threading.local()
        self.last_stale_pid: int | None = None

    def holder(self) -> int | None:
        try:
            text = self.path.read_text().strip()
            return int(text) if text else None
        except (OSError, ValueError):
            return None

    @contextmanager
    def hold(self, timeout: float | None = None) -> Iterator[None]:
        depth = getattr(self._local, "depth", 0)
        if depth:
            self._local.depth = depth + 1
            try:
                yield
            finally:
                self._local.depth -= 1
            return
        fd = self._acquire(self.timeout if timeout is None else timeout)
        self._local.depth = 1
        try:
            yield
        finally:
            self._local.depth = 0
            try:
                os.ftruncate(fd, 0)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)

    def try_hold(self) -> "_Attempt":
        """``with lock.try_hold() as got:`` — never waits; ``got`` says if it is held."""
        return _Attempt(self)

    def _acquire(self, timeout: float) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + timeout
        delay = 0.002
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    pid = self.holder()
                    who = f"process {pid}" if pid else "another process"
                    raise LockTimeout(
                        f"the tree is being written by {who}; gave up after {timeout:g} s (try again)"
                    ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        previous = os.pread(fd, 32, 0).decode("ascii", "ignore").strip()
        self.last_stale_pid = int(previous) if previous.isdigit() and not pid_alive(int(previous)) else None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        return fd


class _Attempt:
    def __init__(self, lock: WriterLock):
        self.lock = lock
        self._cm = None

    def __enter__(self) -> bool:
        cm = self.lock.hold(timeout=0.0)
        try:
            cm.__enter__()
        except LockTimeout:
            return False
        self._cm = cm
        return True

    def __exit__(self, *exc) -> None:
        if self._cm is not None:
            self._cm.__exit__(*exc)
