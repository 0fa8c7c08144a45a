"""Which entries' vectors the threads of this process are computing right now, so that no two
compute the same one and no search waits for one (``Claimed``, ``ready_vectors``).

Keys are the vector cache's (``vectors.key_of``: the encoder's name and the text), per
``vectors.db``. A thread claims the missing keys it is about to compute; a key another thread
holds is skipped, never waited for: its owner (the background embedder's batch, tree/meaning/embedder.py,
or another search) stores it, and it is looked up once more after the thread's own work. Without
this, 32 clients searching a tree whose 2,746 new entries the embedder had not reached yet each
computed the same candidates' vectors: 31 answers in 30 s, a read's p50 51.5 s.

A search computes at most ``SEARCH_EMBEDS`` vectors itself, and the searches of the process
together hold at most that many at a time (past it, a search computes none): 32 concurrent
searches computing 8 different vectors each would be the same stall by another route. What a
search leaves is ranked by its words (``by_meaning.with_meaning``, ``NO_VECTOR``) and handed to the
tree's background embedder, if it runs one (``Meaning._cosines``).

A search says it is ``coming`` before it reads its candidates (and waits, the first time, for the
model the embedder loads); a bulk claim (the embedder's batch, reindex) first lets the searches
on their way claim, for at most ``COMING_WAIT_S``: a user is waiting on them, not on the batch.
And while searches run, a bulk batch is followed by a pause of ``YIELD`` times its length (at most
``YIELD_MAX_S``): the embedder took a core and the GIL from them (32 clients searching a served
project with a 3,000-entry backlog: 5 answers a second against 15 with every vector ready, p50
9.0 s against 2.4 s). Searches never wait for the embedder.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from typing import Any, Iterator

from .vectors import Vectors, key_of

# the vectors one search may compute, and all searches at once: 8 entries of 256 tokens are about
# 0.4 s on one core (tree/meaning/embedding.py); a question's own vector is always computed (one short text)
SEARCH_EMBEDS = 8
COMING_WAIT_S = 1.0     # the longest a bulk claim lets the searches on their way go first
YIELD = 2.0             # while searches run, a bulk batch is followed by a pause of this many times its length
YIELD_MAX_S = 1.0       # and at most this long (closing waits for it)
# the cosine of an entry whose vector is not computed yet: ranking by meaning (tree/ranking/by_meaning.py)
# gives it the mean lift of the pool's entries that have one
NO_VECTOR = float("nan")


class Claims:
    """The process's keys in flight: ``claim`` them before computing, ``release`` after."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._held: dict[tuple[str, str], bool] = {}    # (vectors.db, key) -> held by a search
        self._by_searches = 0
        self._coming: set[tuple[str, int]] = set()      # (vectors.db, ticket) of searches yet to claim
        self._tickets = itertools.count()
        self._searched: dict[str, int] = {}              # searches begun, per vectors.db
        self._bulk: dict[str, tuple[int, float]] = {}   # the last bulk batch: searches begun before it, its seconds

    @contextlib.contextmanager
    def coming(self, db: str) -> Iterator[None]:
        """A search on its way to claim (the block ends with its claim): bulk claims let it go first."""
        me = (db, next(self._tickets))
        with self._cond:
            self._coming.add(me)
            self._searched[db] = self._searched.get(db, 0) + 1
        try:
            yield
        finally:
            with self._cond:
                self._coming.discard(me)
                self._cond.notify_all()

    def claim(self, db: str, keys: list[str], budget: int | None = None) -> list[str]:
        """Those of ``keys`` no thread holds, in order, now held by the caller; with a ``budget``
        (a search), at most as many as the searches' shared budget has left. Without one (a bulk
        claim), after the searches coming now have claimed (at most ``COMING_WAIT_S``)."""
        with self._cond:
            if budget is None:
                ahead = {c for c in self._coming if c[0] == db}
                self._cond.wait_for(lambda: not ahead & self._coming, COMING_WAIT_S)
            room = len(keys) if budget is None else max(0, budget - self._by_searches)
            mine: list[str] = []
            for k in keys:
                if len(mine) >= room:
                    break
                if (db, k) not in self._held:
                    self._held[(db, k)] = budget is not None
                    mine.append(k)
            if budget is not None:
                self._by_searches += len(mine)
            return mine

    def give_way(self, db: str) -> int:
        """Before a bulk batch: if searches began since the last one began, pause ``YIELD`` times its
        length (at most ``YIELD_MAX_S``). Returns the count of searches begun, for ``bulk_done``."""
        with self._cond:
            seen, took = self._bulk.get(db, (None, 0.0))
            busy = seen is not None and self._searched.get(db, 0) != seen
        if busy:
            time.sleep(min(YIELD * took, YIELD_MAX_S))
        with self._cond:
            return self._searched.get(db, 0)

    def bulk_done(self, db: str, began: int, seconds: float) -> None:
        with self._cond:
            self._bulk[db] = (began, seconds)

    def release(self, db: str, keys: list[str]) -> None:
        with self._cond:
            for k in keys:
                if self._held.pop((db, k), False):
                    self._by_searches -= 1

    def count(self, db: str | None = None) -> int:
        """Keys in flight (of one ``vectors.db``, or all)."""
        with self._cond:
            return sum(1 for d, _k in self._held if db is None or d == db)

    def _reset(self) -> None:
        # in a forked child the threads that held these do not exist: nothing is in flight there
        self._cond = threading.Condition()
        self._held = {}
        self._by_searches = 0
        self._coming = set()
        self._searched = {}
        self._bulk = {}


CLAIMS = Claims()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=CLAIMS._reset)


class Claimed:
    """The vectors of ``texts``: the stored ones looked up and the missing ones this thread may
    compute claimed at once, each only if no other thread is computing it, at most ``budget`` of
    them (None: all; a search passes ``SEARCH_EMBEDS``). ``vectors()`` computes those, stores them,
    lets them go, and looks up again the ones another thread was computing, never waiting for them:
    work done in between (a search's question) gives them time to be stored. Used as a context
    manager, the claims are let go on leaving, whatever happened."""

    def __init__(self, texts: list[str], encoder: Any, store: Vectors, budget: int | None = None) -> None:
        self._encoder, self._store, self._db = encoder, store, str(store.file)
        self._keys = {t: key_of(encoder.name, t) for t in dict.fromkeys(texts)}
        self._width = 4 * encoder.dim          # float32: a row of another width is not this model's
        self._have = self._stored(sorted(set(self._keys.values())))
        self._missing = list(dict.fromkeys(k for k in self._keys.values() if k not in self._have))
        self._bulk = budget is None and bool(self._missing)
        if self._bulk:
            self._began, self._t0 = CLAIMS.give_way(self._db), time.monotonic()
        self._mine = CLAIMS.claim(self._db, self._missing, budget)

    def __enter__(self) -> "Claimed":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def _stored(self, keys: list[str]) -> dict[str, bytes]:
        return {k: v for k, v in self._store.get_many(keys).items() if len(v) == self._width}

    def release(self) -> None:
        CLAIMS.release(self._db, self._mine)
        self._mine = []

    def vectors(self) -> dict[str, Any]:
        """Unit vectors by text, of those ``texts`` that have one now."""
        import numpy as np

        try:
            if self._mine:
                by_key = {k: t for t, k in self._keys.items()}
                made = np.asarray(self._encoder.encode([by_key[k] for k in self._mine]), dtype=np.float32)
                fresh = {k: row.tobytes() for k, row in zip(self._mine, made)}
                self._store.put_many(fresh.items())
                self._have.update(fresh)
        finally:
            self.release()
            if self._bulk:
                CLAIMS.bulk_done(self._db, self._began, time.monotonic() - self._t0)
        others = [k for k in self._missing if k not in self._have]
        if others:
            self._have.update(self._stored(others))
        return {t: np.frombuffer(self._have[k], dtype=np.float32) for t, k in self._keys.items() if k in self._have}


def ready_vectors(texts: list[str], encoder: Any, store: Vectors, *,
                  budget: int | None = None) -> dict[str, Any]:
    """The unit vectors (by text) of those ``texts`` that have one, computing the missing ones as
    ``Claimed`` allows; a text missing from the result has no vector yet."""
    with Claimed(texts, encoder, store, budget) as job:
        return job.vectors()
