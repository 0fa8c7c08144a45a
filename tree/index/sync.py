"""Index synchronisation of ``ContextTree``: the index and catalog follow the files.

Every write indexes what it touched; before a search, a scan of file stats finds hand edits
and indexes them — in a long-lived process only when its watcher saw a change, or without one,
when a folder or a file whose turn it was changed (``folder_check.py``). A missing,
corrupt or outdated index (``INDEX_FORMAT``) is rebuilt from the files, which are the truth.
The fingerprint (generation + digest of the files + digest of the ranking settings) keys the query cache.
``IndexSync`` is one of the parts ``ContextTree`` is made of (see store.py).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from typing import Callable, Iterable

from . import contexts
from ..text import dates, questions, roles, standing
from ..entries import entry as entry_mod, validity
from .catalog import Stat, Upsert, digest_of, item_hash, scan
from .engine import IndexBroken, IndexDoc
from ..base.errors import InvalidEntry
from .folder_check import FolderCheck, files_in
from ..base.fsio import atomic_write, reason_of
from ..entries.paths import is_context
from ..text.searchable import searchable
from ..settings import ranking_digest
from ..base.sqlite import is_damage
from .watch import TreeWatcher

_MASK = (1 << 64) - 1
# Bump when what is indexed changes (fields, analyzer, document text): older indexes are rebuilt.
# The catalog records it after the engine's name ("whoosh-14"): switching engines rebuilds once.
INDEX_FORMAT = "15"


def indexed_body(e: entry_mod.Entry, kind: str) -> str:
    """The part of an entry's body that is indexed: a context file's overview only (its listing
    repeats its children's titles and summaries; indexing it would make every folder compete
    with its own entries)."""
    return e.sections.get(contexts.OVERVIEW, "") if kind == "context" else e.body


def indexed_content(e: entry_mod.Entry, kind: str, cap: int) -> str:
    """What the index's ``content`` field holds of an entry: its summary and the searchable text
    of its indexed body, up to ``cap`` characters."""
    return (e.summary + "\n" + searchable(indexed_body(e, kind))[:cap]).strip()


# the most of an entry's text its sentence embedding is made from: the model reads 256 tokens
MEANING_CHARS = 4000


def meaning_text(e: entry_mod.Entry, kind: str) -> str:
    """What an entry's sentence embedding is made of (ranking by meaning, tree/meaning/): its title
    and indexed body; the model reads the first 256 tokens, so ``MEANING_CHARS`` are plenty."""
    return (e.title + "\n" + searchable(indexed_body(e, kind)))[:MEANING_CHARS].strip()


def text_digest(text: str) -> str:
    """The digest of an entry's ``meaning_text`` the catalog keeps, so that the key of its vector
    (tree/meaning/vectors.py) is known without reading its file."""
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def remove_temp_files(paths: Iterable[str]) -> int:
    """Remove temp files of ``fsio.atomic_write`` found in the tree: only under the writer lock,
    which every writer of the tree's files holds, so each is a dead writer's (a live writer's temp
    file is renamed into place before the lock is let go). How many went."""
    n = 0
    for p in paths:
        try:
            os.unlink(p)
            n += 1
        except FileNotFoundError:
            pass
        except OSError:   # a read-only disk: doctor --fix or a later writer removes it
            pass
    return n


class IndexSync:
    """Keeping the index and catalog in step with the files (state lives on ``ContextTree``)."""
    def _doc_for(self, rel: str, stat: Stat) -> tuple[IndexDoc | None, Upsert]:
        """Index document of a file and what the catalog records of it; ``(None, invalid row)``
        if it cannot be parsed (the reason goes nowhere: ``doctor`` reports it)."""
        try:
            text = (self.root / rel).read_text(encoding="utf-8")
            e = entry_mod.parse(text, where=rel)
        except (OSError, UnicodeDecodeError, InvalidEntry):
            return None, Upsert(rel, "invalid", stat, "", [], "")
        kind = "context" if is_context(rel) else "entry"
        body = indexed_body(e, kind)
        content = indexed_content(e, kind, self.settings.content_cap)
        words = rel[:-3].replace("/", " ").replace("_", " ")
        links = [l for l in e.links() if l != rel]
        doc = IndexDoc(path=rel, kind=kind, title=e.title, content=content, path_text=words,
                       tags=" ".join(e.tags), keywords=" ".join(e.keywords))
        # the day it is about: when its sources happened, else when it was written
        day = next((d for src in e.sources if isinstance(src, dict) and (d := dates.day_of(str(src.get("at") or "")))),
                   None) or dates.day_of(e.created_at)
        role = roles.role_of(e.sources)
        return doc, Upsert(rel, kind, stat, e.title, links, doc.digest(), day, dates.mentions_time(content),
                           questions.mostly_asks(body), role, e.summary, roles.source_of(e.sources),
                           standing.standing_kind(body, role) if kind == "entry" else standing.NONE,
                           validity.superseded_by(e), validity.valid_until(e), text_digest(meaning_text(e, kind)))

    def _index_paths(self, paths: list[str]) -> None:
        """Bring the index in step for these paths; updates the digest incrementally."""
        paths = [p for p in dict.fromkeys(paths) if p.endswith(".md")]
        if not paths:
            return
        self.catalog.for_writing()    # the digest below is read, changed and written back
        old = self.catalog.stats_of(paths)
        old_hashes = self.catalog.doc_hashes_of(paths)
        digest = self.catalog.digest() or 0
        docs, deletes, upserts = [], [], []
        for rel in paths:
            if rel in old:
                digest -= item_hash(rel, old[rel])
            try:
                st = (self.root / rel).stat()
            except FileNotFoundError:
                deletes.append(rel)
                continue
            stat = (st.st_mtime_ns, st.st_size)
            digest += item_hash(rel, stat)
            doc, row = self._doc_for(rel, stat)
            if doc is None:
                deletes.append(rel)
            elif old_hashes.get(rel) != row.doc_hash:
                # a context.md whose listing changed has the same indexed text: rewriting
                # it anyway left thousands of deleted documents in fragmented segments
                docs.append(doc)
            upserts.append(row)
        if not docs and not deletes and all(old.get(u.path) == u.stat for u in upserts):
            # as indexed already (a batch's derived work done again after its writer died, or
            # after a full disk stopped it later on): no write at all, since on a full disk a
            # transaction that fails grows the WAL by what it managed to write before failing
            return
        try:
            self.engine.write(replace=docs, delete=deletes)
        except IndexBroken:
            self._rebuild_locked()
            return
        kept = {u[0] for u in upserts}
        self.catalog.apply(upserts, [d for d in deletes if d not in kept], digest=digest & _MASK)
        self.catalog.checkpoint()
        self._indexed_anew([d.path for d in docs])

    def _generation(self) -> int:
        try:
            return int((self.home / "generation").read_text() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    def _bump_generation(self) -> None:
        atomic_write(self.home / "generation", str(self._generation() + 1), durable=False)

    def fingerprint(self) -> str:
        """Changes whenever any file of the tree changes (writes or hand edits), or a setting
        its search ranks by (``settings.ranking_digest``)."""
        self.ensure_fresh()
        return f"{self._generation()}-{self._digest:016x}-{ranking_digest(self.settings)}"

    def _catalog_digest(self) -> int:
        """Digest of the files as the index last saw them; a marker that no file state has
        when the catalog cannot say (unreadable, or empty while a first build runs)."""
        try:
            d = self.catalog.digest()
        except (sqlite3.DatabaseError, ValueError):
            d = None
        return _MASK if d is None else d

    def _index_usable(self) -> bool:
        try:
            return (self.engine.exists() and self.catalog.digest() is not None
                    and self.catalog.get_meta("format") == self.index_format)
        except (sqlite3.DatabaseError, ValueError):  # ValueError: text or digest garbled by damage
            return False

    def ensure_fresh(self) -> bool:
        with self._fresh_mutex:
            return self._ensure_fresh()

    def _forked(self) -> None:
        """In a forked child (tree/base/forksafe.py): the watcher's threads were the parent's (a new one
        starts when due), and the parent's thread may have been syncing as it forked: the next
        search looks at the files again."""
        if self._watcher is not None:
            self._watcher.forked()
            self._watcher = None
        self._watch_failed = False
        self._checked_gen = -1

    def _ensure_fresh(self) -> bool:
        """Bring the index in step with hand edits; True if anything had to be reindexed.

        The first check of a process scans the stats of every file and compares them with the
        catalog. Later ones skip that scan when nothing outside this process touched the tree:
        with a watcher, when it saw no foreign change; without one, in a long-lived process, when
        no folder changed and the files whose turn it is did not (``_unchanged_since_scan``).
        Writes of other memgrove processes bump the generation, which always leads to a scan.
        """
        if self._nothing_changed() or (not self._watch_due() and self._unchanged_since_scan()):
            return False
        self._maybe_watch()
        started = time.monotonic()
        gen = self._generation()
        folders: dict[str, int] = {}
        current = scan(self.root, folders)
        digest = digest_of(current)
        try:
            fresh = self._index_usable() and digest == self.catalog.digest()
        except (sqlite3.DatabaseError, ValueError):
            fresh = False
        synced = False
        if not fresh:
            with self.lock.try_hold() as got:
                if got:
                    synced = self._try_sync()
                elif not self._index_usable():
                    with self.lock.hold():  # no usable index at all: wait for the writer
                        self._sync_locked(scan(self.root))
                    synced = True
                if synced:
                    gen = self._generation()   # read under the lock: only this sync's own bump
            if synced:
                digest = self.catalog.digest() or 0
            else:
                # A writer holds the lock and the index lags the files: answers now come from
                # the index as it is, so they are cached under what it holds, never under the
                # files' state (which would make a stale answer valid once the index caught up).
                digest = self._catalog_digest()
        # when a writer holds the lock, the index may lag the files: check again next time
        self._in_step = fresh or synced
        self._digest = digest
        self._checked_gen, self._folder_check = gen, FolderCheck(str(self.root), folders, started)
        return synced

    def _try_sync(self) -> bool:
        """Bring the index in step for a reader; on a full disk it answers from the index as it is."""
        try:
            self._sync_locked(scan(self.root))
            return True
        except (OSError, sqlite3.OperationalError) as exc:
            if not self._index_usable():
                raise
            self.notice(f"the index could not be brought up to date ({reason_of(exc) or exc}); "
                        "answers may lag the files")
            return False

    def _nothing_changed(self) -> bool:
        """True when the index matched the files at the last check, no other memgrove process
        wrote since, and the watcher saw no one else touch the tree (drains its events)."""
        if self.catalog.stale():   # deleted under this process: a scan finds it empty, and rebuilds it
            return False
        w = self._watcher
        if w is not None and not w.usable:   # overflowed, or the tree went away: scan from now on
            w.close()
            self._watcher, self._watch_failed = None, True
            return False
        return (w is not None and self._in_step and self._generation() == self._checked_gen
                and not w.changed(self._still_indexed))

    def _still_indexed(self, paths: list[str]) -> bool:
        """Whether these files (relative paths) have the (mtime, size) the catalog holds: a watcher's
        event about a file the index holds as it is (this process's own write) is no change."""
        current = {}
        for rel in paths:
            try:
                st = (self.root / rel).stat()
                current[rel] = (st.st_mtime_ns, st.st_size)
            except FileNotFoundError:
                pass
        try:
            return self.catalog.stats_of(paths) == current
        except (sqlite3.DatabaseError, ValueError):
            return False

    def _unchanged_since_scan(self) -> bool:
        """A long-lived process without a watcher: no other memgrove process wrote, no folder changed
        since the last full scan (a file added, removed or renamed changes its folder's mtime), and
        the files of the folders whose turn it is are as the catalog holds them (``FolderCheck``: a
        file edited in place is seen within ``scan_interval`` seconds; 0: every check scans). Costs
        a stat per folder and a share of the files, not a stat per file."""
        check, interval = self._folder_check, self.settings.scan_interval
        if not (self._watcher is None and check is not None and interval > 0 and self._in_step
                and self._long_lived() and self._generation() == self._checked_gen and check.unchanged()):
            return False
        try:
            return all(self._files_as_indexed(f) for f in check.due(time.monotonic(), interval))
        except (sqlite3.DatabaseError, ValueError):
            return False

    def _files_as_indexed(self, folder: str) -> bool:
        """The files directly in ``folder`` (relative) are those the catalog holds, as it holds them."""
        indexed = self.catalog.folder_files(folder)
        return files_in(str(self.root / folder)) == {name: row.stat for name, row in indexed.items()}

    def _long_lived(self) -> bool:
        """Still checking ``watch_after`` seconds after its first check: a long-lived process, for
        which watching (or checking folders instead of files) pays off. A one-shot CLI query, a
        short script, scans at every check."""
        return self._checks >= 1 and time.monotonic() - self._first_check >= self.settings.watch_after

    def _watch_due(self) -> bool:
        return self._watcher is None and self.settings.watch and not self._watch_failed and self._long_lived()

    def _maybe_watch(self) -> None:
        """Start the watcher when due; called just before a scan, so nothing slips between the
        scan and the watch."""
        if not self._checks:
            self._first_check = time.monotonic()
        if self._watch_due():
            w = TreeWatcher(str(self.root))
            if w.usable:
                self._watcher = w
            else:
                self._watch_failed = True
        self._checks += 1

    def _sync_before_write(self) -> None:
        """Under the lock: make the catalog match the files (hand edits) before planning. Writes
        always scan without a watcher: what they plan must see every hand edit."""
        if self._nothing_changed():
            return
        self._maybe_watch()
        started = time.monotonic()
        folders: dict[str, int] = {}
        temps: list[str] = []
        self._sync_locked(scan(self.root, folders, temps))
        remove_temp_files(temps)
        self._in_step, self._digest = True, self.catalog.digest() or 0
        self._checked_gen, self._folder_check = self._generation(), FolderCheck(str(self.root), folders, started)

    def _sync_locked(self, current: dict[str, tuple[int, int]]) -> None:
        try:
            self.catalog.for_writing()    # what the index lags is read from the catalog as it is
            if not self._index_usable():
                self._rebuild_locked()
                return
            if digest_of(current) == self.catalog.digest():
                return
            known = self.catalog.files()
        except (sqlite3.DatabaseError, ValueError) as exc:
            if isinstance(exc, sqlite3.DatabaseError) and not is_damage(exc):
                raise   # busy, or a disk that takes no writes: a rebuild would not help
            self._rebuild_locked()
            return
        changed = [p for p, s in current.items() if known.get(p) != s]
        removed = [p for p in known if p not in current]
        if len(changed) > max(2000, len(current) // 2):
            self._rebuild_locked()
            return
        self._index_paths(changed + removed)
        if changed or removed:
            # hand edits now in the index: warm processes that skip scans between
            # generations must see it, as they see a write
            self._bump_generation()

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Rebuild the index and catalog from the files; returns documents indexed."""
        with self._writing():
            return self._rebuild_locked(progress)

    def _rebuild_locked(self, progress: Callable[[int, int], None] | None = None) -> int:
        self.engine.close()
        # The old catalog and index stay readable until the new ones replace them (the engine
        # swaps folders, apply(replace_all) swaps rows), so other processes go on searching
        # instead of waiting out the build for the writer lock; only an unreadable one goes now.
        try:
            before = self.catalog.digest()
        except sqlite3.DatabaseError as exc:
            if not is_damage(exc):
                raise
            before = None
            self.catalog.reset()
        current = scan(self.root)
        upserts = []
        total = len(current)

        def docs() -> Iterable[IndexDoc]:
            for rel, stat in sorted(current.items()):
                doc, row = self._doc_for(rel, stat)
                upserts.append(row)
                if doc is not None:
                    yield doc

        self.engine.rebuild(docs(), total=total, progress=(lambda i: progress(i, total)) if progress else None)
        try:
            self.catalog.apply(upserts, [], digest=digest_of(current), replace_all=True, fmt=self.index_format)
        except sqlite3.DatabaseError as exc:  # "disk image is malformed": damage that reads fine, writes not
            if not is_damage(exc):
                raise
            self.catalog.reset(force=True)
            self.catalog.apply(upserts, [], digest=digest_of(current), replace_all=True, fmt=self.index_format)
        self.catalog.checkpoint()   # the largest transaction there is: its WAL is truncated at once
        if before != digest_of(current):
            self._bump_generation()  # hand edits reached the index (see _sync_locked)
        return sum(1 for u in upserts if u[1] != "invalid")

    def entry_count(self) -> int:
        """Valid entries the index holds (no context files); cached until the tree changes."""
        key = (self._generation(), self._digest)
        if key != self._entry_count[0]:
            self._entry_count = (key, self.catalog.count("entry"))
        return self._entry_count[1]

    def count(self) -> int:
        """Documents in the index (entries and context files)."""
        self.ensure_fresh()
        return self.engine.count()


    def _engine_search(self, query: str, limit: int, expand: str = "none") -> list[tuple[str, float]]:
        try:
            return self.engine.search(query, boosts=self.settings.boosts(), limit=limit, expand=expand)
        except IndexBroken:
            with self.lock.hold():
                self._rebuild_locked()
            return self.engine.search(query, boosts=self.settings.boosts(), limit=limit, expand=expand)

