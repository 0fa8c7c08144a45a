"""``ContextTree``: the knowledge layer's one object.

It owns the layout of ``.memgrove/`` and ties the pieces together: the five
operations (planned in ``operations``, applied here under the writer lock with
a write-ahead journal), context files, signals, and the full-text index,
which is kept in step with the files — incrementally by every write, and by a
scan before every search so that hand edits are picked up.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from . import contexts, dates, entry as entry_mod, questions
from .catalog import Catalog, Stat, Upsert, digest_of, item_hash, scan
from .engine import IndexBroken, IndexDoc
from .entry import Entry
from .errors import EntryNotFound, InvalidEntry, InvalidPath, MemgroveError
from .home import HOME_NAME, locate_home  # noqa: F401 - locate_home: its home before home.py
from .fsio import TEMP_PREFIX, as_not_writable, atomic_write, disk_errors_as_not_writable
from .journal import Journal, JournalRecord, utc_now_iso
from .lifecycle import PROFILES, rank_score
from .operations import OPS, OpResult, Overlay, Planned, plan_batch
from .paths import CONTEXT_FILE, existing_literal, folder_of, is_entry_file, natural_key, normalize_any, normalize_entry_path, normalize_folder, parent_folders, resolve_inside
from .search import (Hit, coverage, excerpt, gap_filter, normalize, with_factor, with_folder_coverage,
                     with_lift, with_neighbourhood_coverage)
from .settings import TreeSettings, load_settings
from .undo import find_with_later, plan_undo
from .signals import Signals
from .watch import TreeWatcher
from .engines import open_engine
from .writer_lock import WriterLock
from .searchable import searchable


_MASK = (1 << 64) - 1
# Bump when what is indexed changes (fields, analyzer, document text): older indexes are rebuilt.
# The catalog records it after the engine's name ("whoosh-11"), so switching engines rebuilds once.
INDEX_FORMAT = "11"


class ContextTree:
    def __init__(self, home: Path, settings: TreeSettings | None = None,
                 clock: Callable[[], datetime] | None = None):
        self.home = home
        self.root = home / "tree"
        self.settings = settings or load_settings(home)
        self.lock = WriterLock(home / "write.lock", self.settings.lock_timeout)
        self.journal = Journal(home / "journal", durable=self.settings.durable)
        self.signals = Signals(home / "signals.db")
        self.catalog = Catalog(home / "index" / "catalog.db")
        self.engine = open_engine(home, self.settings)
        self.index_format = f"{self.engine.name}-{INDEX_FORMAT}"
        self._clock = clock or (lambda: datetime.now(timezone.utc))
        self._checked_at = 0.0
        self._checked_gen = -1
        self._checks = 0
        self._first_check = 0.0
        self._entry_count: tuple[tuple, int] = ((None, None), 0)
        self._in_step = False          # index matched the files at the last check
        self._digest = 0               # digest of what the index holds at the last check
        self._watcher: TreeWatcher | None = None
        self._watch_failed = False
        # threads of one process (the query graph's parallel branches) must not search while
        # another thread of it syncs the index: the one that drained the watcher syncs, the rest wait
        self._fresh_mutex = threading.Lock()
        self.notices: list[str] = []  # what opening had to repair (stale lock, pending batch)
        self.signals.notices = self.notices  # a damaged signals.db is reset with a notice

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, *, create: bool = False,
             clock: Callable[[], datetime] | None = None, **settings: Any) -> "ContextTree":
        home = locate_home(path, create=create)
        tree = cls(home, load_settings(home, **settings), clock=clock)
        tree.recover()
        return tree

    def close(self) -> None:
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
        self.engine.close()
        self.catalog.close()
        self.signals.close()

    # -- reading entries ----------------------------------------------------
    def _abs(self, rel: str) -> Path:
        return resolve_inside(self.root, rel)

    def _read_disk(self, rel: str) -> str | None:
        p = self._abs(rel)
        try:
            if p.is_symlink():
                resolve_inside(self.root, rel)
            return p.read_text(encoding="utf-8")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            return None
        except UnicodeDecodeError as exc:
            raise InvalidEntry(f"{rel}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None

    def read_text(self, path: str) -> str:
        # a hand-placed file is read by the exact path search gave for it (Team-Notes/On Call/Rota 2024.md)
        rel = existing_literal(self.root, path) or (normalize_entry_path(path) if not path.endswith(CONTEXT_FILE)
                                                    else normalize_folder(folder_of(path)) + "/" + CONTEXT_FILE)
        text = self._read_disk(rel)
        if text is None:
            raise EntryNotFound(f"no entry at {rel}")
        return text

    def read(self, path: str) -> Entry:
        return entry_mod.parse(self.read_text(path), where=path)

    def exists(self, path: str) -> bool:
        try:
            return self._read_disk(existing_literal(self.root, path) or normalize_entry_path(path)) is not None
        except (InvalidPath, InvalidEntry):
            return False

    def entry_paths(self) -> list[str]:
        return sorted(p for p in scan(self.root) if is_entry_file(p))

    def entries_under(self, folder: str) -> list[str]:
        base = self._abs(folder)
        if not base.is_dir():
            return []
        return sorted(folder + "/" + p for p in scan(base) if is_entry_file(folder + "/" + p))

    def links(self, path: str) -> tuple[list[str], list[str]]:
        """``(forward links, backlinks)`` of an entry."""
        rel = existing_literal(self.root, path) or normalize_entry_path(path)
        self.ensure_fresh()
        return self.catalog.forward_links(rel), self.catalog.backlinks(rel)

    def list_folder(self, folder: str = "", *, counts: bool = True) -> dict[str, Any]:
        """A folder's title, overview and children (the agent's ``list_tree``).

        ``counts``: each subfolder's number of entries (a scan of the subtree; -1 when off).
        """
        rel = (existing_literal(self.root, folder, folder=True) or normalize_folder(folder)) if folder.strip("/ ") else ""
        base = self._abs(rel) if rel else self.root
        if not base.is_dir():
            raise EntryNotFound(f"no folder {rel!r} in the tree")
        ctx = contexts.read_context(base / CONTEXT_FILE)
        folders, entries = [], []
        for child in sorted(base.iterdir(), key=lambda p: natural_key(p.name)):
            if child.name.startswith((".", "_")) or child.is_symlink():
                continue
            crel = f"{rel}/{child.name}" if rel else child.name
            if child.is_dir():
                n = sum(1 for p in scan(child) if p.rsplit("/", 1)[-1] != CONTEXT_FILE) if counts else -1
                folders.append({"path": crel, "title": contexts.folder_title(child), "entries": n})
            elif is_entry_file(crel):
                try:
                    e = entry_mod.parse(child.read_text(encoding="utf-8"), where=crel)
                    entries.append({"path": crel, "title": e.title, "summary": e.summary})
                except (OSError, UnicodeDecodeError, InvalidEntry) as exc:
                    entries.append({"path": crel, "title": "", "summary": "", "error": str(exc)})
        return {"path": rel, "title": ctx.title if ctx else (contexts.humanize(base.name) if rel else "Context Tree"),
                "overview": ctx.sections.get(contexts.OVERVIEW, "") if ctx else "", "folders": folders,
                "entries": entries}

    # -- writing ------------------------------------------------------------
    def curate(self, ops: list[dict[str, Any]], *, actor: str = "user",
               allowed: tuple[str, ...] = OPS) -> list[OpResult]:
        """Validate and apply a batch of operations; all or nothing."""
        with self._writing():
            self._sync_before_write()
            overlay = Overlay(self._read_disk, self.entries_under, self.catalog.backlinks)
            planned = plan_batch(ops, overlay, self._clock(), actor=actor, allowed=allowed)
            self._apply(planned)
        return [p.result for p in planned]

    def undo(self, op_id: str, *, force: bool = False, actor: str = "user") -> OpResult:
        """Restore the before-images of one operation (refused, saying why, if the files changed
        since; ``force`` undoes anyway and journals what it overwrites)."""
        with self._writing():
            rec, later = find_with_later(self.journal.records(), op_id)
            planned = plan_undo(rec, later, self._read_disk, self._clock(), force=force, actor=actor)
            if planned.result.status != "unchanged":
                self._apply([planned])
        return planned.result

    def history(self, limit: int | None = 50, path: str | None = None) -> list[JournalRecord]:
        """Journal records, newest first; ``path`` keeps those touching that entry or folder."""
        rel = normalize_any(path) if path else None
        out = []
        for r in self.journal.records():
            if rel is None or any(c.path == rel or c.path.startswith(rel + "/") for c in r.changes()) or r.path == rel:
                out.append(r)
        out.reverse()
        return out[:limit] if limit else out

    def _write_file(self, rel: str, text: str | None) -> None:
        target = self._abs(rel)
        if self._watcher is not None:
            self._watcher.expect([str(target)])
        if text is None:
            try:
                os.unlink(target)
            except FileNotFoundError:
                pass
        else:
            resolve_inside(self.root, str(Path(rel).parent))
            atomic_write(target, text, durable=self.settings.durable)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the writer lock, with any batch a dead or failed writer left settled first."""
        with self.lock.hold():
            self._recover_locked()
            yield

    def _apply(self, planned: list[Planned]) -> None:
        """Write a batch: ahead to ``pending.json``, then the files, then the journal (the
        commit point). A failure before the commit point undoes what was written and raises
        (``NotWritable`` for a full or read-only disk): the caller sees a failure, and the
        batch never appears later. After it, what is derived (signals, context files, the
        index) catches up later if it cannot now."""
        records = [p.record for p in planned if p.result.status != "unchanged"]
        with disk_errors_as_not_writable():
            self.journal.write_pending(records)
        journal_size = self.journal.size()
        touched: list[str] = []
        try:
            for r in records:
                for ch in r.changes():
                    touched.append(ch.path)
                    self._write_file(ch.path, ch.after)
            self.journal.append(records)
        except BaseException as exc:
            self._roll_back(records, journal_size)
            translated = as_not_writable(exc)
            if translated is exc:
                raise
            raise translated from exc
        overrides: dict[str, str] = {}
        try:
            for p in planned:
                overrides.update(p.contexts)
                if p.merged:
                    self.signals.merge(*p.merged)
                self.signals.forget([x for x in p.removed if not (p.merged and x == p.merged[1])])
                if p.updated:
                    self.signals.record_update(p.updated)
        except (OSError, sqlite3.Error) as exc:
            self.notices.append(f"ranking signals not updated ({exc}); they are derived from use")
        try:
            self._after_write(touched, overrides)
        except OSError as exc:
            # the files and journal hold the batch; context files and the index are derived and
            # are brought in step by the next write or search (doctor --fix does it at once)
            self._in_step = False
            self.notices.append(f"context files or index not brought up to date ({exc.strerror or exc}); "
                                "run `memgrove doctor --fix` once there is space")
        self.journal.clear_pending()

    def _roll_back(self, records: list[JournalRecord], journal_size: int) -> None:
        """Undo a batch that failed before its commit point; if even that fails (the disk is
        still full), mark it so the next writer rolls it back instead of forward."""
        try:
            self._restore_before(records)
            self.journal.truncate(journal_size)
            self.journal.clear_pending()
        except Exception:  # noqa: BLE001 - the original failure is the one to report
            try:
                self.journal.mark_failed()
            except OSError:
                pass  # nothing more can be done here; pending.json is rolled forward then

    def _restore_before(self, records: list[JournalRecord]) -> None:
        for r in reversed(records):
            for ch in reversed(r.changes()):
                if self._read_disk(ch.path) != ch.before:
                    self._write_file(ch.path, ch.before)

    def _after_write(self, touched: list[str], overrides: dict[str, str]) -> None:
        """Regenerate context files of touched folders, update the index, bump the generation."""
        folders = set(overrides)
        for rel in touched:
            folders.update(parent_folders(rel))
        if self._watcher is not None:
            self._watcher.expect(str(self.root / f / CONTEXT_FILE) for f in folders)
        changed = list(dict.fromkeys(touched)) + self._refresh_contexts(folders, overrides)
        self._index_paths(changed)
        if changed:
            self._bump_generation()
        self._digest = self.catalog.digest() or 0

    def _refresh_contexts(self, folders: Iterable[str], overrides: dict[str, str]) -> list[str]:
        """Rewrite (or remove) context.md of each folder, deepest first; returns files changed."""
        now = utc_now_iso(self._clock())
        changed = []
        for folder in sorted(set(folders), key=lambda f: -f.count("/")):
            fabs = self.root / folder
            ctx_rel = f"{folder}/{CONTEXT_FILE}"
            text = contexts.render(fabs, folder, overrides.get(folder), now)
            if text is None:
                self._write_file(ctx_rel, None)
                try:
                    fabs.rmdir()
                except OSError:
                    pass
            elif self._read_disk(ctx_rel) != text:
                self._write_file(ctx_rel, text)
            else:
                continue
            changed.append(ctx_rel)
        return changed

    def repair_contexts(self, folders: Iterable[str]) -> None:
        with self._writing():
            self._index_paths(self._refresh_contexts(folders, {}))
            self._bump_generation()

    # -- the index ----------------------------------------------------------
    def _doc_for(self, rel: str, stat: Stat) -> tuple[IndexDoc | None, Upsert]:
        """Index document of a file and what the catalog records of it; ``(None, invalid row)``
        if it cannot be parsed (the reason goes nowhere: ``doctor`` reports it)."""
        try:
            text = (self.root / rel).read_text(encoding="utf-8")
            e = entry_mod.parse(text, where=rel)
        except (OSError, UnicodeDecodeError, InvalidEntry):
            return None, Upsert(rel, "invalid", stat, "", [], "")
        kind = "context" if rel.endswith("/" + CONTEXT_FILE) else "entry"
        # A context file's listing repeats its children's titles and summaries;
        # indexing it would make every folder compete with its own entries.
        body = e.sections.get(contexts.OVERVIEW, "") if kind == "context" else e.body
        content = (e.summary + "\n" + searchable(body)[: self.settings.content_cap]).strip()
        words = rel[:-3].replace("/", " ").replace("_", " ")
        links = [l for l in e.links() if l != rel]
        doc = IndexDoc(path=rel, kind=kind, title=e.title, content=content, path_text=words,
                       tags=" ".join(e.tags), keywords=" ".join(e.keywords))
        # the day it is about: when its sources happened, else when it was written
        day = next((d for src in e.sources if isinstance(src, dict) and (d := dates.day_of(str(src.get("at") or "")))),
                   None) or dates.day_of(e.created_at)
        return doc, Upsert(rel, kind, stat, e.title, links, doc.digest(), day, dates.mentions_time(content),
                           questions.mostly_asks(body))

    def _index_paths(self, paths: list[str]) -> None:
        """Bring the index in step for these paths; updates the digest incrementally."""
        paths = [p for p in dict.fromkeys(paths) if p.endswith(".md")]
        if not paths:
            return
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
        try:
            self.engine.write(replace=docs, delete=deletes)
        except IndexBroken:
            self._rebuild_locked()
            return
        self.catalog.apply(upserts, [d for d in deletes if d not in {u[0] for u in upserts}], digest=digest & _MASK)

    def _generation(self) -> int:
        try:
            return int((self.home / "generation").read_text() or 0)
        except (FileNotFoundError, ValueError):
            return 0

    def _bump_generation(self) -> None:
        atomic_write(self.home / "generation", str(self._generation() + 1), durable=False)

    def fingerprint(self) -> str:
        """Changes whenever any file of the tree changes (writes or hand edits)."""
        self.ensure_fresh()
        return f"{self._generation()}-{self._digest:016x}"

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

    def _ensure_fresh(self) -> bool:
        """Bring the index in step with hand edits; True if anything had to be reindexed.

        A warm process with a working watcher skips the scan when nothing
        outside this process touched the tree; otherwise the file stats are
        scanned and compared with the catalog (which is what a fresh process
        always does).
        """
        w = self._watcher
        if self._nothing_changed():
            return False
        if (w is None and self.settings.scan_interval > 0 and self._in_step
              and self._generation() == self._checked_gen
              and time.monotonic() - self._checked_at < self.settings.scan_interval):
            return False
        self._maybe_watch()
        gen = self._generation()
        current = scan(self.root)
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
                digest = self.catalog.digest() or 0
            else:
                # A writer holds the lock and the index lags the files: answers now come from
                # the index as it is, so they are cached under what it holds, never under the
                # files' state (which would make a stale answer valid once the index caught up).
                digest = self._catalog_digest()
        # when a writer holds the lock, the index may lag the files: check again next time
        self._in_step = fresh or synced
        self._digest = digest
        self._checked_at, self._checked_gen = time.monotonic(), gen
        return synced

    def _try_sync(self) -> bool:
        """Bring the index in step for a reader; on a full disk it answers from the index as it is."""
        try:
            self._sync_locked(scan(self.root))
            return True
        except (OSError, sqlite3.OperationalError) as exc:
            if not self._index_usable():
                raise
            self.notices.append(f"the index could not be brought up to date ({exc}); answers may lag the files")
            return False

    def _nothing_changed(self) -> bool:
        """True when the index matched the files at the last check and the watcher
        has seen no one else touch the tree since (drains its events)."""
        return self._in_step and self._watcher is not None and not self._watcher.changed()

    def _maybe_watch(self) -> None:
        """A process still checking a second after its first check is long-lived:
        watching pays off (a one-shot CLI query would only pay to set it up).

        Called just before a scan, so nothing slips between the scan and the watch.
        """
        now = time.monotonic()
        if not self._checks:
            self._first_check = now
        if (self._watcher is None and self._checks >= 1 and now - self._first_check >= self.settings.watch_after
                and self.settings.watch and not self._watch_failed):
            w = TreeWatcher(str(self.root))
            if w.usable:
                self._watcher = w
            else:
                self._watch_failed = True
        self._checks += 1

    def _sync_before_write(self) -> None:
        """Under the lock: make the catalog match the files (hand edits) before planning."""
        if self._nothing_changed():
            return
        self._maybe_watch()
        self._sync_locked(scan(self.root))
        self._in_step, self._digest = True, self.catalog.digest() or 0

    def _sync_locked(self, current: dict[str, tuple[int, int]]) -> None:
        try:
            if not self._index_usable():
                self._rebuild_locked()
                return
            if digest_of(current) == self.catalog.digest():
                return
            known = self.catalog.files()
        except (sqlite3.DatabaseError, ValueError):
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
        except sqlite3.DatabaseError:
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
        except sqlite3.DatabaseError:  # "disk image is malformed": damage that reads fine, writes not
            self.catalog.reset(force=True)
            self.catalog.apply(upserts, [], digest=digest_of(current), replace_all=True, fmt=self.index_format)
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

    # -- crash recovery -----------------------------------------------------
    def recover(self) -> None:
        """Roll forward a batch a dead writer left in ``pending.json``; remove what a killed
        reindex left beside the index (only with the lock: a live rebuild writes there)."""
        leftovers = self.engine.leftovers()
        if not self.journal.pending_file.exists() and not leftovers:
            return
        with self.lock.try_hold() as got:
            if got:
                self._recover_locked()
                if leftovers:
                    self.engine.remove_leftovers()

    def _recover_locked(self) -> None:
        if self.lock.last_stale_pid:
            self.notices.append(f"recovered the writer lock of dead process {self.lock.last_stale_pid}")
            self.lock.last_stale_pid = None
        records = self.journal.read_pending()
        if self.journal.set_aside:
            self.notices.append(self.journal.set_aside)
        if records is None:
            return
        if self.journal.pending_failed():
            # its writer reported it failed: it must not appear now
            with disk_errors_as_not_writable():
                self._restore_before(records)
                self.journal.drop_trailing({r.id for r in records})
                self._after_write([c.path for r in records for c in r.changes()], {})
                self.journal.clear_pending()
            self.notices.append(f"rolled back a failed batch of {len(records)} operation(s)")
            return
        touched = []
        with disk_errors_as_not_writable():
            for r in records:
                for ch in r.changes():
                    self._write_file(ch.path, ch.after)
                    touched.append(ch.path)
            self.journal.append(records, dedupe=True)
            self._after_write(touched, {})
            self.journal.clear_pending()
        self.notices.append(f"completed an interrupted batch of {len(records)} operation(s)")

    # -- search -------------------------------------------------------------
    def search(self, query: str, limit: int = 10, *, profile: str | None = None,
               record_access: bool = False, check: bool = True) -> list[Hit]:
        """BM25F search, normalized, gap-filtered and ranked by the profile.

        ``check=False`` skips the freshness check, for a caller that has just
        made it (the query pipeline takes the fingerprint first).
        ``record_access``: count the hits as delivered (+3 importance each, in a
        profile with an access bonus); callers that know which entries an answer
        used call ``record_delivery`` with those instead.
        """
        if not isinstance(query, str) or not query.strip():
            raise MemgroveError("the query is empty")
        if limit < 1:
            raise MemgroveError("limit must be at least 1")
        prof = PROFILES[profile or self.settings.profile]
        if check:
            self.ensure_fresh()
        raw = self._engine_search(query, limit * 3 + 10)
        if not raw:
            raw = self._engine_search(query, limit * 3 + 10, expand="fuzzy") or \
                self._engine_search(query, limit * 3 + 10, expand="prefix")
        if not self.settings.include_context_hits:
            raw = [r for r in raw if not r[0].endswith("/" + CONTEXT_FILE)]
        own_score = {p: sc for p, sc, _ in raw}   # each entry's own match, for relevance and routing
        terms = self.engine.terms(query)
        idf = self.engine.idf(terms) if raw else {}
        # the gap filter judges each entry's own match; the lifts below only reorder what passed
        kept = {p for p, _ in gap_filter([(p, normalize(s)) for p, s, _ in raw], self.settings.gap_ratio)}
        raw = [r for r in self._where_and_when(query, raw, idf) if r[0] in kept]
        scored = [(p, normalize(s)) for p, s, _ in raw]
        if self.settings.link_weight > 0 and scored:
            # hits that passed the gap filter lend to their links, which need not pass it themselves
            raw = self._with_linked(raw, limit)
            scored = [(p, normalize(sc)) for p, sc, _ in raw]
        unlifted = {p: sc for p, sc, _ in raw}   # before folder coverage: what the signals weigh
        lift_weight = 0.0
        if self.settings.folder_weight > 0 and len(scored) > 1:
            lift_weight = self.settings.folder_weight
            raw = with_folder_coverage(raw, idf, lift_weight)
            scored = [(p, normalize(sc)) for p, sc, _ in raw]
        raw_by_path = {p: (s, m) for p, s, m in raw}
        if scored and (prof.w_importance or prof.w_recency or any(v != 1.0 for v in prof.boosts.values())):
            sig = self.signals.get_many([p for p, _ in scored])
            now = self._clock()
            top = max(unlifted[p] for p, _ in scored) or 1.0
            ranked = []
            for p, _s in scored:
                # signals scale the entry's own relevance; its folder's lift is added after, so the
                # ±10% of importance reorders near-ties of relevance, not of relevance plus lift
                # (measured on LoCoMo: R@200w 65.7 -> 66.1); divided back to the 0..1 scale
                days = self._days_since_update(p, now)
                lift = (raw_by_path[p][0] - unlifted[p]) / top
                own = rank_score(unlifted[p] / top, sig[p].importance, days, sig[p].maturity, prof)
                ranked.append((p, (own + lift) / (1.0 + lift_weight)))
            scored = sorted(ranked, key=lambda x: -x[1])
        hits: list[Hit] = []
        for p, s in scored:
            try:
                text = self._read_disk(p)
            except (InvalidPath, InvalidEntry):   # reached by a link: behind a symlink out of the tree, or not text
                continue
            if text is None:
                continue
            try:
                e = entry_mod.parse(text, where=p)
            except InvalidEntry:
                continue
            kind = "context" if p.endswith("/" + CONTEXT_FILE) else "entry"
            text_for_excerpt = e.sections.get("Narrative") or e.body
            prose = "\n".join(ln for ln in text_for_excerpt.split("\n") if not ln.startswith("#"))
            hits.append(Hit(path=p, title=e.title, score=s, excerpt=excerpt(prose, terms, self.settings.excerpt_chars),
                            sources=e.sources, kind=kind, bm25=raw_by_path[p][0], summary=e.summary,
                            relevance=normalize(own_score.get(p, 0.0)), matched=tuple(sorted(raw_by_path[p][1])),
                            coverage=coverage(raw_by_path[p][1], idf)))
            if len(hits) >= limit:
                break
        if record_access:
            self.record_delivery([h.path for h in hits if h.kind == "entry"], profile=profile)
        return hits

    def _where_and_when(self, query: str, raw: list[tuple[str, float, frozenset]],
                        idf: dict[str, float]) -> list[tuple[str, float, frozenset]]:
        """The candidates re-scored by what sits near them, by time and by what they say:
        the coverage of the query by each one's neighbourhood (``near_weight``), closeness
        to a date the question names (``date_weight``), for a question asking when,
        whether the entry's text says when (``when_weight``) (each lift a share of the top
        score), and an entry that mostly asks keeps ``1 - ask_penalty`` of its score."""
        st = self.settings
        if len(raw) < 2:
            return raw
        if st.near_weight > 0 and st.near_hops > 0:
            raw = with_neighbourhood_coverage(raw, idf, st.near_weight, self._neighbourhoods([p for p, _, _ in raw]))
        asked = dates.dates_asked(query) if st.date_weight > 0 else []
        when = st.when_weight > 0 and dates.asks_when(query)
        if not (asked or when or st.ask_penalty > 0):
            return raw
        traits = self.catalog.traits_of([p for p, _, _ in raw])
        if asked or when:
            lift = {}
            for p, t in traits.items():
                lift[p] = st.date_weight * dates.date_closeness(asked, t.day) + (st.when_weight if when and t.timely else 0.0)
            raw = with_lift(raw, lift)
        if st.ask_penalty > 0:
            # the question's words are in the question, its answer in the reply (which the
            # question's links lend to): on LoCoMo, R@500w 79.5 -> 79.7 with 0.1
            raw = with_factor(raw, {p: 1.0 - st.ask_penalty for p, t in traits.items() if t.asks})
        return raw

    def _neighbourhoods(self, paths: list[str]) -> dict[str, set[str]]:
        """For each path, the entries within ``near_hops`` links of it (either direction),
        found one hop at a time for all paths together."""
        reach: dict[str, set[str]] = {p: set() for p in paths}
        frontier: dict[str, set[str]] = {p: {p} for p in paths}
        known: dict[str, list[str]] = {}
        for _ in range(self.settings.near_hops):
            todo = sorted({q for f in frontier.values() for q in f} - known.keys())
            known.update(self.catalog.neighbours(todo) if todo else {})
            nxt: dict[str, set[str]] = {}
            for p, f in frontier.items():
                step = {n for q in f for n in known.get(q, ())} - reach[p] - {p}
                if step:
                    reach[p] |= step
                    nxt[p] = step
            if not nxt:
                break
            frontier = nxt
        return reach

    def record_delivery(self, paths: list[str], *, profile: str | None = None) -> None:
        """Entries given to a user or an agent as evidence gain importance (product profile)."""
        if paths and PROFILES[profile or self.settings.profile].access_bonus:
            self.signals.record_access([p for p in dict.fromkeys(paths) if not p.endswith("/" + CONTEXT_FILE)])

    def _with_linked(self, raw: list[tuple[str, float, frozenset]], limit: int) -> list[tuple[str, float, frozenset]]:
        """Each of the best hits lends ``link_weight`` × its score to the entries it links to or
        from (one hop of ``related``): the reply next to a matching question, the entry a
        matching one points to. An entry keeps its own matched terms; one found only
        through a link has none (coverage 0), so it never decides a tier on its own."""
        w = self.settings.link_weight
        own = {p: (s, m) for p, s, m in raw}
        lent: dict[str, float] = {}
        top = [p for p, _, _ in raw[:limit] if not p.endswith("/" + CONTEXT_FILE)]
        for p, linked in self.catalog.neighbours(top).items():
            for q in linked:
                lent[q] = max(lent.get(q, 0.0), w * own[p][0])
        scored = {p: own.get(p, (0.0, frozenset()))[0] + lent.get(p, 0.0) for p in own.keys() | lent.keys()}
        order = sorted(scored, key=lambda p: (-scored[p], p))
        return [(p, scored[p], own.get(p, (0.0, frozenset()))[1]) for p in order]

    def _engine_search(self, query: str, limit: int, expand: str = "none") -> list[tuple[str, float]]:
        try:
            return self.engine.search(query, boosts=self.settings.boosts(), limit=limit, expand=expand)
        except IndexBroken:
            with self.lock.hold():
                self._rebuild_locked()
            return self.engine.search(query, boosts=self.settings.boosts(), limit=limit, expand=expand)

    def _days_since_update(self, rel: str, now: datetime) -> float:
        try:
            mtime = (self.root / rel).stat().st_mtime
        except FileNotFoundError:
            return 0.0
        return max(0.0, (now.timestamp() - mtime) / 86400.0)

    # -- housekeeping -------------------------------------------------------
    def stray_temp_files(self) -> list[Path]:
        return [p for p in self.root.rglob(TEMP_PREFIX + "*") if p.is_file()]

    def remove_stray_temp_files(self) -> int:
        n = 0
        for p in self.stray_temp_files():
            p.unlink(missing_ok=True)
            n += 1
        return n
