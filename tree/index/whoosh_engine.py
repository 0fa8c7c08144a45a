"""Whoosh (whoosh-reloaded) implementation of ``SearchEngine``.

Creating a Searcher is the expensive part (~40 ms on 24k docs), so one is kept
open while the index is unchanged. It is replaced by a new one, never
``refresh()``ed: whoosh-reloaded 2.7.5's refresh reuses segment readers by
segment id, so it misses deletions and even re-adds segments merged away
(doc_count rose from 62 to 71 after one delete in our test). Writes happen only under
the tree's writer lock, so Whoosh's own lock is never contended.
"""

from __future__ import annotations

import io
import os
import time
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from . import whoosh_import  # noqa: F401 - first: Whoosh without asyncio (see there)
from whoosh import index as whoosh_index
from whoosh import query as wq
from whoosh.analysis import Token, Tokenizer
from whoosh.codec.base import PerDocumentReader
from whoosh.fields import ID, TEXT, Schema
from whoosh.filedb.compound import CompoundStorage
from whoosh.filedb.structfile import StructFile
from whoosh.scoring import BM25F

from ..text.analysis import (MAX_EXPAND_CHARS, MAX_EXPANDED_TERMS, MAX_QUERY_CHARS, MAX_QUERY_TERMS,
    SHORT_FIELDS, STOP_WORDS, analyze, terms as query_terms)
from ..base import forksafe
from . import folders as index_folders
from .engine import FIELDS, IndexBroken, IndexDoc, no_room  # noqa: F401 - IndexBroken is imported from here too
from .whoosh_merge import tiered_merge

# A corrupt or half-removed index can fail in any way on open or search: the table
# of contents is a pickle, and unpickling garbage raises almost anything
# (UnpicklingError, ImportError, AttributeError, ...). The index is derived, so
# every such failure means "rebuild it".
_BROKEN = (Exception,)


def _close_leaked(exc: BaseException) -> None:
    """Close the files whoosh was reading when it failed: it leaves them open."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__", "").startswith("whoosh."):
            for value in list(tb.tb_frame.f_locals.values()):
                try:
                    if isinstance(value, (StructFile, CompoundStorage)) and not value.is_closed:
                        value.close()
                    elif isinstance(value, PerDocumentReader):   # a commit's reader of its new segment
                        value.close()
                    elif isinstance(value, io.IOBase) and not value.closed:
                        value.close()
                except Exception:  # noqa: BLE001 - half-built by the failed call; its file is another local
                    pass
        tb = tb.tb_next


def _abandon(writer, exc: BaseException) -> None:
    """Give up a writer whose work or commit failed: its lock, files and temp folder released,
    and what it wrote removed (``_remove_unlisted``). Whoosh's ``with ix.writer()`` cancels only
    when the body fails: a commit that failed (a full disk) kept the lock, and every later write
    of the process failed with ``LockError``; and ``cancel`` itself fails on a full disk (it
    flushes), leaving the segment's files open."""
    _close_leaked(exc)
    try:
        writer.cancel()
    except Exception as again:  # noqa: BLE001 - half-closed by the failure: release what it holds
        _close_leaked(again)    # cancel flushes: on a full disk it fails too, with files of its own open
        _close_files(writer, set(), 4)
        for release in (writer.writelock.release, writer._tempstorage.destroy):
            try:
                release()
            except Exception:  # noqa: BLE001 - nothing more to release
                pass
    try:
        _remove_unlisted(writer.storage, writer.indexname)
    except Exception:  # noqa: BLE001 - best effort: the next commit that succeeds removes them too
        pass


def _remove_unlisted(storage, indexname: str) -> None:
    """Remove the files no table of contents lists: those of the segment (and merge) a failed
    commit began, and a half-written table of contents (``_MAIN_3.toc.<time>``). Whoosh leaves
    them for its next successful commit; on a full disk each refused write left a new set
    (4 KiB or more), eating the space that came back. Only under the tree's writer lock: the
    latest table of contents then lists every file a reader may open."""
    toc = whoosh_index.TOC.read(storage, indexname)
    whoosh_index.clean_files(storage, indexname, toc.generation, toc.segments)
    for name in storage.list():
        if name.startswith(f"_{indexname}_") and ".toc." in name:
            storage.delete_file(name)


def _close_files(obj, seen: set[int], depth: int) -> None:
    """Close every file reachable from ``obj``'s attributes (a failed writer's segment files),
    without flushing what they buffered: that is what failed."""
    if depth < 0 or id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, StructFile):
        obj = obj.file
    if isinstance(obj, io.IOBase):
        try:
            obj.close()    # closes the descriptor even when the flush fails
        except Exception:  # noqa: BLE001 - the flush on a full disk
            pass
        return
    values = obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) \
        else getattr(obj, "__dict__", {}).values()
    for value in values:
        if not isinstance(value, (str, bytes, int, float)):
            _close_files(value, seen, depth - 1)


class MemgroveTokenizer(Tokenizer):
    """Whoosh's view of ``analysis.analyze``: the terms both engines index, as Whoosh tokens
    (already lowercased, stop-filtered and stemmed, so no Whoosh filter follows)."""

    def __call__(self, value, positions=False, chars=False, keeporiginal=False, removestops=True,
                 start_pos=0, start_char=0, tokenize=True, mode="", **kwargs):
        t = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        for i, term in enumerate(analyze(value) if tokenize else [value]):
            t.text = term
            t.boost = 1.0
            t.stopped = False
            if keeporiginal:
                t.original = term
            if positions:
                t.pos = start_pos + i
            if chars:  # terms are not tied to spans of the text (dotted parts, stemming)
                t.startchar = t.endchar = start_char
            yield t


def analyzer():
    """Whoosh's analyzer: memgrove's own (tree/text/analysis.py), the same for documents and queries."""
    return MemgroveTokenizer()


def _schema() -> Schema:
    ana = analyzer()
    return Schema(
        path=ID(stored=True, unique=True),
        kind=ID(stored=True),
        title=TEXT(analyzer=ana),
        content=TEXT(analyzer=ana),
        path_text=TEXT(analyzer=ana),
        tags=TEXT(analyzer=ana),
        keywords=TEXT(analyzer=ana),
    )


def _term_text(t) -> str:
    return t.decode("utf-8", "replace") if isinstance(t, bytes) else str(t)


def _retry_vanished(fn):
    """``fn()``, looked at again if an index file vanished meanwhile.

    A commit in another process writes a new table of contents and deletes the
    old one, so opening the index in that instant raises FileNotFoundError
    although nothing is broken (whoosh's own ``reader()`` retries likewise).
    Taken for a broken index, it made readers wait for the writer lock and
    rebuild the whole index.
    """
    for attempt in range(20):
        try:
            return fn()
        except FileNotFoundError:
            if attempt == 19:
                raise
            time.sleep(0.005)


class WhooshEngine:
    name = "whoosh"

    def __init__(self, folder: Path, *, procs: int = 1, limitmb: int = 128):
        self.folder = folder
        self.procs = procs
        self.limitmb = limitmb
        self._ix = None
        self._searcher = None
        self._searcher_folder = 0  # inode of the folder the searcher reads
        self._mutex = forksafe.rlock()
        forksafe.in_child(self._forked)

    def _forked(self) -> None:
        # a forked child reads through descriptors of its own: an inherited one shares its file
        # offset with the parent's (reads of both would interleave); dropping the parent's
        # objects closes only this process's copies
        self._searcher, self._ix, self._searcher_folder = None, None, 0

    # -- opening ------------------------------------------------------------
    def exists(self) -> bool:
        try:
            return _retry_vanished(lambda: whoosh_index.exists_in(str(self.folder)))
        except _BROKEN as exc:  # a corrupt table of contents: there is no usable index
            _close_leaked(exc)
            return False

    def _index(self):
        if self._ix is None:
            try:
                self._ix = _retry_vanished(lambda: whoosh_index.open_dir(str(self.folder)))
            except _BROKEN as exc:
                _close_leaked(exc)
                raise IndexBroken(f"cannot open index: {exc!r}") from None
        return self._ix

    def _get_searcher(self):
        with self._mutex:
            try:
                # rebuild() (maybe in another process) swaps in a new folder whose generations
                # restart, so a searcher of the old one can look up to date by generation alone
                folder = _retry_vanished(lambda: os.stat(self.folder).st_ino)
                if self._searcher is not None and folder != self._searcher_folder:
                    self.close()
                if self._searcher is not None and not self._searcher.up_to_date():
                    self._searcher.close()
                    self._searcher = None
                if self._searcher is None:
                    self._searcher = self._index().searcher(weighting=BM25F())
                    self._searcher_folder = folder
            except _BROKEN as exc:
                _close_leaked(exc)
                self.close()
                raise IndexBroken(f"cannot read index: {exc!r}") from None
            return self._searcher

    def close(self) -> None:
        with self._mutex:
            if self._searcher is not None:
                try:
                    self._searcher.close()
                except Exception:  # noqa: BLE001 - closing a broken searcher must not fail
                    pass
            self._searcher = None
            self._ix = None

    # -- writing ------------------------------------------------------------
    @staticmethod
    def _fields(doc: IndexDoc) -> dict:
        return {"path": doc.path, "kind": doc.kind, "title": doc.title, "content": doc.content,
                "path_text": doc.path_text, "tags": doc.tags,
                "keywords": doc.keywords}

    def write(self, replace: Sequence[IndexDoc] = (), delete: Sequence[str] = ()) -> None:
        if not replace and not delete:
            return
        try:
            ix = self._index()
            w = ix.writer(limitmb=self.limitmb)
            try:
                w.mergetype = tiered_merge  # not MERGE_SMALL: see whoosh_merge.py
                for p in delete:
                    w.delete_by_term("path", p)
                for d in replace:
                    w.update_document(**self._fields(d))
                w.commit()
            except BaseException as exc:
                _abandon(w, exc)
                raise
        except _BROKEN as exc:
            self.close()
            raise no_room(exc) or IndexBroken(f"cannot write index: {exc!r}") from None

    def leftovers(self) -> list[Path]:
        """Folders a killed rebuild left beside the index (``whoosh.new``, ``whoosh.old``)."""
        return index_folders.leftovers(self.folder)

    def remove_leftovers(self) -> int:
        """Remove them; only under the tree's writer lock (a live rebuild writes ``.new``)."""
        return index_folders.remove_leftovers(self.folder)

    def rebuild(self, docs: Iterable[IndexDoc], *, total: int | None = None, progress=None) -> None:
        """Build a fresh index beside the old one, then swap folders."""
        self.close()
        new = index_folders.fresh_beside(self.folder)
        ix = whoosh_index.create_in(str(new), _schema())
        procs = self.procs if (total or 0) >= 2000 else 1
        kwargs = {"procs": procs, "multisegment": True} if procs > 1 else {}
        with ix.writer(limitmb=self.limitmb, **kwargs) as w:
            for i, d in enumerate(docs, 1):
                w.add_document(**self._fields(d))
                if progress is not None:
                    progress(i)
        index_folders.swap_in(self.folder)

    # -- reading ------------------------------------------------------------
    def terms(self, text: str) -> list[str]:
        """The distinct analyzed terms of a query, in order; at most ``MAX_QUERY_TERMS`` of
        its first ``MAX_QUERY_CHARS`` characters."""
        return query_terms(text)

    def search(self, text: str, *, boosts: Mapping[str, float], limit: int,
               expand: str = "none") -> list[tuple[str, float, frozenset[str]]]:
        terms = self.terms(text)
        if not terms:
            return []
        expandable = set([t for t in terms if len(t) <= MAX_EXPAND_CHARS][:MAX_EXPANDED_TERMS])
        clauses = []
        for f in FIELDS:
            b = boosts.get(f, 1.0)
            if b <= 0 or (expand == "prefix" and f not in SHORT_FIELDS):
                continue
            for t in terms:
                if t not in expandable:
                    clauses.append(wq.Term(f, t, boost=b))
                elif expand == "fuzzy" and len(t) >= 4:
                    keep = 1 if f in SHORT_FIELDS else 2  # on content, the first two letters must match
                    clauses.append(wq.FuzzyTerm(f, t, boost=b, maxdist=min(2, round(0.2 * len(t))), prefixlength=keep))
                elif expand == "prefix" and len(t) >= 3:
                    clauses.append(wq.Prefix(f, t, boost=b))
                else:
                    clauses.append(wq.Term(f, t, boost=b))
        q = wq.Or(clauses)
        with self._mutex:
            s = self._get_searcher()
            try:
                results = s.search(q, limit=limit, terms=True)
                return [(hit["path"], float(hit.score), frozenset(_term_text(t) for _, t in hit.matched_terms()))
                        for hit in results]
            except _BROKEN as exc:
                _close_leaked(exc)
                self.close()
                raise IndexBroken(f"cannot search index: {exc!r}") from None

    def idf(self, terms: list[str], fields: tuple[str, ...] = ("title", "content")) -> dict[str, float]:
        """Inverse document frequency of analyzed terms (the rarest of ``fields``'), for coverage."""
        with self._mutex:
            s = self._get_searcher()
            return {t: max(s.idf(f, t) for f in fields) for t in terms}

    def count(self) -> int:
        with self._mutex:
            return self._get_searcher().doc_count()
