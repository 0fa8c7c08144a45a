"""A full disk and a read-only tree: writers get a clear error and leave nothing behind,
readers go on answering, and the lock is never lost inside the process."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from memgrove import Memory, NotWritable
from memgrove.tree.writes.writer_lock import WriterLock

from helpers.full_disk import fill, free, small_disk as mount_small_disk

SEED = [{"op": "ADD", "path": f"ops/runbooks/r{i}.md", "title": f"Runbook {i}",
         "content": f"Runbook {i}: restart the ingest worker number {i} with the drain flag.", "reason": "seed"}
        for i in range(8)]


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 6 MB tmpfs of our own (root only; skipped where mounting is not allowed)."""
    with mount_small_disk(tmp_path) as mnt:
        yield mnt


def test_a_full_disk_fails_the_write_cleanly_keeps_readers_answering_and_never_keeps_the_lock(small_disk):
    with Memory.open(small_disk, create=True, durable=True) as mem:
        mem.curate(SEED)
        mem.query("How do I restart the ingest worker?")
        before = {p: (mem.home / "tree" / p).read_bytes() for p in mem.tree.entry_paths()}
        journal = (mem.home / "journal" / "journal.jsonl").read_bytes()
        fill(small_disk)
        big = "A long runbook line about draining queues before a restart. " * 2000
        with pytest.raises(NotWritable, match="disk is full"):
            mem.curate([{"op": "ADD", "path": "ops/runbooks/new.md", "title": "New", "content": big, "reason": "r"},
                        {"op": "UPDATE", "path": "ops/runbooks/r0.md", "content": big, "reason": "r"}])
        # nothing of the failed batch is left, and it never appears later
        assert {p: (mem.home / "tree" / p).read_bytes() for p in mem.tree.entry_paths()} == before
        assert (mem.home / "journal" / "journal.jsonl").read_bytes() == journal
        # readers keep working on the full disk
        assert mem.search("restart ingest worker")
        assert "drain" in mem.query("How do I restart the ingest worker number 3?").text
        report = mem.doctor()
        assert report.entries == 8
        # space comes back: the same process writes again at once (the lock was not kept)
        free(small_disk)
        mem.tree.lock.timeout = 2.0
        res = mem.curate([{"op": "ADD", "path": "ops/runbooks/new.md", "title": "New", "content": "short now",
                           "reason": "after"}])
        assert res[0].status == "added"
        assert not (mem.home / "journal" / "pending.json").exists()
        assert mem.doctor().ok


def test_a_failed_batch_that_could_not_be_undone_is_rolled_back_by_the_next_writer(small_disk, monkeypatch):
    with Memory.open(small_disk, create=True, durable=True) as mem:
        mem.curate(SEED)
        before = (mem.home / "tree" / "ops/runbooks/r1.md").read_bytes()
        tree = mem.tree
        real_append = tree.journal.append

        def fail_append(records, **kw):
            raise OSError(28, "No space left on device", str(tree.journal.file))

        def fail_restore(records):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(tree.journal, "append", fail_append)
        monkeypatch.setattr(tree, "_restore_before", fail_restore)
        with pytest.raises(NotWritable):
            mem.curate([{"op": "UPDATE", "path": "ops/runbooks/r1.md", "content": "half written", "reason": "r"}])
        monkeypatch.setattr(tree.journal, "append", real_append)
        monkeypatch.undo()
    assert (small_disk / ".memgrove" / "journal" / "pending.failed").exists()
    with Memory.open(small_disk) as mem:
        assert (mem.home / "tree" / "ops/runbooks/r1.md").read_bytes() == before
        assert any("rolled back a failed batch" in n for n in mem.tree.notices)
        assert not mem.search("half written")
        assert mem.doctor().ok


def test_a_read_only_tree_answers_readers_and_refuses_writers_clearly(small_disk):
    with Memory.open(small_disk, create=True, durable=True) as mem:
        mem.curate(SEED)
        mem.query("How do I restart the ingest worker?")
    # a hand edit the index has not seen yet, then the file system goes read-only
    (small_disk / ".memgrove" / "tree" / "ops/runbooks/r2.md").write_text("# Runbook 2\n\nPage the on-call first.\n")
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    try:
        with Memory.open(small_disk) as mem:
            assert mem.search("restart ingest worker")
            answer = mem.query("How do I restart the ingest worker number 5?")
            assert "drain" in answer.text
            assert mem.doctor().entries == 8
            with pytest.raises(NotWritable, match="read-only|not writable"):
                mem.curate([{"op": "ADD", "path": "ops/runbooks/x.md", "content": "x", "reason": "r"}])
        with pytest.raises(NotWritable):
            with WriterLock(small_disk / ".memgrove" / "write.lock", timeout=0.2).hold():
                pass
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)
