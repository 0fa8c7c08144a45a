"""A query served while another writer holds the lock must not outlive the lag.

Hand edits (a ``git pull``) land while a writer holds the tree's lock; a reader
that cannot take the lock answers from the index as it is. That answer may be
cached, but only under the state the index holds: once the index catches up,
the same question is answered afresh.
"""

from __future__ import annotations

from pathlib import Path

from memgrove import Memory
from memgrove.tree.writes.writer_lock import WriterLock

QUESTION = "What is the zeppelin hangar door code?"


def _seeded(tmp_path: Path) -> Path:
    with Memory.open(tmp_path, create=True, durable=False) as m:
        # at least 50 entries, so a question about nothing in memory is answered "not in memory"
        m.curate([{"op": "ADD", "path": f"sales/regions/r{i}.md", "title": f"Region {i} figure",
                   "content": f"The quarterly figure for region {i} is {i * 7} units.", "reason": "seed"}
                  for i in range(60)])
    folder = tmp_path / ".memgrove" / "tree" / "hand" / "pulled"
    folder.mkdir(parents=True)
    for i in range(20):
        (folder / f"f{i}.md").write_text(f"# Filler {i}\n\nSomething about growing tomatoes, batch {i}.\n")
    (folder / "answer.md").write_text("# Zeppelin hangar code\n\nThe zeppelin hangar door code is 4417.\n")
    return tmp_path


def test_an_answer_from_a_lagging_index_is_not_served_once_the_index_catches_up(tmp_path):
    root = _seeded(tmp_path)
    other_writer = WriterLock(root / ".memgrove" / "write.lock")
    with other_writer.hold():
        with Memory.open(root, durable=False) as m:
            lagging = m.query(QUESTION)
            assert "4417" not in lagging.text          # the index could not be brought in step
            assert m.search("zeppelin hangar") == []
    with Memory.open(root, durable=False) as m:
        answer = m.query(QUESTION)
        assert not answer.cached, "the answer made from the lagging index was served from the cache"
        assert "4417" in answer.text
        assert answer.sources == ["hand/pulled/answer.md"]


def test_a_sync_of_hand_edits_bumps_the_generation(tmp_path):
    root = _seeded(tmp_path)
    gen = root / ".memgrove" / "generation"
    before = int(gen.read_text())
    with Memory.open(root, durable=False) as m:
        m.search("zeppelin")
    assert int(gen.read_text()) > before
