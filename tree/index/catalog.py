"""What the index currently reflects: file stats, forward links, a digest.

``index/catalog.db`` (SQLite) is derived like the full-text index and lives
beside it. ``files`` holds ``(mtime_ns, size)`` of every indexed file, so a
scan of the tree tells exactly which files were edited by hand since;
``links`` holds forward links, so backlinks are one indexed query; ``traits``
holds what search weighs besides the words: the day each entry is about,
whether its text says when (for a question that names a date or asks "when")
whether it mostly asks (a question holds no answer) and whose words it holds (the role of
its messages' speaker: "assistant", "user" or "" for none, mixed or not a conversation), and
whether a newer entry replaced it (``supersededBy``, ``validUntil``: tree/entries/validity.py).

The digest is an order-independent sum of per-file hashes, so a writer can
update it for the files it changed without rescanning the tree.

A catalog written by an older version (other tables or columns) is emptied on
open and so rebuilt from the files, like a damaged one: nobody deletes it by hand.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sqlite3
import time
import weakref
from datetime import date
from pathlib import Path
from typing import NamedTuple

from ..base.fsio import TEMP_PREFIX
from ..base.derived_db import damage_of, file_gone
from ..base.sqlite import (NO_WRITES, ReadOnlyView, ThreadConnections, checkpoint, connect, current,
                           give_back, is_damage, moved, no_writes, replaced, unwritable)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, kind TEXT, mtime_ns INTEGER, size INTEGER, title TEXT,
                                  summary TEXT, folder TEXT);
CREATE INDEX IF NOT EXISTS files_folder ON files(folder);
CREATE TABLE IF NOT EXISTS links (src TEXT, dst TEXT, PRIMARY KEY (src, dst));
CREATE INDEX IF NOT EXISTS links_dst ON links(dst);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS doc_hashes (path TEXT PRIMARY KEY, hash TEXT, meaning TEXT);
CREATE TABLE IF NOT EXISTS traits (path TEXT PRIMARY KEY, day TEXT, timely INTEGER, asks INTEGER, role TEXT,
                                   source TEXT, standing INTEGER, superseded_by TEXT, valid_until TEXT);
CREATE INDEX IF NOT EXISTS traits_rules ON traits(day) WHERE standing = 2;
CREATE INDEX IF NOT EXISTS traits_assistant ON traits(path) WHERE role = 'assistant';
"""
_MASK = (1 << 64) - 1

Stat = tuple[int, int]  # (mtime_ns, size)


class Upsert(NamedTuple):
    """What the catalog records of one indexed file."""

    path: str
    kind: str            # "entry", "context" or "invalid"
    stat: Stat
    title: str
    links: list[str]
    doc_hash: str        # of the IndexDoc (``""`` for an invalid file)
    day: date | None = None   # the day the entry is about (its sources' time, else its creation)
    timely: bool = False      # its text says when something happened
    asks: bool = False        # its text is mostly questions
    role: str = ""            # whose words: "assistant", "user" or "" (tree/text/roles.py)
    summary: str = ""         # its summary (with the title: its line in its folder's context.md)
    source: str = ""          # its one source as kind:ref ("conversation:chat#12"; a message's parts share it), else ""
    standing: int = 0         # 2: the user's standing rule, 1: a preference, 0: neither (tree/text/standing.py)
    superseded_by: str = ""   # the entry that replaced it (tree/entries/validity.py), else ""
    valid_until: date | None = None   # the day it stopped holding, when closed
    meaning: str = ""         # the digest of the text its sentence embedding is made of (index/sync.py)


class Listed(NamedTuple):
    """What a folder's context.md lists of one file, as the catalog last indexed it."""

    stat: Stat
    kind: str
    title: str
    summary: str


class Traits(NamedTuple):
    """What search weighs of an entry besides its words."""

    day: date | None          # the day it is about
    timely: bool              # its text says when
    asks: bool                # its text is mostly questions
    role: str = ""            # whose words: "assistant", "user" or ""
    source: str = ""          # the one source it holds, else ""
    standing: int = 0         # 2: a standing rule of the user's, 1: a preference, 0: neither
    superseded_by: str = ""   # the entry that replaced it, else "" (tree/entries/validity.py)
    valid_until: date | None = None   # the day it stopped holding, when closed


def item_hash(path: str, stat: Stat) -> int:
    h = hashlib.blake2b(f"{path}\0{stat[0]}\0{stat[1]}".encode(), digest_size=8).digest()
    return int.from_bytes(h, "big")


def digest_of(files: dict[str, Stat]) -> int:
    return sum(item_hash(p, s) for p, s in files.items()) & _MASK


def scan(tree_root: Path, folders: dict[str, int] | None = None, temps: list[str] | None = None) -> dict[str, Stat]:
    """``{relative path: (mtime_ns, size)}`` of every ``.md`` file in the tree.

    Skips hidden/reserved names and temp files, and does not follow symlinked
    folders (a symlink cannot smuggle outside files into the index). ``folders``
    receives each folder's mtime, taken before it is listed (``folder_check.py``); ``temps``
    the paths of the temp files (``fsio.TEMP_PREFIX``) it passed.
    """
    out: dict[str, Stat] = {}
    base = len(str(tree_root)) + 1
    stack = [str(tree_root)]
    if folders is not None:
        try:
            folders[str(tree_root)] = os.stat(tree_root).st_mtime_ns
        except OSError:
            pass
    while stack:
        folder = stack.pop()
        try:
            it = os.scandir(folder)
        except (FileNotFoundError, NotADirectoryError, PermissionError):
            continue
        with it:
            for e in it:
                name = e.name
                if name.startswith((".", "_", TEMP_PREFIX)):
                    if temps is not None and name.startswith(TEMP_PREFIX):
                        temps.append(e.path)
                    continue
                try:
                    if e.is_dir(follow_symlinks=False):
                        if folders is not None:
                            folders[e.path] = e.stat(follow_symlinks=False).st_mtime_ns
                        stack.append(e.path)
                    elif name.endswith(".md") and e.is_file(follow_symlinks=False):
                        st = e.stat(follow_symlinks=False)
                        out[e.path[base:]] = (st.st_mtime_ns, st.st_size)
                except FileNotFoundError:
                    continue
    return out


@functools.cache
def _columns() -> dict[str, tuple[str, ...]]:
    """Each table's columns as ``_SCHEMA`` creates them (the one source of truth)."""
    mem = sqlite3.connect(":memory:")
    try:
        mem.executescript(_SCHEMA)
        return _columns_of(mem)
    finally:
        mem.close()


def _columns_of(db: sqlite3.Connection) -> dict[str, tuple[str, ...]]:
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")]
    return {t: tuple(r[1] for r in db.execute(f"PRAGMA table_info('{t}')")) for t in tables}


def schema_problem(db: sqlite3.Connection) -> str | None:
    """How the file's tables differ from ``_SCHEMA`` (an older version's catalog), or None."""
    have, want = _columns_of(db), _columns()
    for table, cols in want.items():
        if have.get(table) != cols:
            return f"table {table} has columns {', '.join(have.get(table, ())) or 'none'}; expected {', '.join(cols)}"
    return None


class Catalog:
    def __init__(self, file: Path):
        self.file = file
        self._conns = ThreadConnections()
        weakref.finalize(self, self._conns.close)
        self.upgraded = False   # an older schema was found and emptied: rebuild from the files
        self._opened: tuple[int, int] | None = None   # the file the last connection opened (``gone``)

    def _db(self, write: bool = False) -> sqlite3.Connection:
        db = self._conns.mine()
        if db is not None and (not current(db, write) or replaced(db, self.file)):
            # this thread's only: other threads keep theirs (and each checks its own file); a
            # catalog deleted under the process opens afresh, empty, and is rebuilt from the files
            self._conns.drop_mine()
            db = None
        if db is None:
            for attempt in range(3):
                db = connect(self.file, _SCHEMA, timeout=10.0)
                try:
                    if schema_problem(db):
                        if isinstance(db, ReadOnlyView):
                            # a view cannot recreate tables: a file being removed and created
                            # again by another thread or process as it was opened, or an old
                            # schema on a disk that takes no writes
                            raise sqlite3.OperationalError(f"{self.file} cannot be used now ({NO_WRITES}, "
                                                           "or it is being recreated)")
                        self._recreate(db)
                    self._opened = getattr(db, "mg_identity", None)
                    break
                except BaseException as exc:
                    db.close()
                    # another thread or process removed the file just opened (a reset): open it again
                    again = isinstance(exc, sqlite3.OperationalError) and (moved(exc) or isinstance(db, ReadOnlyView))
                    if not again or attempt == 2:
                        raise
                    time.sleep(0.05)
            self._conns.keep(db)
        return db

    def gone(self) -> bool:
        """The catalog this process last opened is no longer at ``file`` (deleted or replaced under
        it, ``sqlite.file_gone``): it is opened afresh, empty, and rebuilt from the files."""
        return file_gone(self, self._conns)

    def stale(self) -> bool:
        """This thread's connection reads a file no longer at ``file`` (checked at most once a
        second, ``sqlite.replaced``); it is dropped, so the next use opens the file afresh."""
        db = self._conns.mine()
        if db is not None and replaced(db, self.file):
            self._conns.drop_mine()
            return True
        return False

    def _recreate(self, db: sqlite3.Connection) -> None:
        """Drop and recreate every table of an older schema, empty: the digest is gone, so
        the next search or write rebuilds the catalog and index from the files."""
        db.execute("BEGIN IMMEDIATE")
        try:
            if schema_problem(db):  # another process may have done it meanwhile
                for table in _columns_of(db):
                    db.execute(f"DROP TABLE IF EXISTS \"{table}\"")
                for statement in filter(str.strip, _SCHEMA.split(";")):  # not executescript: it commits first
                    db.execute(statement)
                self.upgraded = True
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def check(self) -> str | None:
        """Why the catalog cannot be used (damaged, or an unknown schema), or None (``doctor``)."""
        return damage_of(self._db, self.close, schema_problem)

    def close(self) -> None:
        """Close every thread's connection (they reopen at their next use)."""
        self._conns.close()

    def for_writing(self) -> None:
        """Before reading what a write will change: a connection that writes, whose reads are the
        file as it is. A view of a full disk reads the file as of its last checkpoint, and a digest
        updated from such a read, then written once space came back, matched no state of the files.
        Raises the disk's error (ENOSPC or EROFS) while only a view can be had."""
        if isinstance(self._db(write=True), ReadOnlyView):
            raise no_writes(self.file)

    def checkpoint(self) -> None:
        """Bound the WAL after a batch of writes (``sqlite.checkpoint``)."""
        db = self._conns.mine()
        if db is not None:
            checkpoint(db, self.file)

    def reset(self, *, force: bool = False) -> None:
        """Empty the catalog. In place: other processes keep their connections to this file,
        and an unlinked file would swallow their writes. Only an unreadable file is removed
        (or, with ``force``, one damaged in a way that only a write revealed). A disk that
        takes no writes raises (``sqlite.unwritable``): removing the file would not help a
        rebuild that cannot write, and would leave readers no catalog at all."""
        try:
            db = self._db(write=True)
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            db = None
        if isinstance(db, ReadOnlyView):
            raise sqlite3.OperationalError(f"{self.file} cannot be reset: {NO_WRITES}")
        if db is not None and not force:
            try:
                # damage can leave a file that opens but has lost a column: probe every one
                db.execute("SELECT path, kind, mtime_ns, size, title, summary, folder FROM files LIMIT 1")
                db.execute("SELECT src, dst FROM links LIMIT 1")
                db.execute("SELECT key, value FROM meta LIMIT 1")
                db.execute("SELECT path, hash, meaning FROM doc_hashes LIMIT 1")
                db.execute("SELECT path, day, timely, asks, role, source, standing, superseded_by, valid_until "
                           "FROM traits LIMIT 1")
                db.execute("BEGIN IMMEDIATE")
                try:
                    for table in ("files", "links", "meta", "doc_hashes", "traits"):
                        db.execute(f"DELETE FROM {table}")
                    db.execute("COMMIT")
                except BaseException:
                    if db.in_transaction:   # SQLite may have rolled back already (a full disk)
                        db.execute("ROLLBACK")
                    raise
                return
            except sqlite3.DatabaseError as exc:
                if not is_damage(exc):
                    raise
        self.close()
        self._opened = None   # removed on purpose: not "gone"
        for suffix in ("", "-wal", "-shm"):
            try:
                os.unlink(str(self.file) + suffix)
            except FileNotFoundError:
                pass

    # -- meta ---------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self._db().execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else row[0]

    def digest(self) -> int | None:
        v = self.get_meta("digest")
        try:
            return None if v is None else int(v)
        except ValueError:
            raise sqlite3.DatabaseError(f"{self.file}: damaged digest {v!r}") from None

    # -- files and links ----------------------------------------------------
    def files(self) -> dict[str, Stat]:
        return {p: (m, s) for p, m, s in self._db().execute("SELECT path, mtime_ns, size FROM files")}

    def _rows_of(self, columns: str, table: str, paths: list[str]) -> list[tuple]:
        """``SELECT path, <columns> FROM <table>`` for these paths, 500 at a time (well under
        SQLite's limit on bound parameters)."""
        rows: list[tuple] = []
        for i in range(0, len(paths), 500):
            chunk = paths[i:i + 500]
            marks = ",".join("?" * len(chunk))
            rows += self._db().execute(f"SELECT path, {columns} FROM {table} WHERE path IN ({marks})", chunk).fetchall()
        return rows

    def stats_of(self, paths: list[str]) -> dict[str, Stat]:
        return {p: (m, s) for p, m, s in self._rows_of("mtime_ns, size", "files", paths)}

    def folder_files(self, folder: str) -> dict[str, Listed]:
        """``{file name: Listed}`` of the files directly in ``folder`` (one indexed query)."""
        rows = self._db().execute("SELECT path, kind, mtime_ns, size, title, summary FROM files WHERE folder=?",
                                  (folder,))
        return {p.rpartition("/")[2]: Listed((m, s), kind, title or "", summary or "") for p, kind, m, s, title, summary in rows}

    def count(self, kind: str | None = None) -> int:
        if kind is None:
            return self._db().execute("SELECT count(*) FROM files").fetchone()[0]
        return self._db().execute("SELECT count(*) FROM files WHERE kind=?", (kind,)).fetchone()[0]

    def backlinks(self, path: str) -> list[str]:
        return [r[0] for r in self._db().execute("SELECT src FROM links WHERE dst=? ORDER BY src", (path,))]

    def forward_links(self, path: str) -> list[str]:
        return [r[0] for r in self._db().execute("SELECT dst FROM links WHERE src=? ORDER BY dst", (path,))]

    def neighbours(self, paths: list[str]) -> dict[str, list[str]]:
        """Forward links and backlinks of many entries in one query."""
        out: dict[str, list[str]] = {p: [] for p in paths}
        rows: list[tuple[str, str]] = []
        for i in range(0, len(paths), 400):   # well under SQLite's limit on bound parameters
            part = paths[i:i + 400]
            marks = ",".join("?" * len(part))
            rows += self._db().execute(f"SELECT src, dst FROM links WHERE src IN ({marks}) OR dst IN ({marks})",
                                       (*part, *part)).fetchall()
        for src, dst in rows:
            if src in out and dst not in out[src]:
                out[src].append(dst)
            if dst in out and src not in out[dst]:
                out[dst].append(src)
        return out

    def all_links(self) -> list[tuple[str, str]]:
        return list(self._db().execute("SELECT src, dst FROM links ORDER BY src, dst"))

    def doc_hashes_of(self, paths: list[str]) -> dict[str, str]:
        """Hash of the document each path has in the index (to skip rewriting an unchanged one)."""
        return dict(self._rows_of("hash", "doc_hashes", paths))

    def meanings(self) -> list[tuple[str, str]]:   # (path, digest of its meaning text), every indexed entry
        return self._db().execute("SELECT path, meaning FROM doc_hashes WHERE meaning IS NOT NULL").fetchall()

    def traits_of(self, paths: list[str]) -> dict[str, Traits]:
        """``{path: Traits}`` for the indexed paths among ``paths``."""
        return {p: Traits(date.fromisoformat(day) if day else None, bool(timely), bool(asks), role or "", source or "",
                          int(standing or 0), by or "", date.fromisoformat(until) if until else None)
                for p, day, timely, asks, role, source, standing, by, until
                in self._rows_of("day, timely, asks, role, source, standing, superseded_by, valid_until", "traits", paths)}

    def closed_by(self, paths: list[str]) -> dict[str, str]:
        """``{path: the entry that replaced it}`` for the closed entries among ``paths``."""
        return {p: by for p, by in self._rows_of("superseded_by", "traits", paths) if by}

    def holds_assistant(self) -> bool:
        """Whether any entry is an AI assistant's (a chat with roles has been recorded)."""
        return self._db().execute("SELECT 1 FROM traits WHERE role = 'assistant' LIMIT 1").fetchone() is not None

    def standing_rules(self, limit: int) -> list[str]:
        """The entries holding the user's standing rules, at most ``limit``, the latest first."""
        if limit < 1:
            return []
        return [p for (p,) in self._db().execute(
            "SELECT path FROM traits WHERE standing = 2 ORDER BY day DESC, path DESC LIMIT ?", (limit,))]

    def apply(self, upserts: list[Upsert], deletes: list[str],
              *, digest: int, replace_all: bool = False, fmt: str | None = None) -> None:
        """Record files now in the index (``Upsert`` rows); one transaction."""
        try:
            self._apply(upserts, deletes, digest=digest, replace_all=replace_all, fmt=fmt)
        except sqlite3.OperationalError as exc:
            if not moved(exc):
                raise
            # the file was deleted under this connection since its last check: the rows go to a
            # fresh one (its missing digest and format make the next search rebuild it)
            self._conns.drop_mine()
            self._apply(upserts, deletes, digest=digest, replace_all=replace_all, fmt=fmt)

    def _apply(self, upserts: list[Upsert], deletes: list[str],
               *, digest: int, replace_all: bool, fmt: str | None) -> None:
        db = self._db(write=True)
        db.execute("BEGIN IMMEDIATE")
        try:
            if replace_all:
                for table in ("files", "links", "doc_hashes", "traits"):
                    db.execute(f"DELETE FROM {table}")
            for p in deletes:
                db.execute("DELETE FROM files WHERE path=?", (p,))
                db.execute("DELETE FROM links WHERE src=?", (p,))
                db.execute("DELETE FROM doc_hashes WHERE path=?", (p,))
                db.execute("DELETE FROM traits WHERE path=?", (p,))
            for (p, kind, (m, s), title, links, doc_hash, day, timely, asks, role, summary, source, standing, by,
                 until, meaning) in upserts:
                db.execute("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?)",
                           (p, kind, m, s, title, summary, p.rpartition("/")[0]))
                db.execute("INSERT OR REPLACE INTO doc_hashes VALUES (?,?,?)", (p, doc_hash, meaning or None))
                db.execute("INSERT OR REPLACE INTO traits VALUES (?,?,?,?,?,?,?,?,?)",
                           (p, day.isoformat() if day else None, int(timely), int(asks), role, source, int(standing),
                            by or None, until.isoformat() if until else None))
                db.execute("DELETE FROM links WHERE src=?", (p,))
                db.executemany("INSERT OR IGNORE INTO links VALUES (?,?)", [(p, d) for d in links])
            db.execute("INSERT OR REPLACE INTO meta VALUES ('digest', ?)", (str(digest),))
            if fmt is not None:
                db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?)", (fmt,))
            db.execute("COMMIT")
        except BaseException as exc:
            if db.in_transaction:   # SQLite rolls back by itself on some errors (a full disk): keep that error
                db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error) and unwritable(exc):
                give_back(db, self.file)   # what the failed transaction wrote to the WAL
            raise
