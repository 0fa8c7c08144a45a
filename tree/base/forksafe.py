"""What a memory holds, made to survive ``fork()``: gunicorn ``--preload``, Celery's prefork pool and
``multiprocessing`` on Linux fork a process that has opened memories and started their threads.

A forked child has one thread, the one that called ``fork()``; every other thread is gone, but what
they held is copied as it was. A lock a vanished thread held stays locked for ever (a child's first
search waited on the lock around loading the encoder, held by the parent's embedder thread: it
never answered). A SQLite connection, an HTTP connection or an index reader opened before the fork
is shared with the parent: used by both, it garbles both. So, in a forked child (all through
``os.register_at_fork``, which CPython runs in the thread that forks):

- ``lock()``, ``rlock()`` and ``condition()`` are made free again (CPython resets its own
  ``threading`` locks the same way, ``_at_fork_reinit``);
- each object registered with ``in_child(obj.method)`` gets its method called: it drops its threads,
  its connections and its readers, to start or open new ones lazily (none is started inside the
  fork: the child may exec or exit at once);
- before the fork, the thread that forks waits (at most ``FORK_WAIT_S``) for the calls other
  threads make inside ``no_fork()``: a search, a write, a step of the background embedder, a call
  into the model's libraries. A library's own lock held by a thread amid a call stays locked in the
  child too (SQLite's allocator, a Rust ``Once`` in the tokenizer: children forked as the embedder
  read the catalog or loaded the model waited for ever), and OpenBLAS's fork handler itself waits
  for a matrix product under way (the parent's ``fork()`` hung);
- and (at most ``IMPORT_WAIT_S``) for other threads' imports to finish: a module's import lock held
  by a vanished thread is never released either, and the module stays half-made in ``sys.modules``
  (a child forked as the embedder imported NumPy to load the model waited for ever at its first
  search);
- what must not be closed in the child, because closing acts on the parent's files too (a SQLite
  connection's close may checkpoint and delete the WAL the parent is using), is handed to
  ``keep_for_ever``: never closed, never even freed, in that child; a finalizer that removes what
  the parent still uses is made ``here_only``.

Everything here is process-wide by nature (a fork copies the whole process), hence module state.
"""

from __future__ import annotations

import functools
import os
import threading
import time
import weakref
from contextlib import contextmanager
from typing import Any, Callable, Iterator, TypeVar

T = TypeVar("T")

_locks: "weakref.WeakSet[Any]" = weakref.WeakSet()     # locks and conditions made free in a child
# bound methods, their objects held weakly (they may go), for each moment of a fork
_hooks: dict[str, dict[int, tuple["weakref.ref[Any]", Callable[[Any], None]]]] = {"before": {}, "parent": {}, "child": {}}
_order = iter(range(1 << 62))
_kept: list[Any] = []      # what a child inherited and must never close
IMPORT_WAIT_S = 30.0       # the longest a fork waits for other threads' imports (each takes < 1 s)
FORK_WAIT_S = 30.0         # the longest a fork waits for the no_fork() calls under way (a search, a write)


def _tracked(obj: T) -> T:
    _locks.add(obj)
    return obj


def lock() -> threading.Lock:
    """A ``threading.Lock`` that a forked child finds free."""
    return _tracked(threading.Lock())


def rlock() -> threading.RLock:
    """A ``threading.RLock`` that a forked child finds free."""
    return _tracked(threading.RLock())


def condition(of: Any = None) -> threading.Condition:
    """A ``threading.Condition`` (on ``of``, else its own lock) that a forked child finds free,
    with no waiter (the waiters were the parent's threads)."""
    return _tracked(threading.Condition(of))


def in_child(method: Callable[[], None]) -> None:
    """Call ``method`` (a bound method, held weakly: its object may go) in every child forked from
    now on. Methods run in the order they were registered, after every lock was made free; one
    that raises is skipped (a child must get to run its own code)."""
    around_fork(in_child=method)


def around_fork(*, before: Callable[[], None] | None = None, in_parent: Callable[[], None] | None = None,
                in_child: Callable[[], None] | None = None) -> None:
    """``in_child`` as above; ``before``: called in the thread that forks, just before (it may take
    the object's own lock briefly); ``in_parent``: in the parent, just after."""
    for moment, method in (("before", before), ("parent", in_parent), ("child", in_child)):
        if method is not None:
            key, hooks = next(_order), _hooks[moment]
            owner = weakref.ref(method.__self__, lambda _ref, k=key, h=hooks: h.pop(k, None))  # type: ignore[attr-defined]
            hooks[key] = (owner, method.__func__)  # type: ignore[attr-defined]


def _call(moment: str) -> None:
    for owner, fn in list(_hooks[moment].values()):      # in registration order
        obj = owner()
        if obj is None:
            continue
        try:
            fn(obj)
        except Exception:  # noqa: BLE001 - a part that cannot get ready stays unused; the rest go on
            pass


def here_only(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[[], None]:
    """``fn(*args, **kwargs)``, done only in this process, never in a child forked from it: for a
    finalizer that removes what the parent still uses (finalizers also run at a child's exit)."""
    pid = os.getpid()

    def call() -> None:
        if os.getpid() == pid:
            fn(*args, **kwargs)
    return call


def keep_for_ever(obj: Any) -> None:
    """Never close nor free ``obj`` in this (forked) process: it is the parent's as much as ours.
    A reference from a module is not enough: at the child's exit the interpreter clears modules and
    frees what they held; an extra count that nothing gives back is."""
    import ctypes     # here: importing memgrove stays cheap

    _kept.append(obj)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))


class _Calls:
    """The calls under way in ``no_fork()``: many at once, and re-entrant in a thread (a search
    that loads the model, then multiplies matrices). A fork waits until none is under way in
    another thread; a call starting meanwhile waits for the fork (milliseconds). Waiting on a
    condition releases the GIL: the calls under way finish.

    A call may outlast ``FORK_WAIT_S`` (a search computing many vectors on a busy machine): the fork
    then goes ahead, but never inside a ``native`` call (a matrix product, the tokenizer, the
    model's loading: OpenBLAS's fork handler would wait for ever), which it waits for without a
    bound: each lasts milliseconds, the loading seconds, and none starts while the fork waits."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._running = 0     # threads inside a call
        self._native = 0      # threads inside a native call
        self._phase = 0       # 1: a fork waits for the calls; 2: it goes ahead, between native calls
        self._mine = threading.local()

    @contextmanager
    def __call__(self, *, native: bool = False) -> Iterator[None]:
        depth = getattr(self._mine, "depth", 0)
        with self._cond:
            while self._phase if not depth else (native and self._phase == 2):
                self._cond.wait()
            self._running += not depth
            self._native += native
        self._mine.depth = depth + 1
        try:
            yield
        finally:
            self._mine.depth = depth
            with self._cond:
                self._running -= not depth
                self._native -= native
                self._cond.notify_all()

    def before_fork(self) -> None:
        mine = 1 if getattr(self._mine, "depth", 0) else 0     # a call of the forking thread itself
        deadline = time.monotonic() + FORK_WAIT_S
        with self._cond:
            self._phase = 1
            while self._running > mine and (left := deadline - time.monotonic()) > 0:
                self._cond.wait(left)
            self._phase = 2
            while self._native:
                self._cond.wait()

    def after_fork_in_parent(self) -> None:
        with self._cond:
            self._phase = 0
            self._cond.notify_all()

    def after_fork_in_child(self) -> None:
        mine = getattr(self._mine, "depth", 0)
        self._cond = threading.Condition()   # its waiters and holders were the parent's threads
        self._running, self._native, self._phase = (1 if mine else 0), 0, 0


no_fork = _Calls()
"""``with forksafe.no_fork():`` — this process does not fork until the block is done (bounded)."""

F = TypeVar("F", bound=Callable[..., Any])


def no_fork_amid(fn: F) -> F:
    """A method or function run inside ``no_fork()``."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        with no_fork():
            return fn(*args, **kwargs)
    return call  # type: ignore[return-value]


def _imports_under_way() -> bool:
    """Another thread holds a module's import lock (it is importing that module). CPython resets
    its global import lock in a child, not these (importlib's private ``_module_locks``: read
    defensively; where they are not found, nothing is waited for)."""
    me = threading.get_ident()
    try:
        from importlib import _bootstrap
        refs = list(_bootstrap._module_locks.values())   # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - another Python's import system: nothing to wait for
        return False
    for ref in refs:
        held = ref()
        if held is not None and getattr(held, "count", 0) and getattr(held, "owner", me) != me:
            return True
    return False


def _before_fork() -> None:
    no_fork.before_fork()
    deadline = time.monotonic() + IMPORT_WAIT_S
    while _imports_under_way() and time.monotonic() < deadline:
        time.sleep(0.002)        # the GIL is released: the importing threads go on
    _call("before")


def _after_fork_in_parent() -> None:
    no_fork.after_fork_in_parent()
    _call("parent")


def _after_fork_in_child() -> None:
    no_fork.after_fork_in_child()
    for obj in list(_locks):
        obj._at_fork_reinit()
    _call("child")


# Other fork handlers take locks before a fork (logging's module lock): a thread needing one (to log,
# to make a log handler: the watcher does) could not finish its call while ours waits for it (a fork
# waited its 30 s so). CPython runs "before" handlers last registered first: logging's is registered
# first. (concurrent.futures' takes its shutdown lock, which no call inside no_fork() needs.)
import logging  # noqa: E402,F401

os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                    after_in_child=_after_fork_in_child)
