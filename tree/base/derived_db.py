"""A SQLite file derived from the tree (signals, vectors): one connection per thread, reset from
nothing when damaged, opened afresh when deleted under the process, and what ``doctor`` asks of
it (``damage_of``, ``file_gone``)."""

from __future__ import annotations

import sqlite3
import weakref
from pathlib import Path
from typing import Callable

from .sqlite import (ReadOnlyView, ThreadConnections, checkpoint, connect, current, file_identity, give_back,
                     is_damage, moved, remove_files, replaced, unwritable)


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


def file_gone(owner, conns: ThreadConnections) -> bool:
    """``gone`` of a database owner holding ``file``, ``_opened`` (the identity of the file its
    last connection opened) and ``conns``: this thread's connection is dropped if it is stale."""
    mine = conns.mine()
    if mine is not None and replaced(mine, owner.file, now=True):
        conns.drop_mine()
    known = getattr(owner, "_opened", None)
    if known is None or file_identity(owner.file) == known:
        return False
    owner._opened = None   # reported once; the next connection records the new file
    return True


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
        self._opened: tuple[int, int] | None = None   # the file the last connection opened (``gone``)
        weakref.finalize(self, self._conns.close)

    def _db(self, write: bool = False) -> sqlite3.Connection:
        """This thread's connection; ``write``: not a ``ReadOnlyView`` if the file can be opened
        for writing again (space may be back since the view was opened)."""
        db = self._conns.mine()
        if db is not None and (not current(db, write) or replaced(db, self.file)):
            self._conns.drop_mine()
            db = None
        if db is None:
            db = self._conns.keep(connect(self.file, self.SCHEMA, timeout=5.0))
            self._opened = getattr(db, "mg_identity", None)
        return db

    def gone(self) -> bool:
        """The file this process last opened is no longer at ``file`` (deleted or replaced under
        it): its connections read and write the deleted file until they reopen (each thread's
        within ``CHECK_SECONDS`` of its next use; this thread's now). For ``doctor``."""
        return file_gone(self, self._conns)

    def viewing(self) -> bool:
        """This thread reads the file through a ``ReadOnlyView`` (nothing may be written or reset)."""
        return isinstance(self._conns.mine(), ReadOnlyView)

    def checkpoint(self) -> None:
        """Bound the WAL after a batch of writes (``checkpoint``)."""
        db = self._conns.mine()
        if db is not None:
            checkpoint(db, self.file)

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
        self._opened = None   # removed on purpose: not "gone"
        remove_files(self.file)
        note = f"reset the damaged {self.file.name} ({why}); {self.AFTER_RESET}"
        if notice and note not in self.notices:
            self.notices.append(note)

    def _repairing(self, fn):
        """``fn()``; if damage stops it, again on a fresh file."""
        try:
            return fn()
        except sqlite3.DatabaseError as exc:
            if moved(exc):   # deleted under this connection: reopen (a fresh file) and go on
                self._conns.drop_mine()
                return fn()
            if unwritable(exc) and (db := self._conns.mine()) is not None:
                give_back(db, self.file)
            # a view may read a page a writer is checkpointing: garbage then is not damage
            if not is_damage(exc) or self.viewing():
                raise
            self.reset(str(exc))
            return fn()
