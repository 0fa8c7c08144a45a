"""Undoing the ADD of an entry others link to drops those links, as DELETE does: undoing one
message of a conversation left the message before it linking to nothing while ``doctor`` said
"consistent". Undoing that UNDO brings the entry and the links back."""

from __future__ import annotations

from pathlib import Path

from memgrove import Memory

MESSAGES = [{"role": "user" if i % 2 == 0 else "assistant", "id": str(i),
             "content": f"message number {i} about the deploy window on tuesday"} for i in range(5)]


def dangling(mem: Memory) -> list[str]:
    return [w for w in mem.doctor().warnings if "dangling link" in w]


def test_undoing_one_message_of_a_conversation_leaves_no_dangling_link(tmp_path: Path):
    with Memory.open(tmp_path, create=True, durable=False) as mem:
        results = mem.ingest(conversation={"id": "chat1", "messages": MESSAGES})
        third = results[2]
        before = {p: mem.tree._read_disk(p) for p in (r.path for r in results)}
        undo = mem.undo(third.id)
        assert undo.status == "undone"
        assert not mem.tree.exists(third.path)
        assert dangling(mem) == []
        assert third.path not in mem.tree.catalog.forward_links(results[1].path)
        assert mem.doctor().ok
        mem.undo(undo.id)                           # the undo undone: the message and its links are back
        assert {p: mem.tree._read_disk(p) for p in before} == before
        assert dangling(mem) == []


def test_undoing_several_adds_at_once_unlinks_them(tmp_path: Path):
    with Memory.open(tmp_path, create=True, durable=False) as mem:
        results = mem.ingest(conversation={"id": "chat2", "messages": MESSAGES})
        mem.tree.undo_all([results[3].id, results[1].id])
        assert dangling(mem) == [] and mem.doctor().ok
        assert [r.path for r in results if mem.tree.exists(r.path)] == [results[i].path for i in (0, 2, 4)]
