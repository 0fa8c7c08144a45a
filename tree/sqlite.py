"""Opening the tree's SQLite files (signals, catalog, the query cache's) safely from many processes,
and telling damage from a busy database."""

from __future__ import annotations

import errno
import os
import sqlite3
import time
from pathlib import Path


def connect(file: Path, schema: str, *, timeout: float) -> sqlite3.Connection:
    """A WAL-mode connection with ``schema`` applied.

    Switching to WAL, and creating tables, take a lock that SQLite's busy
    handler does not always wait for ("database is locked" at once when several
    processes open a new file together), so those steps are retried until
    ``timeout``.
    """
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(file, timeout=timeout, isolation_level=None)
    except (OSError, sqlite3.OperationalError) as exc:
        if not _read_only(file, exc):
            raise
        return _connect_read_only(file)
    deadline = time.monotonic() + timeout
    delay = 0.005
    try:
        while True:
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(schema)
                return db
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.1)
    except BaseException as exc:
        db.close()
        if isinstance(exc, sqlite3.OperationalError) and _read_only(file, exc):
            return _connect_read_only(file)
        if isinstance(exc, ValueError):  # a damaged file can garble even a pragma's answer
            raise sqlite3.DatabaseError(f"{file} is unreadable: {exc}") from None
        raise


def _read_only(file: Path, exc: BaseException) -> bool:
    """The failure is a file system that takes no writes (not a damaged or busy file)."""
    return (file.exists() and not os.access(file.parent, os.W_OK)) or "readonly" in str(exc) \
        or (isinstance(exc, OSError) and exc.errno == errno.EROFS) or _fs_read_only(file.parent)


def _fs_read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _connect_read_only(file: Path) -> sqlite3.Connection:
    """Reading on a read-only file system: nobody can change the file, so SQLite may treat
    it as immutable (a WAL database cannot otherwise be opened without its -shm file)."""
    if not file.exists():
        raise sqlite3.OperationalError(f"{file} does not exist and cannot be created (read-only file system)")
    return sqlite3.connect(f"{file.as_uri()}?immutable=1", uri=True, isolation_level=None)
# SQLite's messages for a file that is not (or no longer) what the schema says; "database
# is locked", "disk I/O error", "unable to open", "readonly" are not damage and never reset
_SCHEMA_DAMAGE = ("no such table", "no such column", "table ", "malformed")


def is_damage(exc: BaseException) -> bool:
    """True if ``exc`` says the file is damaged (garbage, malformed, wrong schema): a derived
    database is then reset, never for a busy, read-only or full one."""
    if isinstance(exc, sqlite3.OperationalError):
        return str(exc).startswith(_SCHEMA_DAMAGE) and "locked" not in str(exc)
    return type(exc) is sqlite3.DatabaseError


def remove_files(file: Path) -> None:
    """Remove a database file with its WAL and shared-memory files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.unlink(str(file) + suffix)
        except FileNotFoundError:
            pass
