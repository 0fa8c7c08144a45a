"""The catalog's digests of entries' meaning texts, read by what changed (``meaning_rows``), for the
matrix of entries' vectors (tree/meaning/matrix.py).

``doc_hashes`` rows are written with ``INSERT OR REPLACE`` each time an entry is indexed, so a row
written since a reader last looked has a rowid past the largest it saw: those rows are the changes.
A delete leaves no row to see: the count of entries with a digest tells the reader one happened
(it then reads them all, ``Catalog.meanings``).
"""

from __future__ import annotations

from typing import Any


def meaning_rows(catalog: Any, since: int | None) -> tuple[int, int, list[tuple[int, str, str | None]]]:
    """``(entries with a digest, the last rowid, [(rowid, path, digest or None)] written past rowid
    ``since``)`` (None: no rows, the count and the last rowid only), in one read (SQLite in WAL: it
    never waits for a writer)."""
    db = catalog._db()
    db.execute("BEGIN")
    try:
        count = db.execute("SELECT count(*) FROM doc_hashes WHERE meaning IS NOT NULL").fetchone()[0]
        last = db.execute("SELECT max(rowid) FROM doc_hashes").fetchone()[0] or 0
        rows = [] if since is None else db.execute(
            "SELECT rowid, path, meaning FROM doc_hashes WHERE rowid > ? ORDER BY rowid", (since,)).fetchall()
        return count, last, rows
    finally:
        if db.in_transaction:
            db.execute("COMMIT")
