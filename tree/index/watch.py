"""Change notification for a long-lived process, through watchdog (inotify on Linux, FSEvents on
macOS, ReadDirectoryChangesW on Windows).

Knowing that nobody touched the tree since the last check is what lets a warm process skip looking
at the files before each search and cache lookup. Where no native watcher runs (watchdog's polling
and kqueue backends are refused: they stat every file, or hold a descriptor per file), or when
watching fails (the user's inotify instances or watches used up, an overflowed event queue, the
tree removed), ``changed()`` answers True and the caller looks at the files itself — slower, never
wrong (index_sync.py).

Events arrive on watchdog's threads a moment after the change (a hand edit reached ``changed()``
in 0.5 ms at the median, 6 ms at the 99th percentile on a 2-core machine): a search that starts
sooner answers from the index as it was. Other memgrove processes' writes do not wait for them:
they bump the generation, which every check reads.

An event is not trusted by itself: a file counts as changed only if its (mtime, size) is no
longer what the index holds (``still_indexed``), so this process's own writes, whose events
arrive after they were indexed, do not make the next search scan. A folder removed or moved away
counts unless this process wrote its ``context.md`` (``expect``): its files were indexed as gone.

The observer's threads hold only ``_Seen``, never the watcher or the tree: a tree dropped without
``close()`` is collected, and the finalizer stops and joins the threads, which closes the inotify
instance (128 per user by default, shared by every program of that user).
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from typing import Any, Callable, Iterable

from ..base import forksafe
from ..base.fsio import TEMP_PREFIX
from ..entries.paths import CONTEXT_FILE

_NATIVE = ("InotifyObserver", "FSEventsObserver", "WindowsApiObserver")
_HIDDEN = (".", "_", TEMP_PREFIX)   # names the tree's scan skips (catalog.scan)
_MAX_PENDING = 10_000               # events kept between two checks; beyond, the caller scans anyway
_EXPECT_FOR = 60.0                  # seconds a context.md this process wrote is remembered


def _rel(roots: tuple[str, ...], path: str | bytes) -> str | None:
    """``path`` relative to the tree ("" for the tree itself, "/"-separated), or None when outside
    it or under a name the scan skips."""
    p = os.fsdecode(path)
    for root in roots:
        if p == root:
            return ""
        if p.startswith(root + os.sep):
            rel = p[len(root) + 1:].replace(os.sep, "/")
            return None if any(part.startswith(_HIDDEN) for part in rel.split("/")) else rel
    return None


class _Seen:
    """What the observer's thread reports between two checks (an event handler: ``dispatch``)."""

    def __init__(self, roots: tuple[str, ...]):
        self.roots = roots   # the tree as given and resolved (FSEvents reports resolved paths)
        self.mutex = forksafe.lock()
        self.files: set[str] = set()
        self.folders: set[str] = set()
        self.flooded = False   # more than _MAX_PENDING: changed, the paths were not kept
        self.lost = False      # events lost, a folder left unwatched, the tree gone: watching is over

    def dispatch(self, event: Any) -> None:
        kind = event.event_type
        if kind == "events_lost" or (kind == "deleted" and _rel(self.roots, event.src_path) == ""):
            self.lost = True
            return
        paths = [event.src_path] + ([event.dest_path] if kind == "moved" else [])
        with self.mutex:
            for path in paths:
                rel = _rel(self.roots, path)
                if not rel:
                    continue
                if event.is_directory:
                    # a folder created or moved in reports its files; one removed or moved away does not
                    if kind in ("deleted", "moved") and path == event.src_path:
                        self.folders.add(rel)
                elif rel.endswith(".md"):
                    self.files.add(rel)
            if len(self.files) + len(self.folders) > _MAX_PENDING:
                self.files, self.folders, self.flooded = set(), set(), True

    def unwatched(self, path: str | bytes) -> None:
        """watchdog could not watch ``path`` (a folder created since the start)."""
        if _rel(self.roots, path) is not None:
            self.lost = True


class _Unwatched(logging.Handler):
    """watchdog's inotify emitter only logs a warning when it cannot watch a new folder (watches used
    up) and leaves it unwatched: its changes would go unseen, so the watchers of that tree stop."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.seen: weakref.WeakSet[_Seen] = weakref.WeakSet()

    def emit(self, record: logging.LogRecord) -> None:
        if str(record.msg).startswith("Unable to watch") and record.args:
            for seen in list(self.seen):
                seen.unwatched(record.args[0])


_unwatched: _Unwatched | None = None
_unwatched_mutex = forksafe.lock()


def _report_unwatched(seen: _Seen) -> None:
    global _unwatched
    with _unwatched_mutex:
        if _unwatched is None:
            _unwatched = _Unwatched()
            logging.getLogger("watchdog.observers.inotify").addHandler(_unwatched)
        _unwatched.seen.add(seen)


def _stop(observer: Any) -> None:
    """Stop the observer and join its threads (the finalizer: it may run on any thread)."""
    me = threading.current_thread()
    if type(me).__module__.startswith("watchdog") or me.name.startswith("InotifyFD"):
        # the garbage collector ran on one of watchdog's threads, which cannot join itself
        threading.Thread(target=_stop, args=(observer,), name="memgrove-watch-stop", daemon=True).start()
        return
    observer.stop()
    if observer.is_alive():
        observer.join(timeout=10)
    _close_unread(observer)


def _close_unread(observer: Any) -> None:
    """watchdog 7.1's inotify reader leaves its descriptors (the instance and a pipe) open when it is
    stopped before its thread first read: ``_is_reading`` starts True, so ``close()`` leaves them to a
    reader that never comes. A watcher closed right after it started leaked its instance about one
    time in ten (tests/test_watch.py). Once that thread is gone, no one else closes them."""
    reader = getattr(observer, "_inotify_fd", None)
    if reader is None or reader.is_alive() or not hasattr(reader, "_close_resources"):
        return
    with reader._lock:
        if reader._closed and reader._is_reading:
            reader._is_reading = False
            reader._close_resources()


class TreeWatcher:
    """Watches every folder under ``root``; ``changed()`` says if anyone else wrote since."""

    def __init__(self, root: str):
        self.root = root
        self.usable = False
        self._expected: dict[str, float] = {}   # a context.md this process wrote -> until when
        self._mutex = forksafe.lock()
        self._observer: Any = None
        self._stopper: weakref.finalize | None = None
        self._seen = _Seen(tuple(dict.fromkeys((os.path.abspath(root), os.path.realpath(root)))))
        try:   # imported only here: a one-shot process never starts a watcher
            from watchdog import events as ev
            from watchdog.observers import Observer
        except ImportError:
            return
        if Observer.__name__ not in _NATIVE:
            return
        observer = Observer()
        self._stopper = weakref.finalize(self, _stop, observer)
        try:
            # symlinks are not followed (the default; inotify watches with IN_DONT_FOLLOW), as the scan
            # does not follow them; DirModifiedEvent is left out: every file event comes with one
            observer.schedule(self._seen, root, recursive=True, event_filter=[
                ev.FileCreatedEvent, ev.FileDeletedEvent, ev.FileModifiedEvent, ev.FileClosedEvent,
                ev.FileAttribEvent, ev.FileMovedEvent, ev.DirDeletedEvent, ev.DirMovedEvent, ev.EventsLostEvent])
            if Observer.__name__ == "InotifyObserver":
                _report_unwatched(self._seen)
            observer.start()   # watches the whole tree before returning (or raises: no instance left)
        except (OSError, RuntimeError):
            self.close()
            return
        self._observer = observer
        self.usable = True

    def expect(self, abs_paths: Iterable[str]) -> None:
        """Paths this process is about to write. A folder whose ``context.md`` is among them may
        vanish without counting as a change; files are checked against the index instead."""
        until = time.monotonic() + _EXPECT_FOR
        with self._mutex:
            for p in abs_paths:
                rel = _rel(self._seen.roots, p)
                if rel and rel.rpartition("/")[2] == CONTEXT_FILE:
                    self._expected[rel] = until

    def changed(self, still_indexed: Callable[[list[str]], bool] | None = None) -> bool:
        """True if the tree may have changed behind this process's back since the last call.

        ``still_indexed(paths)``: whether these files (relative paths) are as the index holds them;
        without it, any file event counts."""
        if not self.usable:
            return True
        seen = self._seen
        with seen.mutex:
            files, folders, flooded = seen.files, seen.folders, seen.flooded
            seen.files, seen.folders, seen.flooded = set(), set(), False
        if seen.lost or not self._running():
            self.close()
            return True
        if flooded:
            return True
        if folders:
            now = time.monotonic()
            with self._mutex:
                self._expected = {p: t for p, t in self._expected.items() if t > now}
                if any(self._expected.get(f"{f}/{CONTEXT_FILE}", 0) <= now for f in folders):
                    return True
        return bool(files) and (still_indexed is None or not still_indexed(sorted(files)))

    def _running(self) -> bool:
        # an emitter stops by itself when its folder is removed; a thread may die of an exception
        return self._observer.is_alive() and all(e.is_alive() for e in self._observer.emitters)

    def forked(self) -> None:
        """In a forked child (its tree calls it): the observer's threads were the parent's, and its
        locks may have been held by them, so none of its code runs here: stopped and joined
        never, freed never (``keep_for_ever``); only this process's copies of its inotify
        descriptors are closed (so that a child does not keep the parent's instance alive)."""
        self.usable = False
        if self._stopper is not None:
            self._stopper.detach()
            self._stopper = None
        observer, self._observer = self._observer, None
        if observer is None:
            return
        forksafe.keep_for_ever(observer)
        reader = getattr(observer, "_inotify_fd", None)   # watchdog 7's InotifyFD (see _close_unread)
        for name in ("_inotify_fd", "_kill_r", "_kill_w"):
            fd = getattr(reader, name, None)
            if isinstance(fd, int):
                try:
                    os.close(fd)
                except OSError:
                    pass

    def close(self) -> None:
        """Stop watching: the observer's threads are stopped and joined (from any thread)."""
        self.usable = False
        if self._stopper is not None:
            self._stopper()
