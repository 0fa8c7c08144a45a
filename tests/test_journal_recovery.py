"""Recovery of a batch a writer left in ``pending.json``: undo never tears it, ids never repeat."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from memgrove import Memory


class Crash(BaseException):
    """Stands for a SIGKILL at a chosen point (nothing after it runs, no rollback)."""


def _journal_ids(home) -> list[str]:
    lines = (home / "journal" / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["id"] for line in lines]


def _crash_mid_batch(mem: Memory, ops: list[dict], monkeypatch, *, after_files: int) -> None:
    tree = mem.tree
    real_write = tree._write_file
    written = []

    def write(rel, text, *later, **how):
        if len(written) == after_files:
            raise Crash()
        written.append(rel)
        real_write(rel, text, *later, **how)

    monkeypatch.setattr(tree, "_write_file", write)
    monkeypatch.setattr(tree, "_roll_back", lambda *a: None, raising=False)  # a killed process undoes nothing
    with pytest.raises(Crash):
        mem.curate(ops)
    monkeypatch.undo()


def test_undo_first_completes_a_batch_a_dead_writer_left(tmp_path, monkeypatch):
    root = tmp_path / "p"
    with Memory.open(root, create=True, durable=False) as first:
        first_id = first.curate([{"op": "ADD", "path": "a/b/first.md", "content": "first", "reason": "r"}])[0].id
    other = Memory.open(root, durable=False)  # a long-lived process, open before the crash
    try:
        with Memory.open(root, durable=False) as crashing:
            ops = [{"op": "ADD", "path": f"batch/part/e{i}.md", "content": f"entry {i}", "reason": "r"}
                   for i in range(40)]
            _crash_mid_batch(crashing, ops, monkeypatch, after_files=15)
        assert (root / ".memgrove" / "journal" / "pending.json").exists()
        other.undo(first_id)
        paths = other.tree.entry_paths()
        assert "a/b/first.md" not in paths
        assert all(f"batch/part/e{i}.md" in paths for i in range(40)), "the crashed batch was torn"
        ids = _journal_ids(other.home)
        assert len(ids) == len(set(ids)) == 1 + 40 + 1
        assert other.doctor().ok
    finally:
        other.close()


def test_recovery_never_journals_an_operation_twice_however_large_the_batch(tmp_path, monkeypatch):
    root = tmp_path / "p"
    big = "Long line of meeting notes about the storage migration plan. " * 2000  # ~125 KB a record
    with Memory.open(root, create=True, durable=False) as mem:
        tree = mem.tree

        def crash_before_clear():
            raise Crash()

        monkeypatch.setattr(tree.journal, "clear_pending", crash_before_clear)
        with pytest.raises(Crash):
            mem.curate([{"op": "ADD", "path": f"notes/big/e{i}.md", "content": f"{i} {big}", "reason": "r"}
                        for i in range(48)])  # ~6 MB of journal records, all appended before the crash
        monkeypatch.undo()
    assert (root / ".memgrove" / "journal" / "pending.json").exists()
    with Memory.open(root, durable=False) as mem:
        assert any("completed an interrupted batch" in n for n in mem.tree.notices)
        ids = _journal_ids(mem.home)
        dup = [i for i, n in Counter(ids).items() if n > 1]
        assert not dup and len(ids) == 48
