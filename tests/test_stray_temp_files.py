"""Temp files a killed writer left in the tree (``.mg-*.tmp`` of ``fsio.atomic_write``) go at the
next write, under the writer lock, where every writer of the tree's files holds it: 16 were left
after crashes and only ``doctor --fix`` removed them. A reader never removes one (it may be a live
writer's in another process)."""

from __future__ import annotations

from pathlib import Path

from memgrove import Memory

SEED = [{"op": "ADD", "path": f"ops/runbooks/r{i}.md", "title": f"Runbook {i}",
         "content": f"Runbook {i}: restart worker {i}.", "reason": "seed"} for i in range(3)]


def strays(root: Path) -> list[Path]:
    return sorted(root.rglob(".mg-*.tmp"))


def test_the_next_write_removes_a_dead_writers_temp_files(tmp_path: Path):
    with Memory.open(tmp_path, create=True, durable=False) as mem:
        mem.curate(SEED)
        root = mem.tree.root
    for i, folder in enumerate((root / "ops" / "runbooks", root / "ops", root)):
        (folder / f".mg-killed{i}.tmp").write_text("half of an entry")
    with Memory.open(tmp_path, durable=False) as mem:
        mem.search("restart worker")
        assert len(strays(root)) == 3          # a reader leaves them: it holds no lock
        mem.curate([{"op": "ADD", "path": "ops/deploys/canary.md", "content": "Canary first.", "reason": "r"}])
        assert strays(root) == []
        assert mem.doctor().ok and not mem.doctor().warnings


def test_opening_after_a_killed_batch_removes_its_temp_files(tmp_path: Path):
    with Memory.open(tmp_path, create=True, durable=False) as mem:
        mem.curate(SEED)
        root, journal = mem.tree.root, mem.tree.journal
        record = list(mem.tree.journal.records())[-1]
    journal.write_pending([record])                       # as a writer killed mid-batch leaves it
    (root / "ops" / "runbooks" / ".mg-killed.tmp").write_text("half of an entry")
    with Memory.open(tmp_path, durable=False):
        assert strays(root) == []
