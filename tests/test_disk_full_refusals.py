"""A refused write leaves nothing behind on a full disk, not even in the files derived from the
tree: space that comes back goes to the next write, not into the index's or the catalog's leftovers
of writes that all failed (a SQLite transaction that fails keeps the WAL frames it wrote; a Whoosh
commit that fails keeps its segment's files). Each test fills a tmpfs of its own (root only)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from memgrove import Memory, NotWritable

from helpers import engine_choice
from helpers.full_disk import fill, free_pages, small_disk

SEED = [{"op": "ADD", "path": f"ops/runbooks/r{i}.md", "title": f"Runbook {i}",
         "content": f"Runbook {i}: restart the ingest worker number {i} with the drain flag.", "reason": "seed"}
        for i in range(8)]


def add(i: int) -> list[dict]:
    return [{"op": "ADD", "path": f"ops/notes/n{i}.md", "title": f"Note {i}",
             "content": f"Note {i}: the disk filled up on day {i}.", "reason": "refused or not"}]


def free_blocks(folder: Path) -> int:
    return os.statvfs(folder).f_bfree


def opened(folder: Path) -> Memory:
    """No embedder thread: the test counts every block, and vectors would take some."""
    return Memory.open(folder, embed_ahead=False)


def seed(folder: Path) -> None:
    with Memory.open(folder, create=True, durable=True, embed_ahead=False) as mem:
        mem.curate(SEED)
        mem.search("drain flag")


def try_write(mem: Memory, i: int) -> bool:
    try:
        mem.curate(add(i))
        return True
    except NotWritable:
        return False


def test_space_freed_a_page_at_a_time_lets_writes_through(tmp_path):
    """The issue's probe: 120 pages freed one by one let 1 write through, each refusal taking the
    page that came back. A write here needs about 15 pages with its index and catalog rows."""
    with small_disk(tmp_path) as mnt:
        seed(mnt)
        with opened(mnt) as mem:
            fill(mnt)
            done = sum(try_write(mem, i) for i in range(60) if free_pages(mnt, 1))
            assert done >= 3, f"60 pages came back one by one and {done} write(s) went through"


def test_refused_writes_give_back_what_the_index_update_wrote(tmp_path, monkeypatch):
    """A batch acknowledged whose index update failed (here on purpose), then the disk full and
    space coming back a page at a time: each refused write first retries that update, which needs
    more than came back. A failed Whoosh or tantivy commit kept its segment's files, so every page
    that came back went into them; now the pages are still free after the refusals. (With tantivy,
    whose new segment is smaller, the update itself may succeed within 12 pages.)"""
    if engine_choice.chosen() != "whoosh":
        pytest.skip("the count of pages holds for Whoosh's segment sizes")
    with small_disk(tmp_path) as mnt:
        seed(mnt)
        home = mnt / ".memgrove"
        with opened(mnt) as mem:
            def refuse(*a, **k):
                raise OSError(28, "No space left on device")

            monkeypatch.setattr(mem.tree.engine, "write", refuse)
            mem.curate([{"op": "ADD", "path": f"ops/bulk/b{i}.md", "title": f"Bulk {i}",
                         "content": f"Bulk note {i} about queue draining and restarts. " * 12, "reason": "bulk"}
                        for i in range(60)])
            monkeypatch.undo()
            assert (home / "journal" / "pending.json").exists()
            fill(mnt)
            refusals = [free_pages(mnt, 1) and try_write(mem, i) for i in range(12)]
            assert refusals == [False] * 12
            assert free_blocks(mnt) >= 12, "refused writes kept the pages that came back"


def test_a_catalog_transaction_refused_for_space_gives_its_wal_frames_back(tmp_path):
    """SQLite keeps the WAL frames a transaction wrote before the disk refused the rest: space
    that came back stayed in the WAL of a transaction that failed."""
    from memgrove.tree.index.catalog import Upsert

    with small_disk(tmp_path) as mnt:
        seed(mnt)
        with opened(mnt) as mem:
            catalog = mem.tree.catalog
            catalog.apply([], [], digest=catalog.digest() or 0)
            catalog._db().execute("PRAGMA wal_checkpoint(TRUNCATE)")
            wal = Path(f"{catalog.file}-wal")
            fill(mnt)
            free_pages(mnt, 8)
            before = free_blocks(mnt)
            rows = [Upsert(f"bulk/rows/r{i}.md", "entry", (i, i), "t" * 200, [], "h" * 64) for i in range(2000)]
            with pytest.raises(sqlite3.OperationalError):
                catalog.apply(rows, [], digest=1)
            assert wal.stat().st_size == 0 and free_blocks(mnt) == before
