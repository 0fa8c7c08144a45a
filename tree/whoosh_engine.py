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
import shutil
import threading
import time
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from . import whoosh_import  # noqa: F401 - first: Whoosh without asyncio (see there)
from whoosh import index as whoosh_index
from whoosh import query as wq
from whoosh.analysis import Filter, LowercaseFilter, RegexTokenizer, StemFilter, StopFilter
from whoosh.fields import ID, TEXT, Schema
from whoosh.lang.porter2 import stem as english_stem
from whoosh.filedb.compound import CompoundStorage
from whoosh.filedb.structfile import StructFile
from whoosh.scoring import BM25F

from .engine import FIELDS, IndexDoc
from .whoosh_merge import tiered_merge
from .word_forms import BASE_OF, STEMS

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
                    elif isinstance(value, io.IOBase) and not value.closed:
                        value.close()
                except Exception:  # noqa: BLE001 - half-built by the failed call; its file is another local
                    pass
        tb = tb.tb_next


# Whoosh's default stoplist lacks question words ("what", "did", "how"), which
# then match every message that asks something; this is a standard English list,
# with the pieces the tokenizer cuts from contractions and possessives ("Dave's"
# -> "dave" "s", "didn't" -> "didn" "t"): kept, "s" matched every "it's" (LoCoMo
# R@200w +0.5 without it). Not "won" and "don" (won't, don't): a verb and a name.
STOP_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on
once only or other our ours ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves tell know please also us let yet may might
s t d ll m re ve didn doesn isn wasn aren weren hasn haven hadn wouldn couldn shouldn
""".split())


class BaseFormFilter(Filter):
    """Each word form to the form kept: irregular inflections ("went" -> "go") and informal or
    British spellings ("mom" -> "mother", "colour" -> "color"); see word_forms.py."""

    def __call__(self, tokens):
        for t in tokens:
            base = BASE_OF.get(t.text)
            if base is not None:
                t.text = base
            yield t


def stem(word: str) -> str:
    """Porter2, except for the word families word_forms.STEMS keeps apart ("publications" is
    not "public")."""
    return STEMS.get(word) or english_stem(word)


def analyzer():
    """Tokenize, lowercase, drop stop words, map word forms to one form (BaseFormFilter), stem with
    Porter2 (the Snowball English stemmer) but for the families word_forms.STEMS keeps apart, the
    same for documents and queries."""
    # Not Whoosh's default Porter stemmer: its step 1b tests "ends in a double consonant" with an
    # anchored re.match, so it never undoubles: "running" -> "runn", "planned" -> "plann",
    # "shopping" -> "shopp", and a search for "run" or "plan" missed them (whoosh-reloaded 2.7.5).
    # Porter2 undoubles, and over-stems less ("generous" and "general" were both "gener").
    # words split at underscores too, so `pool_size` matches "pool size"; a dotted name is kept
    # whole and its named parts added (DottedPartsFilter), so "Bunny" finds "Bunny.net"
    return (RegexTokenizer(r"[^\W_]+(?:\.[^\W_]+)*") | DottedPartsFilter() | LowercaseFilter()
            | StopFilter(stoplist=STOP_WORDS, minsize=1) | BaseFormFilter() | StemFilter(stemfn=stem))


class DottedPartsFilter(Filter):
    """A dotted name ("Bunny.net", "staging.kestrel.dev", "main.py") as itself and as each part
    that holds a letter, the way hyphens and slashes already split words; a number ("3.50",
    "2.4.0") is one value and stays whole."""

    def __call__(self, tokens):
        for t in tokens:
            text = t.text  # read before yielding: the filters downstream rewrite t.text
            yield t
            if "." in text:
                for part in text.split("."):
                    if part and not part.isdigit() and any(c.isalpha() for c in part):
                        t.text = part
                        yield t


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


# Fuzzy and prefix expansion walk a field's term list: over the content field of
# 25k entries (first letter fixed, prefix on every field) an out-of-domain
# question cost 306 ms p50. Prefix expansion is kept to the short fields, and a
# fuzzy match on content must share the first two letters.
SHORT_FIELDS = ("title", "path_text", "tags")


# A query is a question, not a document, and its cost must not grow with whatever is
# sent (a whole file pasted into search_knowledge). Fuzzy matching builds a Levenshtein
# automaton the size of the term: one 8,000-character token took 12 s, 100 KB 203 s.
# Beyond these bounds the rest of the query is not searched: no question needs it, and
# every query answers in bounded time.
MAX_QUERY_CHARS = 2000   # characters of a query that are analyzed
MAX_QUERY_TERMS = 64     # distinct analyzed terms searched
MAX_EXPAND_CHARS = 30    # longer terms are matched exactly, never fuzzy or by prefix
MAX_EXPANDED_TERMS = 16  # terms of a query expanded (each walks a field's term list)


def _term_text(t) -> str:
    return t.decode("utf-8", "replace") if isinstance(t, bytes) else str(t)


class IndexBroken(Exception):
    """The on-disk index is missing or unreadable; the caller rebuilds it."""


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
        self._mutex = threading.RLock()
        self._analyzer = analyzer()

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
            with ix.writer(limitmb=self.limitmb) as w:
                w.mergetype = tiered_merge  # not MERGE_SMALL: see whoosh_merge.py
                for p in delete:
                    w.delete_by_term("path", p)
                for d in replace:
                    w.update_document(**self._fields(d))
        except _BROKEN as exc:
            self.close()
            raise IndexBroken(f"cannot write index: {exc!r}") from None

    def leftovers(self) -> list[Path]:
        """Folders a killed rebuild left beside the index (``whoosh.new``, ``whoosh.old``)."""
        return [p for p in (self.folder.with_name(self.folder.name + s) for s in (".new", ".old")) if p.exists()]

    def remove_leftovers(self) -> int:
        """Remove them; only under the tree's writer lock (a live rebuild writes ``.new``)."""
        gone = self.leftovers()
        for p in gone:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:  # a file or link where a folder was expected
                p.unlink()
        return len(gone)

    def rebuild(self, docs: Iterable[IndexDoc], *, total: int | None = None, progress=None) -> None:
        """Build a fresh index beside the old one, then swap folders."""
        self.close()
        new = self.folder.with_name(self.folder.name + ".new")
        self.remove_leftovers()
        new.mkdir(parents=True)
        ix = whoosh_index.create_in(str(new), _schema())
        procs = self.procs if (total or 0) >= 2000 else 1
        kwargs = {"procs": procs, "multisegment": True} if procs > 1 else {}
        with ix.writer(limitmb=self.limitmb, **kwargs) as w:
            for i, d in enumerate(docs, 1):
                w.add_document(**self._fields(d))
                if progress is not None:
                    progress(i)
        old = self.folder.with_name(self.folder.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if self.folder.exists():
            os.replace(self.folder, old)
        os.replace(new, self.folder)
        shutil.rmtree(old, ignore_errors=True)

    # -- reading ------------------------------------------------------------
    def terms(self, text: str) -> list[str]:
        """The distinct analyzed terms of a query, in order; at most ``MAX_QUERY_TERMS`` of
        its first ``MAX_QUERY_CHARS`` characters."""
        out: dict[str, None] = {}
        for tok in self._analyzer(text[:MAX_QUERY_CHARS]):
            out[tok.text] = None
            if len(out) == MAX_QUERY_TERMS:
                break
        return list(out)

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

    def idf(self, terms: list[str]) -> dict[str, float]:
        """Inverse document frequency of analyzed terms (the rarest field's), for coverage."""
        with self._mutex:
            s = self._get_searcher()
            return {t: max(s.idf(f, t) for f in ("title", "content")) for t in terms}

    def count(self) -> int:
        with self._mutex:
            return self._get_searcher().doc_count()
