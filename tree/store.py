"""``ContextTree``: the knowledge layer's one object. It owns the layout of ``.memgrove/`` and ties
the parts together, each in its own package or module:

- ``writes.write_path.WritePath``: the curate operations (planned in ``writes.operations``) applied
  under the writer lock with a write-ahead journal, context files, crash recovery;
- ``index.sync.IndexSync``: the full-text index and catalog kept in step with the files, by every
  write and by a scan (or watcher) before every search; rebuilds, the fingerprint;
- ``ranking``: what ``search`` does to the engine's candidates, one declared list of steps;
- ``meaning.tree_meaning.Meaning``: entries' sentence embeddings (``vectors.db``) for ranking by meaning.

This module holds reading, the public writing calls and ``search``.
"""
from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from .base import forksafe
from .base.errors import EntryNotFound, InvalidEntry, InvalidPath, MemgroveError, OperationNotFound
from .base.fsio import TEMP_PREFIX
from .base.home import HOME_NAME, locate_home  # noqa: F401 - locate_home: its home before home.py
from .base.question_bound import check_length
from .text.analysis import analyze
from .entries import entry as entry_mod, validity
from .entries.entry import Entry
from .entries.lifecycle import PROFILES
from .entries.paths import (CONTEXT_FILE, existing_literal, folder_of, is_context, is_entry_file, normalize_any,
                            normalize_entry_path, normalize_folder, resolve_inside)
from .settings import TreeSettings, load_settings
from .index.catalog import Catalog, scan
from .index.engines import open_engine
from .index.folder_check import FolderCheck
from .index.listing import listing
from .index.sync import INDEX_FORMAT, IndexSync, indexed_content, remove_temp_files  # noqa: F401 - INDEX_FORMAT: read by benchmarks
from .index.watch import TreeWatcher
from .meaning.embedder import Embedder
from .meaning.embedding import Encoder
from .meaning.tree_meaning import Meaning
from .meaning.vectors import Vectors
from .ranking.cut import POOL_WIDEN, drop_context_hits, may_mute, with_full_weight
from .ranking.hits import Hit, excerpt
from .ranking.pipeline import STEPS, RankingInputs, rank
from .ranking.signals import Signals
from .ranking.table import coverage, normalize
from .writes.archive import archive_root, archived_paths, in_tree, is_archived, search_archive
from .writes.journal import Journal, JournalRecord
from .writes.journal_read import JournalPage, find as find_journal, find_with_later, page as journal_page
from .writes.operations import OPS, OpResult, Overlay, plan_batch
from .writes.undo import plan_undo, plan_undo_all
from .writes.write_path import WritePath
from .writes.writer_lock import WriterLock

if TYPE_CHECKING:
    from .writes.group_batch import GroupOutcome
    from .replication.replicator import Replicator


class ContextTree(WritePath, IndexSync, Meaning):
    """A Context Tree on disk: read, write (``curate``, ``undo``), search."""
    ranking_steps = STEPS       # what search runs over the candidates (benchmarks/ablation.py runs others)

    def __init__(self, home: Path, settings: TreeSettings | None = None,
                 clock: Callable[[], datetime] | None = None, *, replicate: bool = True,
                 embed_ahead: bool = True):
        """``embed_ahead``: with meaning on, vectors are computed in the background (tree/meaning/embedder.py)."""
        self.home = home
        self.root = home / "tree"
        self.settings = settings or load_settings(home)
        self.lock = WriterLock(home / "write.lock", self.settings.lock_timeout)
        self.journal = Journal(home / "journal", durable=self.settings.durable)
        self.signals = Signals(home / "signals.db")
        self.vectors = Vectors(home / "vectors.db")
        self.encoder: Encoder | None = None    # loaded by the embedder, or at the first search that needs it
        self._encoder_mutex = forksafe.lock()
        self.embedder: Embedder | None = None
        self.catalog = Catalog(home / "index" / "catalog.db")
        self.engine = open_engine(home, self.settings)
        self.index_format = f"{self.engine.name}-{INDEX_FORMAT}"   # switching engines rebuilds once
        self._clock = clock or (lambda: datetime.now(timezone.utc))
        self._checked_gen = -1         # the generation at the last check
        self._folder_check: FolderCheck | None = None   # the folders as the last full scan saw them
        self._checks = 0
        self._first_check = 0.0
        self._entry_count: tuple[tuple, int] = ((None, None), 0)
        self._in_step = False          # index matched the files at the last check
        self._digest = 0               # digest of what the index holds at the last check
        self._watcher: TreeWatcher | None = None
        self._watch_failed = False
        # threads of one process (the query graph's parallel branches) must not search while
        # another thread of it syncs the index: the one that drained the watcher syncs, the rest wait
        self._fresh_mutex = forksafe.lock()
        forksafe.in_child(self._forked)   # index_sync.py: a forked child's watcher and checks
        self.notices: list[str] = []  # what opening had to repair (stale lock, pending batch)
        self.signals.notices = self.notices  # a damaged signals.db is reset with a notice
        self.vectors.notices = self.notices
        self.replication: "Replicator | None" = None
        # a read replica's files come from its primary's remote only (tree/replication/follow.py)
        self.replica_of: str | None = None
        # a replica's server sets it: every write of this tree is sent to the primary instead, and
        # the primary's results returned (``forward_writes(kind, **args)``, kind being the method's
        # name: curate, undo, curate_groups, undo_all; ``Memory`` adds history, dream and the review
        # queue's; memgrove/server/forward_writes.py)
        self.forward_writes: Callable[..., Any] | None = None
        if (home / "replica.json").exists():
            from .replication.follow import replica_info

            self.replica_of = str((replica_info(home) or {}).get("primary") or "?")
        elif replicate:
            from .replication.settings import load_replication_settings

            if load_replication_settings(home).remote:
                from .replication.replicator import Replicator

                self.replication = Replicator(self, load_replication_settings(home))
        if embed_ahead and self.settings.semantic_weight > 0:
            self.embedder = Embedder(self)

    @classmethod
    def open(cls, path: str | os.PathLike | None = None, *, create: bool = False,
             clock: Callable[[], datetime] | None = None, embed_ahead: bool = True,
             **settings: Any) -> "ContextTree":
        home = locate_home(path, create=create)
        tree = cls(home, load_settings(home, **settings), clock=clock, embed_ahead=embed_ahead)
        try:
            tree.recover()
        except BaseException:
            tree.close()        # its threads and connections with it
            raise
        return tree

    def notice(self, text: str) -> None:
        """Tell the user once (a server's tree lives long: the same notice is not repeated)."""
        if text not in self.notices:
            self.notices.append(text)

    def close(self) -> None:
        if self.embedder is not None:
            self.embedder.close()        # the batch under way at most
            self.embedder = None
        if self.replication is not None:
            self.replication.close()     # the last commit and push, bounded in time
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
        self.engine.close()
        self.catalog.close()
        self.signals.close()
        self.vectors.close()

    # -- reading entries ----------------------------------------------------
    def _abs(self, rel: str) -> Path:
        return resolve_inside(*self._base(rel))

    def _base(self, rel: str) -> tuple[Path, str]:
        """The folder a journaled path lives under, and its path there: the tree, or for an
        archived copy (``@archive/<path>``, tree/writes/archive.py) ``.memgrove/archive/``."""
        return (archive_root(self.home), in_tree(rel)) if is_archived(rel) else (self.root, rel)

    def _read_disk(self, rel: str) -> str | None:
        p = self._abs(rel)
        try:
            if p.is_symlink():
                resolve_inside(*self._base(rel))
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
            kept = (archive_root(self.home) / rel).is_file() if not is_archived(rel) else False
            raise EntryNotFound(f"no entry at {rel}" + (" (it is archived: `memgrove restore` brings it back)"
                                                        if kept else ""))
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

    def list_folder(self, folder: str = "", *, counts: bool = True, offset: int = 0,
                    limit: int | None = None) -> dict[str, Any]:
        """A folder's title, overview and children, ``limit`` of them from ``offset`` (None: all;
        tree/index/listing.py). ``counts``: each subfolder's number of entries (-1 when off)."""
        rel = (existing_literal(self.root, folder, folder=True) or normalize_folder(folder)) if folder.strip("/ ") else ""
        base = self._abs(rel) if rel else self.root
        if not base.is_dir():
            raise EntryNotFound(f"no folder {rel!r} in the tree")
        catalog = None
        if counts:      # the subfolders' counts from the catalog (without, none is needed: no scan)
            try:
                self.ensure_fresh()
                catalog = self.catalog
            except MemgroveError:   # a busy writer's lock, say: the files are counted instead
                pass
        return listing(base, rel, catalog=catalog, counts=counts, offset=offset, limit=limit)

    # -- writing ------------------------------------------------------------
    def curate(self, ops: list[dict[str, Any]], *, actor: str = "user",
               allowed: tuple[str, ...] = OPS) -> list[OpResult]:
        """Validate and apply a batch of operations; all or nothing."""
        if self.forward_writes is not None:
            return self.forward_writes("curate", ops=ops, actor=actor, allowed=allowed)
        with self._writing():
            self._sync_before_write()
            overlay = Overlay(self._read_disk, self.entries_under, self.catalog.backlinks)
            planned = plan_batch(ops, overlay, self._clock(), actor=actor, allowed=allowed)
            self._apply(planned)
        return [p.result for p in planned]

    def undo(self, op_id: str, *, force: bool = False, actor: str = "user") -> OpResult:
        """Restore the before-images of one operation (refused, saying why, if the files changed
        since; ``force`` undoes anyway and journals what it overwrites)."""
        if self.forward_writes is not None:
            return self.forward_writes("undo", op_id=op_id, force=force, actor=actor)
        with self._writing():
            rec, later = find_with_later(self.journal.file, op_id)
            planned = plan_undo(rec, later, self._read_disk, self._clock(), force=force, actor=actor,
                                overlay=Overlay(self._read_disk, self.entries_under, self.catalog.backlinks))
            if planned.result.status != "unchanged":
                self._apply([planned])
        return planned.result

    def curate_groups(self, groups: list[list[dict[str, Any]]], *, actor: str = "user",
                      allowed: tuple[str, ...] = OPS,
                      before_write: Callable[[list["GroupOutcome"]], None] | None = None) -> list["GroupOutcome"]:
        """Apply groups of operations as one batch, each group all or nothing on its own (a
        group that is invalid is left out with its errors; the others are applied).
        ``before_write(outcomes)``, under the writer lock, sees the planned ids before anything is
        written: dream and review record there what they apply, so any crash leaves that record."""
        from .writes.group_batch import plan_groups

        if self.forward_writes is not None:   # (dream and review are asked of the primary whole)
            return self.forward_writes("curate_groups", groups=groups, actor=actor, allowed=allowed)

        with self._writing():
            self._sync_before_write()
            overlay = Overlay(self._read_disk, self.entries_under, self.catalog.backlinks)
            planned, outcomes = plan_groups(groups, overlay, self._clock(), actor=actor, allowed=allowed,
                                            max_bytes=self.settings.max_input_bytes)
            if any(p.result.status != "unchanged" for p in planned):
                if before_write is not None:
                    before_write(outcomes)
                self._apply(planned)
        return outcomes

    def undo_all(self, op_ids: list[str], *, force: bool = False, actor: str = "user") -> list[OpResult]:
        """Undo these operations, newest first, as one batch: every file they wrote is brought back
        to what it held before the first of them (refused, saying why, if one changed since)."""
        if self.forward_writes is not None:
            return self.forward_writes("undo_all", op_ids=op_ids, force=force, actor=actor)
        wanted = set(op_ids)
        with self._writing():
            recs, later = [], []
            for r in self.journal.records():
                if r.id in wanted:
                    recs.append(r)
                elif recs:
                    later.append(r)
            missing = wanted - {r.id for r in recs}
            if missing:
                raise OperationNotFound(f"no operation with id {sorted(missing)[0]!r} in the journal "
                                        "(see `memgrove history`)")
            planned = plan_undo_all(recs, later, self._read_disk, self._clock(), force=force, actor=actor,
                                    overlay=Overlay(self._read_disk, self.entries_under, self.catalog.backlinks))
            if any(p.result.status != "unchanged" for p in planned):
                self._apply(planned)
        return [p.result for p in planned]

    def restore(self, path: str, *, reason: str = "restored from the archive", actor: str = "user") -> OpResult:
        """Bring an archived entry back to its path in the tree (a journaled RESTORE)."""
        return self.curate([{"op": "RESTORE", "path": path, "reason": reason}], actor=actor)[0]

    def archived(self) -> list[str]:
        """The paths of the archived entries (``.memgrove/archive/``)."""
        return archived_paths(self.home)

    def history(self, limit: int | None = 50, path: str | None = None) -> list[JournalRecord]:
        """Journal records, newest first; ``path`` keeps those touching that entry or folder."""
        return self.history_page(limit, path=path, budget=None).records

    def operation(self, op_id: str, at: int | None = None) -> JournalRecord:
        """The journal's record ``op_id`` (``OperationNotFound``): at the offset ``at`` (``JournalPage.offsets``),
        else looked for from the journal's end."""
        return find_journal(self.journal.file, op_id, at)

    def history_page(self, limit: int | None = 50, *, path: str | None = None, kinds: Iterable[str] = (),
                     before: int | None = None, budget: int | None = 32 << 20) -> JournalPage:
        """A page of journal records, newest first, read from the journal's end (tree/writes/journal_read.py):
        of one of ``kinds`` (op names), touching ``path`` (an entry or folder), older than the cursor
        ``before`` (an earlier page's ``next``), after reading at most about ``budget`` bytes."""
        return journal_page(self.journal.file, limit=limit, before=before, kinds=kinds,
                            path=normalize_any(path) if path else None, budget=budget)

    # -- search -------------------------------------------------------------
    @forksafe.no_fork_amid      # a fork waits for the searches under way (tree/base/forksafe.py)
    def search(self, query: str, limit: int = 10, *, profile: str | None = None,
               record_access: bool = False, check: bool = True, include_archived: bool = False) -> list[Hit]:
        """BM25F search, ranked by the steps of ``ranking_steps`` (tree/ranking/pipeline.py).

        ``check=False`` skips the freshness check, for a caller that has just made it (the query
        pipeline takes the fingerprint first).
        ``include_archived``: the archived entries are searched too (tree/writes/archive.py), placed by
        their score among the others and marked ``archived``.
        ``record_access``: count the hits as delivered (+3 importance each, in a profile with an access
        bonus); callers that know which entries an answer used call ``record_delivery`` with those instead.
        """
        if not isinstance(query, str) or not query.strip():
            raise MemgroveError("the query is empty")
        check_length(query, "search query")
        if limit < 1:
            raise MemgroveError("limit must be at least 1")
        prof = PROFILES[profile or self.settings.profile]
        if check:
            self.ensure_fresh()
        pool = limit * 3 + 10
        deep = may_mute(query, self.settings) and self.catalog.holds_assistant()
        raw = self._engine_search(query, pool * POOL_WIDEN if deep else pool)
        if not raw:
            raw = self._engine_search(query, pool, expand="fuzzy") or \
                self._engine_search(query, pool, expand="prefix")
        elif deep:
            raw = with_full_weight(query, raw[:pool], raw[pool:], self.catalog, self.settings)
        raw = drop_context_hits(raw, self.settings)
        own_score = {p: sc for p, sc, _ in raw}   # each entry's own match, for relevance and routing
        terms = self.engine.terms(query)
        idf = self.engine.idf(terms) if raw else {}
        # entries read once per search: the proximity lift, ranking by meaning and the hits below share them
        read: dict[str, tuple[Entry, str] | None] = {}
        ranked = rank(query, raw, idf, limit, prof, RankingInputs(
            self.settings, self.catalog, self.signals, self.root, self._clock, lambda ps: self._indexed_terms(ps, read),
            *self._meaning_reads(read)), self.ranking_steps)
        hits: list[Hit] = []
        for p, s in ranked.order:
            # a link can reach a path behind a symlink out of the tree, or a file that is not an entry
            got = self._readable([p], read).get(p)
            if got is None:
                continue
            e, kind = got
            shown = self._excerpt(e, terms)
            closed = self._closed_label(e, read)
            hits.append(Hit(path=p, title=e.title, score=s, excerpt=f"{closed} {shown}" if closed else shown,
                            sources=e.sources, kind=kind, bm25=ranked.lifted[p][0], summary=e.summary,
                            relevance=normalize(own_score.get(p, 0.0)), matched=tuple(sorted(ranked.lifted[p][1])),
                            coverage=coverage(ranked.lifted[p][1], idf), label=closed, **self._closing(e)))
            if len(hits) >= limit:
                break
        if include_archived:
            hits = self._with_archived(query, hits, idf, limit)
        if record_access:
            self.record_delivery([h.path for h in hits if h.kind == "entry"], profile=profile)
        return hits

    def _excerpt(self, e: Entry, terms: list[str]) -> str:
        text = e.sections.get("Narrative") or e.body
        prose = "\n".join(ln for ln in text.split("\n") if not ln.startswith("#"))
        return excerpt(prose, terms, self.settings.excerpt_chars)

    def _closed_label(self, e: Entry, read: dict[str, tuple[Entry, str] | None]) -> str:
        """``(until 2026-03-02; since then: <newer title>)`` for an entry a newer one replaced, else ``""``."""
        by = validity.superseded_by(e)
        if not by:
            return ""
        newer = self._readable([by], read).get(by)
        return validity.label(validity.valid_until(e), newer[0].title if newer and newer[0].title else by)

    @staticmethod
    def _closing(e: Entry) -> dict[str, str]:
        until = validity.valid_until(e)
        return {"superseded_by": validity.superseded_by(e), "valid_until": until.isoformat() if until else ""}

    def _with_archived(self, query: str, hits: list[Hit], idf: dict[str, float], limit: int) -> list[Hit]:
        """``hits`` and the archived entries that match, by score (an archived one's is its BM25 over
        the archive, normalized like the others'), at most ``limit``."""
        terms = self.engine.terms(query)
        found = []
        for p, bm25, e in search_archive(self.home, query, idf, limit):
            rel = normalize(bm25)
            closed = self._closed_label(e, {})
            found.append(Hit(path=p, title=e.title, score=rel, excerpt=" ".join(
                x for x in ("(archived)", closed, self._excerpt(e, terms)) if x), sources=e.sources, bm25=bm25,
                summary=e.summary, relevance=rel, archived=True, label=closed, **self._closing(e)))
        if not found:
            return hits
        return sorted(hits + found, key=lambda h: -h.score)[:limit]

    def _readable(self, paths: list[str], read: dict[str, tuple[Entry, str] | None] | None = None,
                  ) -> dict[str, tuple[Entry, str]]:
        """Each entry that can be read and parsed, with its kind ("context" or "entry"); an entry
        that is gone or unreadable is left out. ``read`` keeps what was read (None: unreadable)
        for the next call of the same search."""
        read = {} if read is None else read
        for p in paths:
            if p in read:
                continue
            read[p] = None
            try:
                text = self._read_disk(p)
                if text is not None:
                    read[p] = (entry_mod.parse(text, where=p), "context" if is_context(p) else "entry")
            except (InvalidPath, InvalidEntry):
                pass
        return {p: got for p in paths if (got := read[p]) is not None}

    def _indexed_terms(self, paths: list[str], read: dict | None = None) -> dict[str, list[list[str]]]:
        """The analyzed terms of what the index holds of each entry's title and content, each in order."""
        return {p: [analyze(e.title), analyze(indexed_content(e, kind, self.settings.content_cap))]
                for p, (e, kind) in self._readable(paths, read).items()}

    def record_delivery(self, paths: list[str], *, profile: str | None = None) -> None:
        """Entries given to a user or an agent as evidence gain importance (product profile)."""
        if paths and PROFILES[profile or self.settings.profile].access_bonus:
            self.signals.record_access([p for p in dict.fromkeys(paths) if not is_context(p)])

    # -- housekeeping -------------------------------------------------------
    def stray_temp_files(self) -> list[Path]:
        return [p for p in self.root.rglob(TEMP_PREFIX + "*") if p.is_file()]

    def remove_stray_temp_files(self) -> int:
        """Remove the temp files dead writers left; only with the writer lock held (``remove_temp_files``)."""
        return remove_temp_files(str(p) for p in self.stray_temp_files())
