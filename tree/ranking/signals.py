"""Runtime ranking signals in ``.memgrove/signals.db`` (SQLite, WAL).

Signals change on every retrieval, so they live here and never in the
markdown: a search must not rewrite files (that dirties git and invalidates
caches). Readers record accesses best-effort; a busy database loses a bonus,
never a search. Signals are derived from use: a damaged file is reset (with a
notice) and ranking carries on from the defaults.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from ..entries import lifecycle
from ..base.derived_db import DerivedDb

_SCHEMA = """
CREATE TABLE IF NOT EXISTS signals (
    path TEXT PRIMARY KEY,
    importance REAL NOT NULL DEFAULT 50,
    access_count INTEGER NOT NULL DEFAULT 0,
    update_count INTEGER NOT NULL DEFAULT 0,
    maturity TEXT NOT NULL DEFAULT 'draft'
);
"""

BATCH = 900   # paths per query (SQLite before 3.32 allows 999 variables)


@dataclass(frozen=True)
class Signal:
    path: str
    importance: float = lifecycle.DEFAULT_IMPORTANCE
    access_count: int = 0
    update_count: int = 0
    maturity: str = "draft"


class Signals(DerivedDb):
    SCHEMA = _SCHEMA
    PROBE = "SELECT path, importance, access_count, update_count, maturity FROM signals LIMIT 1"
    AFTER_RESET = "ranking signals start again from use"

    def get_many(self, paths: list[str]) -> dict[str, Signal]:
        """Each path's signal; the defaults when the file cannot be read now (busy, or missing
        on a disk that takes no writes): ranking goes on without the bonus."""
        try:
            return self._repairing(lambda: self._get_many(paths))
        except sqlite3.DatabaseError:
            return {p: Signal(p) for p in paths}

    def _get_many(self, paths: list[str]) -> dict[str, Signal]:
        if not paths:
            return {}
        q = "SELECT path, importance, access_count, update_count, maturity FROM signals WHERE path IN (%s)"
        db = self._db()
        found = {}
        # in batches: a scan of the whole tree asks for every entry, and SQLite bounds a statement's variables
        for s in range(0, len(paths), BATCH):
            part = paths[s:s + BATCH]
            found.update((r[0], Signal(*r)) for r in db.execute(q % ",".join("?" * len(part)), part).fetchall())
        return {p: found.get(p, Signal(p)) for p in paths}

    def get(self, path: str) -> Signal:
        return self.get_many([path])[path]

    def _bump(self, paths: list[str], delta: float, counter: str) -> None:
        db = self._db(write=True)
        db.execute("BEGIN IMMEDIATE")
        try:
            current = self._get_many(paths)
            for p, s in current.items():
                imp = lifecycle.clamp_importance(s.importance + delta)
                db.execute(
                    "INSERT INTO signals (path, importance, access_count, update_count, maturity) VALUES (?,?,?,?,?) "
                    "ON CONFLICT(path) DO UPDATE SET importance=excluded.importance, "
                    "access_count=excluded.access_count, update_count=excluded.update_count, maturity=excluded.maturity",
                    (p, imp, s.access_count + (counter == "access"), s.update_count + (counter == "update"),
                     lifecycle.next_maturity(s.maturity, imp)),
                )
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def record_access(self, paths: list[str]) -> None:
        """+3 importance per retrieval; best-effort (a locked database or a full disk skips it)."""
        try:
            self._repairing(lambda: self._bump(paths, lifecycle.RETRIEVAL_BONUS, "access"))
        except (sqlite3.DatabaseError, OSError):
            pass

    def record_update(self, paths: list[str]) -> None:
        self._repairing(lambda: self._bump(paths, lifecycle.UPDATE_BONUS, "update"))

    def merge(self, source: str, target: str) -> None:
        """Combine signals of a merged pair: importance max, counts summed."""
        self._repairing(lambda: self._merge(source, target))

    def _merge(self, source: str, target: str) -> None:
        s, t = self._get_many([source, target]).values()
        imp = max(s.importance, t.importance)
        db = self._db(write=True)
        db.execute(
            "INSERT OR REPLACE INTO signals VALUES (?,?,?,?,?)",
            (target, imp, s.access_count + t.access_count, s.update_count + t.update_count,
             lifecycle.next_maturity(t.maturity, imp)),
        )
        db.execute("DELETE FROM signals WHERE path=?", (source,))

    def forget(self, paths: list[str]) -> None:
        if paths:
            self._repairing(lambda: self._db(write=True).executemany("DELETE FROM signals WHERE path=?", [(p,) for p in paths]))
