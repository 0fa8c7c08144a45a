"""Entries' vectors computed ahead of the searches that need them (ranking by meaning,
``semantic_weight``), by one background thread per tree of a long-lived process.

A server, an MCP server or a program holding a ``Memory`` opens its tree with ``embed_ahead``
(the default; the CLI's one-shot commands turn it off: their process exits before the work would
pay, and leave the vectors to this thread of a running server, ``catch_up``, or to a detached
background job, tree/meaning/embed_job.py). With meaning on, the thread then

1. loads the encoder, so the first search does not wait for the model;
2. computes the vector of every entry the index takes in anew (a write, a hand edit the scan or
   watcher found), and those a search left without one, queued by path: a path queued twice is
   embedded once, from its text as it is then; a few waiting paths wait ``SETTLE_S`` first; past
   ``QUEUE_MAX`` waiting paths, more are dropped (``dropped``) and left to the searches or
   ``memgrove reindex``;
3. between those, catches up with the entries of the whole tree that lack a vector (a tree that
   existed before meaning was on), ``CATCH_UP`` entries at a time.

It never holds the writer lock (it reads the files as a search does, and vectors are keyed by
their text: nothing here can be stale) and never fails a write: an error is a notice on the tree.
A search never waits for it: an entry without a vector yet is ranked by its words, and a search
computes a few missing vectors itself, none this thread is computing (``Meaning._cosines``,
tree/meaning/vector_claims.py). It encodes ``BATCH`` texts at a time, which
``MiniLM.encode`` runs on one BLAS thread: on a 2-core machine a writer keeps the other core.
``close()`` lets it finish at most the batch it is on. The thread refers to the tree weakly: a
tree dropped without ``close()`` is collected and its thread ends.

A process forked with the tree open (gunicorn ``--preload``, Celery, ``multiprocessing``) has no
thread of the parent: there the embedder forgets the parent's queue (the parent's thread embeds
it) and starts a thread of its own at the child's first write (tree/base/forksafe.py).
"""

from __future__ import annotations

import atexit
import itertools
import threading
import time
import weakref
from typing import Any, Protocol

from ..base import forksafe
from .embedding import FEW, Encoder
from .matrix import Matrix
from .vector_claims import SEARCH_EMBEDS, ready_vectors
from .vectors import Vectors

BATCH = FEW            # texts per encode: MiniLM.encode runs as few as this on one BLAS thread
CATCH_UP = 16          # entries of the catch-up read and looked up at a time, between two writes' batches
QUEUE_MAX = 10_000     # paths waiting at most; beyond, a write's vectors are left to searches and reindex
CLOSE_TIMEOUT_S = 30.0  # what closing waits for the batch (or the model's loading) under way
# a write of a few entries waits this long in the queue (the catch-up goes on meanwhile): a program
# that reads back what it wrote at once computes those vectors in its search, as many as a search
# may (SEARCH_EMBEDS), instead of finding them under way here and ranking them by their words
SETTLE_S = 0.5
EXIT_WAIT_S = 10.0     # what a process exiting with trees unclosed waits for their threads' batches


class EmbeddingTree(Protocol):
    """What the embedder uses of the tree it works for (``ContextTree`` hands itself in): the
    encoder, the texts entries are embedded from, where vectors are kept, the paths of the
    catalog, and a notice for what went wrong."""
    vectors: Vectors
    catalog: Any   # index.catalog.Catalog: ``files()``

    def meaning_encoder(self) -> Encoder: ...
    def _meaning_texts(self, paths: list[str]) -> dict[str, str]: ...
    def _vector_matrix(self) -> Matrix: ...
    def notice(self, text: str) -> None: ...


class _Work:
    """What the thread and the tree share: the paths waiting, and whether to stop."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.waiting: dict[str, float] = {}   # path -> when queued; insertion-ordered: the oldest first
        self.stopping = False
        self.dropped = 0
        self.failed = False                   # told once: the next failures would say the same
        self.busy = True                      # loading, or a batch under way
        self.unchecked = -1                   # entries the catch-up has yet to look at (-1: not listed yet)
        self.again = False                    # look at every entry again (``catch_up``)

    def stop(self) -> None:
        with self.cond:
            self.stopping = True
            self.cond.notify_all()

    def forked(self) -> None:
        """In a forked child: its lock may have been held by the parent's thread, which is not here."""
        self.cond = threading.Condition()
        self.waiting = {}
        self.busy = False


class Embedder:
    """The background embedder of one tree (``ContextTree.embedder``); started at once."""

    def __init__(self, tree: "EmbeddingTree"):
        self._work = _Work()
        self._tree = weakref.ref(tree)
        self._thread: threading.Thread | None = None
        weakref.finalize(self, self._work.stop)   # a tree dropped unclosed: its thread ends
        _LIVE.add(self)
        forksafe.in_child(self._forked)
        self._start()

    def _start(self) -> None:
        self._thread = threading.Thread(target=_run, args=(self._tree, self._work),
                                        name="memgrove-embedder", daemon=True)
        self._thread.start()

    def _forked(self) -> None:
        self._work.forked()
        self._thread = None      # the parent's: started again at the first write (``written``)

    @property
    def dropped(self) -> int:
        """Paths left to the searches because the queue was full."""
        return self._work.dropped

    def alive(self) -> bool:
        thread = self._thread
        return thread is not None and thread.is_alive()

    def backlog(self) -> dict[str, int | bool]:
        """What is pending, for ``vector_state``: paths ``queued`` (writes', and the ones searches
        left, tree/meaning/vector_claims.py), entries the catch-up has yet to look at (``unchecked``, -1
        while the model loads), ``dropped`` past ``QUEUE_MAX``, and whether the thread ``running``."""
        work = self._work
        with work.cond:
            return {"queued": len(work.waiting), "unchecked": work.unchecked, "dropped": work.dropped,
                    "running": self.alive()}

    def written(self, paths: list[str]) -> None:
        """Queue these entries' vectors (cheap: safe under the writer lock; never raises)."""
        work = self._work
        with work.cond:
            for p in paths:
                if p not in work.waiting:
                    if len(work.waiting) >= QUEUE_MAX:
                        work.dropped += 1
                        continue
                    work.waiting[p] = time.monotonic()
            work.cond.notify()
            if self._thread is None and not work.stopping:    # a forked child's first write
                try:
                    self._start()
                except RuntimeError:     # no thread can be started: the searches compute these
                    self._thread = None

    def behind(self) -> bool:
        """More to do than a search computes itself: the catch-up under way, or more paths queued than
        ``SEARCH_EMBEDS``. Searches then compute none (``Meaning._cosines``): 32 clients searching
        a served tree beside a 3,000-entry catch-up each computed their share of 8 (benchmarks/
        results/backlog_load.md)."""
        work = self._work
        with work.cond:
            return self.alive() and (work.unchecked > 0 or len(work.waiting) > SEARCH_EMBEDS)

    def catch_up(self) -> None:
        """Look at every entry again, between two writes' batches: another process wrote entries
        this one's index did not take in anew (a CLI command beside a server, memgrove/cli/vectors_ahead.py)."""
        work = self._work
        with work.cond:
            work.again = True
            work.cond.notify()

    def idle(self) -> bool:
        """Nothing queued nor under way, the catch-up over (or the thread gone)."""
        with self._work.cond:
            thread = self._thread
            return thread is None or not thread.is_alive() or not (self._work.busy or self._work.waiting)

    def close(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        """Stop once the batch under way is done (waiting at most ``timeout``)."""
        self._work.stop()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)


_LIVE: "weakref.WeakSet[Embedder]" = weakref.WeakSet()


def _at_exit() -> None:
    """The interpreter exits with trees never closed (a script's last line wrote, no ``with``): their
    threads stop after the batch under way, waited for at most ``EXIT_WAIT_S``. A daemon thread
    still inside ONNX Runtime when the interpreter finalizes aborts the process ("terminate called
    without an active exception", exit status 134) though every write was done."""
    live = list(_LIVE)
    for e in live:
        e._work.stop()
    deadline = time.monotonic() + EXIT_WAIT_S
    for e in live:
        thread = e._thread
        if thread is not None and thread.is_alive() and thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))


atexit.register(_at_exit)


def _run(ref: "weakref.ref[EmbeddingTree]", work: _Work) -> None:
    tree = ref()
    if tree is None:
        return
    try:
        with forksafe.no_fork():        # a fork waits for each step of this thread (tree/base/forksafe.py)
            tree.meaning_encoder()      # the first search finds the model loaded
            backlog = sorted(tree.catalog.files())
        work.unchecked = len(backlog)
    except Exception as exc:  # noqa: BLE001 - no model, a damaged catalog: the searches do it all
        tree.notice(f"entries' vectors are not computed ahead ({exc}); searches compute them")
        return
    del tree
    while True:
        if work.again:
            work.again = False
            tree = ref()
            if tree is None:
                return
            try:
                with forksafe.no_fork():
                    backlog = sorted(set(backlog) | set(tree.catalog.files()))
                work.unchecked = len(backlog)
            except Exception:  # noqa: BLE001 - a damaged catalog: the searches compute what they need
                pass
            del tree
        with work.cond:
            while not (work.stopping or work.waiting or backlog or work.again):
                work.busy = False
                work.cond.wait()
            if work.stopping:
                return
            if work.again and not work.waiting:
                continue
            work.busy = True
            young = SETTLE_S - (time.monotonic() - next(iter(work.waiting.values()), 0.0))
            settling = 0 < len(work.waiting) <= SEARCH_EMBEDS and young > 0
            if work.waiting and not settling:     # what was just written first, then the catch-up
                paths = list(itertools.islice(work.waiting, BATCH))
                for p in paths:
                    del work.waiting[p]
            elif backlog:
                paths, backlog = backlog[:CATCH_UP], backlog[CATCH_UP:]
                work.unchecked = len(backlog)
            else:
                work.cond.wait(young)
                continue
        tree = ref()
        if tree is None:
            return
        try:
            _embed(tree, paths, work)
        except Exception as exc:  # noqa: BLE001 - the write stands; a search computes these vectors
            if not work.failed:
                work.failed = True
                tree.notice(f"entries' vectors were not computed ahead ({type(exc).__name__}: {exc}); "
                            "searches compute them")
        del tree


def _embed(tree: "EmbeddingTree", paths: list[str], work: _Work) -> None:
    """The vectors of those of ``paths`` that lack one, ``BATCH`` texts at a time (``ready_vectors``
    skips the stored ones, and those a search is computing); stops between two batches when closing."""
    with forksafe.no_fork():        # a fork waits for each step (tree/base/forksafe.py)
        encoder = tree.meaning_encoder()
        texts = list(dict.fromkeys(tree._meaning_texts(paths).values()))
    for s in range(0, len(texts), BATCH):
        if work.stopping:
            return
        with forksafe.no_fork():
            ready_vectors(texts[s:s + BATCH], encoder, tree.vectors)
    with forksafe.no_fork():
        tree.vectors.checkpoint()
