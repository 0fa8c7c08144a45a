"""Every current entry's vector in one matrix, per process, for the dense leg of a search (a
question's cosine with every entry: one matrix product, tree/ranking/dense.py) and for ranking by
meaning's cosines (no file read for an entry whose vector is stored).

Nothing here is a file of its own: the matrix is made from what is on disk already, and kept up to
date by two cheap looks per search, neither of which takes the writer lock or waits for a writer
(SQLite readers in WAL):

- the catalog's digest (one row): when it changed, the entries and the digests of their meaning
  texts are read again (``Catalog.meanings``; the index keeps them, ``index.sync.text_digest``),
  so each entry's key (``vectors.key_for``) is known without reading its file; rows of entries
  whose text did not change are kept, the few new keys looked up;
- the vectors stored since the last look (``Vectors.since``: rowids only grow, but after a prune,
  which is counted): whoever stored them (a search, the background embedder, reindex, another
  process) needs to tell no one.

A search at 25,000 entries pays the two looks when nothing changed; a cold process reads every
vector once (5,000 vectors: tens of milliseconds). A damaged ``vectors.db`` is reset with a notice
by ``Vectors`` (tree/base/derived_db.py) and its file is then another: the matrix is read again
from it (the vectors it had stay: a vector is keyed by its model and text, never stale). A child
forked with the matrix loaded keeps it (the arrays are the parent's pages until written) and its
lock is made free (``forksafe.lock``); its next look reads what changed meanwhile.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ..base import forksafe
from ..base.sqlite import file_identity
from ..index.meaning_rows import meaning_rows
from .vectors import Vectors, key_for


class Matrix:
    """The vectors of the entries a catalog holds, rows aligned with ``paths`` (a zero row and
    ``has`` False for an entry without its vector yet)."""

    def __init__(self, catalog: Any, vectors: Vectors):
        self._catalog, self._vectors = catalog, vectors
        self._lock = forksafe.lock()
        self._model: tuple[str, int] | None = None
        self._digest: Any = object()          # the catalog's digest when its meanings were last read
        self._cursor = (None, 0, -1)          # vectors.db's identity, the last rowid read, prunes seen
        self.paths: list[str] = []
        self._at: dict[str, int] = {}         # path -> row
        self._where: dict[str, list[int]] = {}    # key -> rows (entries of one text share a key)
        self._row_keys: list[str] = []        # row -> key
        self._seen: tuple[Any, int] = (None, 0)   # the catalog's file and the last doc_hashes rowid read
        self._keys: dict[str, str] = {}       # digest -> key, for the model
        self.rows: Any = None                 # float32 (len(paths), dim)
        self.has: Any = None                  # bool (len(paths),)

    def refresh(self, model: str, dim: int) -> None:
        """Bring the matrix up to date with the catalog and ``vectors.db`` (see the module)."""
        with self._lock:
            try:
                self._refresh(model, dim)
            except sqlite3.DatabaseError:    # a catalog being rebuilt or reset: the matrix as it was
                pass

    def _refresh(self, model: str, dim: int) -> None:
        import numpy as np
        if self._model != (model, dim):
            self._model, self._keys, self._digest, self._cursor = (model, dim), {}, object(), (None, 0, -1)
            self.paths, self._at, self._where, self._row_keys, self._seen = [], {}, {}, [], (None, 0)
            self.rows, self.has = np.zeros((0, dim), np.float32), np.zeros(0, bool)
        digest = self._catalog.digest()
        if digest != self._digest:
            if not self._written_since(np, dim):
                # the last rowid first: a row written meanwhile is read again next time, never missed
                ident, (_n, last, _rows) = file_identity(self._catalog.file), meaning_rows(self._catalog, None)
                self._reshape(self._catalog.meanings(), np, dim)
                self._seen = (ident, last)
            self._digest = digest
        ident = file_identity(self._vectors.file)
        known, rowid, prunes = self._cursor
        got = self._vectors.since(rowid if ident == known else 0, prunes if ident == known else -1)
        if got is None:           # unreadable now: the matrix as it was
            return
        prunes, fresh = got
        self._fill([(k, v) for _r, k, v in fresh], np, dim)
        self._cursor = (ident, fresh[-1][0] if fresh else (rowid if ident == known else 0), prunes)

    def _reshape(self, meanings: list[tuple[str, str]], np: Any, dim: int) -> None:
        """Rows for the catalog's entries now: those whose key had a row keep it, the few others
        are looked up (all of them, in a cold process: read with the rest by ``since``)."""
        model = self._model[0] if self._model else ""
        keys = self._keys
        for _p, d in meanings:
            if d not in keys:
                keys[d] = key_for(model, d)
        paths = [p for p, _d in meanings]
        rows, has = np.zeros((len(paths), dim), np.float32), np.zeros(len(paths), bool)
        row_keys = [keys[d] for _p, d in meanings]
        where: dict[str, list[int]] = {}
        for i, k in enumerate(row_keys):
            where.setdefault(k, []).append(i)
        old_at, old_keys, old_rows, old_has, old_where = self._at, self._row_keys, self.rows, self.has, self._where
        # an entry whose text did not change keeps its row; one whose text changed has another key
        kept = [(i, j) for i, (p, k) in enumerate(zip(paths, row_keys))
                if (j := old_at.get(p)) is not None and old_has[j] and old_keys[j] == k]
        if kept:
            new, old = np.array(kept, np.int64).T
            rows[new], has[new] = old_rows[old], True
        self.paths, self._row_keys, self._where, self.rows, self.has = paths, row_keys, where, rows, has
        self._at = {p: i for i, p in enumerate(paths)}
        if old_at:
            # a key new to the matrix may have been stored before this look (an undo's older text); a
            # key it held already gets its vector from ``since``, and a cold matrix reads them all there
            missing = sorted(k for k, rs in where.items() if k not in old_where and not has[rs[0]])
            self._fill(list(self._vectors.get_many(missing).items()) if missing else [], np, dim)

    def _written_since(self, np: Any, dim: int) -> bool:
        """A write's few changes made in place, read from the catalog's rows written since the last
        look (tree/index/meaning_rows.py): a row that left is masked (its path leaves ``_at``), a
        changed text's row gets its new key, a new entry a row at the end (into spare capacity).
        False, and nothing changed, when there is no matrix yet, the catalog is another file, an
        entry was deleted (the count says so) or too much changed: ``_reshape`` then."""
        ident, last = self._seen
        if not self._at or ident != file_identity(self._catalog.file):
            return False
        count, _last, rows = meaning_rows(self._catalog, last)
        new = {p: d for _r, p, d in rows if d}
        gone = sorted({p for _r, p, d in rows if not d and p in self._at} - new.keys())
        if count != len(self._at) + sum(p not in self._at for p in new) - len(gone) or \
                len(new) + len(gone) > max(64, len(self._at) // 50):
            return False
        model = self._model[0] if self._model else ""
        keys, at, row_keys = self._keys, self._at, self._row_keys
        for d in new.values():
            if d not in keys:
                keys[d] = key_for(model, d)
        # a row rewritten with the same text (an entry indexed again) keeps its vector
        changed = sorted(p for p, d in new.items() if (i := at.get(p)) is None or row_keys[i] != keys[d])
        for p in gone:
            i = at.pop(p)
            self.has[i] = False
            self._unkey(i)
            self.paths[i] = ""            # a hole: no entry's row any more
        fresh = [p for p in changed if p not in at]
        if fresh:
            n = len(self.paths)
            if n + len(fresh) > len(self.rows):       # room for what a burst of writes adds
                grown = max(n + len(fresh), n + n // 4 + 16)
                bigger, has = np.zeros((grown, dim), np.float32), np.zeros(grown, bool)
                bigger[:n], has[:n] = self.rows[:n], self.has[:n]
                self.rows, self.has = bigger, has
            for j, p in enumerate(fresh):
                at[p] = n + j
                self.paths.append(p)
                row_keys.append("")
        for p in changed:
            i = at[p]
            self.has[i] = False
            self._unkey(i)
            row_keys[i] = k = keys[new[p]]
            self._where.setdefault(k, []).append(i)
            if len(rs := self._where[k]) > 1 and self.has[rs[0]]:     # a text another entry holds too
                self.rows[i], self.has[i] = self.rows[rs[0]], True
        missing = sorted({row_keys[at[p]] for p in changed if not self.has[at[p]]})
        self._fill(list(self._vectors.get_many(missing).items()) if missing else [], np, dim)
        self._seen = (ident, rows[-1][0] if rows else last)
        return True

    def _unkey(self, i: int) -> None:
        k = self._row_keys[i]
        rs = self._where.get(k)
        if rs is not None and i in rs:
            rs.remove(i)
            if not rs:
                del self._where[k]

    def _fill(self, items: list[tuple[str, bytes]], np: Any, dim: int) -> None:
        width = 4 * dim           # float32: a row of another width is not this model's
        for k, v in items:
            rs = self._where.get(k)
            if rs is not None and len(v) == width:
                self.rows[rs] = np.frombuffer(v, np.float32)
                self.has[rs] = True      # after the row: a fork between leaves the entry without it

    # -- what a search asks ------------------------------------------------------------------
    def top(self, q: Any, k: int) -> list[tuple[str, float]]:
        """The ``k`` entries closest in meaning to the unit vector ``q``, best first: (path, cosine)."""
        import numpy as np
        with self._lock:
            n = int(self.has.sum()) if self.has is not None else 0
            if n == 0 or k <= 0:
                return []
            cos = self.rows @ np.asarray(q, np.float32)
            cos[~self.has] = -np.inf
            k = min(k, n)
            best = np.argpartition(-cos, k - 1)[:k] if k < len(cos) else np.arange(len(cos))
            best = best[np.lexsort((best, -cos[best]))]      # ties: catalog order, for the same answer each time
            return [(self.paths[i], float(cos[i])) for i in best]

    def cosines(self, q: Any, paths: list[str]) -> dict[str, float]:
        """The cosine of ``q`` with those of ``paths`` whose vector the matrix holds."""
        import numpy as np
        with self._lock:
            at = [(p, i) for p in paths if (i := self._at.get(p)) is not None and self.has[i]]
            if not at:
                return {}
            cos = self.rows[[i for _p, i in at]] @ np.asarray(q, np.float32)
            return {p: float(c) for (p, _i), c in zip(at, cos)}

    def missing(self) -> list[str]:
        """The entries whose current text has no vector yet."""
        with self._lock:
            return [p for p, i in self._at.items() if not self.has[i]]

    def counts(self) -> tuple[int, int]:
        """(entries, entries whose current text has its vector)."""
        with self._lock:
            return len(self._at), int(self.has.sum()) if self.has is not None else 0
