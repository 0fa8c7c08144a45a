"""Opening the tree's SQLite files (signals, vectors, catalog, the query cache's) safely from many
processes, and telling damage from a busy database (a derived file that resets itself when damaged:
``derived_db``).

Reading never needs free space: a WAL database needs a 32 KB shared-memory file (``-shm``) that
SQLite creates at the first open, which a full disk refuses ("disk I/O error"). Such an open falls
back to a ``ReadOnlyView`` of the file as it is; the view is given up after ``VIEW_SECONDS`` (space
may have come back) and is never written to or reset. A WAL keeps its largest size until it is
truncated: an automatic checkpoint every ``WAL_PAGES``, ``journal_size_limit`` and ``checkpoint``
after a large transaction bound it (``WAL_LIMIT``).

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

from . import forksafe
from .sqlite_orphans import creating

WAL_LIMIT = 1 << 20      # bytes a WAL keeps once checkpointed (journal_size_limit, checkpoint)
WAL_PAGES = WAL_LIMIT // 4096   # SQLite checkpoints after a commit past this many pages (its default: 1,000)
VIEW_SECONDS = 2.0       # a ReadOnlyView is replaced by a normal connection after this long


class Connection(sqlite3.Connection):
    """sqlite3's connection, weakly referable (``ThreadConnections`` must not keep it open)."""


# a connection any thread may close (each is still used by the one thread that opened it)
CLOSABLE = {"check_same_thread": False, "factory": Connection}


class ReadOnlyView(Connection):
    """A connection reading the file as it is on disk (SQLite's ``immutable``): opened when the
    file system takes no writes (read-only, or too full for SQLite's shared-memory file). Its
    reads are of the last checkpoint; a write through it fails as ``readonly``."""

    opened_at = 0.0


def current(db: sqlite3.Connection, write: bool = False) -> bool:
    """False for a ``ReadOnlyView`` older than ``VIEW_SECONDS``, or any view when about to
    ``write``: open the file again."""
    return not isinstance(db, ReadOnlyView) or (not write and time.monotonic() - db.opened_at < VIEW_SECONDS)


NO_WRITES = "the disk takes no writes"   # in the errors memgrove raises for a full or read-only disk


def unwritable(exc: BaseException) -> bool:
    """SQLite could not write: the disk is full (``SQLITE_FULL``, or an I/O error growing its
    WAL or shared-memory file) or the database is read-only; never damage or a busy file."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    if name == "SQLITE_READONLY_DBMOVED":
        return False   # the file was deleted or replaced under the connection: reopen it (``replaced``)
    return name == "SQLITE_FULL" or name.startswith(("SQLITE_IOERR", "SQLITE_READONLY")) or NO_WRITES in str(exc)


def connect(file: Path, schema: str, *, timeout: float) -> sqlite3.Connection:
    """A WAL-mode connection with ``schema`` applied.

    Switching to WAL, and creating tables, take a lock that SQLite's busy
    handler does not always wait for ("database is locked" at once when several
    processes open a new file together), so those steps are retried until
    ``timeout``. A file removed while it was being opened (another thread or
    process resetting it) is opened again: SQLite's "attempt to write a readonly
    database" then is not a read-only disk.
    """
    for attempt in range(3):
        try:
            return _connect(file, schema, timeout=timeout)
        except sqlite3.OperationalError as exc:
            if not moved(exc) or attempt == 2:
                raise
    raise AssertionError("unreachable")


def _connect(file: Path, schema: str, *, timeout: float) -> sqlite3.Connection:
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        with creating(file, timeout):   # a deleted file's -wal and -shm are not this one's
            db = sqlite3.connect(file, timeout=timeout, isolation_level=None, **CLOSABLE)
    except (OSError, sqlite3.OperationalError) as exc:
        if not _read_only(file, exc):
            raise
        return _connect_read_only(file)
    opened = file_identity(file)
    deadline = time.monotonic() + timeout
    delay = 0.005
    try:
        while True:
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute(f"PRAGMA journal_size_limit={WAL_LIMIT}")
                db.execute(f"PRAGMA wal_autocheckpoint={WAL_PAGES}")
                db.executescript(schema)
                remember_file(db, file)
                return db
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.1)
    except BaseException as exc:
        db.close()
        now = file_identity(file)
        if isinstance(exc, sqlite3.Error) and (now != opened or now is None):
            # removed (and maybe created again) by another thread or process while this one set it
            # up (``connect`` has created the file, so none there means removed, even before
            # ``opened`` was taken): its errors ("no such table", "readonly", SQLITE_IOERR_FSTAT)
            # say nothing of the disk or the file
            raise _Moved(f"{file} was removed or replaced while it was being opened") from exc
        if isinstance(exc, sqlite3.OperationalError) and (_read_only(file, exc) or unwritable(exc)):
            try:
                return _connect_read_only(file)
            except _Missing:   # created by ``connect``, so removed since (and its errors are of that)
                raise _Moved(f"{file} was removed while it was being opened") from exc
        if isinstance(exc, ValueError):  # a damaged file can garble even a pragma's answer
            raise sqlite3.DatabaseError(f"{file} is unreadable: {exc}") from None
        raise


def _read_only(file: Path, exc: BaseException) -> bool:
    """The failure is a file system that takes no writes (not a damaged or busy file)."""
    if moved(exc):
        return False
    return (file.exists() and not os.access(file.parent, os.W_OK)) or "readonly" in str(exc) \
        or (isinstance(exc, OSError) and exc.errno == errno.EROFS) or _fs_read_only(file.parent)


def _fs_read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def no_writes(file: Path) -> OSError:
    """The error of a file only a view can read: its file system is read-only, else full."""
    code = errno.EROFS if _fs_read_only(file.parent) else errno.ENOSPC
    return OSError(code, os.strerror(code), str(file))


def _connect_read_only(file: Path) -> ReadOnlyView:
    """Reading where nothing can be written: SQLite may treat the file as immutable (a WAL
    database cannot otherwise be opened without its -shm file). On a full disk a writer may
    come back with the space: the view is short-lived (``current``) and never reset."""
    missing = _Missing(f"{file} does not exist and cannot be created ({NO_WRITES})")
    if not file.exists():
        raise missing
    try:
        db = sqlite3.connect(f"{file.as_uri()}?immutable=1", uri=True, isolation_level=None,
                             check_same_thread=False, factory=ReadOnlyView)
    except sqlite3.OperationalError:
        if not file.exists():
            raise missing from None
        raise
    db.opened_at = time.monotonic()
    return db


def checkpoint(db: sqlite3.Connection, file: Path) -> None:
    """Copy the WAL into the database and truncate it, if it holds more than ``WAL_LIMIT``;
    without waiting for readers (a busy WAL is truncated after a later batch) and best effort
    (on a full disk the copy may need space the WAL is holding)."""
    try:
        if isinstance(db, ReadOnlyView) or os.path.getsize(f"{file}-wal") <= WAL_LIMIT:
            return
    except OSError:
        return
    _truncate_now(db)


def _truncate_now(db: sqlite3.Connection) -> None:
    """Copy the WAL into the database and truncate it, without waiting for readers; best effort."""
    try:
        timeout = db.execute("PRAGMA busy_timeout").fetchone()[0]
        db.execute("PRAGMA busy_timeout=0")
        try:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        finally:
            db.execute(f"PRAGMA busy_timeout={int(timeout)}")
    except sqlite3.Error:
        pass


CHECK_SECONDS = 1.0   # how often a connection checks that its file is still the one at its path


def file_identity(file: Path) -> tuple[int, int] | None:
    """``(st_dev, st_ino)`` of the file at ``file``, None if there is none."""
    try:
        st = os.stat(file)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def remember_file(db: sqlite3.Connection, file: Path) -> None:
    """Note which file ``db`` opened (``replaced`` compares it with the path's)."""
    try:
        db.mg_identity = file_identity(file)   # type: ignore[attr-defined]
        db.mg_checked = time.monotonic()   # type: ignore[attr-defined]
    except AttributeError:   # a plain sqlite3.Connection (no attributes): never checked
        pass


class _Missing(sqlite3.OperationalError):
    """Only a view could read the file, and there is none."""


class _Moved(sqlite3.OperationalError):
    """The file was removed or replaced while a connection to it was being set up."""


def moved(exc: BaseException) -> bool:
    """SQLite refused a write because the file was deleted or moved since it was opened (or it
    was while being opened)."""
    return isinstance(exc, _Moved) or getattr(exc, "sqlite_errorname", None) == "SQLITE_READONLY_DBMOVED"


def replaced(db: sqlite3.Connection, file: Path, *, now: bool = False) -> bool:
    """The file ``db`` opened is no longer at ``file``: deleted (by hand, or reset by another
    process) or replaced. Such a connection goes on reading the deleted file, and its writes fail
    ("attempt to write a readonly database") or vanish with it: it must be reopened, which
    creates the file afresh. Checked at most every ``CHECK_SECONDS`` (a stat), or ``now``."""
    known = getattr(db, "mg_identity", None)
    if known is None or isinstance(db, ReadOnlyView):
        return False
    t = time.monotonic()
    if not now and t - getattr(db, "mg_checked", t) < CHECK_SECONDS:
        return False
    db.mg_checked = t   # type: ignore[attr-defined]
    try:
        return file_identity(file) != known
    except OSError:   # unreadable folder: not known to be gone
        return False


def give_back(db: sqlite3.Connection, file: Path) -> None:
    """After a write that failed for want of space: copy the WAL into the database and truncate
    it, best effort and without waiting for readers. A transaction that fails on a full disk
    has already grown the WAL by the frames it managed to write, and keeps them: space freed
    a page at a time went into the WAL of writes that all failed, never to the next one. Copied
    in place, the WAL's frames (up to ``WAL_LIMIT``) become free space again; if the database
    must grow for them, or a reader holds the WAL, nothing changes."""
    if isinstance(db, ReadOnlyView):
        return
    try:
        if db.in_transaction:
            db.execute("ROLLBACK")
    except sqlite3.Error:
        return
    _truncate_now(db)


class ThreadConnections:
    """The connections of one database file, one per thread: ``mine()`` is the calling thread's
    (None before ``keep``), ``close()`` closes every thread's, from any thread.

    Hold it from the owner and ``weakref.finalize(owner, conns.close)``: a registry that referred
    back to its owner would keep it alive.

    A connection never crosses a fork (SQLite's rule): a forked child opens its own at each
    thread's next use, and never closes, nor frees, those it inherited (a close may checkpoint the
    WAL, or delete it, under the parent that still uses it). CPython frees the other threads'
    locals as it forks, which would close their connections: they are held just before."""

    def __init__(self):
        self._local = threading.local()
        self._all: weakref.WeakSet[sqlite3.Connection] = weakref.WeakSet()   # a dead thread's go with it
        # reentrant: a collection may run an owner's finalizer (``close``) in a thread that holds it
        # (e.g. amid the copy of ``_all`` before a fork), which a plain lock would deadlock
        self._mutex = forksafe.rlock()
        self._forking: list[sqlite3.Connection] = []
        forksafe.around_fork(before=self._before_fork, in_parent=self._after_fork, in_child=self._forked)

    def _before_fork(self) -> None:
        with self._mutex:
            self._forking = list(self._all)

    def _after_fork(self) -> None:
        self._forking = []

    def _forked(self) -> None:
        for db in self._forking:
            forksafe.keep_for_ever(db)
        self._forking, self._all, self._local = [], weakref.WeakSet(), threading.local()

    def mine(self) -> sqlite3.Connection | None:
        return getattr(self._local, "db", None)

    def keep(self, db: sqlite3.Connection) -> sqlite3.Connection:
        """Make ``db`` (opened with ``CLOSABLE``) the calling thread's connection."""
        with self._mutex:
            self._local.db = db
            self._all.add(db)
        return db

    def drop_mine(self) -> None:
        """Close the calling thread's connection only (a view that has served its time)."""
        with self._mutex:
            db = getattr(self._local, "db", None)
            self._local.db = None
            if db is not None:
                self._all.discard(db)
        if db is not None:
            try:
                db.close()
            except sqlite3.Error:
                pass

    def close(self) -> None:
        with self._mutex:
            conns = list(self._all)
            # a new set, not ``clear()``: this may run amid an iteration of the old one (above)
            self._all = weakref.WeakSet()
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
