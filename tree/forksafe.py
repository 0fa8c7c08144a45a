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
- and before the fork, the thread that forks waits (at most ``IMPORT_WAIT_S``) for other threads'
  imports to finish: a module's import lock held by a vanished thread is never released either, and
  the module stays half-made in ``sys.modules`` (a child forked as the embedder imported NumPy to load
  the model waited for ever at its first search);
- what must not be closed in the child, because closing acts on the parent's files too (a SQLite
  connection's close may checkpoint and delete the WAL the parent is using), is handed to
  ``keep_for_ever``: never closed, never even freed, in that child.

Everything here is process-wide by nature (a fork copies the whole process), hence module state.
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_locks: "weakref.WeakSet[Any]" = weakref.WeakSet()     # locks and conditions made free in a child
# bound methods held weakly (their objects may go), for each moment of a fork
_hooks: dict[str, dict[int, "weakref.WeakMethod[Callable[[], None]]"]] = {"before": {}, "parent": {}, "child": {}}
_order = iter(range(1 << 62))
_kept: list[Any] = []      # what a child inherited and must never close
IMPORT_WAIT_S = 30.0       # the longest a fork waits for other threads' imports (each takes < 1 s)


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
            hooks[key] = weakref.WeakMethod(method, lambda _ref, k=key, h=hooks: h.pop(k, None))  # type: ignore[arg-type]


def _call(moment: str) -> None:
    for ref in list(_hooks[moment].values()):      # in registration order
        method = ref()
        if method is None:
            continue
        try:
            method()
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
    deadline = time.monotonic() + IMPORT_WAIT_S
    while _imports_under_way() and time.monotonic() < deadline:
        time.sleep(0.002)        # the GIL is released: the importing threads go on
    _call("before")


def _after_fork_in_child() -> None:
    for obj in list(_locks):
        obj._at_fork_reinit()
    _call("child")


os.register_at_fork(before=_before_fork, after_in_parent=lambda: _call("parent"),
                    after_in_child=_after_fork_in_child)
