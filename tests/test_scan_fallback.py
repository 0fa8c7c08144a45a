"""A long-lived process without a watcher (watch off, or no watch left): a search looks at the
folders, not at every file (issue 30, item 6). A file added, removed or renamed changes its
folder's mtime and is seen at the next search; a file edited in place changes no folder and is
seen at the next full scan, at most ``scan_interval`` seconds later. A process that is not yet
long-lived (``watch_after``) scans at every search, so a short script or a CLI call sees every edit."""

from __future__ import annotations

import os
import time

import pytest

from memgrove import Memory
from memgrove.tree.index import sync as index_sync


def op(path: str, title: str, content: str) -> dict:
    return {"op": "ADD", "path": path, "title": title, "content": content, "reason": "test"}


CORPUS = [op(f"topic{i % 5}/sub{i % 3}/note{i}.md", f"Note {i}", f"plain words number{i} about nothing") for i in range(40)]


def paths(hits) -> list[str]:
    return [h.path for h in hits]


class Scans:
    """Counts the full scans of the tree's files (each stats every file)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.n = 0
        real = index_sync.scan

        def counted(*args, **kwargs):
            self.n += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(index_sync, "scan", counted)


@pytest.fixture
def long_lived(tmp_path):
    """A memory that is long-lived at once (watch_after=0) and has no watcher."""
    with Memory.open(tmp_path, create=True, durable=False) as m:
        m.curate(CORPUS)
    m = Memory.open(tmp_path, durable=False, watch=False, watch_after=0, scan_interval=60)
    m.search("number1")   # the first check of a process always scans
    yield m
    m.close()


def test_searches_do_not_scan_the_files_when_no_folder_changed(long_lived, monkeypatch) -> None:
    scans = Scans(monkeypatch)
    for i in range(20):
        assert paths(long_lived.search(f"number{i}")) == [f"topic{i % 5}/sub{i % 3}/note{i}.md"]
        long_lived.query(f"what about number{i}")
    assert scans.n == 0


def test_by_default_a_long_lived_process_does_not_scan_at_every_search(tmp_path, monkeypatch) -> None:
    with Memory.open(tmp_path, create=True, durable=False) as m:
        m.curate(CORPUS)
    with Memory.open(tmp_path, durable=False, watch=False, watch_after=0) as m:
        m.search("number1")
        scans = Scans(monkeypatch)
        for i in range(10):
            m.search(f"number{i}")
        assert scans.n == 0   # the files are looked at a share at a time


def test_files_added_removed_or_renamed_are_seen_at_the_next_search(long_lived) -> None:
    root = long_lived.home / "tree"
    (root / "topic1" / "sub1" / "hand.md").write_text("# Hand\n\nA capybara wrote this.\n")
    assert paths(long_lived.search("capybara")) == ["topic1/sub1/hand.md"]
    (root / "topic0" / "sub0" / "note0.md").unlink()
    assert "topic0/sub0/note0.md" not in paths(long_lived.search("number0"))
    # an editor's save: a temp file renamed over the entry
    note = root / "topic2" / "sub2" / "note2.md"
    tmp = note.with_name(".note2.md.swp")
    tmp.write_text(note.read_text().replace("number2", "wombat"))
    os.replace(tmp, note)
    assert paths(long_lived.search("wombat")) == ["topic2/sub2/note2.md"]
    # a new folder, deep
    (root / "new" / "deeper").mkdir(parents=True)
    (root / "new" / "deeper" / "n.md").write_text("# N\n\nAn okapi lives here.\n")
    assert paths(long_lived.search("okapi")) == ["new/deeper/n.md"]


def test_a_write_by_another_process_is_seen_at_the_next_search(long_lived, tmp_path) -> None:
    with Memory.open(tmp_path, durable=False) as other:
        other.curate([{"op": "UPDATE", "path": "topic3/sub0/note3.md", "content": "now about a narwhal",
                       "reason": "test"}])
    assert paths(long_lived.search("narwhal")) == ["topic3/sub0/note3.md"]


def test_an_edit_in_place_is_seen_within_scan_interval(tmp_path) -> None:
    with Memory.open(tmp_path, create=True, durable=False) as m:
        m.curate(CORPUS)
    with Memory.open(tmp_path, durable=False, watch=False, watch_after=0, scan_interval=0.5) as m:
        m.search("number4")
        note = m.home / "tree" / "topic4" / "sub1" / "note4.md"
        note.write_text(note.read_text().replace("number4", "quokka"))   # in place: no folder changes
        time.sleep(0.55)
        assert paths(m.search("quokka")) == ["topic4/sub1/note4.md"]


@pytest.mark.parametrize("settings", [{"watch_after": 60.0}, {"watch_after": 0, "scan_interval": 0}],
                         ids=["not yet long-lived", "scan_interval=0"])
def test_every_search_scans_when_asked_or_not_yet_long_lived(tmp_path, monkeypatch, settings) -> None:
    with Memory.open(tmp_path, create=True, durable=False) as m:
        m.curate(CORPUS)
    with Memory.open(tmp_path, durable=False, watch=False, **settings) as m:
        m.search("number4")
        note = m.home / "tree" / "topic4" / "sub1" / "note4.md"
        note.write_text(note.read_text().replace("number4", "quokka"))   # in place: no folder changes
        assert paths(m.search("quokka")) == ["topic4/sub1/note4.md"]
        scans = Scans(monkeypatch)
        m.search("quokka")
        assert scans.n == 1


def test_each_search_looks_at_the_files_of_its_share_of_the_folders(tmp_path) -> None:
    from memgrove.tree.index.folder_check import FolderCheck

    root = str(tmp_path)
    check = FolderCheck(root, {root: 0, **{f"{root}/f{i}": 0 for i in range(10)}}, now=100.0)
    # 11 folders, every one within 10 s: a search 1 s after the last takes 2 (rounded up), in turn
    assert check.due(101.0, 10.0) == ["", "f0"]
    assert check.due(102.0, 10.0) == ["f1", "f2"]
    assert check.due(102.0, 10.0) == []
    # after a pause as long as the interval, all of them, from where the turn was
    assert check.due(130.0, 10.0) == ["f3", "f4", "f5", "f6", "f7", "f8", "f9", "", "f0", "f1", "f2"]


def test_an_edit_in_place_is_seen_within_scan_interval_by_searches_in_between(tmp_path) -> None:
    with Memory.open(tmp_path, create=True, durable=False) as m:
        m.curate(CORPUS)
    with Memory.open(tmp_path, durable=False, watch=False, watch_after=0, scan_interval=1.0) as m:
        m.search("number4")
        note = m.home / "tree" / "topic4" / "sub1" / "note4.md"
        note.write_text(note.read_text().replace("number4", "quokka"))   # in place: no folder changes
        deadline = time.monotonic() + 1.05
        while time.monotonic() < deadline:   # searches all along: each looks at a share of the files
            m.search("number7")
        assert paths(m.search("quokka")) == ["topic4/sub1/note4.md"]
