"""Opening the tree's SQLite files (signals, catalog) safely from many processes."""

from __future__ import annotations

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
    file.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(file, timeout=timeout, isolation_level=None)
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
        if isinstance(exc, ValueError):  # a damaged file can garble even a pragma's answer
            raise sqlite3.DatabaseError(f"{file} is unreadable: {exc}") from None
        raise
