"""tantivy implementation of ``SearchEngine`` (``engine = "tantivy"``, the ``fast`` extra).

tantivy never analyzes text here: each field holds memgrove's own terms
(tree/text/analysis.py) joined by spaces under tantivy's whitespace tokenizer, so
both engines index, match and count exactly the same terms.

Scores follow Whoosh's: both sum, over the (field, term) pairs a document
matches, boost × idf × the BM25 term-frequency part (k1 = 1.2, b = 0.75, each
field normalised by its own average length). Only the idf formulas differ
(tantivy: ln(1 + (N - df + 0.5) / (df + 0.5)); Whoosh: ln(N / (df + 1)) + 1),
so each term's boost is scaled by the ratio of the two, from the document
frequencies tantivy reports: rankings then agree up to how each engine rounds a
field's length into one byte.

Writes happen only under the tree's writer lock. tantivy's own writer lock is
an flock on ``.tantivy-writer.lock``: the kernel drops it with the process, so a
killed writer never locks the tree out (tests/test_engine_contract.py kills one).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import time
import weakref
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from ..text.analysis import MAX_EXPAND_CHARS, MAX_EXPANDED_TERMS, SHORT_FIELDS, analyze, terms as query_terms
from ..base import forksafe
from . import folders as index_folders
from .engine import FIELDS, IndexBroken, IndexDoc, no_room
from ..base.errors import MemgroveError

try:
    import tantivy
except ImportError:  # the engine is optional: the error is raised when it is chosen (open_engine)
    tantivy = None


class EngineMissing(MemgroveError):
    code = "engine_missing"


def require_tantivy() -> None:
    if tantivy is None:
        raise EngineMissing("engine = \"tantivy\" needs the tantivy package: pip install 'memgrove[fast]'")


def _fatal(exc: BaseException) -> bool:
    return isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit))


def _schema():
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("path", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("kind", stored=True, tokenizer_name="raw", index_option="basic")
    for f in FIELDS:
        # stored: a hit's matched terms are read back from its own fields (positions are not needed)
        sb.add_text_field(f, stored=True, tokenizer_name="whitespace", index_option="freq")
    return sb.build()


def _document(doc: IndexDoc):
    return tantivy.Document(path=doc.path, kind=doc.kind,
                            **{f: " ".join(analyze(getattr(doc, f))) for f in FIELDS})


def _within(a: str, b: str, k: int) -> bool:
    """Levenshtein distance of ``a`` and ``b`` at most ``k`` (insert, delete, substitute; the
    distance Whoosh's fuzzy terms use)."""
    if abs(len(a) - len(b)) > k:
        return False
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        if min(cur) > k:
            return False
        prev = cur
    return prev[-1] <= k


def _read_only(folder: Path) -> bool:
    return bool(os.statvfs(folder).f_flag & os.ST_RDONLY) or not os.access(folder, os.W_OK)


def _stamp_or_none(engine: "TantivyEngine") -> tuple | None:
    try:
        return engine._stamp()
    except OSError:
        return None


def _whoosh_idf(n: int, df: int) -> float:
    return math.log(n / (df + 1)) + 1


def _tantivy_idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def _remove_unlisted(folder: Path) -> None:
    """Remove the segment files ``meta.json`` does not list: those a commit that failed began (its
    new segment, and deletions of a listed one, which also made the next commit fail as the file
    it wanted to create existed).
    tantivy removes them at its next successful commit; on a full disk each refused write left
    a new set, eating the space that came back. Only under the tree's writer lock (the listed
    segments are then every one a reader may open); best effort."""
    try:
        segments = json.loads((folder / "meta.json").read_text())["segments"]
        listed = {s["segment_id"].replace("-", "") for s in segments}
        # a segment's deletions are one file named for the operation that wrote them
        deletes = {f"{s['segment_id'].replace('-', '')}.{s['deletes']['opstamp']}.del" for s in segments
                   if s.get("deletes")}
        for entry in os.scandir(folder):
            stem = entry.name.partition(".")[0]
            if len(stem) == 32 and entry.is_file(follow_symlinks=False) and \
                    (stem not in listed or (entry.name.endswith(".del") and entry.name not in deletes)):
                os.unlink(entry.path)
    except (OSError, ValueError, KeyError, TypeError):
        pass


class TantivyEngine:
    name = "tantivy"

    def __init__(self, folder: Path, *, procs: int = 1, heap_mb: int = 64):
        require_tantivy()
        self.folder = folder
        self.procs = max(1, procs)
        self.heap_mb = heap_mb
        self._ix = None
        self._seen: tuple = ()        # (folder inode, meta.json inode, mtime, size) the reader shows
        self._max_doc = 0
        self._copy: weakref.finalize | None = None   # removes a read-only index's private copy
        self._mutex = forksafe.rlock()
        forksafe.in_child(self._forked)

    def _forked(self) -> None:
        # a forked child opens the index again; the parent's Rust objects (their threads gone) are
        # never dropped here, nor is the parent's private copy removed at this child's exit
        if self._ix is not None:
            forksafe.keep_for_ever(self._ix)
        self._ix, self._seen = None, ()
        self._copy = None

    # -- opening ------------------------------------------------------------
    def exists(self) -> bool:
        try:
            return (self.folder / "meta.json").is_file() and bool(tantivy.Index.exists(str(self.folder)))
        except BaseException as exc:  # noqa: BLE001 - a damaged folder is no usable index
            if _fatal(exc):
                raise
            return False

    def _stamp(self) -> tuple:
        meta = os.stat(self.folder / "meta.json")
        return (os.stat(self.folder).st_ino, meta.st_ino, meta.st_mtime_ns, meta.st_size)

    def _index(self):
        """The open index, reloaded if a commit or a rebuild (maybe another process's) changed it."""
        with self._mutex:
            for attempt in range(20):
                stamp = None
                try:
                    stamp = self._stamp()
                    if self._ix is not None and (stamp[0] != self._seen[0] or
                                                 (self._copy is not None and stamp != self._seen)):
                        self._ix = None   # rebuilt (a new folder), or a stale read-only copy
                    if self._ix is None:
                        ix = self._open()
                        for f in ("path", *FIELDS):   # raises ValueError on another schema
                            tantivy.Query.term_query(ix.schema, f, "")
                        ix.config_reader(reload_policy="Manual")
                        self._ix = ix
                    elif stamp != self._seen:
                        self._ix.reload()
                    if stamp != self._seen:
                        self._max_doc = self._read_max_doc()
                    self._seen = stamp
                    return self._ix
                except BaseException as exc:  # noqa: BLE001 - tantivy panics are BaseExceptions
                    if _fatal(exc):
                        raise
                    self.close()
                    # a commit in another process replaced meta.json and removed the files of the
                    # one being opened: not broken, look again (as WhooshEngine does)
                    if attempt < 19 and stamp is not None and _stamp_or_none(self) not in (None, stamp):
                        time.sleep(0.005)
                        continue
                    raise IndexBroken(f"cannot open index: {exc!r}") from None

    def _open(self):
        if not _read_only(self.folder):
            return tantivy.Index.open(str(self.folder))
        # tantivy opens its meta lock file for writing even to read, which a read-only file system
        # refuses: read a private copy instead (such a tree is never written), removed on close or
        # when the engine is dropped unclosed
        copy = Path(tempfile.mkdtemp(prefix="memgrove-tantivy-"))
        self._copy = weakref.finalize(self, forksafe.here_only(shutil.rmtree, copy, ignore_errors=True))
        for p in self.folder.iterdir():
            if p.is_file() and not p.name.startswith(".tantivy-"):
                shutil.copyfile(p, copy / p.name)
        return tantivy.Index.open(str(copy))

    def _read_max_doc(self) -> int:
        """Documents in the index's segments, deleted ones included: the N of tantivy's (and
        Whoosh's) idf, which the searcher does not expose (its num_docs leaves deletions out)."""
        meta = json.loads((self.folder / "meta.json").read_text(encoding="utf-8"))
        return sum(int(seg["max_doc"]) for seg in meta.get("segments", []))

    def close(self) -> None:
        with self._mutex:
            self._ix = None
            self._seen = ()
            if self._copy is not None:
                self._copy()
                self._copy = None

    # -- writing ------------------------------------------------------------
    def write(self, replace: Sequence[IndexDoc] = (), delete: Sequence[str] = ()) -> None:
        if not replace and not delete:
            return
        with self._mutex:
            ix = self._index()
            w = None
            try:
                w = ix.writer(self.heap_mb * 1_000_000, 1)
                for p in list(delete) + [d.path for d in replace]:
                    w.delete_documents_by_term("path", p)
                for d in replace:
                    w.add_document(_document(d))
                w.commit()
                w.wait_merging_threads()   # also drops the writer and its lock
            except BaseException as exc:  # noqa: BLE001
                if _fatal(exc):
                    raise
                self.close()
                room = no_room(exc)
                if room is not None:
                    w = None   # the writer's files are closed with it
                    _remove_unlisted(self.folder)
                raise room or IndexBroken(f"cannot write index: {exc!r}") from None
            finally:
                w = None
            self._index()

    def leftovers(self) -> list[Path]:
        """Folders a killed rebuild left beside the index (``tantivy.new``, ``tantivy.old``)."""
        return index_folders.leftovers(self.folder)

    def remove_leftovers(self) -> int:
        """Remove them; only under the tree's writer lock (a live rebuild writes ``.new``)."""
        return index_folders.remove_leftovers(self.folder)

    def rebuild(self, docs: Iterable[IndexDoc], *, total: int | None = None, progress=None) -> None:
        """Build a fresh index beside the old one, then swap folders."""
        self.close()
        new = index_folders.fresh_beside(self.folder)
        w = None
        try:
            ix = tantivy.Index(_schema(), path=str(new), reuse=False)
            threads = self.procs if (total or 0) >= 2000 else 1
            w = ix.writer(max(self.heap_mb, 64) * threads * 1_000_000, threads)
            for i, d in enumerate(docs, 1):
                w.add_document(_document(d))
                if progress is not None:
                    progress(i)
            w.commit()
            w.wait_merging_threads()
        except BaseException as exc:
            if w is not None:
                w.rollback()
            raise no_room(exc) or exc  # a full disk as an OSError, like Whoosh's
        finally:
            w = ix = None
        index_folders.swap_in(self.folder)

    # -- reading ------------------------------------------------------------
    def terms(self, text: str) -> list[str]:
        return query_terms(text)

    def _clauses(self, s, terms: list[str], boosts: Mapping[str, float],
                 expand: str) -> list[tuple[str, list[str], float]]:
        """``(field, index terms, boost)`` per clause, as WhooshEngine.search builds them: a fuzzy
        or prefix term expanded to the terms of the field it reaches, each scored as a plain term
        with the field's boost. (Whoosh's own scores of expansions depend on its segments: a lone
        expansion, or any in an index of several segments, loses the boost. The fallbacks match
        the same documents and terms; only their scores may differ.)"""
        expandable = set([t for t in terms if len(t) <= MAX_EXPAND_CHARS][:MAX_EXPANDED_TERMS])
        out = []
        for f in FIELDS:
            b = boosts.get(f, 1.0)
            if b <= 0 or (expand == "prefix" and f not in SHORT_FIELDS):
                continue
            for t in terms:
                if t in expandable and expand == "fuzzy" and len(t) >= 4:
                    keep = 1 if f in SHORT_FIELDS else 2  # on content, the first two letters must match
                    k = min(2, round(0.2 * len(t)))
                    found = [w for w, _ in s.terms_with_prefix(f, t[:keep]) if _within(w, t, k)]
                elif t in expandable and expand == "prefix" and len(t) >= 3:
                    found = [w for w, _ in s.terms_with_prefix(f, t)]
                else:
                    out.append((f, [t], b))
                    continue
                if found:
                    out.append((f, found, b))
        return out

    def search(self, text: str, *, boosts: Mapping[str, float], limit: int,
               expand: str = "none") -> list[tuple[str, float, frozenset[str]]]:
        terms = self.terms(text)
        if not terms:
            return []
        with self._mutex:
            ix = self._index()
            try:
                s = ix.searcher()
                schema = ix.schema
                n = self._max_doc
                subs, wanted = [], {}
                for f, words, b in self._clauses(s, terms, boosts, expand):
                    for w in words:
                        df = s.doc_freq(f, w)
                        if df == 0 or df > n:  # df > n: a commit landed between reading meta and searching
                            continue
                        wanted.setdefault(f, set()).add(w)
                        q = tantivy.Query.term_query(schema, f, w)
                        subs.append((tantivy.Occur.Should, tantivy.Query.boost_query(
                            q, b * _whoosh_idf(n, df) / _tantivy_idf(n, df))))
                if not subs:
                    return []
                hits = s.search(tantivy.Query.boolean_query(subs), limit, count=False).hits
                out = []
                for score, addr in hits:
                    doc = s.doc(addr)
                    matched = set()
                    for f, ws in wanted.items():
                        matched |= ws.intersection((doc.get_first(f) or "").split())
                    out.append((doc.get_first("path"), float(score), frozenset(matched)))
                return out
            except BaseException as exc:  # noqa: BLE001
                if _fatal(exc):
                    raise
                self.close()
                raise IndexBroken(f"cannot search index: {exc!r}") from None

    def idf(self, terms: list[str], fields: tuple[str, ...] = ("title", "content")) -> dict[str, float]:
        """Inverse document frequency of analyzed terms (the rarest field's), for coverage: Whoosh's
        formula over the same fields as WhooshEngine.idf, so coverage agrees across engines."""
        with self._mutex:
            s = self._index().searcher()
            n = max(self._max_doc, 1)
            return {t: max(_whoosh_idf(n, s.doc_freq(f, t)) for f in fields) for t in terms}

    def count(self) -> int:
        with self._mutex:
            return self._index().searcher().num_docs
