"""The write path of ``ContextTree``: a batch of planned operations reaches the disk.

A batch is written ahead to ``pending.json``, then the files, then the journal (the commit
point). Folder context files and the index are brought in step after it. A failure before the
commit point undoes the batch; a writer that died leaves ``pending.json``, which the next
writer (or opening the tree) rolls forward, or back when its writer had reported a failure.
``WritePath`` is one of the parts ``ContextTree`` is made of (see store.py).
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from ..index import contexts
from ..base import forksafe
from .cancel import checkpoint
from .archive import archive_root, is_archived
from ..index.catalog import Listed
from ..index.engine import IndexBroken
from ..base.errors import MemgroveError, NotWritable, ReadOnlyReplica
from ..base.fsio import Pending, as_not_writable, atomic_write, disk_errors_as_not_writable, reason_of
from .journal import JournalRecord, utc_now_iso
from .operations import Planned
from ..entries.paths import CONTEXT_FILE, parent_folders, resolve_inside

# what may stop the derived updates after a commit (a full disk, a broken index, a symlink in
# the way): the batch stands and they catch up later
_DERIVED_FAILURES = (OSError, sqlite3.Error, IndexBroken, MemgroveError)

class WritePath:
    """Writing batches, context files and crash recovery (state lives on ``ContextTree``)."""
    def _write_file(self, rel: str, text: str | None, later: Pending | None = None, *,
                    sync_file: bool = True) -> None:
        """Write or remove one file of the tree. With ``later`` (and ``durable``), what is left to
        make it durable is noted there for one ``sync_all`` pass of the batch: the folder's
        fsync, and with ``sync_file=False`` the file's too (see docs/reliability.md)."""
        target = self._abs(rel)
        if self._watcher is not None:
            self._watcher.expect([str(target)])
        durable = self.settings.durable
        if text is None:
            try:
                os.unlink(target)
            except FileNotFoundError:
                return
            if durable and later is not None:
                later.removed(target)
            if is_archived(rel):
                self._prune_archive(target.parent)
        else:
            base, inside = self._base(rel)
            resolve_inside(base, str(Path(inside).parent))
            if later is None:
                atomic_write(target, text, durable=durable)
                return
            atomic_write(target, text, durable=durable and sync_file, sync_folder=False)
            if durable:
                if sync_file:
                    later.folders[target.parent] = None
                else:
                    later.wrote(target)

    def _prune_archive(self, folder: Path) -> None:
        """Remove the archive's folders a RESTORE left empty (the archive has no context files)."""
        top = archive_root(self.home)
        while folder != top and top in folder.parents:
            try:
                folder.rmdir()
            except OSError:
                return
            folder = folder.parent

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the writer lock, with any batch a dead or failed writer left settled first. A full
        or read-only disk before the commit point (settling, the index's catch-up with hand edits,
        the batch itself) is ``NotWritable``: nothing of this write was written."""
        # a fork waits for the write (tree/base/forksafe.py), once it holds the lock (not while it waits)
        with self.lock.hold(), forksafe.no_fork(), disk_errors_as_not_writable():
            self._recover_locked()
            yield

    def _apply(self, planned: list[Planned]) -> None:
        """Write a batch: ahead to ``pending.json``, then the files, then the journal (the
        commit point). A failure before the commit point undoes what was written and raises
        (``NotWritable`` for a full or read-only disk, ``Cancelled`` when its caller gave up on
        it, tree/writes/cancel.py): the caller sees a failure, and the batch never appears later. After it, what is derived (signals, context files, the
        index) catches up later if it cannot now."""
        if self.replica_of is not None:
            from ..base.credentials import redact

            raise ReadOnlyReplica(f"this memory is a read replica of {redact(self.replica_of)}: its writes go to the "
                                  "primary -- through the replica's server with the primary's token in MEMGROVE_TOKEN, "
                                  "or to the primary itself (MEMGROVE_URL) -- or promote it (`memgrove serve --promote`)")
        records = [p.record for p in planned if p.result.status != "unchanged"]
        checkpoint()
        with disk_errors_as_not_writable():
            self.journal.write_pending(records)
        journal_size = self.journal.size()
        touched: list[str] = []
        later = Pending()
        try:
            for r in records:
                checkpoint()  # Cancelled here restores the before-images below, as any failure does
                for ch in r.changes():
                    touched.append(ch.path)
                    # not synced one by one: pending.json holds every after-image, so a crash
                    # before the journal append rolls the batch forward over whatever is on disk
                    self._write_file(ch.path, ch.after, later, sync_file=False)
            later.sync_all()  # before the commit point: the journal never names a file not on disk
            self.journal.append(records)
        except BaseException as exc:
            self._roll_back(records, journal_size)
            translated = as_not_writable(exc)
            if translated is exc:
                raise
            raise translated from exc
        self._settle(planned, touched)
        if self.replication is not None and records:
            # durable now: its copy in git is made by replication's own thread (tree/replication/replicator.py)
            self.replication.batch_done(records, touched, self._generation())

    def _settle(self, planned: list[Planned], touched: list[str]) -> None:
        """After the commit point: the batch stands whatever fails here. Signals, context files
        and the index are derived; what cannot be updated now (a full disk) is a notice, and
        the next write or search catches up."""
        overrides: dict[str, str] = {}
        for p in planned:
            overrides.update(p.contexts)
        try:
            for p in planned:
                if p.merged:
                    self.signals.merge(*p.merged)
                self.signals.forget([x for x in p.removed if not (p.merged and x == p.merged[1])])
                if p.updated:
                    self.signals.record_update(p.updated)
        except (OSError, sqlite3.Error) as exc:
            self.notice(f"ranking signals not updated ({reason_of(exc) or exc}); they are derived from use")
        self._derive(touched, overrides)

    def _derive(self, touched: list[str], overrides: dict[str, str]) -> bool:
        """The derived part of a committed batch (see ``_settle``). ``pending.json`` is removed
        once it is done: until then the next writer (or a reader opening the tree) finishes
        it, without writing the batch's files again (``_recover_locked``). False if it failed."""
        try:
            self._after_write(touched, overrides)
        except _DERIVED_FAILURES as exc:
            # the files and journal hold the batch; the index is brought in step by the next
            # search, context files by the next write (doctor --fix does both at once)
            self._in_step = False
            lost = "; a folder overview it gave may not be saved" if overrides else ""
            self.notice(f"the write is saved, but context files or the index lag it ({reason_of(exc) or exc}){lost}; "
                        "they catch up on the next write or search (or `memgrove doctor --fix`)")
            return False
        finally:
            self.signals.checkpoint()   # the catalog's is done by each index update
        try:
            self.journal.clear_pending()
        except OSError:
            pass   # the next writer finds the records journaled and finishes only the derived work
        return True

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
        touched = [rel for rel in touched if not is_archived(rel)]   # the archive is neither indexed nor listed
        for rel in touched:
            folders.update(parent_folders(rel))
        if self._watcher is not None:
            self._watcher.expect(str(self.root / f / CONTEXT_FILE) for f in folders)
        changed = list(dict.fromkeys(touched)) + self._refresh_contexts(folders, overrides)
        self._index_paths(changed)
        if changed:
            self._bump_generation()
            # this write is no news to this process (the lock is held: no other writer bumped it)
            self._checked_gen = self._generation()
        self._digest = self.catalog.digest() or 0

    def _refresh_contexts(self, folders: Iterable[str], overrides: dict[str, str]) -> list[str]:
        """Rewrite (or remove) context.md of each folder, deepest first; returns files changed."""
        now = utc_now_iso(self._clock())
        changed = []
        later = Pending()
        for folder in sorted(set(folders), key=lambda f: -f.count("/")):
            fabs = self.root / folder
            ctx_rel = f"{folder}/{CONTEXT_FILE}"
            text = contexts.render(fabs, folder, overrides.get(folder), now, self._listed(folder))
            link = self.root / ctx_rel
            if link.is_symlink():
                # a symlink where the context file belongs (dangling, or leading out of the tree)
                # is removed, never written through; the folder itself must be inside the tree
                resolve_inside(self.root, folder)
                link.unlink()
            if text is None:
                self._write_file(ctx_rel, None, later)
                try:
                    fabs.rmdir()
                    if self.settings.durable:
                        later.folders.pop(fabs, None)
                        later.folders[fabs.parent] = None
                except OSError:
                    pass
            elif not self._holds(ctx_rel, text):
                # synced before its rename (an overview is in no journal), its folder once below
                self._write_file(ctx_rel, text, later)
            else:
                continue
            changed.append(ctx_rel)
        later.sync_all()
        return changed

    def _listed(self, folder: str) -> dict[str, Listed] | None:
        """The catalog's rows of a folder's files, for its context.md; None (the renderer reads
        the files) if the catalog cannot be read."""
        try:
            return self.catalog.folder_files(folder)
        except (sqlite3.DatabaseError, ValueError):
            return None

    def repair_contexts(self, folders: Iterable[str]) -> None:
        with self._writing():
            self._index_paths(self._refresh_contexts(folders, {}))
            self._bump_generation()

    # -- crash recovery -------------------------------------------------------
    def recover(self) -> None:
        """Roll forward a batch a dead writer left in ``pending.json`` (or finish the derived
        work of one that passed its commit point); remove what a killed reindex left beside
        the index (only with the lock: a live rebuild writes there). Opening the tree calls
        it: a reader goes on if the disk takes no writes, and the next writer finishes the
        batch first or fails cleanly."""
        leftovers = self.engine.leftovers()
        if not self.journal.pending_file.exists() and not leftovers:
            return
        with self.lock.try_hold() as got:
            if got:
                try:
                    self._recover_locked()
                    if leftovers:
                        self.engine.remove_leftovers()
                except NotWritable as exc:
                    self.notice(f"an interrupted batch could not be finished now ({reason_of(exc.__cause__) or exc}); "
                                "the next write finishes it")

    def _recover_locked(self) -> None:
        if self.lock.last_stale_pid:
            self.notices.append(f"recovered the writer lock of dead process {self.lock.last_stale_pid}")
            self.lock.last_stale_pid = None
        records = self.journal.read_pending()
        if self.journal.set_aside:
            self.notices.append(self.journal.set_aside)
        if records is None:
            return
        # a writer died mid-batch (or failed): its temp files are strays now that the lock is ours
        self.remove_stray_temp_files()
        if self.journal.pending_failed():
            # its writer reported it failed: it must not appear now
            with disk_errors_as_not_writable():
                self._restore_before(records)
                self.journal.drop_trailing({r.id for r in records})
                self._after_write([c.path for r in records for c in r.changes()], {})
                self.journal.clear_pending()
            self.notices.append(f"rolled back a failed batch of {len(records)} operation(s)")
            return
        touched = [ch.path for r in records for ch in r.changes()]
        if not self.journal.holds(records):
            with disk_errors_as_not_writable():
                for r in records:
                    for ch in r.changes():
                        self._write_file(ch.path, ch.after)
                self.journal.append(records, dedupe=True)
        # else its writer passed the commit point: its files were synced before the journal
        # append, and may have been edited by hand since; only the derived work is left
        if self._derive(touched, {}):
            self.notices.append(f"completed an interrupted batch of {len(records)} operation(s)")

    def _holds(self, rel: str, text: str | None) -> bool:
        """The tree's file ``rel`` is exactly ``text`` (None: it is absent); a symlink never is."""
        p = self.root / rel
        try:
            if p.is_symlink():
                return False
            return text is not None and p.read_bytes() == text.encode("utf-8")
        except FileNotFoundError:
            return text is None
        except OSError:
            return False
