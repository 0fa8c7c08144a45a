"""Atomic file writes.

Writes go to a unique temp file in the target folder, are fsynced and then
``os.replace``d over the target, so a crash at any instant leaves the old or
the new file, never a torn one. (The writer lock is in ``writer_lock``.)
"""

from __future__ import annotations

import errno
import os
import sqlite3
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from .errors import NotWritable
from .sqlite import unwritable

TEMP_PREFIX = ".mg-"


def atomic_write(path: Path, data: str | bytes, *, durable: bool = True, sync_folder: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically (temp file + fsync + rename). ``sync_folder=False``
    leaves the rename's durability to the caller's ``sync_all`` (one fsync per folder, not per file)."""
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
    if durable and sync_folder:
        fsync_dir(path.parent)


class Pending:
    """Files written (or removed) without an fsync each, made durable by one ``sync_all`` pass:
    each file once, each distinct folder once."""

    def __init__(self) -> None:
        self.files: dict[Path, None] = {}
        self.folders: dict[Path, None] = {}

    def wrote(self, path: Path) -> None:
        self.files[path] = None
        self.folders[path.parent] = None

    def removed(self, path: Path) -> None:
        self.files.pop(path, None)
        self.folders[path.parent] = None

    def sync_all(self) -> None:
        """fsync every file still there, then every folder (the renames and unlinks)."""
        for path in self.files:
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:  # replaced or removed by a later change of the batch
                continue
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        for folder in self.folders:
            fsync_dir(folder)
        self.files.clear()
        self.folders.clear()


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
    append_lines(path, [line], durable=durable)


def append_lines(path: Path, lines: list[str], *, durable: bool = True) -> None:
    """Append lines, each with a single write(2) (concurrent readers never see half of one), and
    fsync once at the end: a batch's journal records cost one fsync, not one each."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        for line in lines:
            raw = (line.rstrip("\n") + "\n").encode("utf-8")
            start = os.fstat(fd).st_size
            written = os.write(fd, raw)
            if written != len(raw):  # a disk that filled up mid-line: take the half line back
                os.ftruncate(fd, start)
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


_REASONS = {errno.ENOSPC: "the disk is full", errno.EDQUOT: "the disk quota is used up",
            errno.EROFS: "the file system is read-only", errno.EACCES: "permission denied",
            errno.EPERM: "permission denied"}


def reason_of(exc: BaseException) -> str | None:
    """Why nothing could be written ("the disk is full"), for an error of a full, read-only or
    foreign file system (an ``OSError``, or SQLite's, see ``sqlite.unwritable``); else None."""
    if isinstance(exc, OSError):
        return _REASONS.get(exc.errno)  # type: ignore[arg-type]
    if isinstance(exc, sqlite3.OperationalError) and unwritable(exc):
        # a write through a view of a full disk's file fails as "readonly" too
        return "the disk is full" if getattr(exc, "sqlite_errorname", "") == "SQLITE_FULL" else \
            "the disk takes no writes (full or read-only)"
    return None


def as_not_writable(exc: BaseException) -> BaseException:
    """A full, read-only or foreign file system as ``NotWritable``; anything else as it is."""
    reason = reason_of(exc)
    if reason is None:
        return exc
    name = getattr(exc, "filename", None)
    where = f" ({name})" if name else ""
    return NotWritable(f"cannot write the tree: {reason}{where}; nothing was written")


@contextmanager
def disk_errors_as_not_writable() -> Iterator[None]:
    try:
        yield
    except (OSError, sqlite3.OperationalError) as exc:
        translated = as_not_writable(exc)
        if translated is exc:
            raise
        raise translated from exc
