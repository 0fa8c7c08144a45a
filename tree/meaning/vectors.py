"""Entries' sentence embeddings in ``.memgrove/vectors.db`` (SQLite, WAL), for ranking by meaning.

A vector is derived from a text and a model, so it is keyed by the digest of both (the model's
name and the text's digest, which the catalog keeps for each entry: ``index.sync.text_digest``, so
an entry's key is known without reading its file): an edited entry's new text is a new key (a
vector is never stale), and another model never reads these.
Computing one takes tens of milliseconds, so they are kept between searches and processes; a
search computes the ones it lacks (``vectors_of``). The cache is best effort: a busy, full or
read-only database loses a stored vector, never a search, and a damaged file is reset with a
notice (everything in it can be computed again). ``prune`` drops the vectors of texts the tree
no longer holds. Rows are only added (``INSERT OR IGNORE``) but by ``prune``, which counts itself in
``meta``: a reader that saw rows up to some rowid reads the ones past it (``since``), and reads
everything again after a prune (tree/meaning/matrix.py).
"""

from __future__ import annotations

import hashlib
import sqlite3
from typing import Any, Iterable

from ..base.derived_db import DerivedDb
from ..index.sync import text_digest

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    key TEXT PRIMARY KEY,
    vec BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER);
"""


def key_of(model: str, text: str) -> str:
    return key_for(model, text_digest(text))


def key_for(model: str, digest: str) -> str:
    """The key of the vector of a text whose ``text_digest`` is ``digest``."""
    return hashlib.sha256(f"{model}\0{digest}".encode()).hexdigest()[:32]


class Vectors(DerivedDb):
    SCHEMA = _SCHEMA
    PROBE = "SELECT key, vec, (SELECT count(*) FROM meta) FROM vectors LIMIT 1"
    AFTER_RESET = "entries' vectors are computed again as searches need them"

    def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """The stored vectors (raw float32 bytes) of those ``keys`` that have one; an unreadable
        database (busy, gone) has none."""
        if not keys:
            return {}
        try:
            return self._repairing(lambda: self._get_many(keys))
        except sqlite3.DatabaseError:
            return {}

    def _get_many(self, keys: list[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        db = self._db()
        for s in range(0, len(keys), 500):
            part = keys[s:s + 500]
            q = "SELECT key, vec FROM vectors WHERE key IN (%s)" % ",".join("?" * len(part))
            out.update(db.execute(q, part).fetchall())
        return out

    def put_many(self, items: Iterable[tuple[str, bytes]]) -> bool:
        """Store vectors; False if storing failed (busy, full, read-only: each row is its own
        statement, so some may be stored)."""
        rows = list(items)
        if not rows:
            return True
        try:
            self._repairing(lambda: self._db(write=True).executemany(
                "INSERT OR IGNORE INTO vectors (key, vec) VALUES (?, ?)", rows))
            return True
        except sqlite3.DatabaseError:
            return False

    def prune(self, keep: set[str]) -> int:
        """Drop every vector whose key is not in ``keep``; how many went."""
        def run() -> int:
            db = self._db(write=True)
            gone = [k for (k,) in db.execute("SELECT key FROM vectors") if k not in keep]
            if gone:
                db.execute("BEGIN IMMEDIATE")
                try:
                    db.executemany("DELETE FROM vectors WHERE key=?", [(k,) for k in gone])
                    db.execute("INSERT INTO meta VALUES ('prunes', 1) ON CONFLICT(key) DO UPDATE SET value = value + 1")
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:
                        db.execute("ROLLBACK")
                    raise
            return len(gone)
        return self._repairing(run)

    def since(self, rowid: int, prunes: int) -> tuple[int, list[tuple[int, str, bytes]]] | None:
        """``(prunes, rows)``: the rows (rowid, key, vector) stored past ``rowid``, in order, or every
        row when the count of prunes is no longer ``prunes`` (rowids may then be used again); None
        when the database cannot be read now (busy, gone)."""
        def run() -> tuple[int, list[tuple[int, str, bytes]]]:
            db = self._db()
            db.execute("BEGIN")          # one read: the rows and the count of prunes agree
            try:
                row = db.execute("SELECT value FROM meta WHERE key='prunes'").fetchone()
                now = row[0] if row else 0
                start = rowid if now == prunes else 0
                return now, db.execute("SELECT rowid, key, vec FROM vectors WHERE rowid > ? ORDER BY rowid",
                                       (start,)).fetchall()
            finally:
                if db.in_transaction:
                    db.execute("COMMIT")
        try:
            return self._repairing(run)
        except sqlite3.DatabaseError:
            return None

    def count(self) -> int:
        return self._repairing(lambda: self._db().execute("SELECT COUNT(*) FROM vectors").fetchone()[0])


def vectors_of(texts: list[str], encoder: Any, store: Vectors) -> Any:
    """Unit vectors (an array, one row per text) from ``store``, computing and storing the missing ones."""
    import numpy as np
    keys = [key_of(encoder.name, t) for t in texts]
    width = 4 * encoder.dim          # float32: a row of another width is not this model's
    have = {k: v for k, v in store.get_many(sorted(set(keys))).items() if len(v) == width}
    missing = list(dict.fromkeys(t for t, k in zip(texts, keys) if k not in have))
    if missing:
        made = np.asarray(encoder.encode(missing), dtype=np.float32)
        fresh = {key_of(encoder.name, t): row.tobytes() for t, row in zip(missing, made)}
        store.put_many(fresh.items())
        have.update(fresh)
    if not keys:
        return np.zeros((0, encoder.dim), dtype=np.float32)
    return np.stack([np.frombuffer(have[k], dtype=np.float32) for k in keys])
