"""The query cache (diskcache under ``.memgrove/cache/``): tiers 0 and 1.

An entry is ``{question, tokens, answer, fingerprint}`` under the normalized
question. It is served only while the tree's fingerprint is unchanged, so an
answer never outlives a change to the tree. The fuzzy tier compares
stopword-filtered token sets (Jaccard) but refuses a match whose numbers,
names or negations differ: "the 2023 release" is not "the 2024 release".

The cache is pure derived data: a damaged one (garbage in ``cache.db``, a value
that no longer unpickles) is emptied with a notice, and the question is answered
as a miss.
"""

from __future__ import annotations

import functools
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any, Callable

from .sqlite import is_damage

_WORD = re.compile(r"[^\W_]+(?:[.'’][^\W_]+)*", re.UNICODE)
NEGATIONS = frozenset({"not", "no", "never", "none", "without", "nobody", "nothing", "neither", "nor", "cannot",
                       "didn't", "doesn't", "don't", "isn't", "wasn't", "aren't", "weren't", "won't", "can't"})
STOP = frozenset("""a an and are as at be been by did do does for from had has have how i if in into is it its me my
of on or our so that the their them then there these they this to was we were what when where which who whom why
will with would you your about can could should tell please know""".split())
_INDEX_KEY = "__fuzzy_index__"


def normalize_query(q: str) -> str:
    """Lowercase, whitespace collapsed: the exact-cache key."""
    return " ".join(q.lower().split())


def content_tokens(q: str) -> frozenset[str]:
    return frozenset(w for w in (t.lower() for t in _WORD.findall(q)) if w not in STOP)


def anchors(q: str) -> frozenset[str]:
    """Tokens whose change changes the meaning: numbers, names, negations."""
    words = _WORD.findall(q)
    out = set()
    for w in words:
        low = w.lower()
        if any(c.isdigit() for c in w) or low in NEGATIONS:
            out.add(low)
        elif w[:1].isupper() and low not in STOP:
            # a capitalized word: a name (first word too: "Ana leads ..." is not "Ben leads ...")
            out.add(low)
    return frozenset(out)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


_RETRY = object()


def _repairing(after_reset: Any = _RETRY) -> Callable:
    """A cache method that survives a damaged cache: it is reset, then the call answers
    ``after_reset`` (a miss) or, by default, runs once more."""

    def wrap(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def method(self: "QueryCache", *args: Any, **kwargs: Any) -> Any:
            try:
                return fn(self, *args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - unpickling damaged bytes raises almost anything
                if not _damage(exc):
                    raise
                self.reset(f"{type(exc).__name__}: {exc}"[:160])
            return fn(self, *args, **kwargs) if after_reset is _RETRY else after_reset

        return method

    return wrap


def _damage(exc: Exception) -> bool:
    """A damaged cache, not a busy one (diskcache's Timeout, SQLite's "locked")."""
    if isinstance(exc, sqlite3.DatabaseError):
        return is_damage(exc)
    return type(exc).__name__ != "Timeout" and not isinstance(exc, (OSError, MemoryError))


class QueryCache:
    def __init__(self, folder: Path, *, size_limit: int = 64 * 2**20, ttl: float | None = 7 * 86400,
                 fuzzy_entries: int = 2000, notices: list[str] | None = None):
        self.folder = folder
        self.notices = notices if notices is not None else []
        self.size_limit = size_limit
        self.ttl = ttl
        self.fuzzy_entries = fuzzy_entries
        self._cache = None

    def _c(self):
        if self._cache is None:
            import diskcache  # imported here: opening a memory for writing should not pay for it

            # plain Cache, not FanoutCache: the latter silently drops writes under contention
            self._cache = diskcache.Cache(str(self.folder), size_limit=self.size_limit, timeout=5)
        return self._cache

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def check(self) -> str | None:
        """Why the cache is damaged, or None (``doctor``)."""
        try:
            c = self._c()
            db = sqlite3.connect(f"file:{self.folder / 'cache.db'}?mode=ro", uri=True, timeout=5)
            try:
                bad = db.execute("PRAGMA quick_check").fetchone()[0]
            finally:
                db.close()
            if bad != "ok":
                return f"integrity check: {bad}"
            for key in c.iterkeys():
                c.get(key)
        except Exception as exc:  # noqa: BLE001 - see _repairing
            if not _damage(exc):
                raise
            self.close()
            return f"{type(exc).__name__}: {exc}"[:160]
        return None

    def reset(self, why: str) -> None:
        """Empty a damaged cache: remove its files (it is derived; nothing is lost but speed)."""
        try:
            self.close()
        except Exception:  # noqa: BLE001 - closing a damaged cache must not stop its reset
            self._cache = None
        shutil.rmtree(self.folder, ignore_errors=True)
        note = f"reset the damaged query cache ({why}); answers are cached again as they are asked"
        if note not in self.notices:
            self.notices.append(note)

    @_repairing(None)
    def get_exact(self, question: str, fingerprint: str) -> dict[str, Any] | None:
        item = self._c().get(normalize_query(question))
        if item and item.get("fingerprint") == fingerprint:
            return item
        return None

    @_repairing(None)
    def get_fuzzy(self, question: str, fingerprint: str, *, threshold: float = 0.6,
                  min_tokens: int = 2) -> tuple[dict[str, Any], float] | None:
        tokens = content_tokens(question)
        if len(tokens) < min_tokens:
            return None
        mine = anchors(question)
        best, best_sim = None, 0.0
        for key, toks, anc, fp in self._c().get(_INDEX_KEY, []):
            toks = frozenset(toks)
            # an anchor only one side has changes the meaning, unless the other side has
            # the same word too (a capitalized first word that is no name, say)
            if fp != fingerprint or (frozenset(anc) ^ mine) - (tokens & toks):
                continue
            sim = jaccard(tokens, toks)
            if sim >= threshold and sim > best_sim:
                best, best_sim = key, sim
        if best is None:
            return None
        item = self._c().get(best)
        if not item or item.get("fingerprint") != fingerprint:
            return None
        return item, best_sim

    @_repairing()
    def put(self, question: str, fingerprint: str, answer: dict[str, Any]) -> None:
        key = normalize_query(question)
        c = self._c()
        with c.transact():  # read-modify-write of the fuzzy index must be atomic across processes
            c.set(key, {"question": question, "fingerprint": fingerprint, "answer": answer}, expire=self.ttl)
            index = [row for row in c.get(_INDEX_KEY, []) if row[0] != key and row[3] == fingerprint]
            index.append((key, sorted(content_tokens(question)), sorted(anchors(question)), fingerprint))
            c.set(_INDEX_KEY, index[-self.fuzzy_entries:])

    @_repairing()
    def clear(self) -> None:
        self._c().clear()
