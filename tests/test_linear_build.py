"""A batch costs O(batch), not O(tree): context files, fsyncs and Whoosh merges (issue 17)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memgrove import Memory
from memgrove.tree.index import contexts, whoosh_merge
from memgrove.tree.base import fsio
from memgrove.tree.index.engine import IndexDoc
from memgrove.tree.index.whoosh_engine import WhooshEngine


def _add(path: str, title: str, summary: str = "") -> dict:
    op = {"op": "ADD", "path": path, "title": title, "content": f"{title} body words", "reason": "test"}
    if summary:
        op["summary"] = summary
    return op


# -- context files ---------------------------------------------------------------------------

def test_context_listing_from_the_catalog_is_byte_identical_to_reading_every_entry(tmp_path):
    with Memory.open(tmp_path / "p", create=True, durable=False) as mem:
        mem.curate([_add(f"work/notes/n{i}.md", f"Note {i}", "a summary" if i % 2 else "") for i in range(12)]
                   + [_add("work/notes/deeper/inner.md", "Inner"), _add("work/other/o.md", "Other")])
        tree = mem.tree
        folder = tree.root / "work" / "notes"
        # by hand, not indexed yet: an edited title, a new file, a broken file, a hidden one
        edited = folder / "n3.md"
        edited.write_text(edited.read_text(encoding="utf-8").replace("title: Note 3", "title: Note three"),
                          encoding="utf-8")
        (folder / "Hand Placed.md").write_text("---\ntitle: By hand\nsummary: placed\n---\nbody\n", encoding="utf-8")
        (folder / "broken.md").write_text("---\ntitle: [unclosed\n---\n", encoding="utf-8")
        (folder / ".hidden.md").write_text("---\ntitle: Hidden\n---\n", encoding="utf-8")
        for rel in ("work/notes", "work", "work/notes/deeper"):
            known = tree.catalog.folder_files(rel)
            assert known, rel
            fast = contexts.render(tree.root / rel, rel, None, "2026-01-01T00:00:00Z", known)
            # known=None is the renderer as it was: it parses every entry of the folder
            slow = contexts.render(tree.root / rel, rel, None, "2026-01-01T00:00:00Z")
            assert fast == slow
        text = contexts.render(folder, "work/notes", None, "2026-01-01T00:00:00Z", tree.catalog.folder_files("work/notes"))
        assert "[Note three](n3.md)" in text and "[By hand](Hand Placed.md) — placed" in text


def test_a_write_reads_no_other_entry_of_its_folder(tmp_path, monkeypatch):
    with Memory.open(tmp_path / "p", create=True, durable=False) as mem:
        mem.curate([_add(f"work/flat/e{i}.md", f"Entry {i}", f"summary {i}") for i in range(40)])
        folder = mem.tree.root / "work" / "flat"
        reads: list[str] = []
        real = Path.read_text

        def read_text(self, *a, **kw):
            if self.parent == folder:
                reads.append(self.name)
            return real(self, *a, **kw)

        monkeypatch.setattr(Path, "read_text", read_text)
        mem.curate([_add("work/flat/new.md", "New one", "fresh")])
        monkeypatch.undo()
        others = [r for r in reads if r not in ("new.md", "context.md")]
        assert others == [], f"the write re-read {len(others)} other entries of its folder"
        listing = mem.tree.read_text("work/flat/context.md")
        assert "[New one](new.md) — fresh" in listing and "[Entry 39](e39.md) — summary 39" in listing


def test_a_large_folders_listing_names_the_first_entries_and_counts_the_rest(tmp_path, monkeypatch):
    # the listing is rewritten after every batch into the folder: listing a flat folder whole made
    # filling it O(N²) (one message of 37,500 parts); past LISTED_AT_MOST files it only counts
    monkeypatch.setattr(contexts, "LISTED_AT_MOST", 5)
    with Memory.open(tmp_path / "p", create=True, durable=False) as mem:
        mem.curate([_add(f"work/flat/e{i}.md", f"Entry {i}", f"summary {i}") for i in range(12)])
        folder = mem.tree.root / "work" / "flat"
        looked: list[str] = []
        real = contexts._title_summary
        monkeypatch.setattr(contexts, "_title_summary", lambda child, listed: looked.append(child.name) or real(child, listed))
        mem.curate([_add("work/flat/e12.md", "Entry 12", "summary 12")])
        listing = mem.tree.read_text("work/flat/context.md")
        assert [f"e{i}.md" for i in range(5)] == looked          # the unlisted files are counted, not read
        assert "[Entry 4](e4.md) — summary 4" in listing and "e5.md" not in listing
        assert "- … and 8 more files (`memgrove tree --all work/flat` shows them all)" in listing
        assert mem.doctor().ok


# -- fsync: one pass per batch ---------------------------------------------------------------

def test_a_durable_batch_syncs_each_file_and_each_folder_once(tmp_path, monkeypatch):
    with Memory.open(tmp_path / "p", create=True, durable=True) as mem:
        mem.curate([_add("seed/one/s.md", "Seed")])
        calls = {"n": 0}
        real = os.fsync

        def fsync(fd):
            calls["n"] += 1
            real(fd)

        monkeypatch.setattr(os, "fsync", fsync)
        n = 30
        mem.curate([_add(f"dom/t{i % 2}/e{i}.md", f"E {i}") for i in range(n)])
        monkeypatch.undo()
        # 30 entries in 2 folders + 3 context files (dom/t0, dom/t1, dom) in 3 folders + the
        # write-ahead file and its folder + the journal append = 41; each file fsynced and its
        # folder after it, as before, made 2 x (30 + 3) + 3 = 69
        assert calls["n"] <= n + 2 + 3 + 3 + 3, calls["n"]
        assert all(mem.read(f"dom/t{i % 2}/e{i}.md").title == f"E {i}" for i in range(n))


class Crash(BaseException):
    pass


def test_files_lost_before_the_batch_sync_are_rolled_forward_from_pending(tmp_path, monkeypatch):
    """Entries are renamed into place unsynced; a crash before the one sync pass may leave them
    empty (the data never reached the disk) or missing: pending.json holds the after-images,
    so reopening writes them again, and the acknowledged-or-nothing rule holds."""
    root = tmp_path / "p"
    with Memory.open(root, create=True, durable=True) as mem:
        mem.curate([_add("keep/k/old.md", "Old")])
        monkeypatch.setattr(fsio.Pending, "sync_all", lambda self: (_ for _ in ()).throw(Crash()))
        monkeypatch.setattr(mem.tree, "_roll_back", lambda *a: None)  # a dead process undoes nothing
        with pytest.raises(Crash):
            mem.curate([_add(f"keep/k/new{i}.md", f"New {i}") for i in range(5)])
        monkeypatch.undo()
    tree_root = root / ".memgrove" / "tree" / "keep" / "k"
    (tree_root / "new1.md").write_bytes(b"")      # its data never reached the disk
    (tree_root / "new3.md").unlink()              # its rename never reached the disk
    with Memory.open(root, durable=True) as mem:
        assert [mem.read(f"keep/k/new{i}.md").title for i in range(5)] == [f"New {i}" for i in range(5)]
        assert len(mem.history()) == 6  # the seed and the five, each journaled once
        assert mem.search("New 3")[0].path.startswith("keep/k/new")


# -- Whoosh merges ---------------------------------------------------------------------------

def test_tiered_policy_bounds_segments_and_the_work_of_one_commit():
    segs: list[int] = []
    largest = 0
    for _ in range(400):   # 100,000 documents in commits of 250
        picked = whoosh_merge.pick_merges([(c, 0) for c in segs])
        merged = sum(segs[i] for i in picked)
        largest = max(largest, merged)
        segs = [c for i, c in enumerate(segs) if i not in picked] + [250 + merged]
        assert len(segs) <= 25
    assert largest <= whoosh_merge.MAX_MERGED_DOCS
    assert sum(segs) == 100_000


def test_tiered_policy_purges_deleted_documents():
    assert whoosh_merge.pick_merges([(50_000, 20_000), (100, 0)]) == {0}
    assert whoosh_merge.pick_merges([(50_000, 100), (100, 0)]) == set()
    assert whoosh_merge.pick_merges([(10, 10)]) == {0}


def _doc(i: int, word: str = "") -> IndexDoc:
    return IndexDoc(path=f"d/e{i}.md", kind="entry", title=f"entry {i}", content=f"common text {word}",
                    path_text=f"d e{i}", tags="")


def test_commits_never_rewrite_more_than_the_bound_and_deletes_stay_deleted(tmp_path, monkeypatch):
    """Whoosh's MERGE_SMALL, on commits of 20 documents, rewrote 380 documents at the 25th commit
    and 780 at the 45th (at 25,500 entries of the scale benchmark, 22,770: the 57 s first curation
    after a 25k build)."""
    monkeypatch.setattr(whoosh_merge, "MAX_MERGED_DOCS", 200)
    monkeypatch.setattr(whoosh_merge, "FANOUT", 3)
    eng = WhooshEngine(tmp_path / "whoosh")
    eng.rebuild([])
    eng.write(replace=[_doc(5000, "zebra")])
    eng.write(delete=["d/e5000.md"])
    n = 0
    for c in range(50):
        before = {s.segment_id(): s.doc_count_all() for s in eng._index()._segments()}
        eng.write(replace=[_doc(n + j) for j in range(20)])
        n += 20
        after = {s.segment_id() for s in eng._index()._segments()}
        rewritten = sum(count for sid, count in before.items() if sid not in after)
        assert rewritten <= 200, f"commit {c} rewrote {rewritten} documents"
        # at most FANOUT - 1 per tier below the bound, one per MAX / FANOUT documents above it
        # (no merging at all: 52 segments by the end)
        assert len(after) <= 2 * 3 + n * 3 // 200, (c, len(after))
    assert eng.count() == n
    assert eng.search("zebra", boosts={}, limit=5) == []
    ix = eng._index()
    assert ix.doc_count_all() - ix.doc_count() == 0  # the delete was purged by a merge
    eng.close()

