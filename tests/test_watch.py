"""tree/index/watch.py: the file watcher (watchdog) behind a long-lived process's freshness checks.

Events arrive on watchdog's threads a moment after a change, so a test that expects a path to be
reported waits for it; one that expects a path to be left out first waits for a later change it
knows is reported (events are delivered in order)."""

from __future__ import annotations

import errno
import os
import shutil
import sys
import threading
import weakref
from pathlib import Path

import pytest

from helpers.watching import eventually, inotify_instances
from memgrove.tree.index.watch import TreeWatcher

# counts descriptors and threads in /proc; the watcher there is inotify
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: /proc and inotify")


class Asked:
    """A ``still_indexed`` that records the files the watcher asks about, and answers ``indexed``."""

    def __init__(self, indexed: bool = False):
        self.indexed = indexed
        self.paths: list[str] = []

    def __call__(self, paths: list[str]) -> bool:
        self.paths += paths
        return self.indexed


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "tree"
    (r / "a" / "b").mkdir(parents=True)
    (r / "a" / "b" / "x.md").write_text("# X\n")
    return r


@pytest.fixture
def watcher(root: Path):
    w = TreeWatcher(str(root))
    assert w.usable
    yield w
    w.close()


def reported(w: TreeWatcher, asked: Asked, rel: str) -> bool:
    """Wait until the watcher has asked about ``rel`` (it was reported as changed)."""

    def asked_about() -> bool:
        w.changed(asked)
        return rel in asked.paths

    return eventually(asked_about)


def test_a_hand_edit_is_reported(root, watcher) -> None:
    asked = Asked(indexed=False)
    assert watcher.changed(asked) is False
    (root / "a" / "b" / "x.md").write_text("# X edited\n")
    assert eventually(lambda: watcher.changed(asked))
    assert "a/b/x.md" in asked.paths
    assert watcher.changed(asked) is False   # drained: nothing new since


def test_a_file_still_as_indexed_is_no_change(root, watcher) -> None:
    # this process's own writes: their events arrive after they were indexed
    asked = Asked(indexed=True)
    (root / "a" / "b" / "y.md").write_text("# Y\n")
    assert reported(watcher, asked, "a/b/y.md")
    assert watcher.changed(asked) is False


def test_temp_dot_and_reserved_names_are_left_out(root, watcher) -> None:
    asked = Asked(indexed=True)
    (root / "a" / ".mg-tmp-1").write_text("temp")
    (root / "a" / ".x.md.swp").write_text("swap")
    (root / "_private").mkdir()
    (root / "_private" / "p.md").write_text("# P\n")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "h.md").write_text("# H\n")
    (root / "a" / "notes.txt").write_text("not an entry")
    (root / "a" / "last.md").write_text("# Last\n")    # reported: everything before it was delivered
    assert reported(watcher, asked, "a/last.md")
    assert asked.paths == ["a/last.md"]


def test_an_editor_save_by_rename_is_reported(root, watcher) -> None:
    asked = Asked(indexed=False)
    tmp = root / "a" / "b" / ".x.md.tmp"
    tmp.write_text("# X saved\n")
    os.replace(tmp, root / "a" / "b" / "x.md")
    assert reported(watcher, asked, "a/b/x.md")


def test_new_folders_are_watched(root, watcher) -> None:
    asked = Asked(indexed=True)
    (root / "n1" / "n2").mkdir(parents=True)
    (root / "n1" / "n2" / "first.md").write_text("# First\n")
    assert reported(watcher, asked, "n1/n2/first.md")
    # written well after the folder was created: only its own watch reports it
    (root / "n1" / "n2" / "second.md").write_text("# Second\n")
    assert reported(watcher, asked, "n1/n2/second.md")


def test_a_folder_removed_by_hand_is_a_change_one_this_process_removed_is_not(root, watcher) -> None:
    asked = Asked(indexed=True)   # the files inside are "as indexed": only the folder's event decides
    (root / "c").mkdir()
    (root / "c" / "context.md").write_text("# C\n")
    (root / "d").mkdir()
    (root / "d" / "context.md").write_text("# D\n")
    assert reported(watcher, asked, "d/context.md")
    assert watcher.changed(asked) is False
    watcher.expect([str(root / "c" / "context.md")])
    shutil.rmtree(root / "c")
    (root / "a" / "after_c.md").write_text("# After\n")
    assert reported(watcher, asked, "a/after_c.md")
    assert watcher.changed(asked) is False
    shutil.move(str(root / "d"), str(root.parent / "d_outside"))   # moved out of the tree
    assert eventually(lambda: watcher.changed(asked))


def test_symlinked_folders_are_not_followed(root, tmp_path, watcher) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "link").symlink_to(outside, target_is_directory=True)
    asked = Asked(indexed=True)
    (outside / "secret.md").write_text("# Outside\n")
    (root / "a" / "inside.md").write_text("# Inside\n")
    assert reported(watcher, asked, "a/inside.md")
    assert asked.paths == ["a/inside.md"]
    # nor by a watcher started with the link in place
    later = TreeWatcher(str(root))
    try:
        (outside / "again.md").write_text("# Again\n")
        (root / "a" / "inside2.md").write_text("# Inside\n")
        asked2 = Asked(indexed=True)
        assert reported(later, asked2, "a/inside2.md")
        assert asked2.paths == ["a/inside2.md"]
    finally:
        later.close()


def given_up(w: TreeWatcher) -> bool:
    """Wait until a check finds the watcher unusable."""

    def check() -> bool:
        w.changed(Asked(indexed=True))
        return not w.usable

    return eventually(check)


def test_the_tree_removed_ends_watching_for_good(root, watcher) -> None:
    shutil.rmtree(root)
    assert given_up(watcher)
    assert watcher.changed(Asked(indexed=True)) is True
    root.mkdir()
    assert watcher.changed(Asked(indexed=True)) is True   # forever: the caller scans


def test_a_folder_left_unwatched_ends_watching(root, watcher, monkeypatch) -> None:
    """watchdog only logs a warning when it cannot watch a new folder (the user's inotify watches
    used up): that folder's changes would go unseen, so the watcher gives up."""
    from watchdog.observers.inotify_c import InotifyFD

    real = InotifyFD.add_callback

    def no_watch_left(self, path, *args, **kwargs):
        if b"full" in path:
            raise OSError(errno.ENOSPC, "inotify watch limit reached")
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(InotifyFD, "add_callback", no_watch_left)
    (root / "full").mkdir()
    assert given_up(watcher)
    assert watcher.changed(Asked(indexed=True)) is True


def test_threads_and_the_inotify_instance_end_with_close(root) -> None:
    threads, instances = threading.active_count(), inotify_instances()
    w = TreeWatcher(str(root))
    assert w.usable and threading.active_count() > threads and inotify_instances() == instances + 1
    w.close()
    assert threading.active_count() == threads and inotify_instances() == instances
    assert w.changed() is True
    w.close()   # twice is fine


def test_a_dropped_watcher_ends_its_threads(root) -> None:
    threads, instances = threading.active_count(), inotify_instances()
    w = TreeWatcher(str(root))
    alive = weakref.ref(w)
    assert w.usable and inotify_instances() == instances + 1
    del w
    # nothing (watchdog's threads, the handler, the finalizer) kept it alive
    assert alive() is None
    assert threading.active_count() == threads and inotify_instances() == instances


def test_close_from_another_thread(root) -> None:
    threads = threading.active_count()
    w = TreeWatcher(str(root))
    t = threading.Thread(target=w.close)
    t.start()
    t.join()
    assert threading.active_count() == threads and not w.usable


def test_a_watcher_closed_right_after_it_started_leaves_no_instance(root) -> None:
    """watchdog's inotify reader, stopped before its thread first read, left its instance open
    (tree/index/watch.py ``_close_unread``): about one watcher in ten closed at once leaked."""
    instances = inotify_instances()
    for i in range(100):
        w = TreeWatcher(str(root))
        (root / "a" / "x.md").write_text(f"# X {i}\n")
        if i % 2:
            w.close()
        else:
            del w
        assert inotify_instances() == instances, i
