"""Opening the tree's SQLite files (signals, vectors, catalog, the query cache's) safely from many
processes, telling damage from a busy database, and a derived file that resets itself when damaged.

Each thread gets a connection of its own (``ThreadConnections``); all of them close together, from
whichever thread closes the owner, or when the owner is dropped unclosed. A connection cannot simply
be left to the garbage collector: its statement cache refers back to it, so an unreachable one waits
for a full collection, holding three descriptors (database, WAL, shared memory) until then.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
import time
import weakref
from pathlib import Path
from typing import Callable


class Connection(sqlite3.Connection):
    """sqlite3's connection, weakly referable (``ThreadConnections`` must not keep it open)."""


# a connection any thread may close (each is still used by the one thread that opened it)
CLOSABLE = {"check_same_thread": False, "factory": Connection}


def connect(file: Path, schema: str, *, timeout: float) -> sqlite3.Connection:
    """A WAL-mode connection with ``schema`` applied.

    Switching to WAL, and creating tables, take a lock that SQLite's busy
    handler does not always wait for ("database is locked" at once when several
    processes open a new file together), so those steps are retried until
    ``timeout``.
    """
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(file, timeout=timeout, isolation_level=None, **CLOSABLE)
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
    return sqlite3.connect(f"{file.as_uri()}?immutable=1", uri=True, isolation_level=None, **CLOSABLE)


class ThreadConnections:
    """The connections of one database file, one per thread: ``mine()`` is the calling thread's
    (None before ``keep``), ``close()`` closes every thread's, from any thread.

    Hold it from the owner and ``weakref.finalize(owner, conns.close)``: a registry that referred
    back to its owner would keep it alive."""

    def __init__(self):
        self._local = threading.local()
        self._all: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()   # a dead thread's go with it
        self._mutex = threading.Lock()

    def mine(self) -> sqlite3.Connection | None:
        return getattr(self._local, "db", None)

    def keep(self, db: sqlite3.Connection) -> sqlite3.Connection:
        """Make ``db`` (opened with ``CLOSABLE``) the calling thread's connection."""
        with self._mutex:
            self._local.db = db
            self._all.add(db)
        return db

    def close(self) -> None:
        with self._mutex:
            conns = list(self._all)
            self._all.clear()
            self._local = threading.local()   # every thread opens afresh at its next use
        for db in conns:
            try:
                db.close()
            except sqlite3.Error:   # closing must not fail: the others still close
                pass


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


def damage_of(open_db: Callable[[], sqlite3.Connection], close: Callable[[], None],
              probe: Callable[[sqlite3.Connection], str | None]) -> str | None:
    """Why a database is damaged, or None (``doctor``): what ``probe`` finds wrong with the schema,
    else SQLite's quick check; a connection that damage broke is closed."""
    try:
        db = open_db()
        problem = probe(db)
        if problem:
            return problem
        bad = db.execute("PRAGMA quick_check").fetchone()[0]
        return None if bad == "ok" else f"integrity check: {bad}"
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):
            raise
        close()
        return str(exc)


class DerivedDb:
    """A SQLite file of derived data (WAL, a connection per thread): ``SCHEMA`` applied at open,
    ``PROBE`` (a query reading every table) checks it, and a damaged file is removed and started
    again, with a notice saying so and ``AFTER_RESET`` (what that means for the user)."""

    SCHEMA = ""
    PROBE = ""
    AFTER_RESET = ""

    def __init__(self, file: Path, notices: list[str] | None = None):
        self.file = file
        self.notices = notices if notices is not None else []
        self._conns = ThreadConnections()
        weakref.finalize(self, self._conns.close)

    def _db(self) -> sqlite3.Connection:
        return self._conns.mine() or self._conns.keep(connect(self.file, self.SCHEMA, timeout=5.0))

    def close(self) -> None:
        """Close every thread's connection (they reopen at their next use)."""
        self._conns.close()

    def check(self) -> str | None:
        """Why the file is damaged, or None (``doctor``)."""
        return damage_of(self._db, self.close, self._probe)

    def _probe(self, db: sqlite3.Connection) -> None:
        """Read every table (a schema that is not ``SCHEMA`` raises)."""
        db.execute(self.PROBE).fetchall()

    def reset(self, why: str, *, notice: bool = True) -> None:
        """Start again from nothing (a damaged file cannot be repaired in place)."""
        self.close()
        remove_files(self.file)
        note = f"reset the damaged {self.file.name} ({why}); {self.AFTER_RESET}"
        if notice and note not in self.notices:
            self.notices.append(note)

    def _repairing(self, fn):
        """``fn()``; if damage stops it, again on a fresh file."""
        try:
            return fn()
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            self.reset(str(exc))
            return fn()
