"""The query cache (diskcache under ``.memgrove/cache/``): tiers 0 and 1.

An entry is ``{question, tokens, answer, fingerprint}`` under the normalized
question. It is served only while the tree's fingerprint is unchanged, so an
answer never outlives a change to the tree. The fuzzy tier compares
stopword-filtered token sets (Jaccard) but refuses a match whose numbers,
names or negations differ: "the 2023 release" is not "the 2024 release".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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


class QueryCache:
    def __init__(self, folder: Path, *, size_limit: int = 64 * 2**20, ttl: float | None = 7 * 86400,
                 fuzzy_entries: int = 2000):
        self.folder = folder
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

    def get_exact(self, question: str, fingerprint: str) -> dict[str, Any] | None:
        item = self._c().get(normalize_query(question))
        if item and item.get("fingerprint") == fingerprint:
            return item
        return None

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

    def put(self, question: str, fingerprint: str, answer: dict[str, Any]) -> None:
        key = normalize_query(question)
        c = self._c()
        with c.transact():  # read-modify-write of the fuzzy index must be atomic across processes
            c.set(key, {"question": question, "fingerprint": fingerprint, "answer": answer}, expire=self.ttl)
            index = [row for row in c.get(_INDEX_KEY, []) if row[0] != key and row[3] == fingerprint]
            index.append((key, sorted(content_tokens(question)), sorted(anchors(question)), fingerprint))
            c.set(_INDEX_KEY, index[-self.fuzzy_entries:])

    def clear(self) -> None:
        self._c().clear()
