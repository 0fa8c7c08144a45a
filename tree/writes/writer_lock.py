"""The tree's single-writer lock: an ``flock`` on ``.memgrove/write.lock``, taken in turn.

The kernel drops an ``flock`` when the last descriptor of its open file goes,
so a lock "left behind" by a killed process never blocks anyone — unless a
child it forked still holds a copy of the descriptor. Two guards close that
door (a killed ``reindex`` with Whoosh worker processes otherwise locked every
writer out for good):

- a process forked while this process holds the lock closes its copies at
  once (``os.register_at_fork``), so the lock's life is its holder's only;
- that child is also asked to die with its parent (``PR_SET_PDEATHSIG``):
  a worker of a killed writer has nothing left to do.

Waiting writers queue: each takes a ticket (a file in ``lock.queue/`` named by
its arrival time, ``flock``ed while it waits, so a dead waiter is told from a
live one) and tries the lock only when no live ticket is older. Without the
queue, eight polling writers were served in random order: waits up to 45 s,
one writer finished a single operation.

The pid written into ``write.lock`` only names the holder in messages; failing
to write it (a full disk) does not fail the lock.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import os
import secrets
import signal
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..base import forksafe
from .cancel import checkpoint
from ..base.errors import LockTimeout, NotWritable

QUEUE_DIR = "lock.queue"

# Descriptors of locks and tickets this process holds: a forked child closes its copies.
# Process-wide by nature (what a fork copies is the whole process), hence module state.
_held: set[int] = set()
_held_mutex = forksafe.lock()   # free again in a forked child (tree/base/forksafe.py)


def _libc_prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl()
_PR_SET_PDEATHSIG = 1


_forking_pid = [0]  # set in the parent just before a fork: the child's parent, even if it dies at once


def _before_fork() -> None:
    _forking_pid[0] = os.getpid()


def _after_fork_in_child() -> None:
    if not _held:
        return
    parent = _forking_pid[0]
    for fd in list(_held):
        try:
            os.close(fd)  # close, never unlock: unlocking would free the parent's lock too
        except OSError:
            pass
    _held.clear()
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took hold
            os._exit(1)


os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


def _track(fd: int) -> None:
    with _held_mutex:
        _held.add(fd)


def _release(fd: int, *, unlock: bool = True) -> None:
    with _held_mutex:
        _held.discard(fd)
    try:
        if unlock:
            fcntl.flock(fd, fcntl.LOCK_UN)
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


def _open_rw(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise NotWritable(f"cannot write the tree: {path.parent} is not writable ({exc.strerror})") from None
        raise


@dataclass(frozen=True)
class LockState:
    """What ``inspect`` sees: ``held`` by someone; the ``pid`` recorded in the file and whether
    it lives; the processes that have the lock file open (``openers``, from /proc)."""

    held: bool
    pid: int | None
    pid_alive: bool
    openers: tuple[int, ...]

    @property
    def orphaned(self) -> bool:
        """Held, but not by the live process that took it (a dead writer's children, say)."""
        return self.held and not self.pid_alive


class WriterLock:
    """Inter-process exclusive lock, taken in arrival order, re-entrant within one thread."""

    def __init__(self, path: Path, timeout: float = 30.0):
        self.path = path
        self.queue = path.parent / QUEUE_DIR
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
            except OSError:
                pass
            finally:
                _release(fd)

    def try_hold(self) -> "_Attempt":
        """``with lock.try_hold() as got:`` — never waits, never jumps the queue; ``got`` says if it is held."""
        return _Attempt(self)

    # -- taking it ----------------------------------------------------------
    def _acquire(self, timeout: float) -> int:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + timeout
        ticket, ticket_fd = self._take_ticket()
        try:
            fd = _open_rw(self.path)
            _track(fd)
            try:
                delay = 0.001
                while True:
                    first = self._first_in_line(ticket)
                    if first:
                        try:
                            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                            break
                        except BlockingIOError:
                            pass
                    if time.monotonic() >= deadline:
                        pid = self.holder()
                        who = f"process {pid}" if pid else "another process"
                        raise LockTimeout(
                            f"the tree is being written by {who}; gave up after {timeout:g} s (try again)")
                    checkpoint()  # a waiter nobody waits for leaves the queue
                    time.sleep(delay)
                    # next in line polls the lock often (one system call); the rest list the queue less
                    delay = min(delay * 2, 0.002 if first else 0.02)
                self._note_holder(fd)
            except BaseException:
                _release(fd, unlock=False)
                raise
            return fd
        finally:
            self._drop_ticket(ticket, ticket_fd)

    def _note_holder(self, fd: int) -> None:
        try:
            previous = os.pread(fd, 32, 0).decode("ascii", "ignore").strip()
        except OSError:
            previous = ""
        self.last_stale_pid = int(previous) if previous.isdigit() and not pid_alive(int(previous)) else None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
        except OSError:
            pass  # a full disk: the pid only names the holder in messages

    # -- the queue ------------------------------------------------------------
    def _take_ticket(self) -> tuple[str, int]:
        try:
            self.queue.mkdir(exist_ok=True)
        except OSError as exc:
            if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise NotWritable(f"cannot write the tree: {self.path.parent} is not writable ({exc.strerror})") from None
            raise
        name = f"{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(3)}"
        # locked under a hidden name first, then renamed into the queue: a ticket is never
        # seen unlocked, so nobody takes a live waiter's ticket for a dead one's
        hidden = self.queue / ("." + name)
        fd = _open_rw(hidden)
        _track(fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.rename(hidden, self.queue / name)
        except BaseException:
            try:
                os.unlink(hidden)
            except OSError:
                pass
            _release(fd)
            raise
        return name, fd

    def _drop_ticket(self, name: str, fd: int) -> None:
        try:
            os.unlink(self.queue / name)
        except OSError:
            pass
        _release(fd)

    def _first_in_line(self, ticket: str) -> bool:
        """No live ticket is older than ours (dead waiters' tickets are removed on the way)."""
        try:
            names = sorted(os.listdir(self.queue))
        except OSError:
            return True
        for name in names:
            if name.startswith("."):
                continue
            if name >= ticket:
                return True
            if self._ticket_alive(name):
                return False
        return True

    def _ticket_alive(self, name: str) -> bool:
        path = self.queue / name
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return False
        except OSError:
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        finally:
            os.close(fd)
        try:
            os.unlink(path)  # its waiter died (or is just leaving): nobody waits on it
        except OSError:
            pass
        return False

    def waiting(self) -> int:
        """Writers waiting in the queue now."""
        try:
            return sum(1 for n in os.listdir(self.queue) if not n.startswith(".") and self._ticket_alive(n))
        except OSError:
            return 0

    # -- looking at it --------------------------------------------------------
    def inspect(self) -> LockState:
        """Is the lock held, and by a live writer? Never takes it for long (a probe)."""
        held = False
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return LockState(False, None, False, ())
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
            except BlockingIOError:
                held = True
        finally:
            os.close(fd)
        pid = self.holder()
        return LockState(held, pid, bool(pid) and pid_alive(pid), _openers(self.path) if held else ())


def _openers(path: Path) -> tuple[int, ...]:
    """Processes with ``path`` open (Linux /proc; empty where it cannot be read)."""
    try:
        target = os.stat(path)
    except OSError:
        return ()
    out = []
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        fd_dir = f"/proc/{pid}/fd"
        try:
            for fd in os.listdir(fd_dir):
                try:
                    st = os.stat(f"{fd_dir}/{fd}")
                except OSError:
                    continue
                if (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino):
                    out.append(int(pid))
                    break
        except OSError:
            continue
    return tuple(sorted(out))


class _Attempt:
    def __init__(self, lock: WriterLock):
        self.lock = lock
        self._cm = None

    def __enter__(self) -> bool:
        cm = self.lock.hold(timeout=0.0)
        try:
            cm.__enter__()
        except (LockTimeout, NotWritable):
            return False
        except OSError:
            return False  # a full or failing disk: the reader goes on with what it has
        self._cm = cm
        return True

    def __exit__(self, *exc) -> None:
        if self._cm is not None:
            self._cm.__exit__(*exc)
